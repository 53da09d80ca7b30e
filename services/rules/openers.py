"""Who opens a round, and with which tile (R6, R7 for classic; ``Opener``/``NextOpener``).

:func:`opening` gives the opener of a round and the tile it must lay (``NOBODY``: any tile).
Round 1 follows ``rules.opener``; later rounds ``rules.next_opener``:

- ``Opener.SIX_SIX_HOLDER``: the holder of 6-6, any tile (R6).
- ``Opener.HIGHEST_DOUBLE``: the holder of the best tile dealt lays it: the highest double,
  else the heaviest tile, equal weights ranked by the higher half (001). That order is total
  (two tiles of equal weight and equal higher half are the same tile), so the seat-order
  tie-break of 003 ("le plus proche du donneur") never has to apply.
- ``NextOpener.ROTATION``: the seat after the previous opener (R7); ``OPENER_AGAIN``: the
  ``Opener`` rule; ``PREVIOUS_WINNER``: the previous round's winner, else (nobody scored)
  the ``Opener`` rule; ``PREVIOUS_WINNER_ELSE_NEXT``: the winner, else the seat after the
  previous opener. Winners open with any tile.

The winner of a round is the seat that laid its last tile; for a blocked round, the
lightest hand of the scoring side (individual play: the side's one seat), equal hands
going to the seat first in turn order from the round's opener.
"""

from __future__ import annotations

from typing import Final

from .rulesets import NextOpener, Opener, RuleSet
from .state import NOBODY, Outcome, RoundResult
from .tiles import DOUBLE_SIX, HIGH, LOW, PIPS, TILE_COUNT, points, tiles_of

#: ``RANK[t]``: the opening order of tile ``t`` (higher opens): doubles above every other
#: tile by value, then weight, then the higher half.
RANK: Final[tuple[int, ...]] = tuple(
    1_000 + LOW[t] if LOW[t] == HIGH[t] else PIPS[t] * 10 + HIGH[t] for t in range(TILE_COUNT)
)


def best_tile(mask: int) -> int:
    """The tile of ``mask`` that opens first under ``HIGHEST_DOUBLE``; ``NOBODY`` if empty."""
    return max(tiles_of(mask), key=RANK.__getitem__, default=NOBODY)


def by_opener_rule(rules: RuleSet, hands: tuple[int, ...]) -> tuple[int, int]:
    """``(opener, lead)`` by ``rules.opener`` for the dealt ``hands``."""
    seats = range(rules.seats)
    if rules.opener is Opener.SIX_SIX_HOLDER:
        return next(s for s in seats if hands[s] >> DOUBLE_SIX & 1), NOBODY
    dealt = 0
    for s in seats:
        dealt |= hands[s]
    lead = best_tile(dealt)
    return next(s for s in seats if hands[s] >> lead & 1), lead


def round_winner(rules: RuleSet, result: RoundResult) -> int:
    """The seat that won ``result`` (see the module docstring); ``NOBODY`` if nobody scored."""
    side = result.scoring_team
    if side == NOBODY:
        return NOBODY
    if result.outcome is Outcome.DOMINO:
        return result.domino_seat
    order = [(result.opener + i) % rules.seats for i in range(rules.seats)]
    members = [s for s in order if rules.side_of(s) == side]
    return min(members, key=lambda s: points(result.hands[s]))


def opening(
    rules: RuleSet,
    hands: tuple[int, ...],
    number: int,
    previous_opener: int,
    previous: RoundResult | None,
) -> tuple[int, int]:
    """``(opener, lead)`` of round ``number``: the seat to act first and the tile it must lay
    (``NOBODY``: any tile). ``previous_opener`` and ``previous`` describe the round before."""
    nxt = rules.next_opener
    if number == 1 or nxt is NextOpener.OPENER_AGAIN:
        return by_opener_rule(rules, hands)
    after = (previous_opener + 1) % rules.seats
    if nxt is NextOpener.ROTATION:
        return after, NOBODY
    winner = round_winner(rules, previous) if previous is not None else NOBODY
    if winner != NOBODY:
        return winner, NOBODY
    if nxt is NextOpener.PREVIOUS_WINNER_ELSE_NEXT:
        return after, NOBODY
    return by_opener_rule(rules, hands)
