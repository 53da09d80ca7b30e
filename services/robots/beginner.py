"""The beginner: any legal tile, uniformly at random; a draw or a pass when nothing fits."""

from __future__ import annotations

from services.robots.chance import Chance, pick
from services.robots.observation import Decision, Observation, no_move
from services.rules import Play


def decide(observation: Observation, chance: Chance) -> Decision:
    """One of ``observation.moves``, each as likely (one draw of ``chance``); without a move,
    a draw while the seat may draw, else a pass."""
    moves = observation.moves
    if not moves:
        return no_move(observation)
    move = moves[pick(chance, len(moves))]
    return Play(observation.seat, move.tile, move.end)
