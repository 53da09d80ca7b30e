"""Builders of engine states for scenario tests: hands written as "6-6 5-3", chosen ends."""

from __future__ import annotations

from services.rules import (
    NOBODY,
    Create,
    Join,
    Phase,
    RoundState,
    TableState,
    Timing,
    apply,
    create,
)
from services.rules.events import RoundDealt
from services.rules.tiles import NO_END, mask_of, tile_index

TIMING = Timing(turn_ms=45_000, away_ms=5_000, break_ms=10_000)
NOW = 1_000_000


def tiles(spec: str) -> list[int]:
    """Tile indices of a spec like ``"6-6 5-3"`` (halves in any order)."""
    out = []
    for word in spec.split():
        a, b = (int(x) for x in word.split("-"))
        out.append(tile_index(min(a, b), max(a, b)))
    return out


def hand(spec: str) -> int:
    """The hand mask of a spec like ``"6-6 5-3"``."""
    return mask_of(tiles(spec))


def lobby(players: int = 4, target: int = 100) -> TableState:
    """A waiting table with ``players`` seated (the host first)."""
    state = create(Create("t-test", "Host", target, TIMING), NOW).state
    for i in range(1, players):
        state = apply(state, Join(f"P{i}"), NOW).state
    return state


def in_play(
    hands: tuple[str, str, str, str],
    *,
    left: int = NO_END,
    right: int = NO_END,
    turn: int = 0,
    opener: int | None = None,
    passes: int = 0,
    passed: tuple[int, int, int, int] = (0, 0, 0, 0),
    last_layer: int = NOBODY,
    scores: tuple[int, int] = (0, 0),
    target: int = 100,
    connected: tuple[bool, bool, bool, bool] = (True, True, True, True),
    number: int = 1,
) -> TableState:
    """A table in PHASE_PLAYING with the given hands and open ends, ``turn`` to act at NOW.

    When the ends are set, the chain holds one tile showing them (laid by ``last_layer``, or
    by the opener). The state is not a complete deal: scenario tests set only what matters.
    """
    base = lobby(target=target)
    opener = turn if opener is None else opener
    chain: tuple[int, ...] = ()
    if left != NO_END:
        layer = last_layer if last_layer != NOBODY else opener
        chain = (layer << 6 | left << 3 | right,)
        if last_layer == NOBODY:
            last_layer = opener
    rnd = RoundState(
        number=number,
        opener=opener,
        hands=(hand(hands[0]), hand(hands[1]), hand(hands[2]), hand(hands[3])),
        chain=chain,
        left=left,
        right=right,
        turn=turn,
        passes=passes,
        passed=passed,
        last_layer=last_layer,
    )
    return base._replace(
        version=10,
        phase=Phase.PLAYING,
        connected=connected,
        seed=12345,
        scores=scores,
        round=rnd,
        turn_number=7,
        deadline_ms=NOW + TIMING.turn_ms,
        last_action=RoundDealt(number, opener),
    )
