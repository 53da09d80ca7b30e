"""Table events on NATS JetStream, from the Redis outbox, and the relay that heals crashes.

After a commit the table service publishes every event of the table's outbox in version
order (usually just the new one) on ``dominos.v1.table.<table_id>``, with the JetStream
message id ``<table_id>:<version>``: a re-publish inside the stream's duplicate window is
dropped by the server, so publishing twice is harmless. Once NATS acknowledged them, the
events leave the outbox. A process that dies between commit and publish leaves them there;
the relay (every replica runs one) re-publishes outboxes older than a grace delay.

An event whose clock ends too soon for the timer's sweep of the deadline index is also
announced to the timer service as a ``TableClock`` on ``dominos.v1.timer.clock`` (core NATS,
ids and the clock only: :mod:`services.common.clock_hints`); a lost announcement costs at
most one sweep period of lateness.
"""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any, Final, NamedTuple

from dominos.v1 import events_pb2

from services.common.bus import CLOCK_SUBJECT, TABLE_STREAM, message_id, table_subject
from services.common.clock_hints import needs_hint, table_clock
from services.common.dependency_metrics import timed_publish
from services.common.logging import get_logger
from services.common.stream_acks import StreamPublisher
from services.table.store import TableStore

log = get_logger(__name__)

#: How long acknowledged events wait before their outboxes are cleared, so that the clearings
#: of every table acknowledged meanwhile share one Redis round trip (an uncleared event costs
#: nothing but a duplicate re-publish by the relay, which NATS drops). 200 ms: five round
#: trips a second whatever the load (at 200 moves a second each clears forty tables), well
#: inside the relay's 1 s grace (issue 22).
CLEAR_DELAY_S: Final = 0.2
#: Tables whose last acknowledged version a publisher remembers (most recent first).
ACKED_REMEMBERED: Final = 65_536


class OutboxEvent(NamedTuple):
    """An outbox event: the message and its bytes as stored (published as they are)."""

    event: events_pb2.TableEvent
    data: bytes

    @classmethod
    def parse(cls, data: bytes) -> OutboxEvent:
        """The outbox event stored as ``data`` (a serialised ``TableEvent``)."""
        return cls(events_pb2.TableEvent.FromString(data), data)


