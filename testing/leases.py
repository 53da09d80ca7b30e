"""Presence leases on a real Redis whose renewals are recorded, for the tests and the bench
that check how a gateway's lease keeper spreads its renewals."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Any

from services.common.presence import PresenceLeases

__all__ = ["RecordedLeases"]

Lease = tuple[str, int, str]  # (table id, seat, holder)


class RecordedLeases(PresenceLeases):
    """:class:`PresenceLeases` that records each ``renew_many`` call (``calls``: when, by
    ``time.monotonic()``, and which leases) before making it; ``before``, when set, is
    awaited first with the call's leases (a hook into the moment a batch is sent)."""

    def __init__(self, redis: Any) -> None:
        super().__init__(redis)
        self.calls: list[tuple[float, list[Lease]]] = []
        self.before: Callable[[list[Lease]], Awaitable[None]] | None = None

    async def renew_many(self, leases: list[Lease], ttl_ms: int) -> None:
        if self.before is not None:
            await self.before(leases)
        self.calls.append((time.monotonic(), list(leases)))
        await super().renew_many(leases, ttl_ms)
