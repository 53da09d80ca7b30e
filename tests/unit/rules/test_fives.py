# mypy: disable-error-code="union-attr"
"""Seed 002's "tous les 5" (``web_fives``) played through the engine: the spinner and its
short sides, plays that score a multiple of 5 at once, round points rounded to the nearest
5, the draw of ``web_draw``, and a play that reaches the target ending the game at once.
Alice and Bob sit at seats 0 and 1."""

from __future__ import annotations

import pytest

from services.rules import (
    NOBODY,
    Create,
    Draw,
    End,
    Expire,
    Outcome,
    Pass,
    Phase,
    Play,
    TableState,
    Transition,
    apply,
    auto_play_choice,
    can_draw,
    can_pass,
    create,
    legal_moves,
    move_points,
    view_for,
)
from services.rules import errors as e
from services.rules.events import Drew, GameEnded, Passed, RoundEnded, TileLaid
from services.rules.rulesets import preset
from services.rules.tiles import NO_END, tile_index
from services.rules.view import PlacedTile

from .builders import NOW, TIMING, tiles
from .rule_builders import playing

L, R, U, D = End.LEFT, End.RIGHT, End.UP, End.DOWN
FIVES2 = preset("web_fives", seats=2)
FIVES3 = preset("web_fives", seats=3)


def t(spec: str) -> int:
    """The index of one tile written ``"5-3"``."""
    (tile,) = tiles(spec)
    return tile


def play(state: TableState, seat: int, spec: str, end: int) -> Transition:
    return apply(state, Play(seat, t(spec), int(end)), NOW)


def laid(transition: Transition) -> TileLaid:
    return next(ev for ev in transition.events if isinstance(ev, TileLaid))


def ends(state: TableState, seat: int) -> list[tuple[int, int]]:
    return [(int(end), number) for end, number in view_for(state, seat).open_ends]


def opened(hands: tuple[str, ...], lead: str, **kw: object) -> TableState:
    """A ``web_fives`` round at two seats with Alice to open with ``lead``."""
    return playing(FIVES2, hands, turn=0, lead=t(lead), **kw)  # type: ignore[arg-type]


#: The worked round: Alice opens 5-5 and goes out with 3-5; Bob keeps 2-4 1-1 4-6 (18).
ROUND = ("5-5 1-5 1-6 3-5", "0-5 4-5 0-3 2-4 1-1 4-6")


def test_002_the_first_double_is_the_spinner_and_counts_both_halves() -> None:
    state = opened(ROUND, "5-5")
    view = view_for(state, 0)
    assert view.legal_moves == (Play(0, t("5-5"), L),) and view.move_points == (10,)
    step = play(state, 0, "5-5", L)
    assert laid(step).points == 10 and step.state.scores == (10, 0)
    view = view_for(step.state, 1)
    assert view.spinner_index == 0 and view.chain == (PlacedTile(5, 5, 0),)
    assert ends(step.state, 1) == [(L, 5), (R, 5)]  # short sides not open yet
    assert view.last_action == TileLaid(0, t("5-5"), L, step.events[0].auto, 10)
    # Bob: 0-5 or 4-5 on either long side (the spinner still counts 10 on the other).
    moves = dict(zip(view.legal_moves, view.move_points, strict=True))
    assert moves == {
        Play(1, t("0-5"), L): 10,
        Play(1, t("0-5"), R): 10,
        Play(1, t("4-5"), L): 0,
        Play(1, t("4-5"), R): 0,
    }


