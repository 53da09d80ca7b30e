"""A seat's ``TableView`` (the contract's projection) as a player's observation.

The bots service receives exactly what a person in the seat receives (``RobotService.
RobotView``, the table service's one projection) and hands the players the same
:class:`~services.robots.observation.Observation` the engine's projection gives
(:func:`services.robots.observation.from_view`); a test holds the two equal for every seat
of random games under every preset.
"""

from __future__ import annotations

from dominos.v1 import game_pb2

from services.robots.observation import Laid, Move, Observation, layout_of
from services.rules import NOBODY
from services.rules.spinner import EMPTY
from services.rules.tiles import INDEX

_FIVES = game_pb2.SCORING_ALL_FIVES


def _tile(low: int, high: int) -> int:
    return INDEX[min(low, high)][max(low, high)]


def _mask(numbers: list[int]) -> int:
    mask = 0
    for number in numbers:
        mask |= 1 << number
    return mask


def observation_of(view: game_pb2.TableView) -> Observation:
    """The observation of ``view`` (see the module docstring)."""
    fives = view.rules.scoring == _FIVES
    placed = (*view.chain, *view.up_arm, *view.down_arm)
    spinner = view.spinner_index if view.HasField("spinner_index") else NOBODY
    return Observation(
        seat=view.your_seat,
        seats=view.rules.seats,
        teams=view.rules.teams,
        fives=fives,
        hand=tuple(_tile(t.low, t.high) for t in view.hand),
        moves=tuple(
            Move(_tile(m.tile.low, m.tile.high), int(m.end), m.points) for m in view.legal_moves
        ),
        can_draw=view.can_draw,
        can_pass=view.can_pass,
        open_ends=tuple((int(e.end), e.number) for e in view.open_ends),
        laid=tuple(Laid(_tile(p.left, p.right), p.seat) for p in placed),
        tile_counts=tuple(s.tile_count for s in view.seats),
        passed_on=tuple(_mask(list(s.passed_on)) for s in view.seats),
        drawn=tuple(s.drawn for s in view.seats),
        stock=view.stock_size,
        scores=tuple(view.side_scores),
        target=view.target,
        turn=view.turn_seat if view.HasField("turn_seat") else NOBODY,
        layout=(
            layout_of(
                tuple((p.left, p.right) for p in view.chain),
                spinner,
                tuple((p.left, p.right) for p in view.up_arm),
                tuple((p.left, p.right) for p in view.down_arm),
            )
            if fives
            else EMPTY
        ),
    )
