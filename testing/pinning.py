"""Pinning processes to cores (issue 22): the cluster on one set of cores, the load
generators on another, so that the generators' CPU never shows up as the cluster's
latency and the cluster's capacity reads as tables per core.

:func:`pin` sets the CPU affinity of every thread of a process (``sched_setaffinity`` on
each ``/proc/<pid>/task/<tid>``: a process's existing threads keep their own affinity when
only its main thread is pinned; threads started later inherit their creator's).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path

__all__ = ["parse_cpus", "pin"]


def parse_cpus(text: str) -> tuple[int, ...]:
    """``"0-2,5"`` → ``(0, 1, 2, 5)``; ``""`` → ``()`` (no pinning). Raises ``ValueError``
    for anything else, or a CPU this machine does not have."""
    if not text.strip():
        return ()
    cpus: set[int] = set()
    for part in text.split(","):
        low, _, high = part.strip().partition("-")
        first, last = int(low), int(high or low)
        if first < 0 or last < first:
            raise ValueError(f"bad CPU range {part!r}")
        cpus.update(range(first, last + 1))
    available = os.sched_getaffinity(0)
    missing = sorted(cpus - available)
    if missing:
        raise ValueError(f"CPUs {missing} are not available here ({sorted(available)})")
    return tuple(sorted(cpus))


def _threads(pid: int) -> Iterable[int]:
    try:
        return [int(tid) for tid in os.listdir(Path(f"/proc/{pid}/task"))]
    except FileNotFoundError:
        return []


def pin(pid: int, cpus: Sequence[int]) -> None:
    """Run every thread of ``pid`` on ``cpus`` only (nothing when ``cpus`` is empty); a
    thread that ended meanwhile is skipped."""
    if not cpus:
        return
    for tid in _threads(pid):
        try:
            os.sched_setaffinity(tid, cpus)
        except ProcessLookupError:
            continue
