# mypy: disable-error-code="union-attr"
"""The seeds' worked examples (issue 19), one test each, named for the seed that gives it:
001 (family game with a stock), 002 (the web site's three ways), 003 (the app), 004 (the
site). Alice, Bob, Chloé and David sit at seats 0, 1, 2, 3."""

from __future__ import annotations

import pytest

from services.rules import (
    NOBODY,
    Draw,
    End,
    Expire,
    Outcome,
    Pass,
    Phase,
    Play,
    Start,
    TableState,
    Transition,
    apply,
    auto_play_choice,
    can_draw,
    can_pass,
    legal_moves,
    view_for,
)
from services.rules import errors as e
from services.rules.events import Drew, RoundEnded, TileLaid
from services.rules.openers import best_tile
from services.rules.rulesets import preset
from services.rules.tiles import tile_index

from .builders import NOW, TIMING, hand, tiles
from .rule_builders import lobby_of, playing

L, R = End.LEFT, End.RIGHT
FAMILY3 = preset("family_draw", seats=3)
#: Alice and Bob level at 4, Chloé 12, nobody holding a 5 or a 6.
TIED = ("0-4", "1-3", "3-4 2-3")


def _result(transition: Transition) -> RoundEnded:
    events = transition.events
    return next(ev for ev in events if isinstance(ev, RoundEnded))


# --- 001: the chain that changes -------------------------------------------------------


def _chloe_stuck() -> TableState:
    """001 section 06: ends 2 and 5; Alice holds 2-6, Bob 5-5, Chloé neither 6 nor 5."""
    state = playing(
        FAMILY3,
        ("2-6 0-0", "5-5 1-1", "0-1 2-2 4-4"),
        left=2,
        right=5,
        turn=0,
        stock="0-3 1-5 6-6",
    )
    state = apply(state, Play(0, tile_index(2, 6), L), NOW).state
    assert state.round is not None and (state.round.left, state.round.right) == (6, 5)
    state = apply(state, Play(1, tile_index(5, 5), R), NOW).state
    assert state.round is not None and (state.round.left, state.round.right) == (6, 5)
    return state


def test_001_a_double_does_not_replay_and_keeps_the_end() -> None:
    state = _chloe_stuck()
    assert state.round.turn == 2  # Bob does not play again


def test_001_a_stuck_seat_must_draw_not_pass() -> None:
    state = _chloe_stuck()
    assert legal_moves(state, 2) == () and can_draw(state, 2) and not can_pass(state, 2)
    with pytest.raises(e.MustDraw):
        apply(state, Pass(2), NOW)


def test_001_draw_until_a_tile_fits_then_lay_it_at_once() -> None:
    state = _chloe_stuck()
    t = apply(state, Draw(2), NOW)
    assert t.events == (Drew(2, 1),)
    state = t.state
    assert state.round is not None and state.round.hands[2] >> tile_index(0, 3) & 1
    assert state.turn_number == 7 + 2 and state.round.turn == 2  # the turn goes on
    state = apply(state, Draw(2), NOW).state  # 1-5 now fits
    with pytest.raises(e.MustPlay):
        apply(state, Draw(2), NOW)  # no drawing on with a tile that fits
    assert legal_moves(state, 2) == (Play(2, tile_index(1, 5), R),)
    state = apply(state, Play(2, tile_index(1, 5), R), NOW).state
    assert state.round is not None and (state.round.left, state.round.right) == (6, 1)
    assert state.round.hands[2] == hand("0-1 2-2 4-4 0-3")  # she keeps 0-3
    assert state.round.turn == 0 and state.round.stock == tuple(tiles("6-6"))
    assert state.round.drawn == (0, 0, 2, 0)


def test_001_a_timed_out_seat_draws_until_a_tile_fits_then_lays_the_first_fitting_tile() -> None:
    state = _chloe_stuck()
    assert auto_play_choice(state) == Draw(2)
    t = apply(state, Expire(state.turn_number), state.deadline_ms)
    assert [type(ev) for ev in t.events] == [Drew, TileLaid]
    assert t.events[0] == Drew(2, 2, t.events[1].auto)
    assert t.events[1].tile == tile_index(1, 5)
    assert t.state.round is not None and t.state.round.turn == 0


def test_001_others_learn_that_a_seat_drew_and_how_many_never_which_tile() -> None:
    state = apply(_chloe_stuck(), Draw(2), NOW).state
    drawn = tile_index(0, 3)
    for seat in (0, 1):
        view = view_for(state, seat)
        assert view.seats[2].drawn == 1 and view.seats[2].tile_count == 4
        assert view.stock_count == 2 and drawn not in view.hand
        assert view.last_action == Drew(2, 1)
    assert drawn in view_for(state, 2).hand