class EventPublisher:
    """Publishes outbox events and clears them once acknowledged."""

    def __init__(
        self,
        store: TableStore,
        *,
        nc: Any,
        sweep_ms: int,
        clock: Callable[[], float] = time.time,
        on_republish: Callable[[int], Any] | None = None,
        clear_delay_s: float = CLEAR_DELAY_S,
    ) -> None:
        #: Publications and their acknowledgements, on ``nc`` (cheaper than ``js.publish``).
        self.acks = StreamPublisher(nc)
        self.store = store
        #: The core connection clocks are announced on, and the timer's sweep period.
        self.nc = nc
        self.sweep_ms = sweep_ms
        self.clock = clock
        self.on_republish = on_republish
        self.clear_delay_s = clear_delay_s
        #: Per table, the newest acknowledged version whose clearing is not yet sent.
        self._to_clear: dict[str, int] = {}
        #: The task clearing batches while any waits (one at a time).
        self._batch: asyncio.Task[None] | None = None
        #: Per recently published table, its newest version NATS acknowledged: an outbox read
        #: before its clearing landed may still hold it, and it is not published again.
        self._acked: OrderedDict[str, int] = OrderedDict()

    async def publish(
        self, table_id: str, events: list[bytes], *, clear_in_background: bool = False
    ) -> int:
        """:meth:`publish_events` of serialised ``TableEvent``\\ s (version order)."""
        return await self.publish_events(
            table_id,
            [OutboxEvent.parse(data) for data in events],
            clear_in_background=clear_in_background,
        )

    async def publish_events(
        self, table_id: str, events: Sequence[OutboxEvent], *, clear_in_background: bool = False
    ) -> int:
        """Publish ``events`` (version order) and clear them from the outbox once
        acknowledged; returns how many NATS stored as new (not duplicates). Events NATS
        already acknowledged to this publisher are not sent again (an outbox read before
        their clearing landed still holds them). With ``clear_in_background`` the caller
        does not wait for the clearing (a command's answer need not): it joins the next
        batch; if it never happens, the relay re-publishes and NATS drops the duplicates."""
        fresh = 0
        last = 0
        acknowledged = self._acked.get(table_id, 0)
        for event, data in events:
            if event.version <= acknowledged:
                last = event.version  # acknowledged already: only its clearing is due
                continue
            ack = await timed_publish(
                TABLE_STREAM,
                self.acks.publish(
                    table_subject(table_id),
                    data,
                    headers={"Nats-Msg-Id": message_id(table_id, event.version)},
                ),
            )
            fresh += 0 if ack.duplicate else 1
            last = event.version
            if needs_hint(event.deadline_ms, int(self.clock() * 1000), self.sweep_ms):
                await self._announce(event)
        if last > acknowledged:
            self._acked[table_id] = last
            self._acked.move_to_end(table_id)
            if len(self._acked) > ACKED_REMEMBERED:
                self._acked.popitem(last=False)
        if last:
            if clear_in_background:
                self._clear_soon(table_id, last)
            else:
                await self.store.mark_published({table_id: last})
        return fresh

    async def _announce(self, event: events_pb2.TableEvent) -> None:
        """Tell the timer replicas about a clock ending before their sweep would find it; a
        failure is logged (the next sweep finds the clock in the index)."""
        try:
            await self.nc.publish(CLOCK_SUBJECT, table_clock(event))
        except Exception as error:
            log.warning("clock.announce_failed", table_id=event.table_id, error=repr(error))

    def _clear_soon(self, table_id: str, version: int) -> None:
        """Clear the table's outbox up to ``version`` in the next batch: every table
        acknowledged within ``clear_delay_s`` is cleared in one Redis round trip."""
        if version > self._to_clear.get(table_id, 0):
            self._to_clear[table_id] = version
        if self._batch is None:
            self._batch = asyncio.create_task(self._clear_batches())
            self._batch.add_done_callback(self._cleared)

    async def _clear_batches(self) -> None:
        """Clear batches until no acknowledged version waits, one round trip at a time."""
        try:
            while self._to_clear:
                await asyncio.sleep(self.clear_delay_s)
                batch, self._to_clear = self._to_clear, {}
                await self.store.mark_published(batch)
        finally:
            self._batch = None

    async def flush_clearing(self) -> None:
        """Wait for the clearings in flight (at shutdown; tests)."""
        if self._batch is not None:
            await asyncio.gather(self._batch, return_exceptions=True)

    def _cleared(self, task: asyncio.Task[None]) -> None:
        """A background clearing ended; a failure only leaves work for the relay."""
        if not task.cancelled() and task.exception() is not None:
            log.warning("outbox.clear_failed", error=repr(task.exception()))

    async def relay_once(self, grace_ms: int = 1000) -> int:
        """Re-publish the outboxes that have waited longer than ``grace_ms``; returns the
        number of events NATS stored as new."""
        older_than = int(self.clock() * 1000) - grace_ms
        republished = 0
        for table_id in await self.store.pending_tables(older_than):
            events = await self.store.outbox(table_id)
            if not events:
                await self.store.forget_pending(table_id)
                continue
            fresh = await self.publish(table_id, events)
            republished += fresh
            if fresh:
                log.warning("outbox.republished", table_id=table_id, events=fresh)
        if republished and self.on_republish is not None:
            self.on_republish(republished)
        return republished

    async def run_relay(self, interval_s: float = 1.0, grace_ms: int = 1000) -> None:
        """Relay forever (until cancelled), every ``interval_s``; errors are logged, not fatal."""
        while True:
            try:
                await self.relay_once(grace_ms)
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("outbox.relay_failed")
            await asyncio.sleep(interval_s)
