"""The table service's side of the timers: consume ``timer.expired`` and act on it.

All replicas bind one durable JetStream consumer with a queue group, so each expiry is
handled by one replica; an unacknowledged message is redelivered. Acting is idempotent:
``TableApp.expire`` applies the auto-play (R11, S3, D2) or the next deal (D1) only if the
expiry names the current clock and it is due, so a late, duplicate or replayed expiry
changes nothing. A presence-lease expiry marks the seat disconnected unless a gateway has
taken the seat's lease again meanwhile.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import Any, Final

from dominos.v1 import events_pb2

from services.common.bus import (
    TIMER_CONSUMER,
    TIMER_STREAM,
    TIMER_SUBJECT,
    bind_work_queue,
    ensure_timer_stream,
)
from services.common.connections import DEPENDENCY_ERRORS
from services.common.dependency_metrics import watch_consumer
from services.common.logging import get_logger
from services.common.presence import PresenceLeases
from services.common.tasks import BoundedTasks, stop_task
from services.table.application import TableApp

MAX_CONCURRENT: Final = 64

log = get_logger(__name__)


class TimerConsumer:
    """Handles ``TimerExpired`` messages for a :class:`TableApp`."""

    def __init__(
        self,
        app: TableApp,
        leases: PresenceLeases,
        nc: Any,
        *,
        on_expired: Callable[[events_pb2.TimerExpired, bool], Any] | None = None,
        stream_replicas: int = 1,
    ) -> None:
        self.app = app
        self.leases = leases
        self.nc = nc
        self.on_expired = on_expired
        self.stream_replicas = stream_replicas
        self._subscription: Any = None
        self._sampler: asyncio.Task[None] | None = None
        self._tasks = BoundedTasks(MAX_CONCURRENT)

    async def start(self) -> None:
        """Bind the shared durable consumer (creating the stream if needed)."""
        js = self.nc.jetstream()
        await ensure_timer_stream(js, self.stream_replicas)
        self._subscription = await bind_work_queue(
            js,
            TIMER_SUBJECT,
            TIMER_STREAM,
            TIMER_CONSUMER,
            self._on_message,
            ack_wait_s=5.0,
            max_ack_pending=4096,
        )
        self._sampler = watch_consumer(
            self._subscription,
            TIMER_STREAM,
            TIMER_CONSUMER,
            on_error=DEPENDENCY_ERRORS.labels("nats").inc,
        )

    async def stop(self) -> None:
        """Stop consuming and finish the expiries in progress."""
        await stop_task(self._sampler)
        if self._subscription is not None:
            with contextlib.suppress(Exception):
                await self._subscription.unsubscribe()
        await self._tasks.wait()

    async def _on_message(self, msg: Any) -> None:
        await self._tasks.spawn(self._handle(msg))

    async def _handle(self, msg: Any) -> None:
        try:
            expired = events_pb2.TimerExpired.FromString(msg.data)
            acted = await self.handle(expired)
            if self.on_expired is not None:
                self.on_expired(expired, acted)
            await msg.ack()
        except Exception:
            log.exception("timer.expiry_failed")
            with contextlib.suppress(Exception):
                await msg.nak(delay=0.2)

    async def handle(self, expired: events_pb2.TimerExpired) -> bool:
        """Act on one expiry; returns whether it changed the table."""
        if expired.deadline_kind == events_pb2.DEADLINE_KIND_PRESENCE_LEASE:
            if await self.leases.held(expired.table_id, expired.seat):
                return False
            return await self.app.presence_expired(expired.table_id, expired.seat) is not None
        state = await self.app.expire(expired.table_id, expired.turn_number)
        return state is not None
