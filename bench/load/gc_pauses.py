"""The services' garbage-collection pauses over a step's recorded time, read from their
``dominos_gc_pause_seconds`` and ``dominos_gc_cpu_seconds_total`` (the load bench's
cluster serves its metrics pages): per service and generation, how many collections ran,
the seconds they held the process, the CPU seconds they used (the rest of a pause is the
process waiting for its core), and the bucket bound the longest one stayed under. A
collection stops every task of its process, so a long one shows in the tail of the
latencies the step measured."""

from __future__ import annotations

import asyncio
import math
from typing import Any

from prometheus_client.parser import text_string_to_metric_families

from testing.cluster import ProcessCluster

__all__ = ["GENERATIONS", "Pauses", "between", "parse", "read", "summary"]

#: The collector's generations, by the label the services give them.
GENERATIONS = {"0": "young", "1": "middle", "2": "full"}
FAMILY = "dominos_gc_pause_seconds"
CPU_FAMILY = "dominos_gc_cpu_seconds"

#: Per service, per generation label: the cumulative buckets ``(upper bound, count)`` in
#: increasing order, the sum of seconds and the CPU seconds.
Pauses = dict[str, dict[str, tuple[list[tuple[float, float]], float, float]]]


def parse(page: str) -> dict[str, tuple[list[tuple[float, float]], float, float]]:
    """The pause histogram and CPU counter of one metrics page, per generation label (empty
    without the histogram; CPU 0 without the counter)."""
    buckets: dict[str, list[tuple[float, float]]] = {}
    sums: dict[str, float] = {}
    cpu: dict[str, float] = {}
    for family in text_string_to_metric_families(page):
        if family.name not in (FAMILY, CPU_FAMILY):
            continue
        for sample in family.samples:
            generation = sample.labels.get("generation", "")
            if family.name == CPU_FAMILY:
                if sample.name.endswith("_total"):
                    cpu[generation] = sample.value
            elif sample.name.endswith("_bucket"):
                bound = float(sample.labels["le"])
                buckets.setdefault(generation, []).append((bound, sample.value))
            elif sample.name.endswith("_sum"):
                sums[generation] = sample.value
    return {g: (sorted(b), sums.get(g, 0.0), cpu.get(g, 0.0)) for g, b in buckets.items()}


async def read(cluster: ProcessCluster) -> Pauses:
    """Every replica's pause histograms now, by role (one replica per role in the bench)."""

    def scrape_all() -> Pauses:
        return {replica.role: parse(replica.scrape()) for replica in cluster.replicas}

    return await asyncio.to_thread(scrape_all)


def _longest_under(start: list[tuple[float, float]], end: list[tuple[float, float]]) -> float:
    """The smallest bucket bound holding every collection counted in between (seconds)."""
    pairs = zip(end, start, strict=True)
    added = [(bound, count - before) for (bound, count), (_, before) in pairs]
    total = added[-1][1] if added else 0
    for bound, count in added:
        if count >= total:
            return bound
    return math.inf


def between(start: Pauses, end: Pauses) -> dict[str, dict[str, dict[str, float]]]:
    """Per role and generation name: ``collections``, ``seconds``, ``cpu_seconds`` and
    ``longest_under_s`` (the bucket bound the longest collection stayed under; 0 when none
    ran)."""
    result: dict[str, dict[str, dict[str, float]]] = {}
    for role, generations in end.items():
        for label, (buckets, seconds, cpu_seconds) in generations.items():
            before_buckets, before_seconds, before_cpu = start.get(role, {}).get(
                label, ([(bound, 0.0) for bound, _ in buckets], 0.0, 0.0)
            )
            collections = (buckets[-1][1] if buckets else 0) - (
                before_buckets[-1][1] if before_buckets else 0
            )
            result.setdefault(role, {})[GENERATIONS.get(label, label)] = {
                "collections": collections,
                "seconds": seconds - before_seconds,
                "cpu_seconds": cpu_seconds - before_cpu,
                "longest_under_s": _longest_under(before_buckets, buckets) if collections else 0.0,
            }
    return result


def summary(pauses: dict[str, dict[str, Any]]) -> str:
    """``gateway: young 23 (< 5 ms), middle 1 (< 25 ms), 0.080 s (CPU 0.021 s); table: ...``
    (the CPU part only when the services count it)."""
    parts = []
    for role, generations in pauses.items():
        counted = [
            f"{name} {row['collections']:.0f} (< {row['longest_under_s'] * 1000:g} ms)"
            for name, row in generations.items()
            if row["collections"]
        ]
        seconds = sum(row["seconds"] for row in generations.values())
        cpu = sum(row.get("cpu_seconds", 0.0) for row in generations.values())
        used = f" (CPU {cpu:.3f} s)" if cpu else ""
        parts.append(f"{role}: {', '.join(counted) or 'none'}, {seconds:.3f} s{used}")
    return "; ".join(parts)
