"""Event-loop lag: how late the loop runs what is due, the first sign of a process that is
CPU-bound or blocked by synchronous work.

:func:`watch_loop_lag` sleeps ``interval_s`` again and again and records by how much each
wake-up came late (``dominos_event_loop_lag_seconds``, a histogram; 0 on an idle loop). Every
service runs one from its :class:`~services.common.grpc_server.ServiceRuntime`: a
callback that holds the loop for 200 ms shows as a 0.2 s observation, whatever it was.
"""

from __future__ import annotations

import asyncio
from typing import Final

from prometheus_client import Histogram

__all__ = ["LOOP_LAG", "LOOP_LAG_INTERVAL_S", "watch_loop_lag"]

LOOP_LAG: Final = Histogram(
    "dominos_event_loop_lag_seconds",
    "How late the event loop woke a task that slept (CPU saturation or blocking calls).",
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0),
)

#: Seconds between two measurements.
LOOP_LAG_INTERVAL_S: Final = 0.25


async def watch_loop_lag(interval_s: float = LOOP_LAG_INTERVAL_S) -> None:
    """Forever: sleep ``interval_s`` and record how late the loop woke this task."""
    loop = asyncio.get_running_loop()
    while True:
        due = loop.time() + interval_s
        await asyncio.sleep(interval_s)
        LOOP_LAG.observe(max(loop.time() - due, 0.0))
