"""The double-six set (R5): tile indices, pips, and the bit masks the engine computes with.

A tile is an ``int`` index 0..27 in ascending (low, high) order: 0 = 0-0, 1 = 0-1, ...,
6 = 0-6, 7 = 1-1, ..., 27 = 6-6. That order is the auto-play order (D2). A hand is a 28-bit
mask with bit ``i`` set when the hand holds tile ``i``; hands only shrink (R5), so a play is
one ``& ~bit``. ``FITS[n]`` is the mask of tiles carrying the number ``n``; ``FITS[NO_END]``
(the "end" of an empty chain) is every tile, because the round's first tile may be any (R8).
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from typing import Final

#: Highest number on a half.
MAX_PIPS: Final = 6
#: Number of tiles in the set (R5).
TILE_COUNT: Final = 28
#: Tiles dealt to each of the four seats (R5).
HAND_SIZE: Final = 7
#: The "end" value of an empty chain.
NO_END: Final = 7
#: Mask of the whole set.
ALL_TILES: Final = (1 << TILE_COUNT) - 1

#: ``LOW[i]``, ``HIGH[i]``: the halves of tile ``i`` (low <= high).
LOW: Final[tuple[int, ...]] = tuple(a for a in range(7) for b in range(a, 7))
HIGH: Final[tuple[int, ...]] = tuple(b for a in range(7) for b in range(a, 7))
#: ``PIPS[i]``: the points tile ``i`` is worth (R12).
PIPS: Final[tuple[int, ...]] = tuple(a + b for a, b in zip(LOW, HIGH, strict=True))
#: ``INDEX[low][high]`` for low <= high: the tile's index.
INDEX: Final[tuple[tuple[int, ...], ...]] = tuple(
    tuple(LOW.index(a) + (b - a) if b >= a else -1 for b in range(7)) for a in range(7)
)
#: ``FITS[n]``: mask of the tiles carrying ``n``; ``FITS[NO_END]`` is every tile.
FITS: Final[tuple[int, ...]] = (
    *(sum(1 << i for i in range(TILE_COUNT) if n in (LOW[i], HIGH[i])) for n in range(7)),
    ALL_TILES,
)
#: The double six, whose holder opens the first round (R6).
DOUBLE_SIX: Final = INDEX[6][6]


def tile_index(low: int, high: int) -> int:
    """The index of the tile ``low``-``high``; ``ValueError`` unless ``0 <= low <= high <= 6``."""
    if not (0 <= low <= high <= MAX_PIPS):
        raise ValueError(f"not a double-six tile: {low}-{high}")
    return INDEX[low][high]


def tiles_of(mask: int) -> Iterator[int]:
    """The tiles of a hand mask, ascending (the auto-play order, D2)."""
    while mask:
        low_bit = mask & -mask
        yield low_bit.bit_length() - 1
        mask ^= low_bit


@functools.lru_cache(maxsize=1 << 14)
def hand_tiles(mask: int) -> tuple[int, ...]:
    """:func:`tiles_of` ``mask`` as a tuple (kept for the masks seen last: every version's
    views list every seat's hand, and a move changes one hand)."""
    return tuple(tiles_of(mask))


def mask_of(tiles: Iterator[int] | list[int] | tuple[int, ...]) -> int:
    """The hand mask holding exactly ``tiles``."""
    mask = 0
    for tile in tiles:
        mask |= 1 << tile
    return mask


def points(mask: int) -> int:
    """The points of a hand: the sum of the halves of its tiles (R12)."""
    total = 0
    while mask:
        low_bit = mask & -mask
        total += PIPS[low_bit.bit_length() - 1]
        mask ^= low_bit
    return total


def numbers_of(mask: int) -> tuple[int, ...]:
    """The numbers 0..6 set in a 7-bit number mask (e.g. the numbers a seat passed on, R10)."""
    return tuple(n for n in range(7) if mask >> n & 1)
