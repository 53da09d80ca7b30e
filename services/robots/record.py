"""What the public record of a round tells one seat about the tiles it cannot see.

Built from an :class:`~services.robots.observation.Observation` only (the seat's hand and
what everybody sees), never from another hand. The seeds' advice it serves:

- *count the tiles*: there are seven tiles of each number, the double included; the tiles
  of a number not laid and not in the seat's hand are still *unseen* (in another hand, the
  stock or set aside). A number with none unseen is dead for everybody else.
- *watch the passes*: a seat that passed on the open numbers holds none of them. The engine
  lets a seat pass only with the stock empty, so it cannot pick them up afterwards and the
  void is certain; were a stock left (a record built elsewhere), a seat that drew may hold
  them since, so its void then only lowers its chances (:data:`VOID_AFTER_DRAW`).
- *the partner's plays* (teams): which tiles the partner laid and the numbers it is void in.

:attr:`Record.chances` estimates, for every other seat, how likely it holds each unseen
tile: every unseen tile lies with exactly one holder (a seat, or the pool of stock and
set-aside tiles), a holder holds as many as its count, and a seat holds no tile of a
number it is void in. The estimate is an iterative proportional fit of those constraints
(exact marginals when nobody is void).
"""

from __future__ import annotations

from typing import Final, NamedTuple

from services.robots.observation import Observation
from services.rules.tiles import FITS, HIGH, LOW, TILE_COUNT

#: The weight left to a tile of a number a seat passed on, when it may have drawn since.
VOID_AFTER_DRAW: Final = 0.3
#: Rounds of the proportional fit when some seat is void (it converges in a few).
FIT_ROUNDS: Final = 4
#: ``NUMBERS[t]``: the mask of the numbers on tile ``t``.
NUMBERS: Final[tuple[int, ...]] = tuple(1 << LOW[t] | 1 << HIGH[t] for t in range(TILE_COUNT))
_BITS: Final = tuple(1 << t for t in range(TILE_COUNT))


def fitting(numbers: int) -> int:
    """The mask of the tiles carrying any number of the number mask ``numbers``."""
    mask = 0
    for n in range(7):
        if numbers >> n & 1:
            mask |= FITS[n]
    return mask


class Record(NamedTuple):
    """One seat's reading of the round (see the module docstring).

    Masks are tile masks (bit ``t`` for tile ``t``) or number masks (bit ``n``); per-seat
    tuples have one entry per seat of the rule set, the reading seat's own entries empty.
    """

    seat: int
    #: The seat's own hand.
    hand: int
    #: Every tile on the table.
    laid: int
    #: Tiles neither laid nor in the seat's hand.
    unseen: int
    #: Per number 0..6: how many tiles carrying it are unseen (7 minus laid minus own).
    unseen_of: tuple[int, ...]
    #: Per seat: the numbers it is known to hold none of (its passes).
    void: tuple[int, ...]
    #: Per seat: whether its void is certain (no stock left to draw from since).
    certain: tuple[bool, ...]
    #: Per seat: the tiles it laid this round.
    laid_by: tuple[int, ...]
    #: Unseen tiles neither in a hand: the stock and the set-aside tiles.
    pool: int
    #: ``chances[s][t]``: how likely seat ``s`` holds tile ``t`` (0 for seen tiles and for
    #: the reading seat).
    chances: tuple[tuple[float, ...], ...]

    def dead(self, numbers: int) -> bool:
        """Whether no unseen tile carries any of ``numbers``: nobody else can answer them."""
        return not self.unseen & fitting(numbers)

    def none_of(self, seat: int, tiles: int) -> float:
        """How likely ``seat`` holds none of the tile mask ``tiles`` (independent tiles)."""
        chances = self.chances[seat]
        result = 1.0
        mask = tiles & self.unseen
        while mask:
            low = mask & -mask
            result *= 1.0 - chances[low.bit_length() - 1]
            mask ^= low
        return result

    def pips_of(self, seat: int) -> float:
        """The expected pips in ``seat``'s hand (the seat's own: exact)."""
        if seat == self.seat:
            return float(sum(LOW[t] + HIGH[t] for t in range(TILE_COUNT) if self.hand >> t & 1))
        chances = self.chances[seat]
        return sum(chances[t] * (LOW[t] + HIGH[t]) for t in range(TILE_COUNT))


