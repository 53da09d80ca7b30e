"""The stock (issue 19): the undealt tiles a seat draws from when nothing in its hand fits.

``RoundState.stock`` lists the drawable tiles in draw order (the deck order of
:mod:`.deal`): a draw takes the first. Nobody but the drawer ever learns which tile it was;
the public event is ``Drew(seat, count)``. Set-aside tiles (``RoundState.aside``) are
neither dealt nor drawable. Classic has no stock: every tile is dealt (R5).
"""

from __future__ import annotations

from . import fives
from .state import NOBODY, RoundState
from .tiles import FITS


def draw_one(rnd: RoundState, seat: int) -> RoundState:
    """``rnd`` once ``seat`` drew the next tile of the (non-empty) stock into its hand."""
    tile, *rest = rnd.stock
    hands = list(rnd.hands)
    hands[seat] |= 1 << tile
    drawn = list(rnd.drawn)
    drawn[seat] += 1
    return rnd._replace(
        hands=(hands[0], hands[1], hands[2], hands[3]),
        stock=tuple(rest),
        drawn=(drawn[0], drawn[1], drawn[2], drawn[3]),
    )


def draws_to_fit(rnd: RoundState, seat: int) -> int:
    """How many tiles ``seat`` draws, one at a time, until one fits an end or the stock is
    empty; 0 when a tile of its hand fits already (or there is no stock). Under all fives
    the spinner's short sides count once open."""
    fits = fives.fit_mask(rnd) if rnd.center != NOBODY else FITS[rnd.left] | FITS[rnd.right]
    if rnd.hands[seat] & fits:
        return 0
    for count, tile in enumerate(rnd.stock, start=1):
        if fits >> tile & 1:
            return count
    return len(rnd.stock)