def test_002_a_worked_round_scores_10_10_5_10_15_and_a_rounded_domino() -> None:
    state = opened(ROUND, "5-5")
    scored: list[int] = []
    for seat, spec, end in (
        (0, "5-5", L),  # 5-5 alone: 10
        (1, "0-5", R),  # spinner 10 + 0: 10
        (0, "1-5", L),  # both long sides covered: 1 + 0, the spinner counts no more
        (1, "4-5", U),  # a short side: 1 + 0 + 4 = 5
        (0, "1-6", L),  # 6 + 0 + 4 = 10
        (1, "0-3", R),  # 6 + 3 + 4 = 13: nothing
    ):
        step = play(state, seat, spec, end)
        scored.append(laid(step).points)
        state = step.state
    assert scored == [10, 10, 0, 5, 10, 0] and state.scores == (20, 15)
    view = view_for(state, 0)
    assert ends(state, 0) == [(L, 6), (R, 3), (U, 4), (D, 5)]
    assert view.spinner_index == 2 and [(p.left, p.right) for p in view.chain] == [
        (6, 1),
        (1, 5),
        (5, 5),
        (5, 0),
        (0, 3),
    ]
    assert view.up_arm == (PlacedTile(5, 4, 1),) and view.down_arm == ()
    assert view.legal_moves == (Play(0, t("3-5"), R), Play(0, t("3-5"), D))
    assert view.move_points == (15, 0)  # 6 + 5 + 4 on the right; 6 + 3 + 4 + 3 below
    # Alice goes out with 3-5: 15 at once, then Bob's 2-4 1-1 4-6 (18) rounded to 20.
    last = play(state, 0, "3-5", R)
    assert laid(last).points == 15
    result = next(ev for ev in last.events if isinstance(ev, RoundEnded)).result
    assert result.outcome is Outcome.DOMINO and result.scoring_team == 0
    assert (result.points, result.unrounded_points) == (20, 18)
    assert last.state.scores == (20 + 15 + 20, 15)
    assert last.state.phase is Phase.ROUND_OVER
    assert view_for(last.state, 1).last_round == result


def test_002_the_short_sides_open_only_once_both_long_sides_are_covered() -> None:
    state = play(opened(("5-5 2-6 3-3", "5-6 4-5 0-4"), "5-5"), 0, "5-5", L).state
    state = play(state, 1, "5-6", R).state  # the left long side still open
    assert ends(state, 0) == [(L, 5), (R, 6)]
    with pytest.raises(e.TileDoesNotFit):
        play(state, 0, "2-6", U)
    state = play(state, 0, "2-6", R).state
    assert legal_moves(state, 1) == (Play(1, t("4-5"), L),)
    state = play(state, 1, "4-5", L).state  # both long sides covered: up and down show 5
    assert ends(state, 0) == [(L, 4), (R, 2), (U, 5), (D, 5)]


def test_002_a_later_double_becomes_the_spinner_and_its_short_sides_open() -> None:
    state = opened(("2-3 3-6 1-1", "3-3 2-4 0-6 3-5"), "2-3")
    step = play(state, 0, "2-3", L)
    assert laid(step).points == 5  # 2 + 3
    step = play(step.state, 1, "3-3", R)  # the first double, at the right end
    assert laid(step).points == 0  # 2 + 3-3 counted once (6) = 8
    view = view_for(step.state, 0)
    assert view.spinner_index == 1 and ends(step.state, 0) == [(L, 2), (R, 3)]
    step = play(step.state, 0, "3-6", R)  # 2 + 6: both long sides covered
    assert laid(step).points == 0
    assert ends(step.state, 1) == [(L, 2), (R, 6), (U, 3), (D, 3)]
    assert view_for(step.state, 1).legal_moves == (
        Play(1, t("0-6"), R),
        Play(1, t("2-4"), L),
        Play(1, t("3-5"), U),
        Play(1, t("3-5"), D),
    )
    assert view_for(step.state, 1).move_points == (0, 10, 0, 0)  # 2 + 0; 4 + 6; 2 + 6 + 5
    step = play(step.state, 1, "3-5", D)
    assert view_for(step.state, 0).down_arm == (PlacedTile(3, 5, 1),)
    assert ends(step.state, 0) == [(L, 2), (R, 6), (U, 3), (D, 5)]


def test_002_a_double_at_an_end_counts_both_halves() -> None:
    state = opened(("0-0 1-1", "0-1 2-3"), "0-0")
    state = play(state, 0, "0-0", L).state
    state = play(state, 1, "0-1", R).state  # spinner 0 + 1
    step = play(state, 0, "1-1", R)  # 0 (spinner, left side open) + 1-1 (2): nothing
    assert laid(step).points == 0
    state = opened(("5-5 0-0", "0-5 4-4"), "5-5")
    state = play(state, 0, "5-5", L).state
    state = play(state, 1, "0-5", L).state  # 0 + 10
    step = play(state, 0, "0-0", L)  # 0-0 at the left end counts 0; the spinner 10
    assert laid(step).points == 10


