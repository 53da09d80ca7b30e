"""One command at a time per table within a table-service process.

A replica that ran two commands of one table at once would decide both over the same
record, commit one and make the other read the table back and decide again: with many
commands of a table at once (presence changes of many streams while its host acts, say),
the last of them could lose every compare-and-set it tries and be refused with
VERSION_CONFLICT although no other replica wrote. Commands of a table therefore queue in
the replica that serves them (first come, first served) from the read to the
compare-and-set, and the compare-and-set is left to guard what it is for: writes of other
replicas. The lock is released before the version is published, so a NATS that is slow
to acknowledge delays answers, not the table's next commits.
"""

from __future__ import annotations

import asyncio
from types import TracebackType


class TableLocks:
    """A lock per table with a command running or queued in this process; a table's entry
    is dropped when its last command is done, so the map holds only busy tables."""

    __slots__ = ("_held",)

    def __init__(self) -> None:
        self._held: dict[str, _TableLock] = {}

    def hold(self, table_id: str) -> _TableLock:
        """``async with locks.hold(table_id):`` runs the block once no other command of the
        table runs in this process (commands queued for it go first)."""
        lock = self._held.get(table_id)
        if lock is None:
            lock = self._held[table_id] = _TableLock(self._held, table_id)
        return lock

    @property
    def tables(self) -> int:
        """Tables with a command running or queued."""
        return len(self._held)


class _TableLock:
    __slots__ = ("_held", "_lock", "_table_id", "_users")

    def __init__(self, held: dict[str, _TableLock], table_id: str) -> None:
        self._held = held
        self._table_id = table_id
        self._lock = asyncio.Lock()
        self._users = 0

    async def __aenter__(self) -> None:
        self._users += 1
        try:
            await self._lock.acquire()
        except BaseException:  # cancelled while queued: leave the queue
            self._leave()
            raise

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self._lock.release()
        self._leave()

    def _leave(self) -> None:
        self._users -= 1
        if not self._users and self._held.get(self._table_id) is self:
            del self._held[self._table_id]