def _mask(tiles: tuple[int, ...]) -> int:
    mask = 0
    for tile in tiles:
        mask |= _BITS[tile]
    return mask


def _weights(
    observation: Observation,
    holders: list[int],
    unseen: tuple[int, ...],
    void: tuple[int, ...],
    certain: tuple[bool, ...],
) -> tuple[list[list[float]], bool]:
    """Per holder, per unseen tile: 1, 0 (void) or :data:`VOID_AFTER_DRAW` (void, but the
    seat may have drawn since); and whether any seat is void at all."""
    weights = []
    any_void = False
    for s in holders:
        row = []
        for t in unseen:
            if void[s] & NUMBERS[t]:
                any_void = True
                row.append(0.0 if certain[s] else VOID_AFTER_DRAW)
            else:
                row.append(1.0)
        weights.append(row)
    return weights, any_void


def _fitted(weights: list[list[float]], counts: list[float], rounds: int) -> list[list[float]]:
    """``weights`` scaled per holder so that each tile's column sums to 1 and each holder's
    row to its count (an iterative proportional fit of ``rounds`` rounds)."""
    factors = counts[:]
    columns = range(len(weights[0]) if weights else 0)
    for _ in range(rounds):
        sums = [sum(row[i] * f for row, f in zip(weights, factors, strict=True)) for i in columns]
        for h, row in enumerate(weights):
            got = sum(row[i] * factors[h] / sums[i] for i in columns if sums[i])
            if got:
                factors[h] *= counts[h] / got
    sums = [sum(row[i] * f for row, f in zip(weights, factors, strict=True)) for i in columns]
    return [
        [min(1.0, row[i] * f / sums[i]) if sums[i] else 0.0 for i in columns]
        for row, f in zip(weights, factors, strict=True)
    ]


def _chances(
    observation: Observation,
    unseen: tuple[int, ...],
    void: tuple[int, ...],
    certain: tuple[bool, ...],
    pool: int,
) -> tuple[tuple[float, ...], ...]:
    seats = observation.seats
    holders = [s for s in range(seats) if s != observation.seat and observation.tile_counts[s]]
    counts = [float(observation.tile_counts[s]) for s in holders]
    weights, any_void = _weights(observation, holders, unseen, void, certain)
    if pool > 0:
        counts.append(float(pool))
        weights.append([1.0] * len(unseen))
    fitted = _fitted(weights, counts, FIT_ROUNDS if any_void else 1)
    table = [[0.0] * TILE_COUNT for _ in range(seats)]
    for s, row in zip(holders, fitted, strict=False):
        for t, held in zip(unseen, row, strict=True):
            table[s][t] = held
    return tuple(tuple(row) for row in table)


def read(observation: Observation) -> Record:
    """The record of ``observation`` (see :class:`Record`)."""
    hand = _mask(observation.hand)
    laid = _mask(tuple(item.tile for item in observation.laid))
    unseen_mask = ((1 << TILE_COUNT) - 1) & ~hand & ~laid
    unseen = tuple(t for t in range(TILE_COUNT) if unseen_mask >> t & 1)
    unseen_of = tuple((unseen_mask & FITS[n]).bit_count() for n in range(7))
    seats = observation.seats
    void = tuple(
        0 if s == observation.seat else observation.passed_on[s] & 0x7F for s in range(seats)
    )
    certain = tuple(observation.stock == 0 or observation.drawn[s] == 0 for s in range(seats))
    laid_by = [0] * seats
    for item in observation.laid:
        laid_by[item.seat] |= _BITS[item.tile]
    in_hands = sum(observation.tile_counts[s] for s in range(seats) if s != observation.seat)
    pool = max(0, len(unseen) - in_hands)
    return Record(
        seat=observation.seat,
        hand=hand,
        laid=laid,
        unseen=unseen_mask,
        unseen_of=unseen_of,
        void=void,
        certain=certain,
        laid_by=tuple(laid_by),
        pool=pool,
        chances=_chances(observation, unseen, void, certain, pool),
    )
