"""The layout and the scoring of "tous les 5" (all fives, seed 002): a line with a spinner.

The first double laid becomes the spinner ("pivot"). Play goes on its two long sides first
(``LEFT`` and ``RIGHT``, like an ordinary line); once *both* are covered its two short sides
(``UP`` and ``DOWN``) open too, so the table has up to four open ends. Before any double is
laid the layout is an ordinary line with two ends; an opener that is a double is the spinner
at once.

A :class:`Layout` is rooted at its *center*: the spinner once there is one, else the
opener. Each of the four arms lists its tiles from the center outward, each with the half
facing the center (``inner``) and the half facing away (``outer``); the center shows its low
half to the left and its high half to the right (as the engine lays an opener). When a
double that is not the opener becomes the spinner, the layout is re-rooted on it: the line
it was laid against becomes its opposite arm, read outward from it.

Scoring (seed 002): after each play the open ends are summed (:func:`ends_total`). A tile
lying at an end counts its outer half, a double both halves; the spinner counts both halves,
once, while one of its long sides is still uncovered (it is itself an end then), and nothing
once both are covered (its short sides then show its number but do not count); an opener
that is not a double counts each half that is still an end. A total that is a positive
multiple of 5 is scored at once by the player who laid the tile (:func:`play_points`). Round
points are rounded to the nearest multiple of 5 (:func:`round_to_five`), and reaching the
target by a play ends the game at once (:func:`game_won_by_play`).

Pure: no I/O, clock or randomness; every value is an immutable ``NamedTuple`` or ``int``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from enum import IntEnum
from typing import Final, NamedTuple, TypeVar

from . import errors
from .tiles import HIGH, LOW, NO_END, TILE_COUNT, mask_of, tiles_of

#: "No tile" in the int fields of a :class:`Layout` (the center of an empty layout, the
#: spinner before any double is laid).
NO_TILE: Final = -1
#: Points are scored by multiples of this (seed 002).
FIVE: Final = 5


class Arm(IntEnum):
    """The four ends of a layout with a spinner (``LEFT``/``RIGHT`` equal ``state.End``'s)."""

    LEFT = 1
    RIGHT = 2
    UP = 3
    DOWN = 4


_LONG: Final = (Arm.LEFT, Arm.RIGHT)
_SHORT: Final = (Arm.UP, Arm.DOWN)


class IllegalPlacement(errors.TileDoesNotFit):
    """A tile laid where it may not go: no matching open end there, a short side of the
    spinner before both long sides are covered, or a tile already laid (seed 002).

    It keeps the reason code ``TILE_DOES_NOT_FIT`` of the contract."""


class Laid(NamedTuple):
    """A tile laid on an arm: ``inner`` matches its neighbour toward the center, ``outer``
    faces away (the arm's open number when it is the arm's last tile)."""

    tile: int
    inner: int
    outer: int


_Arms = tuple[tuple[Laid, ...], tuple[Laid, ...], tuple[Laid, ...], tuple[Laid, ...]]
_Ends = tuple[int, int, int, int]


class Layout(NamedTuple):
    """The tiles on the table in "tous les 5".

    ``center`` is the spinner once a double is laid, else the opener (``NO_TILE`` when the
    table is empty); ``spinner`` is ``center`` when it is the spinner, else ``NO_TILE``.
    ``arms[arm - 1]`` lists the tiles of ``arm`` from the center outward; ``ends[arm - 1]``
    is the number open on ``arm``, ``NO_END`` when ``arm`` is not open (an empty table, or a
    short side before both long sides are covered).
    """

    center: int
    spinner: int
    arms: _Arms
    ends: _Ends


#: The empty table.
EMPTY: Final = Layout(NO_TILE, NO_TILE, ((), (), (), ()), (NO_END, NO_END, NO_END, NO_END))


class OpenEnd(NamedTuple):
    """An open end and the number a tile must show to be laid there."""

    end: Arm
    number: int


class Placement(NamedTuple):
    """A legal placement of a tile and the points it would score at once (seed 002 shows
    them on the table)."""

    tile: int
    end: Arm
    points: int


_T = TypeVar("_T")


def _with(values: tuple[_T, _T, _T, _T], index: int, value: _T) -> tuple[_T, _T, _T, _T]:
    a, b, c, d = values
    return (
        value if index == 0 else a,
        value if index == 1 else b,
        value if index == 2 else c,
        value if index == 3 else d,
    )


def _is_double(tile: int) -> bool:
    return LOW[tile] == HIGH[tile]


def _check_tile(tile: int) -> None:
    if not 0 <= tile < TILE_COUNT:
        raise errors.TileMalformed(f"not a tile index: {tile}")


def _check_end(end: int) -> Arm:
    try:
        return Arm(end)
    except ValueError:
        raise errors.EndMalformed(f"not an end of the layout: {end}") from None


# --- reading a layout -----------------------------------------------------------------------


def open_ends(layout: Layout) -> tuple[OpenEnd, ...]:
    """The open ends with their numbers, ``LEFT, RIGHT, UP, DOWN`` order; ``()`` when the
    table is empty (then any tile may open, see :func:`fits`)."""
    return tuple(OpenEnd(arm, n) for arm, n in zip(Arm, layout.ends, strict=True) if n != NO_END)


def short_sides_open(layout: Layout) -> bool:
    """Whether the spinner's short sides (``UP``, ``DOWN``) are open: both long sides are
    covered."""
    return layout.ends[Arm.UP - 1] != NO_END


def laid_mask(layout: Layout) -> int:
    """The mask (as a hand, ``tiles``) of every tile on the table."""
    if layout.center == NO_TILE:
        return 0
    return mask_of([layout.center, *(laid.tile for arm in layout.arms for laid in arm)])


def fits(layout: Layout, tile: int) -> tuple[Arm, ...]:
    """The ends ``tile`` may be laid on, ``LEFT, RIGHT, UP, DOWN`` order: ``(LEFT,)`` on the
    empty table (the opener; ``place`` takes ``RIGHT`` there too), ``()`` for a tile already
    laid. ``TileMalformed`` for an index outside the set."""
    _check_tile(tile)
    if layout.center == NO_TILE:
        return (Arm.LEFT,)
    if laid_mask(layout) >> tile & 1:
        return ()
    halves = (LOW[tile], HIGH[tile])
    return tuple(arm for arm, n in zip(Arm, layout.ends, strict=True) if n in halves)


def _end_value(laid: Laid) -> int:
    """What the last tile of an arm adds to the total: its outer half, a double both."""
    return 2 * laid.outer if _is_double(laid.tile) else laid.outer


def ends_total(layout: Layout) -> int:
    """The sum of the open ends (seed 002): each arm's last tile its outer half (a double
    both halves); the center while a long side is uncovered: the spinner both halves once,
    an opener that is not a double the half still open. 0 on the empty table."""
    center = layout.center
    if center == NO_TILE:
        return 0
    total = sum(_end_value(arm[-1]) for arm in layout.arms if arm)
    left_open = not layout.arms[Arm.LEFT - 1]
    right_open = not layout.arms[Arm.RIGHT - 1]
    if _is_double(center):
        return total + (2 * LOW[center] if left_open or right_open else 0)
    return total + (LOW[center] if left_open else 0) + (HIGH[center] if right_open else 0)


def play_points(layout: Layout) -> int:
    """The points the play that made ``layout`` scores at once: :func:`ends_total` when it
    is a positive multiple of 5, else 0."""
    total = ends_total(layout)
    return total if total > 0 and total % FIVE == 0 else 0


# --- laying a tile --------------------------------------------------------------------------


def _opened(tile: int) -> Layout:
    """The layout of the opener alone (a double is the spinner at once)."""
    spinner = tile if _is_double(tile) else NO_TILE
    return Layout(tile, spinner, ((), (), (), ()), (LOW[tile], HIGH[tile], NO_END, NO_END))


def _flipped(tiles: tuple[Laid, ...]) -> tuple[Laid, ...]:
    """An arm read from its outer end inward: reversed, each tile turned around."""
    return tuple(Laid(laid.tile, laid.outer, laid.inner) for laid in reversed(tiles))


def _rerooted(layout: Layout, double: Laid, end: Arm) -> Layout:
    """The line once ``double``, the first double, is laid on ``end``: it becomes the
    spinner and the center, and the line it was laid against becomes its opposite arm."""
    center = layout.center
    left, right = layout.arms[0], layout.arms[1]
    if end is Arm.LEFT:
        arm = (*_flipped(left), Laid(center, LOW[center], HIGH[center]), *right)
        arms: _Arms = ((), arm, (), ())
        ends: _Ends = (double.outer, layout.ends[1], NO_END, NO_END)
    else:
        arm = (*_flipped(right), Laid(center, HIGH[center], LOW[center]), *left)
        arms = (arm, (), (), ())
        ends = (layout.ends[0], double.outer, NO_END, NO_END)
    return Layout(double.tile, double.tile, arms, ends)


def _matched(layout: Layout, tile: int, end: Arm) -> Laid:
    """``tile`` turned to match the open number of ``end``, or ``IllegalPlacement``."""
    if laid_mask(layout) >> tile & 1:
        raise IllegalPlacement(f"tile {tile} is already on the table")
    number = layout.ends[end - 1]
    if number == NO_END:
        raise IllegalPlacement(
            f"the {end.name} side of the spinner opens once both long sides are covered"
        )
    if LOW[tile] == number:
        return Laid(tile, number, HIGH[tile])
    if HIGH[tile] == number:
        return Laid(tile, number, LOW[tile])
    raise IllegalPlacement(f"the tile does not fit the {end.name} end ({number})")


def place(layout: Layout, tile: int, end: int) -> Layout:
    """The layout once ``tile`` is laid on ``end`` (seed 002).

    On the empty table the tile opens (``LEFT`` or ``RIGHT``, same layout). The first double
    becomes the spinner; laying on both its long sides opens its short sides. Raises
    ``IllegalPlacement`` when the tile may not go there, ``TileMalformed``/``EndMalformed``
    for an index outside the set or an end outside ``Arm``.
    """
    _check_tile(tile)
    arm = _check_end(end)
    if layout.center == NO_TILE:
        if arm not in _LONG:
            raise IllegalPlacement("the opener is laid on the line, not on a short side")
        return _opened(tile)
    laid = _matched(layout, tile, arm)
    if layout.spinner == NO_TILE and _is_double(tile):
        return _rerooted(layout, laid, arm)
    index = arm - 1
    arms = _with(layout.arms, index, (*layout.arms[index], laid))
    ends = _with(layout.ends, index, laid.outer)
    if layout.spinner != NO_TILE and ends[Arm.UP - 1] == NO_END and arms[0] and arms[1]:
        number = LOW[layout.spinner]
        ends = (ends[0], ends[1], number, number)
    return Layout(layout.center, layout.spinner, arms, ends)


def placements(layout: Layout, hand: int | Iterable[int]) -> tuple[Placement, ...]:
    """Every legal placement of the tiles of ``hand`` (a hand mask, or tile indices) with
    the points each would score at once (:func:`play_points` of the resulting layout), in
    tile order then ``LEFT, RIGHT, UP, DOWN``; on the empty table each tile once, on
    ``LEFT``."""
    mask = hand if isinstance(hand, int) else mask_of(tuple(hand))
    return tuple(
        Placement(tile, end, play_points(place(layout, tile, end)))
        for tile in tiles_of(mask)
        for end in fits(layout, tile)
    )


# --- round points and the end of the game ---------------------------------------------------


def round_to_five(points: int) -> int:
    """``points`` rounded to the nearest multiple of 5 (seed 002: a domino or a blocked
    round in "tous les 5"): 12 -> 10, 13 -> 15, 15 -> 15.

    Halves round up ("half up", ``floor(points / 5 + 1/2) * 5``); integer points are never
    exactly halfway (a remainder of 2.5 cannot happen), so remainders 0-2 round down and
    3-4 round up.
    """
    return (points + 2) // FIVE * FIVE


def game_won_by_play(scores: Sequence[int], target: int) -> bool:
    """Whether a side has reached ``target`` (seed 002: in "tous les 5", reaching it by
    laying a tile ends the game at once, before the round goes on)."""
    return any(score >= target for score in scores)
