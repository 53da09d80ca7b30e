"""The cluster's clock: fires ``timer.expired`` when a table's deadline falls due.

How a deadline gets here: the table service commits it into the Redis index with the state
(the truth). A sweep of the index every ``sweep_ms``, on a fixed cadence, schedules in
process the clocks ending within the next two periods (and slack), so each is in memory
before it ends and fires to the millisecond; a clock ending too soon after its commit for
that is also announced by the table service as a ``TableClock`` on ``dominos.v1.timer.clock``
(:mod:`services.common.clock_hints`). The timer reads no table event: it never receives a
hand, and a move costs it nothing until its clock is about to end. When it is due, the deadline is
claimed atomically in Redis (one replica fires) and a ``TimerExpired`` is published on the
JetStream work queue the table service consumes. The entry is re-checked after the retry
interval and fired again while its table has not moved on, so a lost message or a dead
replica costs one retry interval, never a stuck table. Expired presence leases (a crashed
gateway) are swept and fired the same way.

Every replica schedules every announced clock and races the others for its claim. The
sweeps are divided: each replica scans the deadline and presence indexes of its own shards
only (:mod:`membership`), so the sweeping load does not grow with the number of replicas; a
dead replica's shards are swept by the others within its heartbeat's lifetime, so the
clocks it alone had scheduled fire late by at most that (the claim it may have taken runs
out after one retry interval).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import Counter
from collections.abc import Callable
from typing import Any, Final

from dominos.v1 import events_pb2
from nats.js import JetStreamContext

from services.common.bus import CLOCK_SUBJECT, TIMER_STREAM, TIMER_SUBJECT, ensure_timer_stream
from services.common.clock_hints import sweep_lookahead_ms
from services.common.dependency_metrics import timed_publish
from services.common.logging import get_logger
from services.common.presence import PresenceLeases
from services.timer import metrics
from services.timer.claims import TimerStore
from services.timer.membership import ALL_SHARDS, Membership
from services.timer.schedule import Deadline, Schedule

#: How far past due a deadline still in the index may be before it counts as overdue (it
#: fired; the table's commit takes milliseconds, a retry 0.5-1 s).
OVERDUE_GRACE_MS = 2_000


class Overdue:
    """Counts the index rows due before ``before_ms`` (the overdue ones) and the oldest."""

    __slots__ = ("before_ms", "deadlines", "oldest_ms")

    def __init__(self, before_ms: int) -> None:
        self.before_ms = before_ms
        self.deadlines = 0
        self.oldest_ms: int | None = None

    def count(self, rows: list[tuple[str, int]]) -> None:
        """Count the overdue rows of a page (``(table_id, deadline_ms)``)."""
        for _, deadline_ms in rows:
            if deadline_ms < self.before_ms:
                self.deadlines += 1
                if self.oldest_ms is None or deadline_ms < self.oldest_ms:
                    self.oldest_ms = deadline_ms

    def oldest_age_ms(self, now_ms: int) -> int:
        """How far past due the oldest overdue row is (0 when none is)."""
        return 0 if self.oldest_ms is None else max(now_ms - self.oldest_ms, 0)


#: Rows of the deadline index read per sweep page.
SWEEP_PAGE: Final = 2000
#: Re-firings back off: retry, 2x, 4x, then every 8x the retry interval.
MAX_BACKOFF: Final = 8
#: Margin after another replica's claim lease before trying to claim it again (ms).
LEASE_SLACK_MS: Final = 20
_KINDS = {1: "turn", 2: "break", 3: "presence"}

log = get_logger(__name__)


class TimerService:
    """Schedules, claims and fires deadlines; see the module docstring."""

    def __init__(
        self,
        store: TimerStore,
        leases: PresenceLeases,
        nc: Any,
        *,
        retry_ms: int,
        sweep_ms: int,
        stream_replicas: int = 1,
        membership: Membership | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.store = store
        #: How this replica shares the shards with the others (None: it owns every shard).
        self.membership = membership
        self.leases = leases
        self.nc = nc
        self.js: JetStreamContext = nc.jetstream()
        self.retry_ms = retry_ms
        self.sweep_ms = sweep_ms
        self.stream_replicas = stream_replicas
        self.clock = clock
        self.schedule = Schedule()
        self._in_flight: Counter[str] = Counter()
        self._wake = asyncio.Event()
        self._tasks: list[asyncio.Task[None]] = []
        self._firing: set[asyncio.Task[None]] = set()
        self._subscription: Any = None

    def now_ms(self) -> int:
        """The service clock, ms since the epoch."""
        return int(self.clock() * 1000)

    @property
    def owned(self) -> tuple[int, ...]:
        """The shards whose indexes this replica sweeps (deadlines, presence leases)."""
        return self.membership.owned if self.membership is not None else ALL_SHARDS

    async def start(self) -> None:
        """Subscribe to the announced clocks, sweep once, and start the timer and sweep loops."""
        await ensure_timer_stream(self.js, self.stream_replicas)
        self._subscription = await self.nc.subscribe(CLOCK_SUBJECT, cb=self._on_message)
        await self.sweep()
        self._tasks = [
            asyncio.create_task(self._timer_loop(), name="timer-loop"),
            asyncio.create_task(self._sweep_loop(), name="timer-sweep"),
        ]

    async def stop(self) -> None:
        """Stop the loops and wait for firings in progress."""
        if self._subscription is not None:
            with contextlib.suppress(Exception):
                await self._subscription.unsubscribe()
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        if self._firing:
            await asyncio.gather(*self._firing, return_exceptions=True)
        if self.membership is not None:
            with contextlib.suppress(Exception):
                await self.membership.leave()

    # -- learning deadlines ---------------------------------------------------------------

    async def _on_message(self, msg: Any) -> None:
        try:
            clock = events_pb2.TableClock.FromString(msg.data)
        except Exception:
            log.warning("timer.bad_clock", subject=msg.subject)
            return
        self.learn(clock)

    def learn(self, clock: events_pb2.TableClock) -> None:
        """Schedule an announced clock, unless the table's scheduled clock was announced by
        a newer version (nothing is kept per table once its clock fired: a late announcement
        of an old clock costs a claim that finds the table moved on)."""
        current = self.schedule.get(clock.table_id)
        if not clock.deadline_ms or (current is not None and clock.version <= current.version):
            return
        deadline = Deadline(
            clock.table_id,
            clock.deadline_ms,
            clock.turn_number,
            int(clock.deadline_kind),
            version=clock.version,
        )
        if self.schedule.put(deadline):
            self._wake.set()
        metrics.SCHEDULED.set(len(self.schedule))

    async def sweep(self) -> None:
        """Renew this replica's share of the shards, then re-learn every deadline of its shards
        ending within :func:`sweep_lookahead_ms` from their Redis indexes (page by page,
        reading the clocks of unknown rows only), and fire the presence leases of its shards
        that ran out."""
        if self.membership is not None:
            await self.membership.heartbeat()
        owned = list(self.owned)
        now = self.now_ms()
        until = now + sweep_lookahead_ms(self.sweep_ms)
        woke = False
        overdue = Overdue(now - OVERDUE_GRACE_MS)
        for shard, first in (await self.store.first_pages(owned, until, SWEEP_PAGE)).items():
            if not first:
                continue  # nothing ends soon there (most shards, most sweeps): no call
            page, offset = first, 0
            while True:
                overdue.count(page)
                woke |= await self._learn_rows(page)
                offset += len(page)
                if len(page) < SWEEP_PAGE:
                    break
                await asyncio.sleep(0)  # let due timers fire between pages
                page = await self.store.index_page(shard, until, offset, SWEEP_PAGE)
        if woke:
            self._wake.set()
        for table_id, seat in await self.leases.claim_expired(now, owned):
            await self._publish(
                Deadline(table_id, now, 0, events_pb2.DEADLINE_KIND_PRESENCE_LEASE, seat)
            )
        metrics.SCHEDULED.set(len(self.schedule))
        metrics.OVERDUE.set(overdue.deadlines)
        metrics.OLDEST_OVERDUE.set(overdue.oldest_age_ms(now) / 1000)

    async def _learn_rows(self, page: list[tuple[str, int]]) -> bool:
        """Schedule the index rows this replica does not know yet; whether one is due
        earlier than anything scheduled (the timer loop must wake)."""
        unknown = [
            (table_id, deadline_ms)
            for table_id, deadline_ms in page
            if not self._in_flight[table_id]
            and getattr(self.schedule.get(table_id), "deadline_ms", None) != deadline_ms
        ]
        clocks = await self.store.clocks([table_id for table_id, _ in unknown])
        woke = False
        for (table_id, deadline_ms), clock in zip(unknown, clocks, strict=True):
            if clock is not None and not self._in_flight[table_id]:
                turn_number, kind = clock
                woke |= self.schedule.put(Deadline(table_id, deadline_ms, turn_number, kind))
        return woke

    async def _sweep_loop(self) -> None:
        """Sweep every ``sweep_ms`` from the previous sweep's start (a fixed cadence: a slow
        sweep does not push the next one later; after a stall the next starts at once)."""
        loop = asyncio.get_running_loop()
        next_at = loop.time()
        while True:
            next_at = max(next_at + self.sweep_ms / 1000, loop.time())
            await asyncio.sleep(next_at - loop.time())
            try:
                await self.sweep()
            except asyncio.CancelledError:
                raise
            except Exception:
                metrics.ERRORS.labels("redis").inc()
                log.exception("timer.sweep_failed")

    # -- firing ---------------------------------------------------------------------------

    async def _timer_loop(self) -> None:
        while True:
            due_at = self.schedule.next_due_ms()
            self._wake.clear()
            if due_at is None:
                await self._wake.wait()
                continue
            delay = (due_at - self.now_ms()) / 1000
            if delay > 0:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._wake.wait(), timeout=delay)
                continue
            due = self.schedule.pop_due(self.now_ms())
            if due:
                for deadline in due:
                    self._in_flight[deadline.table_id] += 1
                task = asyncio.create_task(self._fire(due))
                self._firing.add(task)
                task.add_done_callback(self._firing.discard)

    async def _fire(self, due: list[Deadline]) -> None:
        """Claim a batch of due deadlines in one step, then publish the won ones in deadline
        order (so overdue turns are resolved in order after a restart)."""
        try:
            claims = await self.store.claim(
                [(d.table_id, d.deadline_ms, d.turn_number) for d in due], self.retry_ms
            )
            await self._publish_won(
                [d for d, claimed in zip(due, claims, strict=True) if claimed > 0]
            )
            for deadline, claimed in zip(due, claims, strict=True):
                if claimed < 0:
                    metrics.MOVED_ON.inc()
                    continue
                if claimed == 0:
                    metrics.CLAIMED_BY_OTHER.inc()
                self._retry_later(deadline, fired=claimed == 1)
        except asyncio.CancelledError:
            raise
        except Exception:
            metrics.ERRORS.labels("redis").inc()
            log.exception("timer.claim_failed", tables=len(due))
            for deadline in due:
                self._retry_later(deadline, fired=False)
        finally:
            for deadline in due:
                self._in_flight[deadline.table_id] -= 1
                if not self._in_flight[deadline.table_id]:
                    del self._in_flight[deadline.table_id]

    async def _publish_won(self, won: list[Deadline]) -> None:
        """Publish the expiries this replica claimed, in deadline order on one connection,
        acknowledged together; a failed one is counted (its retry fires it again)."""
        results = await asyncio.gather(*(self._publish(d) for d in won), return_exceptions=True)
        for deadline, result in zip(won, results, strict=True):
            if isinstance(result, BaseException):
                metrics.ERRORS.labels("nats").inc()
                log.warning("timer.publish_failed", table_id=deadline.table_id)

    def _retry_later(self, deadline: Deadline, *, fired: bool) -> None:
        """Check the deadline again later, unless a newer clock arrived meanwhile.

        After this replica fired it: again after the retry interval, backing off (1x, 2x,
        4x, then 8x) while the table does not move on. After another replica's claim: once
        that claim's lease has run out (the retry interval), so a dead claimer costs one
        retry interval, never more.
        """
        if self.schedule.get(deadline.table_id) is not None:
            return
        if fired:
            delay = self.retry_ms * min(2 ** (deadline.attempt - 1), MAX_BACKOFF)
            attempt = deadline.attempt + 1
        else:
            delay = self.retry_ms + LEASE_SLACK_MS
            attempt = deadline.attempt
        again = Deadline(
            deadline.table_id,
            deadline.deadline_ms,
            deadline.turn_number,
            deadline.kind,
            deadline.seat,
            attempt,
            deadline.version,
        )
        if self.schedule.put(again, at_ms=self.now_ms() + delay):
            self._wake.set()

    async def _publish(self, deadline: Deadline) -> None:
        fired_at = self.now_ms()
        message = events_pb2.TimerExpired(
            table_id=deadline.table_id,
            turn_number=deadline.turn_number,
            deadline_kind=deadline.kind,  # type: ignore[arg-type]
            deadline_ms=deadline.deadline_ms,
            fired_at_ms=fired_at,
            attempt=deadline.attempt,
            seat=deadline.seat,
        )
        await timed_publish(
            TIMER_STREAM, self.js.publish(TIMER_SUBJECT, message.SerializeToString())
        )
        kind = _KINDS.get(deadline.kind, "other")
        if deadline.attempt == 1:
            metrics.FIRED.labels(kind).inc()
            metrics.LATENESS.observe(max(fired_at - deadline.deadline_ms, 0) / 1000)
        else:
            metrics.REFIRED.labels(kind).inc()
        log.debug(
            "timer.fired",
            table_id=deadline.table_id,
            turn_number=deadline.turn_number,
            kind=kind,
            attempt=deadline.attempt,
            late_ms=fired_at - deadline.deadline_ms,
        )
