"""Sampling of log lines a client can trigger at will (rejections, per-request failures).

A line logged once per rejected request lets one client write as fast as it can send requests.
:class:`LogSampler` keeps a token bucket per key (e.g. the rejection reason): a key may log a
burst of ``burst`` lines, then ``rate`` lines per second; lines above that are dropped and
counted, and the next line of that key that is written carries ``suppressed=N``, the number of
lines of that key dropped since the previous one. Whatever the request rate, a key writes at
most ``burst + rate * seconds`` lines, and there are at most ``max_keys`` keys (later keys share
one overflow bucket), so the log grows by a bounded amount.

Only log lines are sampled: metrics (counters) must still count every event. Use::

    _REJECTIONS = LogSampler()  # REJECTION_LOG_RATE per second after REJECTION_LOG_BURST

    metrics.REJECTED.labels(reason).inc()
    _REJECTIONS.log(log.info, "table.command_rejected", key=reason, reason=reason)

Keys must come from the code (a reason, a status code name), never raw client input.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Hashable
from typing import Any, Final

__all__ = [
    "OVERFLOW_KEY",
    "REJECTION_LOG_BURST",
    "REJECTION_LOG_RATE",
    "LogSampler",
]

REJECTION_LOG_RATE: Final = 1.0
"""Lines per second and key a sampler lets through once its burst is spent."""
REJECTION_LOG_BURST: Final = 10
"""Lines a key may write at once (the bucket's size)."""
MAX_KEYS: Final = 256
"""Keys with their own bucket; further keys share :data:`OVERFLOW_KEY`'s."""
OVERFLOW_KEY: Final = "<other>"


class _Bucket:
    __slots__ = ("stamp", "suppressed", "tokens")

    def __init__(self, tokens: float, stamp: float) -> None:
        self.tokens = tokens
        self.stamp = stamp
        self.suppressed = 0


class LogSampler:
    """A token bucket of log lines per key (see the module docstring). Thread-safe."""

    def __init__(
        self,
        rate: float = REJECTION_LOG_RATE,
        burst: int = REJECTION_LOG_BURST,
        *,
        max_keys: int = MAX_KEYS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if rate < 0 or burst < 1 or max_keys < 1:
            raise ValueError("rate must be >= 0, burst and max_keys >= 1")
        self.rate = rate
        self.burst = burst
        self.max_keys = max_keys
        self._clock = clock
        self._buckets: dict[Hashable, _Bucket] = {}
        self._lock = threading.Lock()

    def admit(self, key: Hashable) -> int | None:
        """Whether a line of ``key`` may be written now: ``None`` if not (it is counted as
        suppressed), otherwise the number of lines of ``key`` suppressed since the last one
        admitted (then reset to 0)."""
        now = self._clock()
        with self._lock:
            bucket = self._buckets.get(key)
            if bucket is None:
                if len(self._buckets) >= self.max_keys:
                    key = OVERFLOW_KEY
                    bucket = self._buckets.get(key)
                if bucket is None:
                    bucket = self._buckets[key] = _Bucket(float(self.burst), now)
            elapsed = max(0.0, now - bucket.stamp)
            bucket.tokens = min(float(self.burst), bucket.tokens + elapsed * self.rate)
            bucket.stamp = now
            if bucket.tokens < 1.0:
                bucket.suppressed += 1
                return None
            bucket.tokens -= 1.0
            suppressed, bucket.suppressed = bucket.suppressed, 0
            return suppressed

    def log(self, method: Callable[..., Any], event: str, *, key: Hashable, **fields: Any) -> bool:
        """Call ``method(event, **fields)`` (e.g. ``log.info``) if :meth:`admit` lets a line of
        ``key`` through, adding ``suppressed=N`` when lines were dropped before it. Returns
        whether the line was written."""
        suppressed = self.admit(key)
        if suppressed is None:
            return False
        if suppressed:
            fields["suppressed"] = suppressed
        method(event, **fields)
        return True
