"""Seeded deals (R5): a portable, documented shuffle, so any table replays from its seed.

The deal of round ``r`` of a game seeded ``seed`` (an unsigned 128-bit integer) is fixed by
``k = SHAKE-128(seed as 16 bytes big-endian || r as 4 bytes big-endian)`` read for 112 bytes:
28 big-endian unsigned 32-bit sort keys, key ``i`` for tile ``i``. The deck is the tiles
sorted by (key, tile); seat ``s`` gets deck positions ``7s .. 7s+6``. Any language with
SHAKE-128 reproduces a deal from the stored seed. No global random state is touched.

Other rule sets (issue 19) deal from the same deck: with ``n`` seats of ``h`` tiles, seat
``s`` gets positions ``h*s .. h*s+h-1``; the next ``set_aside`` tiles are set aside, and
the rest is the stock in deck order (the next drawn first), or set aside too when the rule
set does not draw. Classic (4 x 7) deals exactly as above.
"""

from __future__ import annotations

import struct
from hashlib import shake_128
from typing import Final

from .rulesets import RuleSet
from .tiles import HAND_SIZE, TILE_COUNT

#: Seeds are unsigned 128-bit integers.
SEED_BITS: Final = 128
_KEYS: Final = struct.Struct(f">{TILE_COUNT}I")
_TILES: Final = tuple(range(TILE_COUNT))


def shuffled_deck(seed: int, round_number: int) -> tuple[int, ...]:
    """The 28 tiles in the order dealt for ``round_number`` of the game seeded ``seed``."""
    if not 0 <= seed < 1 << SEED_BITS:
        raise ValueError("a seed is an unsigned 128-bit integer")
    material = seed.to_bytes(16, "big") + round_number.to_bytes(4, "big")
    keys = _KEYS.unpack(shake_128(material).digest(_KEYS.size))
    return tuple(tile for _, tile in sorted(zip(keys, _TILES, strict=True)))


def deal_hands(seed: int, round_number: int) -> tuple[int, int, int, int]:
    """The four hands (tile masks) of a round: seven tiles each, nothing in reserve (R5)."""
    deck = shuffled_deck(seed, round_number)
    bit = _BITS.__getitem__
    # Tiles are distinct, so the sum of their bits is their union.
    return (
        sum(map(bit, deck[0:HAND_SIZE])),
        sum(map(bit, deck[HAND_SIZE : 2 * HAND_SIZE])),
        sum(map(bit, deck[2 * HAND_SIZE : 3 * HAND_SIZE])),
        sum(map(bit, deck[3 * HAND_SIZE :])),
    )


_BITS: Final = tuple(1 << tile for tile in range(TILE_COUNT))


def deal_round(
    seed: int, round_number: int, rules: RuleSet
) -> tuple[tuple[int, int, int, int], tuple[int, ...], int]:
    """The hands (four masks, unused seats empty), the stock (tiles in draw order) and the
    set-aside mask of a round under ``rules`` (see the module docstring)."""
    deck = shuffled_deck(seed, round_number)
    size = rules.hand_size
    masks = [sum(_BITS[t] for t in deck[s * size : (s + 1) * size]) for s in range(rules.seats)]
    masks += [0] * (4 - len(masks))
    dealt = rules.seats * size
    rest = deck[dealt:]
    aside_tiles = rest if not rules.draw else rest[: rules.set_aside]
    stock = () if not rules.draw else rest[rules.set_aside :]
    hands = (masks[0], masks[1], masks[2], masks[3])
    return hands, tuple(stock), sum(_BITS[t] for t in aside_tiles)
