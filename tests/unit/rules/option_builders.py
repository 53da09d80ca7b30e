"""Builders of tables with options (issue 20): robots, the friendly end, the count aid."""

from __future__ import annotations

from services.rules import Create, Join, SetPresence, Start, TableState, apply, create
from services.rules.options import TableOptions
from services.rules.rulesets import RuleSet, preset

from .builders import NOW, TIMING

#: Seed 004's table in pairs, where every option exists.
SITE_PAIRS = preset("site", seats=4, teams=True)
#: Seed 002's draw game at two seats.
WEB_DRAW_2 = preset("web_draw", seats=2)


def table(rules: RuleSet, options: TableOptions, humans: int) -> TableState:
    """A waiting table of ``rules`` with ``options``: the host Ana and ``humans - 1`` more
    people seated (all connected)."""
    state = create(Create("t-opts", "Ana", rules.target, TIMING, rules, options), NOW).state
    for name in ("Bruno", "Chloé", "Dario")[: humans - 1]:
        state = apply(state, Join(name), NOW).state
    for seat in range(humans):
        state = apply(state, SetPresence(seat, True), NOW).state
    return state


def started(rules: RuleSet, options: TableOptions, humans: int, seed: int = 7) -> TableState:
    """:func:`table` started by its host (robots fill the empty seats if the options say so)."""
    return apply(table(rules, options, humans), Start(0, seed), NOW).state
