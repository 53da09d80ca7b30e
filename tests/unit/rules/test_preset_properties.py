"""Properties of random games under every playable preset and layout (issue 19, hypothesis):
tile conservation with the stock, exactly one of play/draw/pass, blocking, scores that only
grow, the end of the game, hidden information (hands and stock) and replay."""

from __future__ import annotations

from dataclasses import dataclass, field

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from services.rules import (
    Command,
    Create,
    Draw,
    Expire,
    Join,
    LogEntry,
    Outcome,
    Pass,
    Phase,
    SetPresence,
    Start,
    TableState,
    apply,
    can_draw,
    can_pass,
    create,
    decode_state,
    encode_state,
    legal_moves,
    replay,
    view_for,
)
from services.rules import errors as e
from services.rules.events import Drew, Passed, RoundEnded, TileLaid
from services.rules.rulesets import PRESETS, RuleSet
from services.rules.tiles import INDEX

from .builders import TIMING
from .rule_builders import layouts

#: Every (preset, layout) pair but all fives' (test_fives_properties.py has its own).
LAYOUTS = layouts(name for name in PRESETS if name != "web_fives")
RULES = st.sampled_from(LAYOUTS)
SEEDS = st.integers(min_value=0, max_value=2**128 - 1)
SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@dataclass
class Game:
    state: TableState
    now: int = 1_000
    log: list[LogEntry] = field(default_factory=list)
    history: list[tuple[TableState, Command, tuple[object, ...], TableState]] = field(
        default_factory=list
    )

    def do(self, command: Command) -> None:
        before = self.state
        t = apply(before, command, self.now)
        if t.state is not before:
            self.log.append((command, self.now))
        self.history.append((before, command, t.events, t.state))
        self.state = t.state


def new_game(rules: RuleSet, seed: int, target: int | None = None) -> Game:
    command = Create("prop", "A", rules.target if target is None else target, TIMING, rules)
    game = Game(create(command, 0).state)
    game.log.append((command, 0))
    for name in ("B", "C", "D")[: rules.seats - 1]:
        game.do(Join(name))
    game.do(Start(0, seed))
    return game


def play(game: Game, data: st.DataObject, max_steps: int) -> None:
    """Random legal moves, draws, passes, time-outs and presence changes."""
    for _ in range(max_steps):
        state = game.state
        if state.phase is Phase.FINISHED:
            return
        game.now += data.draw(st.integers(min_value=1, max_value=3_000), label="dt")
        if state.phase is Phase.ROUND_OVER:
            game.now = max(game.now, state.deadline_ms)
            game.do(Expire(state.turn_number))
            continue
        assert state.round is not None
        seat = state.round.turn
        action = data.draw(st.integers(min_value=0, max_value=9), label="action")
        if action == 0:
            game.now = max(game.now, state.deadline_ms)
            game.do(Expire(state.turn_number))
        elif action == 1:
            who = data.draw(st.integers(min_value=0, max_value=state.rules.seats - 1))
            game.do(SetPresence(who, not state.connected[who]))
        else:
            moves = legal_moves(state, seat)
            if moves:
                game.do(data.draw(st.sampled_from(moves), label="move"))
            elif can_draw(state, seat):
                game.do(Draw(seat))
            else:
                game.do(Pass(seat))


def tiles_in(mask: int) -> set[int]:
    return {t for t in range(28) if mask >> t & 1}


def chain_tiles(chain: tuple[int, ...]) -> set[int]:
    return {INDEX[min(c >> 3 & 7, c & 7)][max(c >> 3 & 7, c & 7)] for c in chain}


@SETTINGS
@given(rules=RULES, seed=SEEDS, data=st.data())
def test_tiles_are_conserved_hands_chain_stock_and_set_aside(
    rules: RuleSet, seed: int, data: st.DataObject
) -> None:
    game = new_game(rules, seed)
    play(game, data, 300)
    for _, _, _, after in game.history:
        rnd = after.round
        if rnd is None:
            continue
        parts = [tiles_in(h) for h in rnd.hands]
        parts += [chain_tiles(rnd.chain), set(rnd.stock), tiles_in(rnd.aside)]
        sizes = [len(rnd.chain), len(rnd.stock)]
        assert len(set(rnd.stock)) == len(rnd.stock)
        assert sum(len(p) for p in parts) == 28 == len(set().union(*parts))
        assert sizes[0] == len(parts[4])
        assert all(rnd.hands[s] == 0 for s in range(rules.seats, 4))


