"""Whole games driven by the rules engine, for the table service's unit tests.

A :class:`Game` records its command log (only the commands that changed the table, as the
service stores them) and every state it went through. :func:`drive` plays it with legal
moves, passes, time-outs and presence changes picked by a ``randint(low, high)`` callable, so
the same driver serves hypothesis (``data.draw``) and seeded ``random.Random`` games.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from services.rules import (
    Command,
    Create,
    Expire,
    Join,
    LogEntry,
    Pass,
    Phase,
    SetPresence,
    Start,
    TableState,
    Timing,
    apply,
    create,
    legal_moves,
)

TIMING = Timing(turn_ms=45_000, away_ms=5_000, break_ms=10_000)
#: A realistic epoch time (ms), so the first log entry's absolute time needs a long varint.
EPOCH_MS = 1_767_225_600_000

RandInt = Callable[[int, int], int]


@dataclass
class Game:
    """A table, its command log and every state it went through (the first one included)."""

    state: TableState
    now: int
    log: list[LogEntry] = field(default_factory=list)
    states: list[TableState] = field(default_factory=list)

    def do(self, command: Command) -> None:
        before = self.state
        after = apply(before, command, self.now).state
        if after is not before:
            self.log.append((command, self.now))
            self.states.append(after)
        self.state = after


def new_game(seed: int, target: int = 100, *, start_ms: int = EPOCH_MS) -> Game:
    """A table created at ``start_ms``, joined by three players, all connected, started."""
    opening = Create("Qm9uam91ciBsZXMgYW1pcw", "Zoé", target, TIMING)
    state = create(opening, start_ms).state
    game = Game(state, start_ms, [(opening, start_ms)], [state])
    for name in ("Bob", "Chloé", "Dai 戴"):
        game.now += 4_000
        game.do(Join(name))
    for seat in range(4):
        game.do(SetPresence(seat, True))
    game.now += 2_000
    game.do(Start(0, seed))
    return game


def drive(
    game: Game,
    randint: RandInt,
    *,
    max_steps: int,
    max_dt: int = 3_000,
    expire_pct: int = 10,
    presence_pct: int = 10,
) -> None:
    """Play up to ``max_steps`` steps or to the end of the game.

    Each step waits ``0..max_dt`` ms, then (while a round is in play) lets the clock run out
    with probability ``expire_pct`` %, toggles a random seat's presence with probability
    ``presence_pct`` %, or else plays a random legal move (a pass when none exists). Between
    rounds it waits for the break and expires it (D1).
    """
    for _ in range(max_steps):
        state = game.state
        if state.phase is Phase.FINISHED:
            return
        game.now += randint(0, max_dt)
        if state.phase is Phase.ROUND_OVER:
            game.now = max(game.now, state.deadline_ms)
            game.do(Expire(state.turn_number))
            continue
        assert state.round is not None
        seat = state.round.turn
        roll = randint(0, 99)
        if roll < expire_pct:
            game.now = max(game.now, state.deadline_ms)
            game.do(Expire(state.turn_number))
        elif roll < expire_pct + presence_pct:
            who = randint(0, 3)
            game.do(SetPresence(who, not state.connected[who]))
        else:
            moves = legal_moves(state, seat)
            game.do(moves[randint(0, len(moves) - 1)] if moves else Pass(seat))


def tiles_in(mask: int) -> set[int]:
    """The tile indices of a hand mask."""
    return {t for t in range(28) if mask >> t & 1}
