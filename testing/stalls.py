"""What the slow commands overlapped: ``bench.load --stalls DIR``.

With ``--stalls DIR`` every service process and every generator runs the stall probe
(``testing/stall_probe/sitecustomize.py``, put on their ``PYTHONPATH`` by
:func:`probe_env`): each notes, with wall-clock instants, its garbage collections of 1 ms
or more and the moments its event loop woke 2 ms or more late. The generators note every
recorded command slower than the p99 limit (its wall-clock start and its action → four views
latency). After each step :func:`attribute` tells, for those slow commands, how many were in
flight while a process collected garbage or its loop stalled, by process, and how many
overlapped nothing of the kind: those waited elsewhere (a queue of the shared core, Redis,
NATS, the kernel), which no event loop notices.
"""

from __future__ import annotations

import os
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: The directory of the probe's ``sitecustomize``.
PROBE_DIR = Path(__file__).resolve().parent / "stall_probe"
#: Where the probe writes (it is inactive without it). The probe names it too (it runs
#: before this package can be imported); the probe's test fails if the two differ.
ENV_VAR = "BENCH_STALLS_DIR"


def probe_env(directory: Path) -> dict[str, str]:
    """The environment that makes the processes started from here run the probe into
    ``directory``."""
    path = os.environ.get("PYTHONPATH", "")
    return {
        ENV_VAR: str(directory),
        "PYTHONPATH": f"{PROBE_DIR}{os.pathsep}{path}" if path else str(PROBE_DIR),
    }


@dataclass(frozen=True, slots=True)
class Stall:
    """One garbage collection (``kind`` "gc") or late wake-up ("loop") of a process."""

    process: str
    kind: str
    start_s: float
    ms: float

    @property
    def end_s(self) -> float:
        """The wall-clock instant it ended."""
        return self.start_s + self.ms / 1e3


def read_stalls(directory: Path) -> list[Stall]:
    """Every stall the probes wrote into ``directory`` (``<process>-<pid>.txt``)."""
    stalls: list[Stall] = []
    for path in sorted(directory.glob("*-*.txt")):
        process = path.stem.rpartition("-")[0]
        for line in path.read_text().splitlines():
            fields = line.split()
            if len(fields) == 4 and fields[0] == "gc":
                stalls.append(Stall(process, "gc", float(fields[2]), float(fields[3])))
            elif len(fields) == 3 and fields[0] == "loop":
                stalls.append(Stall(process, "loop", float(fields[1]), float(fields[2])))
    return stalls


def _summary(stalls: Iterable[Stall]) -> dict[str, dict[str, float]]:
    by: dict[str, list[float]] = defaultdict(list)
    for stall in stalls:
        by[f"{stall.process} {stall.kind}"].append(stall.ms)
    return {
        key: {"count": len(ms), "total_ms": round(sum(ms), 3), "max_ms": round(max(ms), 3)}
        for key, ms in sorted(by.items())
    }


def attribute(
    slow: Sequence[tuple[float, float]],
    stalls: Sequence[Stall],
    start_s: float,
    end_s: float,
    limit_ms: float,
) -> dict[str, Any]:
    """For the slow commands (``(wall-clock start s, latency ms)``): how many were in flight
    during a collection of each process (``"<process> gc"``), during a loop stall of a
    process that was not collecting at the time (``"<process> loop"``: a stall that a
    collection explains counts as the collection), and how many overlapped neither
    (``none``); with every stall of the window ``[start_s, end_s]``, by process and kind.
    The slow commands are those of ``limit_ms`` or more."""
    inside = [s for s in stalls if s.end_s >= start_s and s.start_s <= end_s]
    collections = [s for s in inside if s.kind == "gc"]
    overlapping: Counter[str] = Counter()
    none = 0
    for start, ms in slow:
        end = start + ms / 1e3
        hit = [s for s in inside if s.start_s < end and s.end_s > start]
        collecting = {s.process for s in hit if s.kind == "gc"}
        causes = {f"{p} gc" for p in collecting} | {
            f"{s.process} loop"
            for s in hit
            if s.kind == "loop" and s.process not in collecting and not _explained(s, collections)
        }
        overlapping.update(causes)
        none += not causes
    return {
        "limit_ms": limit_ms,
        "slow_commands": len(slow),
        "overlapping": dict(overlapping.most_common()),
        "none": none,
        "stalls": _summary(inside),
    }


def _explained(stall: Stall, collections: Sequence[Stall]) -> bool:
    """Whether a collection of the same process happened during the loop stall."""
    return any(
        c.process == stall.process and c.start_s < stall.end_s and c.end_s > stall.start_s
        for c in collections
    )


def describe(figures: dict[str, Any]) -> str:
    """One line of the report: the slow commands and what they overlapped."""
    slow, limit_ms = figures["slow_commands"], figures["limit_ms"]
    if not slow:
        return f"none over {limit_ms:g} ms"
    parts = [f"{key} {count}" for key, count in figures["overlapping"].items()]
    parts.append(f"nothing {figures['none']}")
    return f"{slow} over {limit_ms:g} ms, in flight during: " + ", ".join(parts)