def test_001_pass_only_when_the_stock_is_empty() -> None:
    state = playing(FAMILY3, ("0-0", "1-1", "6-6 2-2"), left=3, right=4, turn=0)
    assert can_pass(state, 0) and not can_draw(state, 0)
    with pytest.raises(e.CannotDraw):
        apply(state, Draw(0), NOW)
    assert apply(state, Pass(0), NOW).state.round.turn == 1


# --- 001: scores ----------------------------------------------------------------------------


def test_001_score_after_a_domino_is_16() -> None:
    state = playing(FAMILY3, ("2-5", "1-4 0-6", "2-3"), left=5, right=6, turn=0)
    t = apply(state, Play(0, tile_index(2, 5), L), NOW)
    result = _result(t).result
    assert (result.outcome, result.scoring_team, result.points) == (Outcome.DOMINO, 0, 16)
    assert t.state.scores == (16, 0, 0)


def _blocked(
    rules_name: str, hands: tuple[str, str, str], ends: tuple[int, int] = (1, 2)
) -> Transition:
    """Stock empty, ends (1 and 2) that nobody can play: Alice, Bob then Chloé pass."""
    state = playing(preset(rules_name, seats=3), hands, left=ends[0], right=ends[1], turn=0)
    for seat in (0, 1, 2):
        t = apply(state, Pass(seat), NOW)
        state = t.state
    return t


def test_001_score_after_a_block_is_21() -> None:
    t = _blocked("family_draw", ("0-4", "3-6", "6-6"))  # 4, 9, 12
    result = _result(t).result
    assert (result.outcome, result.scoring_team, result.points) == (Outcome.BLOCKED, 0, 21)
    assert t.state.scores == (21, 0, 0)


def test_001_a_round_is_blocked_only_when_every_seat_passed_in_a_row() -> None:
    state = playing(FAMILY3, ("0-4", "3-6", "6-6"), left=1, right=2, turn=0)
    state = apply(apply(state, Pass(0), NOW).state, Pass(1), NOW).state
    assert state.phase is Phase.PLAYING and state.round is not None and state.round.passes == 2


def test_001_a_tie_scores_nothing() -> None:
    t = _blocked("family_draw", TIED, (5, 6))  # 4, 4, 12
    result = _result(t).result
    assert (result.outcome, result.scoring_team, result.points) == (
        Outcome.BLOCKED_TIE,
        NOBODY,
        0,
    )
    assert t.state.scores == (0, 0, 0)


# --- 002, 003: blocked scores --------------------------------------------------------------


def test_002_blocked_scores_the_others_minus_its_own() -> None:
    result = _result(_blocked("web_block", ("0-4", "3-6", "6-6"))).result
    assert (result.scoring_team, result.points) == (0, 9 + 12 - 4)


def test_003_blocked_scores_every_tile_left_its_own_included() -> None:
    result = _result(_blocked("app", ("0-4", "3-6", "6-6"))).result
    assert (result.scoring_team, result.points) == (0, 4 + 9 + 12)


def test_003_teams_block_on_pair_sums_and_score_every_tile_left() -> None:
    state = playing(
        preset("app", seats=4, hand_size=5), ("0-4", "3-6", "0-5", "0-0"), left=1, right=2
    )
    for seat in range(4):
        t = apply(state, Pass(seat), NOW)
        state = t.state
    result = _result(t).result
    assert result.team_pips == (9, 9) and result.outcome is Outcome.BLOCKED_TIE
    assert result.scoring_team == NOBODY  # 003: level camps score nothing


def test_003_a_domino_in_teams_scores_the_other_pair_only() -> None:
    state = playing(preset("app", seats=4), ("1-1", "3-6", "6-6", "0-5"), left=1, right=2)
    result = _result(apply(state, Play(0, tile_index(1, 1), L), NOW)).result
    assert (result.scoring_team, result.points) == (0, 9 + 5)


@pytest.mark.parametrize(
    ("seats", "hand_size", "stock"),
    [(2, 5, 18), (2, 7, 14), (3, 5, 13), (3, 7, 7), (4, 5, 8), (4, 7, 0)],
)
def test_003_undealt_tiles_are_the_stock(seats: int, hand_size: int, stock: int) -> None:
    rules = preset("app", seats=seats, hand_size=hand_size)
    state = apply(lobby_of(rules), Start(0, 99), NOW).state
    assert state.round is not None and len(state.round.stock) == stock
    assert view_for(state, 0).stock_count == stock


# --- openers ------------------------------------------------------------------------------


def test_001_the_highest_double_opens_and_must_be_laid() -> None:
    rules = preset("family_draw", seats=2)
    state = apply(lobby_of(rules), Start(0, 5), NOW).state
    rnd = state.round
    assert rnd is not None and rnd.lead != NOBODY
    dealt = rnd.hands[0] | rnd.hands[1]
    doubles = [t for t in range(28) if dealt >> t & 1 and t in {tile_index(n, n) for n in range(7)}]
    assert rnd.lead == max(doubles, key=lambda t: t) or not doubles
    assert legal_moves(state, rnd.opener) == (Play(rnd.opener, rnd.lead, L),)
    other = next(t for t in range(28) if rnd.hands[rnd.opener] >> t & 1 and t != rnd.lead)
    with pytest.raises(e.TileDoesNotFit):
        apply(state, Play(rnd.opener, other, L), NOW)


