"""The solid player: sheds heavy tiles and keeps its numbers varied; under all fives it takes
the points on offer. It reads its own hand and the moves only, not the rest of the record.

Each legal move is scored on the hand it leaves (seed advice: "débarrassez-vous tôt de vos
dominos les plus lourds", "gardez des nombres variés"):

- the pips of the tile laid (:data:`PIPS_WEIGHT` each): heavy tiles go first;
- the different numbers left in the hand (:data:`VARIETY_WEIGHT` each): a hand of many
  numbers answers almost any end;
- under all fives, the points the move scores at once (:data:`POINTS_WEIGHT` each).

The best score is played; equal scores are broken at random (``chance``).
"""

from __future__ import annotations

from typing import Final

from services.robots.chance import Chance, pick
from services.robots.observation import Decision, Move, Observation, no_move
from services.rules import Play
from services.rules.tiles import HIGH, LOW, PIPS

PIPS_WEIGHT: Final = 1.0
VARIETY_WEIGHT: Final = 2.0
POINTS_WEIGHT: Final = 1.5


def numbers_left(hand: tuple[int, ...], tile: int) -> int:
    """How many different numbers ``hand`` shows once ``tile`` is laid."""
    mask = 0
    for other in hand:
        if other != tile:
            mask |= 1 << LOW[other] | 1 << HIGH[other]
    return mask.bit_count()


def score(observation: Observation, move: Move) -> float:
    """The value of ``move`` for the solid player (see the module docstring)."""
    value = PIPS_WEIGHT * PIPS[move.tile]
    value += VARIETY_WEIGHT * numbers_left(observation.hand, move.tile)
    if observation.fives:
        value += POINTS_WEIGHT * move.points
    return value


def decide(observation: Observation, chance: Chance) -> Decision:
    """The move of best :func:`score` (ties at random); without a move, a draw while the
    seat may draw, else a pass."""
    moves = observation.moves
    if not moves:
        return no_move(observation)
    scores = [score(observation, move) for move in moves]
    best = max(scores)
    ties = [move for move, value in zip(moves, scores, strict=True) if value == best]
    move = ties[pick(chance, len(ties))] if len(ties) > 1 else ties[0]
    return Play(observation.seat, move.tile, move.end)
