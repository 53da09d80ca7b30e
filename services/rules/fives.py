"""All fives in the round state (seed 002, ``Scoring.ALL_FIVES``): the spinner layout kept
compactly in a :class:`~.state.RoundState`, its legal placements and their points.

The layout is the one of :mod:`.spinner`, stored so that every other rule set keeps its
state exactly: ``chain`` is the long line from left to right (the spinner inside it),
``left``/``right`` its ends, ``center`` the index in ``chain`` of the layout's center (the
opener, low half left, until the first double is laid, then that double: the spinner) and
``up``/``down`` the spinner's short sides from the spinner outward, each tile encoded
``seat << 6 | inner << 3 | outer``. :func:`layout_of` reads it as a ``spinner.Layout`` (so
the points are :func:`.spinner.play_points` exactly); :func:`lay` lays a tile.

The short sides open once both long sides of the spinner are covered (``0 < center <
len(chain) - 1``); they show the spinner's number until a tile is laid there. Before the
first double the layout is an ordinary line.

Pure: no I/O, clock or randomness.
"""

from __future__ import annotations

from typing import Final, NamedTuple

from . import errors
from .spinner import EMPTY, NO_TILE, Arm, Laid, Layout, OpenEnd, place, play_points
from .state import NOBODY, RoundState
from .tiles import FITS, HIGH, INDEX, LOW, NO_END

_LEFT: Final = int(Arm.LEFT)
_RIGHT: Final = int(Arm.RIGHT)
_UP: Final = int(Arm.UP)
_DOWN: Final = int(Arm.DOWN)


class Laying(NamedTuple):
    """The layout fields of a round once a tile is laid (see the module docstring)."""

    chain: tuple[int, ...]
    left: int
    right: int
    center: int
    up: tuple[int, ...]
    down: tuple[int, ...]


def tile_of(code: int) -> int:
    """The tile index of a chain or arm code (``seat << 6 | a << 3 | b``)."""
    a, b = code >> 3 & 7, code & 7
    return INDEX[a][b] if a <= b else INDEX[b][a]


def _is_double(code: int) -> bool:
    return code >> 3 & 7 == code & 7


def spinner_index(rnd: RoundState) -> int:
    """The index of the spinner in ``chain``; ``NOBODY`` before the first double is laid
    (and under every other scoring)."""
    center = rnd.center
    if center == NOBODY or not _is_double(rnd.chain[center]):
        return NOBODY
    return center


def short_ends(rnd: RoundState) -> tuple[int, int]:
    """The numbers open on the spinner's short sides (``UP``, ``DOWN``): ``NO_END`` both
    until the spinner's long sides are both covered, then the last tile's outer half of
    each side, or the spinner's number while a side is empty."""
    spinner = spinner_index(rnd)
    if spinner == NOBODY or not 0 < spinner < len(rnd.chain) - 1:
        return NO_END, NO_END
    number = rnd.chain[spinner] & 7
    up = rnd.up[-1] & 7 if rnd.up else number
    down = rnd.down[-1] & 7 if rnd.down else number
    return up, down


def fit_mask(rnd: RoundState) -> int:
    """The tiles that fit an open end now (every tile on an empty table)."""
    mask = FITS[rnd.left] | FITS[rnd.right]
    up, down = short_ends(rnd)
    if up != NO_END:
        mask |= FITS[up] | FITS[down]
    return mask


def end_numbers(rnd: RoundState) -> int:
    """The mask of the numbers open at the ends (what a pass is on, R10)."""
    numbers = 1 << rnd.left | 1 << rnd.right
    up, down = short_ends(rnd)
    if up != NO_END:
        numbers |= 1 << up | 1 << down
    return numbers


def open_ends(rnd: RoundState) -> tuple[OpenEnd, ...]:
    """Every open end and its number, ``LEFT, RIGHT, UP, DOWN`` order; ``()`` on an empty
    table."""
    if rnd.left == NO_END:
        return ()
    ends = (OpenEnd(Arm.LEFT, rnd.left), OpenEnd(Arm.RIGHT, rnd.right))
    up, down = short_ends(rnd)
    if up == NO_END:
        return ends
    return (*ends, OpenEnd(Arm.UP, up), OpenEnd(Arm.DOWN, down))


def _outward(codes: tuple[int, ...]) -> tuple[Laid, ...]:
    return tuple(Laid(tile_of(code), code >> 3 & 7, code & 7) for code in codes)


