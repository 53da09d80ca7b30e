"""The gateway's presence leases: one per open view stream, renewed in batches.

A stream takes a lease on its seat when it opens (:class:`~services.common.presence.PresenceLeases`,
holder ``<gateway id>:<stream number>``) and gives it back when it ends. One task renews every
lease this gateway holds, every third of the lease time, 250 leases per round trip (sorted
by shard: a script call per shard, renewing a table's leases together), so the cost does
not grow with a task per stream. If the gateway dies, its leases run out and the timer
service marks the seats disconnected (S3).
"""

from __future__ import annotations

import asyncio

from services.common.logging import get_logger
from services.common.presence import PresenceLeases
from services.common.schema import shard_of

#: Leases renewed per Redis call; the gateway's event loop yields between two calls.
BATCH = 250

log = get_logger(__name__)


def _shard_and_table(lease: tuple[str, int, str]) -> tuple[int, str]:
    """The order leases are renewed in: by shard, then table."""
    return shard_of(lease[0]), lease[0]


class LeaseKeeper:
    """Takes, renews and releases this gateway's presence leases."""

    def __init__(self, leases: PresenceLeases, ttl_ms: int) -> None:
        self.leases = leases
        self.ttl_ms = ttl_ms
        self._held: dict[str, tuple[str, int]] = {}
        self._stopped = False

    @property
    def held(self) -> int:
        """Leases held by this gateway."""
        return len(self._held)

    async def take(self, table_id: str, seat: int, holder: str) -> None:
        """Take (or take over) the seat's lease for ``holder``."""
        self._held[holder] = (table_id, seat)
        await self.leases.renew(table_id, seat, holder, self.ttl_ms)

    async def release(self, holder: str) -> bool:
        """Give the lease back; True when ``holder`` still held it (no one took over)."""
        lease = self._held.pop(holder, None)
        if lease is None:
            return False
        return await self.leases.release(lease[0], lease[1], holder)

    async def renew_all(self) -> None:
        """Renew every held lease, in pipelined batches of leases of neighbouring shards (a
        batch's script calls, one per shard, each renew many tables' leases)."""
        leases = sorted(
            ((table, seat, holder) for holder, (table, seat) in list(self._held.items())),
            key=_shard_and_table,
        )
        for start in range(0, len(leases), BATCH):
            await self.leases.renew_many(leases[start : start + BATCH], self.ttl_ms)

    def stop(self) -> None:
        """Stop renewing at the next round (a cancellation can be lost inside a Redis call)."""
        self._stopped = True

    async def run(self) -> None:
        """Renew until :meth:`stop` or cancellation; a failed round is logged and retried."""
        while not self._stopped:
            await asyncio.sleep(self.ttl_ms / 3000)
            if self._stopped:
                return
            try:
                await self.renew_all()
            except asyncio.CancelledError:
                raise
            except Exception:
                log.warning("gateway.lease_renew_failed", leases=len(self._held))
