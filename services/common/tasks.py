"""Background tasks of a service process."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Coroutine
from typing import Any

__all__ = ["BoundedTasks", "stop_task"]


async def stop_task(task: asyncio.Task[Any] | None) -> None:
    """Cancel a background task (``None``: nothing to do) and wait until it ended."""
    if task is None:
        return
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task


class BoundedTasks:
    """At most ``limit`` handler tasks at once (the message consumers' work queues): a spawn
    waits for a free slot, so a burst of messages cannot start unbounded work."""

    def __init__(self, limit: int) -> None:
        self._slots = asyncio.Semaphore(limit)
        self._tasks: set[asyncio.Task[None]] = set()

    async def spawn(self, work: Coroutine[Any, Any, None]) -> None:
        """Run ``work`` in a task once a slot is free; the slot is freed when it ends."""
        await self._slots.acquire()
        task = asyncio.create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._done)

    def _done(self, task: asyncio.Task[None]) -> None:
        self._tasks.discard(task)
        self._slots.release()

    def cancel(self) -> None:
        """Cancel every task still running."""
        for task in list(self._tasks):
            task.cancel()

    async def wait(self) -> None:
        """Wait until every task started so far has ended (their errors are not raised)."""
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
