"""Refusals a gateway repeats by itself (issue 15): a client that keeps pushing against a
budget of the table service costs the gateway, not the table service and Redis.

When the table service refuses a request with RATE_LIMITED, its ``RetryInfo`` says when the
budget's window ends; until then (at most :data:`MAX_HOLD_S`) the gateway answers the same
request of the same subject (the client address for creates, its connection or address for
wrong codes, the table for lobby changes, the seat token for connections) with the same
refusal and the time left, without forwarding it. The budgets are fixed windows, so nothing
the gateway answers this way would have been accepted. The open-lobby cap is not repeated:
a lobby that starts frees a place before its ``RetryInfo`` (the oldest lobby's expiry).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Hashable, Mapping
from typing import Final

import grpc

from services.common.service_errors import (
    Limit,
    Reason,
    ServiceError,
    limit_of,
    rate_limited,
    reason_of,
    retry_delay_of,
)

__all__ = ["MAX_HOLD_S", "Refusals"]

#: The longest a refusal is repeated without asking the table service again.
MAX_HOLD_S: Final = 5.0
#: Limits whose refusal may end before its RetryInfo says: never repeated.
_NOT_REPEATED: Final = frozenset({Limit.LOBBIES_PER_ADDRESS})


def _limit_and_delay(error: grpc.aio.AioRpcError) -> tuple[Limit, str, float] | None:
    """``(limit, message, retry_after_s)`` of a RATE_LIMITED refusal, else None."""
    if (
        error.code() != grpc.StatusCode.RESOURCE_EXHAUSTED
        or reason_of(error) != Reason.RATE_LIMITED
    ):
        return None
    limit, delay = limit_of(error), retry_delay_of(error)
    if not limit or delay is None:
        return None
    return limit, error.details() or "", delay


class Refusals:
    """The refusals being repeated, by subject (bounded: expired ones go first, then the
    oldest)."""

    def __init__(
        self, *, clock: Callable[[], float] = time.monotonic, max_entries: int = 100_000
    ) -> None:
        self.clock = clock
        self.max_entries = max_entries
        self._held: dict[Hashable, tuple[float, Limit, str]] = {}

    def check(self, subjects: Mapping[str, Hashable]) -> ServiceError | None:
        """The refusal still held for one of ``subjects`` (limit → subject), or None."""
        if not self._held:
            return None
        now = self.clock()
        for subject in subjects.values():
            held = self._held.get(subject)
            if held is None:
                continue
            until, limit, message = held
            if now < until:
                return rate_limited(limit, message, until - now)
            del self._held[subject]
        return None

    def remember(self, error: grpc.aio.AioRpcError, subjects: Mapping[str, Hashable]) -> None:
        """Hold ``error`` for the subject of the limit it names, if it is a budget's."""
        refusal = _limit_and_delay(error)
        if refusal is None:
            return
        limit, message, delay = refusal
        subject = subjects.get(limit)
        if subject is None or limit in _NOT_REPEATED:
            return
        if len(self._held) >= self.max_entries:
            self._prune()
        self._held[subject] = (self.clock() + min(delay, MAX_HOLD_S), limit, message)

    def _prune(self) -> None:
        now = self.clock()
        for subject, (until, _, _) in list(self._held.items()):
            if until <= now:
                del self._held[subject]
        while len(self._held) >= self.max_entries:  # all live: forget the oldest
            del self._held[next(iter(self._held))]

    def __len__(self) -> int:
        return len(self._held)