def test_001_without_a_double_the_heaviest_tile_opens_higher_half_first() -> None:
    assert best_tile(hand("2-6 3-5 0-1")) == tile_index(2, 6)  # weight 8: 6 beats 5
    assert best_tile(hand("5-6 1-1")) == tile_index(1, 1)  # any double first


def _next_round(rules_name: str, hands: tuple[str, ...], winner_plays: bool) -> TableState:
    """Round 1 with the opener at seat 1, ended by Alice going out (or a blocked tie)."""
    rules = preset(rules_name, seats=3)
    if winner_plays:
        state = playing(rules, ("2-5", *hands[1:]), left=5, right=6, turn=0, opener=1)
        state = apply(state, Play(0, tile_index(2, 5), L), NOW).state
    else:
        state = playing(rules, hands, left=5, right=6, turn=0, opener=1)
        for seat in (0, 1, 2):
            state = apply(state, Pass(seat), NOW).state
    assert state.phase is Phase.ROUND_OVER
    return apply(state, Expire(state.turn_number), state.deadline_ms).state


def test_001_the_previous_winner_opens_the_next_round_with_any_tile() -> None:
    state = _next_round("family_draw", ("", "1-4 0-6", "2-3"), winner_plays=True)
    assert state.round.opener == 0 and state.round.lead == NOBODY


def test_001_after_a_tie_the_highest_double_opens_again() -> None:
    state = _next_round("family_draw", TIED, winner_plays=False)
    rnd = state.round
    assert rnd.lead != NOBODY and rnd.hands[rnd.opener] >> rnd.lead & 1


def test_002_after_a_tie_the_seat_after_the_previous_opener_opens() -> None:
    state = _next_round("web_block", TIED, winner_plays=False)
    assert state.round.opener == 2 and state.round.lead == NOBODY


def test_003_every_round_opens_with_the_highest_double() -> None:
    state = _next_round("app", ("", "1-4 0-6", "2-3"), winner_plays=True)
    rnd = state.round
    assert rnd.lead != NOBODY and rnd.hands[rnd.opener] >> rnd.lead & 1


def test_004_later_rounds_rotate_with_any_tile() -> None:
    state = _next_round("site", ("", "1-4 0-6", "2-3"), winner_plays=True)
    assert state.round.opener == 2 and state.round.lead == NOBODY


def test_004_with_four_players_the_six_six_holder_opens_with_any_tile() -> None:
    state = apply(lobby_of(preset("site", seats=4)), Start(0, 3), NOW).state
    rnd = state.round
    assert rnd is not None and rnd.hands[rnd.opener] >> tile_index(6, 6) & 1
    assert rnd.lead == NOBODY and len(legal_moves(state, rnd.opener)) == 7


# --- 004: scores --------------------------------------------------------------------------


def test_004_the_partners_hand_counts_on_a_domino() -> None:
    state = playing(preset("site", seats=4), ("1-1", "3-6", "6-6", "0-5"), left=1, right=2)
    result = _result(apply(state, Play(0, tile_index(1, 1), L), NOW)).result
    assert (result.scoring_team, result.points) == (0, 9 + 12 + 5)


def test_004_a_blocked_tie_goes_to_the_opener() -> None:
    state = playing(preset("site", seats=3), TIED, left=5, right=6, opener=1)
    for seat in (0, 1, 2):
        t = apply(state, Pass(seat), NOW)
        state = t.state
    result = _result(t).result
    assert (result.outcome, result.scoring_team, result.points) == (Outcome.BLOCKED_TIE, 1, 16)


def test_004_a_blocked_tie_without_the_opener_goes_to_the_nearest_after_it() -> None:
    state = playing(preset("site", seats=3), TIED, left=5, right=6, opener=2)
    for seat in (0, 1, 2):
        t = apply(state, Pass(seat), NOW)
        state = t.state
    result = _result(t).result
    assert (result.outcome, result.scoring_team, result.points) == (Outcome.BLOCKED_TIE, 0, 16)


def test_a_game_ends_when_a_side_reaches_the_target() -> None:
    state = playing(FAMILY3, ("2-5", "1-4 0-6", "2-3"), left=5, right=6, scores=(90, 0, 0))
    t = apply(state, Play(0, tile_index(2, 5), L), NOW)
    assert t.state.phase is Phase.FINISHED and t.state.winner == 0
    assert t.state.scores == (106, 0, 0)
    assert TIMING.turn_ms  # the builders' clocks
