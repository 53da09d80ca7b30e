"""Replay a table from its command log: the log is the table's complete history.

A log is a sequence of ``(command, now_ms)`` entries, the first a ``Create``; folding the
engine over it reproduces the state bit for bit, because the engine is deterministic and
takes time and randomness only from the entries.
"""

from __future__ import annotations

from collections.abc import Iterable

from .commands import Command, Create
from .engine import apply, create
from .state import TableState

LogEntry = tuple[Command, int]


def replay(log: Iterable[LogEntry]) -> TableState:
    """The state after every entry of ``log``; ``ValueError`` if it does not open with Create.

    An entry the rules refuse raises its ``RuleError``: a stored log only holds accepted
    commands, so that means the log is corrupt.
    """
    entries = iter(log)
    try:
        first, now_ms = next(entries)
    except StopIteration:
        raise ValueError("an empty log has no table") from None
    if not isinstance(first, Create):
        raise ValueError("a command log opens with Create")
    state = create(first, now_ms).state
    for command, at_ms in entries:
        state = apply(state, command, at_ms).state
    return state
