"""Garbage-collector pauses: how long each collection of CPython's cyclic collector held the
process, by generation (``dominos_gc_pause_seconds{generation}``, a histogram).

A collection stops every task of the event loop while it walks its generation: in a
gateway holding thousands of view streams, one of the middle generation walked ~100,000
objects for ~100 ms (load bench, 600 tables, the cluster on one core), a stall of every
stream of the process. :func:`watch_gc_pauses` times every collection from the collector's
own callbacks (``gc.callbacks``); every service starts it
(:func:`services.common.entrypoint.run_service`). The event-loop lag
(``dominos_event_loop_lag_seconds``) shows such a stall too, without naming it.

A pause is wall time: on a busy core the collecting thread also waits while other processes
run. ``dominos_gc_cpu_seconds_total{generation}`` counts the CPU the collections themselves
used (the collecting thread's CPU clock), so the two tell a costly collection from a
process waiting for its core. The load bench (issue 22, 1,000 tables, the cluster on one
core, 30 s): the gateway's young collections held it 3.7 ms each on average for 2.4 ms of
CPU, its middle one 19.4 ms for 14.3; the table service's young ones 0.67 ms for 0.60.
"""

from __future__ import annotations

import gc
import time
from typing import Any, Final

from prometheus_client import Counter, Histogram

__all__ = ["GC_CPU", "GC_PAUSE", "watch_gc_pauses"]

GC_PAUSE: Final = Histogram(
    "dominos_gc_pause_seconds",
    "How long each garbage collection held the process (every task waits), by generation.",
    ["generation"],
    buckets=(0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0),
)
GC_CPU: Final = Counter(
    "dominos_gc_cpu_seconds",
    "CPU time the garbage collections used, by generation (their pauses, less the time the "
    "collecting thread waited for its core).",
    ["generation"],
)
#: The series of each generation, bound once (a collection's callback takes no label lock).
_BY_GENERATION: Final = tuple(GC_PAUSE.labels(str(generation)) for generation in range(3))
_CPU_BY_GENERATION: Final = tuple(GC_CPU.labels(str(generation)) for generation in range(3))


class _PauseClock:
    """The ``gc.callbacks`` entry: notes when a collection starts and records its duration
    and its CPU time when it stops (collections never overlap: the collector runs one at a
    time, in the thread that triggered it)."""

    __slots__ = ("started", "started_cpu")

    def __init__(self) -> None:
        self.started = 0.0
        self.started_cpu = 0.0

    def __call__(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self.started_cpu = time.thread_time()
            self.started = time.perf_counter()
        else:
            generation = info["generation"]
            _BY_GENERATION[generation].observe(time.perf_counter() - self.started)
            _CPU_BY_GENERATION[generation].inc(time.thread_time() - self.started_cpu)


#: The one clock of this process (installed by :func:`watch_gc_pauses`).
_CLOCK: Final = _PauseClock()


def watch_gc_pauses() -> None:
    """Time every garbage collection of this process from now on (once: a second call adds
    nothing)."""
    if _CLOCK not in gc.callbacks:
        gc.callbacks.append(_CLOCK)
