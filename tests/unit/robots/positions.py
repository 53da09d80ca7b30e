"""Positions for the computer players' tests: random states of whole games under every preset
and layout, chosen positions on a line, and the check that a decision is legal."""

from __future__ import annotations

import random
from collections.abc import Iterator

from services.robots.levels import Level, decide
from services.robots.observation import Decision, Observation, from_view
from services.rules import (
    Draw,
    Expire,
    Pass,
    Phase,
    Play,
    RoundState,
    RuleSet,
    Start,
    TableState,
    apply,
    view_for,
)
from services.rules.events import RoundDealt
from services.rules.rulesets import preset
from services.rules.tiles import NO_END
from tests.unit.rules.builders import NOW, TIMING, hand, tiles
from tests.unit.rules.rule_builders import layouts, lobby_of

#: Every (preset, layout) of the rule sets, all fives included.
LAYOUTS = layouts()
CLASSIC = preset("classic")
BLOCK2 = preset("web_block", seats=2)
DRAW2 = preset("web_draw", seats=2)
FIVES2 = preset("web_fives", seats=2)


def tile(spec: str) -> int:
    """The index of one tile written ``"5-3"``."""
    (index,) = tiles(spec)
    return index


def observe(state: TableState, seat: int | None = None) -> Observation:
    """The observation of ``seat`` (the seat to play by default): its view, nothing more."""
    assert state.round is not None
    return from_view(view_for(state, state.round.turn if seat is None else seat))


def random_turns(rules: RuleSet, seed: int, rng: random.Random) -> Iterator[TableState]:
    """Every state of a whole game of ``rules`` (deals from ``seed``) where a seat is to act;
    each turn is played by a level drawn at random (so by random play a third of the time),
    the breaks between rounds end at their deadline."""
    state = lobby_of(rules)
    state = apply(state, Start(0, seed), NOW).state
    now = NOW
    for _ in range(3_000):
        if state.phase is Phase.FINISHED:
            return
        if state.phase is Phase.ROUND_OVER:
            now = max(now, state.deadline_ms)
            state = apply(state, Expire(state.turn_number), now).state
            continue
        yield state
        level = rng.choice(list(Level))
        state = apply(state, decide(level, observe(state), rng), now).state
        now += 1
    raise AssertionError("the game did not end")


def assert_legal(state: TableState, decision: Decision) -> None:
    """``decision`` is what the seat to act may do: a listed move, a draw only when it may
    draw, a pass only when it may pass; and the engine accepts it."""
    observation = observe(state)
    assert decision.seat == observation.seat
    if isinstance(decision, Play):
        moves = {(move.tile, move.end) for move in observation.moves}
        assert (decision.tile, decision.end) in moves
    elif isinstance(decision, Draw):
        assert observation.can_draw and not observation.moves
    else:
        assert isinstance(decision, Pass)
        assert observation.can_pass and not observation.moves
    apply(state, decision, NOW)


def line(
    rules: RuleSet,
    hands: tuple[str, ...],
    chain: str = "",
    *,
    turn: int = 0,
    by: tuple[int, ...] = (),
    passed: tuple[int, ...] = (),
    stock: str = "",
    scores: tuple[int, ...] | None = None,
) -> TableState:
    """A round of ``rules`` in play on a line (not all fives): the hands (one per seat),
    ``chain`` the tiles from left to right each written as its halves in that order (``"6-3
    3-3 3-1"``: the ends are 6 and 1), laid by the seats of ``by`` (the seat to play by
    default), ``passed`` the number masks each seat passed on, ``turn`` to act."""
    codes = []
    words = chain.split()
    for i, word in enumerate(words):
        a, b = (int(x) for x in word.split("-"))
        seat = by[i] if by else turn
        codes.append(seat << 6 | a << 3 | b)
    left = int(words[0][0]) if words else NO_END
    right = int(words[-1][-1]) if words else NO_END
    masks = [hand(h) for h in hands] + [0] * (4 - len(hands))
    masks_passed = list(passed) + [0] * (4 - len(passed))
    rnd = RoundState(
        number=1,
        opener=turn,
        hands=(masks[0], masks[1], masks[2], masks[3]),
        chain=tuple(codes),
        left=left,
        right=right,
        turn=turn,
        passes=0,
        passed=(masks_passed[0], masks_passed[1], masks_passed[2], masks_passed[3]),
        last_layer=codes[-1] >> 6 if codes else -1,
        stock=tuple(tiles(stock)),
    )
    base = lobby_of(rules)
    return base._replace(
        version=10,
        phase=Phase.PLAYING,
        seed=12345,
        scores=scores if scores is not None else (0,) * rules.sides,
        round=rnd,
        turn_number=7,
        deadline_ms=NOW + TIMING.turn_ms,
        last_action=RoundDealt(1, turn),
    )