def test_002_a_blocked_round_scores_the_others_minus_its_own_rounded() -> None:
    # Alice 0-4 (4) and Bob 2-3 1-6 3-6 (21): nobody fits 5 and 5, the stock is empty.
    state = playing(FIVES2, ("0-4", "2-3 1-6 3-6"), left=5, right=5, turn=0, last_layer=1)
    state = state._replace(round=state.round._replace(center=0))
    assert ends(state, 0) == [(L, 5), (R, 5)] and can_pass(state, 0)
    state = apply(state, Pass(0), NOW).state
    final = apply(state, Pass(1), NOW)
    result = next(ev for ev in final.events if isinstance(ev, RoundEnded)).result
    assert result.outcome is Outcome.BLOCKED and result.scoring_team == 0
    assert (result.unrounded_points, result.points) == (21 - 4, 15)
    assert final.state.scores == (15, 0)


def test_002_a_blocked_tie_scores_nothing_and_a_small_win_may_round_to_zero() -> None:
    tie = playing(FIVES2, ("0-4", "1-3"), left=5, right=5, turn=0, last_layer=1)
    tie = tie._replace(round=tie.round._replace(center=0))
    final = apply(apply(tie, Pass(0), NOW).state, Pass(1), NOW)
    result = next(ev for ev in final.events if isinstance(ev, RoundEnded)).result
    assert result.outcome is Outcome.BLOCKED_TIE and result.scoring_team == NOBODY
    assert (result.points, result.unrounded_points, final.state.scores) == (0, 0, (0, 0))
    close = playing(FIVES2, ("0-4", "1-4"), left=5, right=5, turn=0, last_layer=1)
    close = close._replace(round=close.round._replace(center=0))
    final = apply(apply(close, Pass(0), NOW).state, Pass(1), NOW)
    result = next(ev for ev in final.events if isinstance(ev, RoundEnded)).result
    assert (result.scoring_team, result.unrounded_points, result.points) == (0, 1, 0)


@pytest.mark.parametrize(("left", "points"), [(12, 10), (13, 15), (15, 15), (22, 20)])
def test_002_a_domino_scores_the_other_hands_rounded_to_the_nearest_5(
    left: int, points: int
) -> None:
    others = {12: "6-6", 13: "6-6 0-1", 15: "6-6 1-2", 22: "6-6 4-6"}[left]
    state = opened(("1-2", others), "1-2")  # Alice goes out with her opener: 3, no points
    step = play(state, 0, "1-2", L)
    assert laid(step).points == 0
    result = next(ev for ev in step.events if isinstance(ev, RoundEnded)).result
    assert (result.unrounded_points, result.points) == (left, points)


def test_002_reaching_the_target_by_a_play_ends_the_game_at_once() -> None:
    state = opened(("5-5 1-2 3-4", "0-5 2-2"), "5-5", scores=(90, 0), target=100)
    step = play(state, 0, "5-5", L)
    assert step.state.phase is Phase.FINISHED and step.state.winner == 0
    assert step.state.scores == (100, 0) and step.state.deadline_ms == 0
    assert [type(ev) for ev in step.events] == [TileLaid, GameEnded]
    assert step.events[-1] == GameEnded(0, (100, 0))
    assert step.state.last_result is None  # the round is not scored: the game is over
    assert step.state.round.hands[0] == tiles_mask("1-2 3-4")
    with pytest.raises(e.GameOver):
        apply(step.state, Play(1, t("0-5"), int(R)), NOW)
    view = view_for(step.state, 1)
    assert view.winner == 0 and view.legal_moves == () and view.last_round is None


def tiles_mask(spec: str) -> int:
    return sum(1 << tile for tile in tiles(spec))


def test_002_a_play_short_of_the_target_goes_on() -> None:
    state = opened(("5-5 1-2", "0-5 2-2"), "5-5", scores=(85, 0), target=100)
    step = play(state, 0, "5-5", L)
    assert step.state.phase is Phase.PLAYING and step.state.scores == (95, 0)
    assert step.state.round.turn == 1


def test_002_a_seat_draws_until_a_tile_fits_a_short_side_included() -> None:
    # Ends 1 | 5-5 | 0 with the short sides showing 5; Bob holds nothing of 1, 0 or 5.
    state = opened(("5-5 1-5 3-3", "0-5 2-2 4-6"), "5-5", stock="2-3 6-6 4-5 1-2")
    state = play(state, 0, "5-5", L).state
    state = play(state, 1, "0-5", R).state
    state = play(state, 0, "1-5", L).state
    assert ends(state, 1) == [(L, 1), (R, 0), (U, 5), (D, 5)]
    assert legal_moves(state, 1) == () and can_draw(state, 1) and not can_pass(state, 1)
    with pytest.raises(e.MustDraw):
        apply(state, Pass(1), NOW)
    state = apply(state, Draw(1), NOW).state  # 2-3
    state = apply(state, Draw(1), NOW).state  # 6-6
    state = apply(state, Draw(1), NOW).state  # 4-5 fits the short sides
    assert legal_moves(state, 1) == (Play(1, t("4-5"), U), Play(1, t("4-5"), D))
    assert move_points(state, 1) == (5, 5)
    with pytest.raises(e.MustPlay):
        apply(state, Draw(1), NOW)
    assert apply(state, Play(1, t("4-5"), int(D)), NOW).state.scores == (10, 15)


