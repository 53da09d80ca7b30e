# mypy: disable-error-code="union-attr"
"""Properties of random ``web_fives`` games (seed 002's all fives, hypothesis), at every
layout: tile conservation with the spinner's short sides, exactly one of play/draw/pass,
points scored at once and rounded round points, the end of the game (mid-round included),
hidden information, the layout as ``spinner.place`` builds it, serialisation and replay."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from services.rules import (
    Draw,
    Pass,
    Phase,
    Play,
    apply,
    can_draw,
    can_pass,
    decode_state,
    encode_state,
    fives,
    legal_moves,
    move_points,
    replay,
    spinner,
    view_for,
)
from services.rules import errors as e
from services.rules.events import GameEnded, RoundDealt, RoundEnded, TileLaid
from services.rules.rulesets import PRESETS, RuleSet, Scoring, preset
from services.rules.tiles import INDEX

from .test_preset_properties import Game, chain_tiles, new_game, play, tiles_in

LAYOUTS = [
    preset("web_fives", seats=seats, hand_size=hand_size, teams=teams)
    for seats, hand_size, teams in PRESETS["web_fives"].layouts
]
RULES = st.sampled_from(LAYOUTS)
SEEDS = st.integers(min_value=0, max_value=2**128 - 1)
SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def test_every_layout_scores_all_fives() -> None:
    assert len(LAYOUTS) == 3 and all(r.scoring is Scoring.ALL_FIVES for r in LAYOUTS)


@SETTINGS
@given(rules=RULES, seed=SEEDS, data=st.data())
def test_tiles_are_conserved_hands_line_short_sides_stock_and_set_aside(
    rules: RuleSet, seed: int, data: st.DataObject
) -> None:
    game = new_game(rules, seed)
    play(game, data, 300)
    for _, _, _, after in game.history:
        rnd = after.round
        if rnd is None:
            continue
        parts = [tiles_in(h) for h in rnd.hands]
        parts += [chain_tiles(rnd.chain), chain_tiles(rnd.up), chain_tiles(rnd.down)]
        parts += [set(rnd.stock), tiles_in(rnd.aside)]
        laid = len(rnd.chain) + len(rnd.up) + len(rnd.down)
        assert sum(len(p) for p in parts) == 28 == len(set().union(*parts))
        assert laid == sum(len(p) for p in parts[4:7])
        assert all(rnd.hands[s] == 0 for s in range(rules.seats, 4))
        assert (rnd.center == -1) is (not rnd.chain)


@SETTINGS
@given(rules=RULES, seed=SEEDS, data=st.data())
def test_exactly_one_of_a_legal_move_a_draw_or_a_pass_and_only_legal_moves_are_accepted(
    rules: RuleSet, seed: int, data: st.DataObject
) -> None:
    game = new_game(rules, seed)
    play(game, data, 250)
    for before, _, _, _ in game.history:
        if before.phase is not Phase.PLAYING or before.round is None:
            continue
        seat = before.round.turn
        moves = legal_moves(before, seat)
        options = [bool(moves), can_draw(before, seat), can_pass(before, seat)]
        assert options.count(True) == 1
        for command, allowed in ((Draw(seat), options[1]), (Pass(seat), options[2])):
            try:
                apply(before, command, game.now)
                accepted = True
            except (e.MustPlay, e.MustDraw, e.CannotDraw):
                accepted = False
            assert accepted is allowed
        if before.round.chain:  # on an empty table any end of the line opens
            for tile in tiles_in(before.round.hands[seat]):
                for end in (1, 2, 3, 4):
                    try:
                        apply(before, Play(seat, tile, end), game.now)
                        accepted = True
                    except e.TileDoesNotFit:
                        accepted = False
                    assert accepted is (Play(seat, tile, end) in moves)


@SETTINGS
@given(rules=RULES, seed=SEEDS, data=st.data())
def test_plays_score_their_listed_points_and_rounds_score_rounded_points(
    rules: RuleSet, seed: int, data: st.DataObject
) -> None:
    game = new_game(rules, seed)
    play(game, data, 400)
    for before, command, events, after in game.history:
        delta = [a - b for a, b in zip(after.scores, before.scores, strict=True)]
        assert all(d >= 0 and d % 5 == 0 for d in delta)
        expected = [0] * rules.sides
        for event in events:
            if isinstance(event, TileLaid):
                assert event.points % 5 == 0
                expected[rules.side_of(event.seat)] += event.points
            if isinstance(event, RoundEnded):
                result = event.result
                assert result.points == spinner.round_to_five(result.unrounded_points)
                if result.scoring_team >= 0:
                    expected[result.scoring_team] += result.points
        assert delta == expected
        if isinstance(command, Play):
            seat = command.seat
            listed = dict(zip(legal_moves(before, seat), move_points(before, seat), strict=True))
            event = next(ev for ev in events if isinstance(ev, TileLaid))
            assert event.points == listed[command]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rules=RULES, seed=SEEDS, data=st.data())
def test_the_game_ends_exactly_when_a_side_reaches_the_target_a_play_at_once(
    rules: RuleSet, seed: int, data: st.DataObject
) -> None:
    game = new_game(rules, seed, rules.min_target)
    play(game, data, 2_000)
    target = rules.min_target
    for before, _, events, after in game.history:
        reached = max(after.scores) >= target
        assert (after.phase is Phase.FINISHED) is reached
        if reached:
            assert after.scores[after.winner] >= target
            assert sorted(after.scores)[-2] < target
        if reached and before.phase is Phase.PLAYING:
            assert isinstance(events[-1], GameEnded)
            by_play = not any(isinstance(ev, RoundEnded) for ev in events)
            assert by_play is (after.last_result is None)
            if by_play:  # the play's points alone reached the target
                laid = next(ev for ev in events if isinstance(ev, TileLaid))
                assert before.scores[after.winner] + laid.points == after.scores[after.winner]


@SETTINGS
@given(rules=RULES, seed=SEEDS, data=st.data())
def test_no_view_shows_another_seats_tile_or_a_stock_tile(
    rules: RuleSet, seed: int, data: st.DataObject
) -> None:
    game = new_game(rules, seed)
    play(game, data, 250)
    for _, _, _, after in game.history:
        rnd = after.round
        if rnd is None:
            continue
        for seat in range(rules.seats):
            view = view_for(after, seat)
            assert view.hand == tuple(sorted(tiles_in(rnd.hands[seat])))
            assert len(view.move_points) == len(view.legal_moves)
            assert tuple(view.open_ends) == fives.open_ends(rnd)
            if after.phase is not Phase.PLAYING:
                continue
            hidden = set(rnd.stock) | tiles_in(rnd.aside)
            hidden |= set().union(*(tiles_in(rnd.hands[s]) for s in range(4) if s != seat))
            shown = set(view.hand) | {m.tile for m in view.legal_moves}
            for placed in (*view.chain, *view.up_arm, *view.down_arm):
                shown.add(INDEX[min(placed.left, placed.right)][max(placed.left, placed.right)])
            if isinstance(view.last_action, TileLaid):
                shown.add(view.last_action.tile)
            assert view.last_round is None and not shown & hidden


def _layouts(game: Game) -> None:
    """Fold ``spinner.place`` over the laid tiles of each round and compare."""
    layout = spinner.EMPTY
    for _, _, events, after in game.history:
        for event in events:
            if isinstance(event, RoundDealt):
                layout = spinner.EMPTY
            if isinstance(event, TileLaid):
                layout = spinner.place(layout, event.tile, event.end)
                assert spinner.play_points(layout) == event.points
        rnd = after.round
        if rnd is not None and any(isinstance(ev, TileLaid) for ev in events):
            assert fives.layout_of(rnd) == layout
            assert spinner.ends_total(layout) == spinner.ends_total(fives.layout_of(rnd))


@SETTINGS
@given(rules=RULES, seed=SEEDS, data=st.data())
def test_the_round_keeps_the_layout_spinner_place_builds_and_its_placements(
    rules: RuleSet, seed: int, data: st.DataObject
) -> None:
    game = new_game(rules, seed)
    play(game, data, 300)
    _layouts(game)
    for before, _, _, _ in game.history:
        rnd = before.round
        if before.phase is not Phase.PLAYING or rnd is None or not rnd.chain:
            continue
        seat = rnd.turn
        placements = spinner.placements(fives.layout_of(rnd), rnd.hands[seat])
        assert [(p.tile, p.end, p.points) for p in placements] == [
            (m.tile, m.end, points)
            for m, points in zip(legal_moves(before, seat), move_points(before, seat), strict=True)
        ]


@SETTINGS
@given(rules=RULES, seed=SEEDS, data=st.data())
def test_replay_and_serialisation_reproduce_every_state(
    rules: RuleSet, seed: int, data: st.DataObject
) -> None:
    game = new_game(rules, seed)
    play(game, data, 300)
    for _, _, _, after in game.history:
        encoded = encode_state(after)
        assert decode_state(encoded) == after and encoded[0] == 3
    assert replay(game.log) == game.state
