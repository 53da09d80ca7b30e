"""Fan-out of table versions to the view streams of one gateway process.

One NATS subscription per table per process (``dominos.v1.table.<id>``), shared by every
local stream of that table. The views an event carries in parts (computed once by the table
service) are shared by every stream of the table as they are, without decoding the event's
state; a snapshot's are projected here, once per version. Each stream queues at most 16
unsent versions, so a slow client skips to newer versions instead of making the gateway
buffer without bound: views are complete snapshots. A stream never receives a version
twice or an older version after a newer one.

The hub trusts the bus only for the next version. An event whose version does not follow the
one the feed holds (a gap after a lost message, a jump, or a forgery) is not streamed: the
table's snapshot is read from the table service instead, which is the truth; an event that
claims a version the table never reached is counted and dropped. Snapshot reads for one
table never overlap, so a flood of such events costs at most one read at a time per table.
A new feed is subscribed, and the subscription confirmed by the NATS server, before its
first snapshot is read, so no version published meanwhile is missed; a feed quiet for the
resync interval is read too (its last event may have been lost).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from dominos.v1 import events_pb2

from services.common.bus import table_subject
from services.common.connections import flushed
from services.common.logging import get_logger
from services.common.projection import ViewParts, view_parts
from services.rules import Phase, TableState, decode_state
from services.rules.state import SEATS

log = get_logger(__name__)


class Version(NamedTuple):
    """One version of a table as a gateway holds it: its number and phase, who holds each
    seat (``TableEvent.seat_holders``) and, for a version that came as an event, when it was
    committed (``TableEvent.committed_at_ms``) and when it arrived here (``time.monotonic()``),
    for the fan-out metrics (0 for a snapshot read); and its views in serialised parts,
    shared by every stream of the table.

    A version that came without its views (a snapshot, an event of an older table service)
    holds its decoded ``state`` until :meth:`Hub.publish` projects them, once; one that came
    with them (every event of the table service) is never decoded here.
    """

    version: int
    phase: Phase
    holders: bytes
    committed_at_ms: int = 0
    received: float = 0.0
    views: ViewParts | None = None
    state: TableState | None = None

    @classmethod
    def of_state(
        cls, state: TableState, holders: bytes, committed_at_ms: int = 0, received: float = 0.0
    ) -> Version:
        """A version known by its decoded state (the state without its seed), views to come."""
        return cls(state.version, state.phase, holders, committed_at_ms, received, None, state)


SnapshotReader = Callable[[str], Awaitable[Version | None]]

#: Unconfirmed events a feed holds while it reads the table's snapshot (more are dropped: a
#: flood of forged events costs bounded memory; the snapshot heals what a drop skipped).
HELD_EVENTS = 64


class WatcherClosed(Exception):
    """The watcher's stream must end; the argument says why."""


class Watcher:
    """One view stream's mailbox: the table's versions not yet sent, oldest first.

    At most ``capacity`` versions wait (they are shared with every other stream of the table,
    so a waiting version costs a reference); when a slow client lets more pile up, the oldest
    are dropped and the client skips to newer versions: views are complete snapshots.

    A stream between two versions waits on one future (:meth:`wakeup`), which its handler
    awaits directly (:meth:`take`, then :meth:`wakeup`): no coroutine per wait, as
    :meth:`next` or ``asyncio.Event.wait`` would add. Thousands of
    streams wait at once, each re-armed at every version of its table, and whatever a waiting
    stream holds survives into the garbage collector's scans (issue 22).
    """

    __slots__ = ("_pending", "_waiter", "closed", "last_sent", "seat", "skipped", "table_id")

    capacity = 16

    def __init__(self, table_id: str, seat: int) -> None:
        self.table_id = table_id
        self.seat = seat
        self.last_sent = 0
        self.skipped = 0
        #: Why the stream must end (e.g. "replaced"), once :meth:`close` was called.
        self.closed = ""
        self._pending: deque[Version] = deque()
        self._waiter: asyncio.Future[None] | None = None

    @property
    def waiting(self) -> int:
        """Versions queued and not yet taken."""
        return len(self._pending)

    def close(self, reason: str) -> None:
        """End the stream: :meth:`take` and :meth:`next` raise :class:`WatcherClosed` from
        now on."""
        self.closed = reason
        self._wake()

    def offer(self, version: Version) -> None:
        """Queue ``version`` if it is newer than anything sent or queued."""
        newest = self._pending[-1].version if self._pending else self.last_sent
        if version.version <= newest:
            return
        if len(self._pending) >= self.capacity:
            self._pending.popleft()
            self.skipped += 1
        self._pending.append(version)
        self._wake()

    def _wake(self) -> None:
        waiter, self._waiter = self._waiter, None
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def take(self) -> Version | None:
        """The next version to send, marked sent, or ``None`` when none waits (then await
        :meth:`wakeup`). Raises :class:`WatcherClosed` once the watcher was closed, even
        with versions waiting."""
        if self.closed:
            raise WatcherClosed(self.closed)
        if not self._pending:
            return None
        version = self._pending.popleft()
        self.last_sent = version.version
        return version

    def wakeup(self) -> asyncio.Future[None]:
        """A future done at the next :meth:`offer` or :meth:`close` (the same one until
        then)."""
        waiter = self._waiter
        if waiter is None or waiter.done():
            waiter = self._waiter = asyncio.get_running_loop().create_future()
        return waiter

    async def next(self) -> Version:
        """Wait for the next version to send; marks it sent. Raises :class:`WatcherClosed`
        once the watcher was closed, even with versions waiting."""
        while (version := self.take()) is None:
            await self.wakeup()
        return version