def test_002_a_timed_out_seat_draws_until_a_tile_fits_then_lays_it_on_a_short_side() -> None:
    state = opened(("5-5 1-5 3-3", "0-5 2-2 4-6"), "5-5", stock="2-3 6-6 4-5 1-2")
    for seat, spec, end in ((0, "5-5", L), (1, "0-5", R), (0, "1-5", L)):
        state = play(state, seat, spec, end).state
    expired = apply(state, Expire(state.turn_number), state.deadline_ms)
    assert expired.events[0] == Drew(1, 3, expired.events[0].auto)
    auto = laid(expired)
    assert (auto.tile, auto.end, auto.points) == (t("4-5"), U, 5)
    assert expired.state.round.up[-1] & 7 == 4


def test_002_auto_play_takes_the_first_legal_move_long_sides_first() -> None:
    state = opened(("5-5 1-5 3-3", "0-5 4-5 0-1"), "5-5")
    for seat, spec, end in ((0, "5-5", L), (1, "0-5", R), (0, "1-5", L)):
        state = play(state, seat, spec, end).state
    assert auto_play_choice(state) == legal_moves(state, 1)[0] == Play(1, t("0-1"), L)


def test_002_a_pass_is_on_every_open_end() -> None:
    state = opened(("5-5 1-5 0-2", "0-5 3-3"), "5-5")
    for seat, spec, end in ((0, "5-5", L), (1, "0-5", R), (0, "1-5", L)):
        state = play(state, seat, spec, end).state
    assert can_pass(state, 1)
    step = apply(state, Pass(1), NOW)
    assert step.events == (Passed(1, 1 << 0 | 1 << 1 | 1 << 5, step.events[0].auto),)
    assert view_for(step.state, 0).seats[1].passed_on == (0, 1, 5)


def test_002_ends_are_checked() -> None:
    state = opened(ROUND, "5-5")
    with pytest.raises(e.EndMalformed):
        apply(state, Play(0, t("5-5"), 5), NOW)
    with pytest.raises(e.TileDoesNotFit):  # the opener lies on the line
        apply(state, Play(0, t("5-5"), int(U)), NOW)
    assert play(state, 0, "5-5", R).state.round.chain == (0 << 6 | 5 << 3 | 5,)
    draw = playing(preset("web_draw", seats=2), ROUND, left=5, right=5, turn=0)
    with pytest.raises(e.EndMalformed):  # no short sides under any other scoring
        apply(draw, Play(0, t("1-5"), int(U)), NOW)


def test_002_three_seats_each_score_for_themselves() -> None:
    state = playing(FIVES3, ("5-5 0-1", "0-5 2-2", "4-5 3-3"), turn=0, lead=t("5-5"))
    state = play(state, 0, "5-5", L).state
    state = play(state, 1, "0-5", R).state
    state = play(state, 2, "4-5", L).state  # 4 + 0: nothing
    assert state.scores == (10, 10, 0) and state.round.turn == 0


def test_every_view_carries_the_open_ends_and_zero_points_under_other_rule_sets() -> None:
    draw = playing(preset("web_draw", seats=2), ("0-5 2-2", "1-4"), left=5, right=3, turn=0)
    view = view_for(draw, 0)
    assert [(int(a), n) for a, n in view.open_ends] == [(L, 5), (R, 3)]
    assert view.legal_moves == (Play(0, t("0-5"), L),) and view.move_points == (0,)
    assert (view.up_arm, view.down_arm, view.spinner_index) == ((), (), NOBODY)
    empty = playing(preset("web_draw", seats=2), ("0-5", "1-4"), turn=0)
    assert view_for(empty, 0).open_ends == () and empty.round.left == NO_END
    assert tile_index(5, 5) == t("5-5")


def test_create_accepts_web_fives_with_its_default_target() -> None:
    state = create(Create("t", "Ana", FIVES2.target, TIMING, FIVES2), NOW).state
    assert state.rules is FIVES2 and state.scores == (0, 0)
