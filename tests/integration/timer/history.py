"""Reading a table's history back from its command log, for timer assertions."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from services.rules import (
    Command,
    Expire,
    Phase,
    TableState,
    apply,
    auto_play_choice,
    create,
)
from services.rules.events import Passed, TileLaid
from services.table.command_log import decode_log
from services.table.store import TableStore


@dataclass(frozen=True)
class Step:
    """One logged command with the state before it and when it was applied."""

    before: TableState
    command: Command
    at_ms: int
    after: TableState
    events: tuple[Any, ...]


async def history(redis: Any, table_id: str) -> list[Step]:
    """Every logged command of a table, replayed."""
    entries = decode_log(await TableStore(redis).read_log(table_id))
    first, at = entries[0]
    state = create(first, at).state  # type: ignore[arg-type]
    steps = []
    for command, at_ms in entries[1:]:
        t = apply(state, command, at_ms)
        steps.append(Step(state, command, at_ms, t.state, t.events))
        state = t.state
    return steps


def check_auto_plays(steps: list[Step]) -> int:
    """Every expiry of a turn played the documented auto-play (D2); returns how many."""
    count = 0
    for step in steps:
        if isinstance(step.command, Expire) and step.before.phase is Phase.PLAYING:
            choice = auto_play_choice(step.before)
            acted = step.events[0]
            if isinstance(acted, TileLaid):
                assert (acted.seat, acted.tile, acted.end) == tuple(choice), (acted, choice)
            else:
                assert isinstance(acted, Passed) and type(choice).__name__ == "Pass"
            count += 1
    return count


def lateness_ms(steps: list[Step]) -> list[int]:
    """For every expiry: when it was applied minus the deadline it expired."""
    return [
        step.at_ms - step.before.deadline_ms for step in steps if isinstance(step.command, Expire)
    ]