def layout_of(rnd: RoundState) -> Layout:
    """The round's layout as a :class:`.spinner.Layout` (arms from the center outward)."""
    chain = rnd.chain
    if not chain:
        return EMPTY
    c = rnd.center
    center = tile_of(chain[c])
    left = tuple(Laid(tile_of(code), code & 7, code >> 3 & 7) for code in reversed(chain[:c]))
    right = _outward(chain[c + 1 :])
    up, down = short_ends(rnd)
    spinner = center if LOW[center] == HIGH[center] else NO_TILE
    arms = (left, right, _outward(rnd.up), _outward(rnd.down))
    return Layout(center, spinner, arms, (rnd.left, rnd.right, up, down))


def _line(rnd: RoundState, stamp: int, tile: int, end: int) -> Laying:
    """``tile`` laid on a long side; the first double becomes the center (the spinner)."""
    low, high = LOW[tile], HIGH[tile]
    chain, left, right, center = rnd.chain, rnd.left, rnd.right, rnd.center
    if end == _LEFT:
        if left not in (low, high):
            raise errors.TileDoesNotFit(f"the tile does not fit the left end ({left})")
        outer = high if low == left else low
        chain = (stamp | outer << 3 | left, *chain)
        left, center = outer, center + 1
        if low == high and spinner_index(rnd) == NOBODY:
            center = 0
    else:
        if right not in (low, high):
            raise errors.TileDoesNotFit(f"the tile does not fit the right end ({right})")
        outer = high if low == right else low
        chain = (*chain, stamp | right << 3 | outer)
        right = outer
        if low == high and spinner_index(rnd) == NOBODY:
            center = len(chain) - 1
    return Laying(chain, left, right, center, rnd.up, rnd.down)


def _short(rnd: RoundState, stamp: int, tile: int, end: int) -> Laying:
    """``tile`` laid on a short side of the spinner (open once both long sides are)."""
    up, down = short_ends(rnd)
    number = up if end == _UP else down
    side = "up" if end == _UP else "down"
    if number == NO_END:
        raise errors.TileDoesNotFit(
            f"the {side} side of the spinner opens once both long sides are covered"
        )
    low, high = LOW[tile], HIGH[tile]
    if number not in (low, high):
        raise errors.TileDoesNotFit(f"the tile does not fit the {side} end ({number})")
    code = stamp | number << 3 | (high if low == number else low)
    if end == _UP:
        return Laying(rnd.chain, rnd.left, rnd.right, rnd.center, (*rnd.up, code), rnd.down)
    return Laying(rnd.chain, rnd.left, rnd.right, rnd.center, rnd.up, (*rnd.down, code))


def lay(rnd: RoundState, seat: int, tile: int, end: int) -> Laying:
    """The layout once ``seat`` laid ``tile`` (in its hand) on ``end`` (1..4), or
    ``TileDoesNotFit``. On an empty table the tile opens whatever the end (``UP``/``DOWN``
    excepted), the tile the opener must lay when the round names one."""
    stamp = seat << 6
    if rnd.left == NO_END:
        if end not in (_LEFT, _RIGHT):
            raise errors.TileDoesNotFit("the opener is laid on the line, not on a short side")
        if rnd.lead not in (NOBODY, tile):
            raise errors.TileDoesNotFit(f"the round opens with {LOW[rnd.lead]}-{HIGH[rnd.lead]}")
        return Laying((stamp | LOW[tile] << 3 | HIGH[tile],), LOW[tile], HIGH[tile], 0, (), ())
    if end in (_LEFT, _RIGHT):
        return _line(rnd, stamp, tile, end)
    return _short(rnd, stamp, tile, end)


def laid_round(rnd: RoundState, laying: Laying) -> RoundState:
    """``rnd`` with the layout fields of ``laying``."""
    chain, left, right, center, up, down = laying
    return rnd._replace(chain=chain, left=left, right=right, center=center, up=up, down=down)


def points_of(rnd: RoundState, tile: int, end: int) -> int:
    """The points laying ``tile`` on ``end`` would score at once (``.spinner.play_points``;
    the tile must fit there)."""
    return play_points(place(layout_of(rnd), tile, end))


def fitting_ends(rnd: RoundState, tile: int) -> tuple[int, ...]:
    """The ends ``tile`` may go on now, ``LEFT, RIGHT, UP, DOWN`` order (``LEFT`` alone on
    an empty table)."""
    if rnd.left == NO_END:
        return (_LEFT,)
    low, high = LOW[tile], HIGH[tile]
    up, down = short_ends(rnd)
    numbers = (rnd.left, rnd.right, up, down)
    ends = (_LEFT, _RIGHT, _UP, _DOWN)
    return tuple(end for end, n in zip(ends, numbers, strict=True) if n in (low, high))
