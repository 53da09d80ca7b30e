"""Builders of states under any rule set (issue 19): a full lobby, a round in play with
chosen hands, ends and stock."""

from __future__ import annotations

from collections.abc import Iterable

from services.rules import NOBODY, Create, Join, Phase, RoundState, TableState, apply, create
from services.rules.events import RoundDealt
from services.rules.rulesets import PRESETS, RuleSet, preset
from services.rules.tiles import NO_END

from .builders import NOW, TIMING, hand, tiles

NAMES = ("Alice", "Bob", "Chloé", "David")


def layouts(names: Iterable[str] | None = None) -> list[RuleSet]:
    """Every ``(seats, hand size, teams)`` layout of the presets ``names`` (all: ``None``),
    each as its adjusted rule set."""
    chosen = PRESETS if names is None else names
    return [
        preset(name, seats=seats, hand_size=hand_size, teams=teams)
        for name in chosen
        for seats, hand_size, teams in PRESETS[name].layouts
    ]


def lobby_of(rules: RuleSet, target: int | None = None) -> TableState:
    """A waiting table of ``rules`` with every seat taken (Alice the host)."""
    command = Create("t-rules", NAMES[0], rules.target if target is None else target, TIMING, rules)
    state = create(command, NOW).state
    for name in NAMES[1 : rules.seats]:
        state = apply(state, Join(name), NOW).state
    return state


def playing(
    rules: RuleSet,
    hands: tuple[str, ...],
    *,
    left: int = NO_END,
    right: int = NO_END,
    turn: int = 0,
    opener: int | None = None,
    stock: str = "",
    passes: int = 0,
    last_layer: int = NOBODY,
    scores: tuple[int, ...] | None = None,
    target: int | None = None,
    number: int = 1,
    lead: int = NOBODY,
) -> TableState:
    """A table of ``rules`` in PHASE_PLAYING with the given hands (one per seat), ends and
    stock (a spec like ``"0-3 1-5"``, drawn in that order), ``turn`` to act at NOW."""
    base = lobby_of(rules, target)
    opener = turn if opener is None else opener
    chain: tuple[int, ...] = ()
    if left != NO_END:
        layer = last_layer if last_layer != NOBODY else opener
        chain = (layer << 6 | left << 3 | right,)
        last_layer = layer
    masks = [hand(h) for h in hands] + [0] * (4 - len(hands))
    rnd = RoundState(
        number=number,
        opener=opener,
        hands=(masks[0], masks[1], masks[2], masks[3]),
        chain=chain,
        left=left,
        right=right,
        turn=turn,
        passes=passes,
        passed=(0, 0, 0, 0),
        last_layer=last_layer,
        stock=tuple(tiles(stock)),
        lead=lead,
    )
    return base._replace(
        version=10,
        phase=Phase.PLAYING,
        connected=(True, True, True, True),
        seed=12345,
        scores=scores if scores is not None else (0,) * rules.sides,
        round=rnd,
        turn_number=7,
        deadline_ms=NOW + TIMING.turn_ms,
        last_action=RoundDealt(number, opener),
    )
