"""Fan-out of table versions to the view streams of one gateway process.

One NATS subscription per table per process (``dominos.v1.table.<id>``), shared by every
local stream of that table. Each event's state is decoded once and shared; each stream
queues at most 16 unsent states, so a slow client skips to newer versions instead of making
the gateway buffer without bound: views are complete snapshots. A stream never
receives a version twice or an older version after a newer one. When the bus may have lost
messages (a reconnect) or a stream starts, the table's snapshot is read from the table
service, so a gap always heals; a feed quiet for the resync interval is read too (its last
event may have been lost).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from dominos.v1 import events_pb2

from services.common.logging import get_logger
from services.table.publisher import table_subject
from services.table.rules import TableState, decode_state

log = get_logger(__name__)

SnapshotReader = Callable[[str], Awaitable[TableState | None]]


class Watcher:
    """One view stream's mailbox: the table's states not yet sent, oldest first.

    At most ``capacity`` states wait (they are shared with every other stream of the table,
    so a waiting state costs a reference); when a slow client lets more pile up, the oldest
    are dropped and the client skips to newer versions: views are complete snapshots.
    """

    __slots__ = ("_pending", "_ready", "last_sent", "seat", "skipped", "table_id")

    capacity = 16

    def __init__(self, table_id: str, seat: int) -> None:
        self.table_id = table_id
        self.seat = seat
        self.last_sent = 0
        self.skipped = 0
        self._pending: deque[TableState] = deque()
        self._ready = asyncio.Event()

    def offer(self, state: TableState) -> None:
        """Queue ``state`` if it is newer than anything sent or queued."""
        newest = self._pending[-1].version if self._pending else self.last_sent
        if state.version <= newest:
            return
        if len(self._pending) >= self.capacity:
            self._pending.popleft()
            self.skipped += 1
        self._pending.append(state)
        self._ready.set()

    async def next(self) -> TableState:
        """Wait for the next state to send; marks it sent."""
        while not self._pending:
            self._ready.clear()
            await self._ready.wait()
        state = self._pending.popleft()
        self.last_sent = state.version
        return state


@dataclass
class _Feed:
    table_id: str
    watchers: set[Watcher] = field(default_factory=set)
    version: int = 0
    state: TableState | None = None
    subscription: Any = None
    #: When the feed last got a newer state (event loop clock); a quiet feed is resynced.
    updated_at: float = 0.0


class Hub:
    """Shares one NATS subscription per table among the local watchers of that table."""

    def __init__(
        self,
        nc: Any,
        read_snapshot: SnapshotReader,
        *,
        on_skip: Callable[[int], Any] | None = None,
    ) -> None:
        self.nc = nc
        self.read_snapshot = read_snapshot
        self.on_skip = on_skip
        self._feeds: dict[str, _Feed] = {}
        self._lock = asyncio.Lock()

    @property
    def tables(self) -> int:
        """Tables with at least one local stream."""
        return len(self._feeds)

    @property
    def streams(self) -> int:
        """Local streams."""
        return sum(len(f.watchers) for f in self._feeds.values())

    async def watch(self, table_id: str, seat: int) -> Watcher:
        """A watcher of the table, subscribed first, then primed with the current snapshot."""
        watcher = Watcher(table_id, seat)
        async with self._lock:
            feed = self._feeds.get(table_id)
            if feed is None:
                feed = _Feed(table_id)
                self._feeds[table_id] = feed
                feed.subscription = await self.nc.subscribe(
                    table_subject(table_id), cb=self._handler(feed)
                )
            feed.watchers.add(watcher)
            current = feed.state
        if current is None:
            await self.resync(table_id)  # a new feed: read the table once
        else:
            watcher.offer(current)  # the feed is live: its newest state is current
        return watcher

    async def unwatch(self, watcher: Watcher) -> None:
        """Forget a watcher; the table's subscription ends with its last watcher."""
        async with self._lock:
            feed = self._feeds.get(watcher.table_id)
            if feed is None:
                return
            feed.watchers.discard(watcher)
            if self.on_skip is not None and watcher.skipped:
                self.on_skip(watcher.skipped)
            if not feed.watchers:
                del self._feeds[watcher.table_id]
                with contextlib.suppress(Exception):
                    await feed.subscription.unsubscribe()

    def _handler(self, feed: _Feed) -> Callable[[Any], Awaitable[None]]:
        async def on_message(msg: Any) -> None:
            try:
                event = events_pb2.TableEvent.FromString(msg.data)
                if event.version <= feed.version:
                    return  # a duplicate or a late re-publish
                self.publish(feed, decode_state(event.state))
            except Exception:
                log.exception("gateway.bad_event", table_id=feed.table_id)

        return on_message

    def publish(self, feed: _Feed, state: TableState) -> None:
        """Offer a newer state of the table to all its watchers."""
        if state.version <= feed.version:
            return
        feed.version = state.version
        feed.state = state
        feed.updated_at = asyncio.get_running_loop().time()
        for watcher in feed.watchers:
            watcher.offer(state)

    async def resync(self, table_id: str) -> None:
        """Read the table's snapshot and offer it (heals any gap in the bus)."""
        state = await self.read_snapshot(table_id)
        feed = self._feeds.get(table_id)
        if state is not None and feed is not None:
            if state.version <= feed.version and feed.state is not None:
                state = feed.state
                for watcher in feed.watchers:
                    watcher.offer(state)
                return
            self.publish(feed, state)

    def quiet_tables(self, quiet_for_s: float) -> list[str]:
        """The tables whose feed got no newer state for ``quiet_for_s`` seconds."""
        now = asyncio.get_running_loop().time()
        return [t for t, feed in self._feeds.items() if now - feed.updated_at >= quiet_for_s]

    async def resync_all(self, quiet_for_s: float = 0.0) -> None:
        """Resync every table with local streams (after the bus reconnected), or only those
        whose feed got no newer state for ``quiet_for_s``."""
        for table_id in self.quiet_tables(quiet_for_s):
            try:
                await self.resync(table_id)
            except Exception:
                log.exception("gateway.resync_failed", table_id=table_id)

    async def run_resync(self, interval_s: float) -> None:
        """Resync the quiet feeds periodically: a lost last event cannot leave a stream behind
        for long. A feed that got an event within the interval is not read (a missed event
        in the middle costs nothing: every event is a complete state, the next one heals
        it), so a busy gateway reads no snapshots."""
        while True:
            await asyncio.sleep(interval_s)
            await self.resync_all(quiet_for_s=interval_s)
