"""What a computer player knows: one seat's projection (S6, D10), in the form it plays from.

An :class:`Observation` is built from the one projection a human gets (the engine's
:class:`~services.rules.SeatView`, :func:`from_view`; the bots service builds the same record
from the contract's ``TableView``). It holds the seat's own hand and the public record of the
round only: the layout, the legal moves and their points, every seat's tile count, the
numbers each seat passed on, the tiles each drew, the stock's size, the scores and target;
under all fives also the layout itself (:func:`layout_of`), which the points derive from.
No other seat's hand, no stock order and no seed can reach a player: they are not fields.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from services.rules import NOBODY, Draw, Pass, Play, SeatView, spinner
from services.rules.rulesets import Scoring
from services.rules.spinner import EMPTY, NO_TILE, Layout
from services.rules.tiles import INDEX, NO_END

#: What a player may answer: lay a tile on an end, draw from the stock, or pass.
Decision = Play | Draw | Pass


class Move(NamedTuple):
    """A legal move: ``tile`` (an index of :mod:`services.rules.tiles`) on ``end`` (1..4,
    ``services.rules.End``), scoring ``points`` at once (all fives; 0 otherwise)."""

    tile: int
    end: int
    points: int


class Laid(NamedTuple):
    """A tile on the table: its index and the seat that laid it."""

    tile: int
    seat: int


class Observation(NamedTuple):
    """One seat's view at one version, reduced to what a player decides from.

    Per-seat tuples have one entry per seat of the rule set; ``passed_on`` are masks of the
    numbers (bit ``n``) each seat passed on this round (R10); ``open_ends`` pairs each open
    end with its number (empty before the round's first tile). ``layout`` is the all-fives
    layout (``services.rules.spinner.Layout``) the points are computed from, ``EMPTY`` under
    every other scoring.
    """

    seat: int
    seats: int
    teams: bool
    fives: bool
    hand: tuple[int, ...]
    moves: tuple[Move, ...]
    can_draw: bool
    can_pass: bool
    open_ends: tuple[tuple[int, int], ...]
    laid: tuple[Laid, ...]
    tile_counts: tuple[int, ...]
    passed_on: tuple[int, ...]
    drawn: tuple[int, ...]
    stock: int
    scores: tuple[int, ...]
    target: int
    turn: int
    layout: Layout = EMPTY

    def side_of(self, seat: int) -> int:
        """The side of ``seat``: its team (seat & 1) with teams, else the seat itself."""
        return seat & 1 if self.teams else seat

    @property
    def partner(self) -> int | None:
        """The seat across (teams only)."""
        return (self.seat + 2) % 4 if self.teams else None


def _mask(numbers: tuple[int, ...]) -> int:
    mask = 0
    for n in numbers:
        mask |= 1 << n
    return mask


def no_move(observation: Observation) -> Draw | Pass:
    """What a seat without a legal move answers: draw while it may, else pass."""
    if observation.can_draw:
        return Draw(observation.seat)
    return Pass(observation.seat)


def _tile(left: int, right: int) -> int:
    return INDEX[min(left, right)][max(left, right)]


def layout_of(
    chain: Sequence[tuple[int, int]],
    spinner_index: int,
    up_arm: Sequence[tuple[int, int]] = (),
    down_arm: Sequence[tuple[int, int]] = (),
) -> Layout:
    """The all-fives layout shown by a view: ``chain`` the long line as ``(left, right)``
    halves from left to right, ``spinner_index`` the spinner's place in it (``NOBODY``
    before the first double), the short sides from the spinner outward as ``(inner,
    outer)``. Its ends and totals are the engine's (:func:`services.rules.fives.layout_of`);
    before the first double the line is rooted at a tile laid low half left (the opener
    is one), which changes no end and no total."""
    if not chain:
        return EMPTY
    if spinner_index == NOBODY:
        center = next(i for i, (a, b) in enumerate(chain) if a < b)
    else:
        center = spinner_index
    left = tuple(spinner.Laid(_tile(a, b), b, a) for a, b in reversed(chain[:center]))
    right = tuple(spinner.Laid(_tile(a, b), a, b) for a, b in chain[center + 1 :])
    up = tuple(spinner.Laid(_tile(a, b), a, b) for a, b in up_arm)
    down = tuple(spinner.Laid(_tile(a, b), a, b) for a, b in down_arm)
    short_up = short_down = NO_END
    if spinner_index != NOBODY and 0 < spinner_index < len(chain) - 1:
        number = chain[spinner_index][0]
        short_up = up_arm[-1][1] if up_arm else number
        short_down = down_arm[-1][1] if down_arm else number
    tile = _tile(*chain[center])
    return Layout(
        tile,
        tile if spinner_index != NOBODY else NO_TILE,
        (left, right, up, down),
        (chain[0][0], chain[-1][1], short_up, short_down),
    )


def from_view(view: SeatView) -> Observation:
    """The observation of the engine's projection ``view`` (the fields a human's view has)."""
    laid = tuple(
        Laid(INDEX[min(p.left, p.right)][max(p.left, p.right)], p.seat)
        for p in (*view.chain, *view.up_arm, *view.down_arm)
    )
    return Observation(
        seat=view.your_seat,
        seats=view.rules.seats,
        teams=view.rules.teams,
        fives=view.rules.scoring is Scoring.ALL_FIVES,
        hand=view.hand,
        moves=tuple(
            Move(play.tile, play.end, points)
            for play, points in zip(view.legal_moves, view.move_points, strict=True)
        ),
        can_draw=view.can_draw,
        can_pass=view.can_pass,
        open_ends=tuple((int(e.end), e.number) for e in view.open_ends),
        laid=laid,
        tile_counts=tuple(s.tile_count for s in view.seats),
        passed_on=tuple(_mask(s.passed_on) for s in view.seats),
        drawn=tuple(s.drawn for s in view.seats),
        stock=view.stock_count,
        scores=view.scores,
        target=view.target,
        turn=view.turn_seat,
        layout=(
            layout_of(
                tuple((p.left, p.right) for p in view.chain),
                view.spinner_index,
                tuple((p.left, p.right) for p in view.up_arm),
                tuple((p.left, p.right) for p in view.down_arm),
            )
            if view.rules.scoring is Scoring.ALL_FIVES
            else EMPTY
        ),
    )
