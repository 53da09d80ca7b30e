"""Whole games between computer players, with the rules engine as the referee (pure).

:func:`play_game` seats one level per seat, starts the game with a deal seed derived from
``seed`` and plays it to its end: at each turn the seat to act gets its own projection only
(``from_view(view_for(state, seat))``, never the state) and its decision is applied; the
break between rounds ends with the ``Expire`` the timer service would send at its deadline.
The clock is fake (``now_ms`` advances a millisecond a command), so no turn ever times out.
Each seat draws its randomness from its own :class:`~services.robots.chance.Stream`, seeded
from ``seed`` too: a game is a function of ``(rules, levels_by_seat, seed)``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from hashlib import blake2b
from typing import Final, NamedTuple

from services.robots.chance import Chance, Stream
from services.robots.levels import Level, decide
from services.robots.observation import Decision, Observation, from_view
from services.rules import (
    Create,
    Expire,
    Join,
    Phase,
    RuleSet,
    Start,
    TableState,
    apply,
    create,
    view_for,
)

#: More commands than any game needs: a player that loops fails the game instead.
MAX_COMMANDS: Final = 20_000

#: What answers a seat's turn: :func:`services.robots.levels.decide`, or a wrapper of it
#: (the bench times it).
Player = Callable[[Level, Observation, Chance], Decision]


class GameResult(NamedTuple):
    """How a game ended: the winning side, the rounds dealt, the final score of each side
    and the commands applied (plays, draws, passes and the deals after the breaks)."""

    winner: int
    rounds: int
    scores: tuple[int, ...]
    commands: int


def derive(seed: int, *labels: object) -> int:
    """A 64-bit seed derived from ``seed`` and ``labels`` (BLAKE2b), stable across runs."""
    text = "/".join(str(part) for part in (seed, *labels)).encode()
    return int.from_bytes(blake2b(text, digest_size=8).digest(), "big")


def seated(rules: RuleSet, deal_seed: int) -> TableState:
    """A started game of ``rules``: every seat taken, dealt from ``deal_seed``."""
    state = create(Create("bots", "Seat 0", rules.target, rules=rules), 0).state
    for seat in range(1, rules.seats):
        state = apply(state, Join(f"Seat {seat}"), 0).state
    return apply(state, Start(0, deal_seed), 0).state


def play_game(
    rules: RuleSet, levels_by_seat: Sequence[Level], seed: int, player: Player = decide
) -> GameResult:
    """Play a whole game of ``rules`` with ``levels_by_seat[s]`` at seat ``s`` (see the
    module docstring), each turn answered by ``player``. ``ValueError`` unless there is one
    level per seat; ``RuntimeError`` when the game has not ended after
    :data:`MAX_COMMANDS` commands."""
    if len(levels_by_seat) != rules.seats:
        raise ValueError(f"{rules.seats} seats need {rules.seats} levels")
    levels = tuple(Level(level) for level in levels_by_seat)
    chances = tuple(Stream(derive(seed, "seat", s)) for s in range(rules.seats))
    state = seated(rules, derive(seed, "deal"))
    now = 1
    for count in range(MAX_COMMANDS):
        phase = state.phase
        if phase is Phase.FINISHED:
            assert state.round is not None
            return GameResult(state.winner, state.round.number, state.scores, count)
        if phase is Phase.ROUND_OVER:
            now = max(now, state.deadline_ms)
            state = apply(state, Expire(state.turn_number), now).state
            continue
        assert state.round is not None
        seat = state.round.turn
        observation = from_view(view_for(state, seat))
        decision = player(levels[seat], observation, chances[seat])
        state = apply(state, decision, now).state
        now += 1
    raise RuntimeError(f"the game did not end within {MAX_COMMANDS} commands")
