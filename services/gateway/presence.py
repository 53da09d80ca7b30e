"""The gateway's presence leases: one per open view stream, renewed a slice at a time.

A stream takes a lease on its seat when it opens (:class:`~services.common.presence.PresenceLeases`,
holder ``<gateway id>:<stream number>``) and gives it back when it ends. One task renews every
lease this gateway holds every third of the lease time, so the cost does not grow with a task
per stream. The leases are kept by slice of shards (:data:`SLICES` slices of the 64 shards)
and the round is spread over its period: every ``period / SLICES`` the task renews one
slice's leases (a script call per shard, renewing a table's leases together, at most
:data:`BATCH` leases per round trip). A round used to sort and renew every lease at once: at
4,000 streams its sort alone held the gateway's event loop for ~4 ms every 5 s, and its
script calls queued every table's commits behind them in Redis (issue 22); a slice is a
sixteenth of that, taken without sorting. If the gateway dies, its leases run out and the
timer service marks the seats disconnected (S3).
"""

from __future__ import annotations

import asyncio
from typing import Final

from services.common.logging import get_logger
from services.common.presence import PresenceLeases
from services.common.schema import SHARDS, shard_of

#: Leases renewed per Redis round trip; the gateway's event loop yields between two.
BATCH: Final = 250
#: Slices of the shards a renewal round is spread over (one renewed per tick).
SLICES: Final = 16

log = get_logger(__name__)

Lease = tuple[str, int]  # (table id, seat)


def slice_of(table_id: str) -> int:
    """The renewal slice of a table's leases: its shard's (neighbouring shards together)."""
    return shard_of(table_id) * SLICES // SHARDS


class LeaseKeeper:
    """Takes, renews and releases this gateway's presence leases."""

    def __init__(self, leases: PresenceLeases, ttl_ms: int) -> None:
        self.leases = leases
        self.ttl_ms = ttl_ms
        self._held: dict[str, Lease] = {}
        #: The same leases by renewal slice (holder → lease in each).
        self._slices: tuple[dict[str, Lease], ...] = tuple({} for _ in range(SLICES))
        self._stopped = False

    @property
    def held(self) -> int:
        """Leases held by this gateway."""
        return len(self._held)

    async def take(self, table_id: str, seat: int, holder: str) -> None:
        """Take (or take over) the seat's lease for ``holder``."""
        self._forget(holder)
        self._held[holder] = (table_id, seat)
        self._slices[slice_of(table_id)][holder] = (table_id, seat)
        await self.leases.renew(table_id, seat, holder, self.ttl_ms)

    async def release(self, holder: str) -> bool:
        """Give the lease back; True when ``holder`` still held it (no one took over)."""
        lease = self._forget(holder)
        if lease is None:
            return False
        return await self.leases.release(lease[0], lease[1], holder)

    def _forget(self, holder: str) -> Lease | None:
        lease = self._held.pop(holder, None)
        if lease is not None:
            self._slices[slice_of(lease[0])].pop(holder, None)
        return lease

    async def renew_slice(self, index: int) -> int:
        """Renew the leases of slice ``index`` held now, :data:`BATCH` per round trip; returns
        how many. A lease released while an earlier batch was on its way is not renewed (a
        renewal would take it again until it ran out)."""
        held = self._slices[index]
        leases = [(table, seat, holder) for holder, (table, seat) in held.items()]
        renewed = 0
        for start in range(0, len(leases), BATCH):
            batch = leases[start : start + BATCH]
            if start:
                batch = [lease for lease in batch if held.get(lease[2]) == lease[:2]]
            if batch:
                await self.leases.renew_many(batch, self.ttl_ms)
                renewed += len(batch)
        return renewed

    async def renew_all(self) -> int:
        """Renew every held lease now, a slice at a time; returns how many."""
        renewed = 0
        for index in range(SLICES):
            renewed += await self.renew_slice(index)
        return renewed

    def stop(self) -> None:
        """Stop renewing at the next tick (a cancellation can be lost inside a Redis call)."""
        self._stopped = True

    async def run(self) -> None:
        """Renew until :meth:`stop` or cancellation: one slice every ``period / SLICES``
        (``period`` a third of the lease time), on a schedule that does not drift, so every
        lease is renewed once a period; a failed slice is logged and renewed next period."""
        loop = asyncio.get_running_loop()
        tick = self.ttl_ms / 3000 / SLICES
        due = loop.time()
        index = 0
        while not self._stopped:
            due += tick
            await asyncio.sleep(max(due - loop.time(), 0.0))
            if self._stopped:
                return
            try:
                await self.renew_slice(index)
            except asyncio.CancelledError:
                raise
            except Exception:
                log.warning("gateway.lease_renew_failed", slice=index, leases=len(self._held))
            index = (index + 1) % SLICES
            if due < loop.time() - tick * SLICES:
                due = loop.time()  # far behind (a stalled loop or Redis): no burst of catch-ups
