"""The levels of computer player and the one entry point that plays them.

``Level`` values are the contract's (``BEGINNER = 1``, ``SOLID = 2``, ``STRONG = 3``):

- :mod:`~services.robots.beginner`: any legal tile, at random;
- :mod:`~services.robots.solid`: sheds heavy tiles and keeps its numbers varied (takes the
  points under all fives);
- :mod:`~services.robots.strong`: also reads the public record (passes, tiles counted per
  number, the partner, the all-fives totals each placement leaves).

A player decides from one seat's :class:`~services.robots.observation.Observation` only and
draws any randomness from the ``chance`` it is given.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from services.robots import beginner, solid, strong
from services.robots.chance import Chance
from services.robots.observation import Decision, Observation
from services.rules.options import RobotLevel

#: How well a computer player plays: the engine's levels (values are the contract's), the
#: same the table options name.
Level = RobotLevel


_PLAYERS: Final[dict[Level, Callable[[Observation, Chance], Decision]]] = {
    Level.BEGINNER: beginner.decide,
    Level.SOLID: solid.decide,
    Level.STRONG: strong.decide,
}


def decide(level: Level, observation: Observation, chance: Chance) -> Decision:
    """What a player of ``level`` answers to ``observation``: a ``Play`` of one of its
    ``moves``, or a ``Draw``/``Pass`` when it may; the command's seat is the observation's.

    ``ValueError`` when it is not the observation's seat's turn, or when the seat can do
    nothing (no move, no draw, no pass: e.g. the round is not in play).
    """
    if observation.turn != observation.seat:
        raise ValueError(f"seat {observation.seat} is not to play (seat {observation.turn} is)")
    if not observation.moves and not observation.can_draw and not observation.can_pass:
        raise ValueError(f"seat {observation.seat} has nothing to do")
    return _PLAYERS[Level(level)](observation, chance)