@SETTINGS
@given(rules=RULES, seed=SEEDS, data=st.data())
def test_exactly_one_of_a_legal_move_a_draw_or_a_pass_and_each_is_refused_otherwise(
    rules: RuleSet, seed: int, data: st.DataObject
) -> None:
    game = new_game(rules, seed)
    play(game, data, 250)
    for before, _, _, _ in game.history:
        if before.phase is not Phase.PLAYING or before.round is None:
            continue
        seat = before.round.turn
        options = [bool(legal_moves(before, seat)), can_draw(before, seat), can_pass(before, seat)]
        assert options.count(True) == 1
        for command, allowed in ((Draw(seat), options[1]), (Pass(seat), options[2])):
            try:
                apply(before, command, game.now)
                accepted = True
            except (e.MustPlay, e.MustDraw, e.CannotDraw):
                accepted = False
            assert accepted is allowed


@SETTINGS
@given(rules=RULES, seed=SEEDS, data=st.data())
def test_a_round_is_blocked_iff_every_seat_passed_in_a_row_and_scores_only_grow(
    rules: RuleSet, seed: int, data: st.DataObject
) -> None:
    game = new_game(rules, seed)
    play(game, data, 400)
    recent: list[object] = []
    for before, _, events, after in game.history:
        assert len(after.scores) == rules.sides
        assert all(a >= b for a, b in zip(after.scores, before.scores, strict=True))
        for event in events:
            if isinstance(event, (TileLaid, Passed)):
                recent.append(event)
            if isinstance(event, Passed):  # only with the stock empty (drawn out by auto-play)
                assert after.round is not None and not after.round.stock
            if isinstance(event, RoundEnded):
                tail = recent[-rules.seats :]
                passes = len(tail) == rules.seats and all(isinstance(x, Passed) for x in tail)
                blocked = event.result.outcome in (Outcome.BLOCKED, Outcome.BLOCKED_TIE)
                assert blocked is passes
                delta = [a - b for a, b in zip(after.scores, before.scores, strict=True)]
                if event.result.scoring_team >= 0:
                    assert delta[event.result.scoring_team] == event.result.points
                assert sum(delta) == (event.result.points if event.result.scoring_team >= 0 else 0)
                recent.clear()


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rules=RULES, seed=SEEDS, data=st.data())
def test_the_game_ends_exactly_when_a_side_reaches_the_target(
    rules: RuleSet, seed: int, data: st.DataObject
) -> None:
    game = new_game(rules, seed, rules.min_target)
    play(game, data, 2_000)
    target = rules.min_target
    for _, _, _, after in game.history:
        reached = max(after.scores) >= target
        assert (after.phase is Phase.FINISHED) is reached
        if reached:
            assert after.scores[after.winner] >= target
            assert sorted(after.scores)[-2] < target


@SETTINGS
@given(rules=RULES, seed=SEEDS, data=st.data())
def test_no_view_shows_another_seats_tile_or_a_stock_tile(
    rules: RuleSet, seed: int, data: st.DataObject
) -> None:
    game = new_game(rules, seed)
    play(game, data, 250)
    for _, _, events, after in game.history:
        rnd = after.round
        if rnd is None:
            continue
        for event in events:
            if isinstance(event, Drew):
                assert event._fields == ("seat", "count", "auto")
        for seat in range(rules.seats):
            view = view_for(after, seat)
            assert view.hand == tuple(sorted(tiles_in(rnd.hands[seat])))
            assert view.stock_count == len(rnd.stock) and view.rules == rules
            assert len(view.seats) == rules.seats and len(view.scores) == rules.sides
            if after.phase is not Phase.PLAYING:
                continue
            hidden = set(rnd.stock) | tiles_in(rnd.aside)
            hidden |= set().union(*(tiles_in(rnd.hands[s]) for s in range(4) if s != seat))
            shown = set(view.hand) | {m.tile for m in view.legal_moves}
            shown |= {INDEX[min(p.left, p.right)][max(p.left, p.right)] for p in view.chain}
            if isinstance(view.last_action, TileLaid):
                shown.add(view.last_action.tile)
            assert view.last_round is None and not shown & hidden
            assert [s.tile_count for s in view.seats] == [
                rnd.hands[s].bit_count() for s in range(rules.seats)
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
        assert decode_state(encoded) == after
        assert encoded[0] == (2 if rules.preset == "classic" else 3)
    assert replay(game.log) == game.state