@dataclass
class _Feed:
    table_id: str
    watchers: set[Watcher] = field(default_factory=set)
    version: int = 0
    current: Version | None = None
    subscription: Any = None
    #: When the feed last got a newer version (event loop clock); a quiet feed is resynced.
    updated_at: float = 0.0
    #: The snapshot read in flight for this feed (never more than one).
    confirming: asyncio.Task[None] | None = None
    #: Events that did not follow the feed's version, by version, until a snapshot read
    #: confirms where the table is: those that then follow are streamed, the rest dropped.
    held: dict[int, Any] = field(default_factory=dict)

    @property
    def claimed(self) -> int:
        """The highest version an unconfirmed event claims (0 when none waits)."""
        return max(self.held, default=0)


class Hub:
    """Shares one NATS subscription per table among the local watchers of that table."""

    def __init__(
        self,
        nc: Any,
        read_snapshot: SnapshotReader,
        *,
        on_skip: Callable[[int], Any] | None = None,
        on_rejected: Callable[[str], Any] | None = None,
    ) -> None:
        self.nc = nc
        self.read_snapshot = read_snapshot
        self.on_skip = on_skip
        #: Called with a reason ("gap", "unconfirmed", "malformed") for each event dropped.
        self.on_rejected = on_rejected
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

    def watches(self, table_id: str) -> bool:
        """Whether a local stream watches the table."""
        return table_id in self._feeds

    async def watch(self, table_id: str, seat: int) -> Watcher:
        """A watcher of the table, subscribed first (confirmed by the server), then primed
        with the current snapshot."""
        watcher = Watcher(table_id, seat)
        async with self._lock:
            feed = self._feeds.get(table_id)
            if feed is None:
                feed = _Feed(table_id)
                self._feeds[table_id] = feed
                feed.subscription = await self.nc.subscribe(
                    table_subject(table_id), cb=self._handler(feed)
                )
                # The server has the subscription once it answers a ping sent after it: any
                # version committed after the snapshot below reaches the feed.
                await flushed(self.nc)
            feed.watchers.add(watcher)
            current = feed.current
        if current is None:
            await self._confirm(feed)  # a new feed: read the table once
        else:
            watcher.offer(current)  # the feed is live: its newest version is current
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

    def _reject(self, feed: _Feed, reason: str, **details: Any) -> None:
        if self.on_rejected is not None:
            self.on_rejected(reason)
        log.warning("gateway.event_rejected", table_id=feed.table_id, reason=reason, **details)

    def _handler(self, feed: _Feed) -> Callable[[Any], Awaitable[None]]:
        async def on_message(msg: Any) -> None:
            try:
                event = events_pb2.TableEvent.FromString(msg.data)
                if event.table_id != feed.table_id:
                    self._reject(feed, "malformed", claimed=event.version)
                    return
                if event.version <= feed.version:
                    return  # a duplicate or a late re-publish
                if feed.version == 0 or event.version != feed.version + 1:
                    # Not the next version: confirm with the table before streaming anything.
                    if len(feed.held) < HELD_EVENTS:
                        feed.held[event.version] = event
                    self._confirm_soon(feed)
                    return
                self._accept(feed, event)
                self._release_held(feed)
            except Exception:
                self._reject(feed, "malformed")

        return on_message

    def _accept(self, feed: _Feed, event: Any) -> None:
        """Stream an event that follows the feed's version: with the views and phase it
        carries (one view part per seat of its rule set) as they are, else from its state."""
        if event.public_view and event.phase and 2 <= len(event.seat_views) <= SEATS:
            version = Version(
                event.version,
                Phase(event.phase),
                event.seat_holders,
                event.committed_at_ms,
                time.monotonic(),
                ViewParts(event.public_view, tuple(event.seat_views)),
            )
        else:
            state = decode_state(event.state)
            if state.version != event.version or state.table_id != feed.table_id:
                self._reject(feed, "malformed", claimed=event.version)
                return
            version = Version.of_state(
                state, event.seat_holders, event.committed_at_ms, time.monotonic()
            )
        self.publish(feed, version)

    def _release_held(self, feed: _Feed) -> None:
        """Stream the held events that now follow the feed's version; forget older ones."""
        while feed.held:
            event = feed.held.pop(feed.version + 1, None)
            if event is None:
                break
            try:
                self._accept(feed, event)
            except Exception:
                self._reject(feed, "malformed")
        for version in [v for v in feed.held if v <= feed.version]:
            del feed.held[version]

    def publish(self, feed: _Feed, version: Version) -> None:
        """Offer a newer version of the table to all its watchers."""
        if version.version <= feed.version:
            return
        feed.version = version.version
        if version.views is None:
            assert version.state is not None  # a version comes with its views or its state
            version = version._replace(views=view_parts(version.state), state=None)
        feed.current = version
        feed.updated_at = asyncio.get_running_loop().time()
        for watcher in feed.watchers:
            watcher.offer(version)

    def _confirm_soon(self, feed: _Feed) -> None:
        """Start a snapshot read for the feed unless one is in flight (that one re-reads if
        a claim is still above what it found)."""
        if feed.confirming is None or feed.confirming.done():
            task = asyncio.create_task(self._confirm_loop(feed))
            # A failed read is logged in the loop; whoever awaits the task sees it too.
            task.add_done_callback(lambda t: t.cancelled() or t.exception())
            feed.confirming = task

    async def _confirm(self, feed: _Feed) -> None:
        """Read the table's snapshot now (or wait for the read in flight)."""
        self._confirm_soon(feed)
        task = feed.confirming
        assert task is not None
        await asyncio.shield(task)

    async def _confirm_loop(self, feed: _Feed) -> None:
        """Snapshot reads until every claimed version is either reached or shown forged: a
        claim above the snapshot read after it was made is a version the table never had."""
        try:
            for _ in range(2):
                claimed = feed.claimed
                await self._resync_feed(feed)
                self._release_held(feed)
                if not feed.held or claimed == feed.claimed:
                    break  # all claims reached, or none came in since the read: forged
            if feed.held and self._feeds.get(feed.table_id) is feed:
                self._reject(feed, "unconfirmed", claimed=feed.claimed, version=feed.version)
        except Exception:
            log.warning("gateway.resync_failed", table_id=feed.table_id, exc_info=True)
            raise
        finally:
            feed.held.clear()

    async def _resync_feed(self, feed: _Feed) -> None:
        version = await self.read_snapshot(feed.table_id)
        if version is None or self._feeds.get(feed.table_id) is not feed:
            return
        if version.version <= feed.version and feed.current is not None:
            for watcher in feed.watchers:
                watcher.offer(feed.current)
            return
        self.publish(feed, version)

    async def resync(self, table_id: str) -> None:
        """Read the table's snapshot and offer it (heals any gap in the bus)."""
        feed = self._feeds.get(table_id)
        if feed is not None:
            await self._confirm(feed)

    def quiet_tables(self, quiet_for_s: float) -> list[str]:
        """The tables whose feed got no newer version for ``quiet_for_s`` seconds."""
        now = asyncio.get_running_loop().time()
        return [t for t, feed in self._feeds.items() if now - feed.updated_at >= quiet_for_s]

    async def resync_all(self, quiet_for_s: float = 0.0) -> None:
        """Resync every table with local streams (after the bus reconnected), or only those
        whose feed got no newer version for ``quiet_for_s``."""
        for table_id in self.quiet_tables(quiet_for_s):
            try:
                await self.resync(table_id)
            except Exception:
                log.exception("gateway.resync_failed", table_id=table_id)

    async def run_resync(self, interval_s: float) -> None:
        """Resync the quiet feeds periodically: a lost last event cannot leave a stream behind
        for long. A feed that got an event within the interval is not read (a missed event
        in the middle is noticed by the next one, which does not follow), so a busy gateway
        reads no snapshots."""
        while True:
            await asyncio.sleep(interval_s)
            await self.resync_all(quiet_for_s=interval_s)
