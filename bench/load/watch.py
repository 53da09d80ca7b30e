"""What the bench watches besides the players: the timer's firings (a core NATS subscription
on ``dominos.v1.timer.expired``), the processes' CPU time, and Redis's memory."""

from __future__ import annotations

import re
import resource
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from dominos.v1 import events_pb2
from redis.asyncio import Redis

from bench.histogram import Histogram
from testing.cluster import ProcessCluster
from testing.procfs import context_switches, cpu_times, process_memory_kb
from testing.stats import PERCENTILES

_perf_ns = time.perf_counter_ns


@dataclass
class TimerWatch:
    """Every ``TimerExpired`` received: (receive instant, attempt, kind, fired late ms,
    received late ms)."""

    firings: list[tuple[int, int, int, int, int]] = field(default_factory=list)

    async def on_message(self, msg: Any) -> None:
        at_ns = _perf_ns()
        now_ms = int(time.time() * 1000)
        expired = events_pb2.TimerExpired.FromString(msg.data)
        self.firings.append(
            (
                at_ns,
                expired.attempt,
                int(expired.deadline_kind),
                expired.fired_at_ms - expired.deadline_ms,
                now_ms - expired.deadline_ms,
            )
        )

    def first_firings(self, since_ns: int, until_ns: int) -> int:
        """First firings received in the window (each makes the table service act)."""
        return sum(1 for f in self.firings if since_ns <= f[0] < until_ns and f[1] == 1)

    def figures(self, since_ns: int, until_ns: int) -> dict[str, Any]:
        """Lateness of the first firings received in the window; refirings counted."""
        fired, received = Histogram(), Histogram()
        kinds: Counter[str] = Counter()
        refired = 0
        for at_ns, attempt, kind, fired_ms, received_ms in self.firings:
            if not since_ns <= at_ns < until_ns:
                continue
            if attempt > 1:
                refired += 1
                continue
            fired.record(fired_ms * 1_000_000)
            received.record(received_ms * 1_000_000)
            kinds[events_pb2.DeadlineKind.Name(kind).removeprefix("DEADLINE_KIND_").lower()] += 1
        return {
            "fired_late_ms": fired.summary(PERCENTILES, 1e6),
            "received_late_ms": received.summary(PERCENTILES, 1e6),
            "first_firings": fired.count,
            "by_kind": dict(kinds),
            "refired": refired,
        }


def cpu_now(pids: dict[str, int]) -> dict[str, tuple[float, float]]:
    """(user, system) CPU seconds so far of each process (``/proc/<pid>/stat``, all threads;
    this one's from ``getrusage``)."""
    now = {name: cpu_times(pid) for name, pid in pids.items()}
    usage = resource.getrusage(resource.RUSAGE_SELF)
    now["bench"] = (usage.ru_utime, usage.ru_stime)
    return now


def switches_now(pids: dict[str, int]) -> dict[str, tuple[int, int]]:
    """(voluntary, involuntary) context switches so far of each process, all threads."""
    return {name: context_switches(pid) for name, pid in pids.items()}


async def redis_memory(redis: Redis) -> dict[str, int]:
    """Redis ``used_memory``, the part of it that is client buffers (``mem_clients_normal``)
    and the number of keys."""
    info = await redis.info("memory")
    return {
        "used": int(info["used_memory"]),
        "clients": int(info.get("mem_clients_normal", 0)),
        "keys": int(await redis.dbsize()),
    }


async def redis_commands(redis: Redis) -> dict[str, dict[str, int]]:
    """Redis's ``INFO commandstats``: per command, the calls and the microseconds spent in
    them since the server started (scripts count as ``evalsha``, not their inner calls)."""
    info = await redis.info("commandstats")
    return {
        name.removeprefix("cmdstat_"): {"calls": int(v["calls"]), "usec": int(v["usec"])}
        for name, v in info.items()
    }


def commands_between(
    before: dict[str, dict[str, int]], after: dict[str, dict[str, int]], per: float
) -> dict[str, dict[str, float]]:
    """The Redis commands run between two :func:`redis_commands` readings, per ``per`` (the
    moves played meanwhile): calls and microseconds of each, most expensive first."""
    rows = {}
    for name, now in after.items():
        then = before.get(name, {"calls": 0, "usec": 0})
        calls = now["calls"] - then["calls"]
        if calls > 0 and per > 0:
            rows[name] = {
                "calls": calls / per,
                "usec": (now["usec"] - then["usec"]) / per,
            }
    return dict(sorted(rows.items(), key=lambda item: -item[1]["usec"]))


def gateway_rss_kb(cluster: ProcessCluster) -> int:
    """The gateway's ``VmRSS`` (KB; 0 if unknown)."""
    return process_memory_kb(cluster.pids().gateway)["rss_kb"] or 0


@dataclass
class Baseline:
    """Memory before any table was seated."""

    gateway_rss_kb: int
    redis: dict[str, int]

    @classmethod
    async def read(cls, cluster: ProcessCluster, redis: Redis) -> Baseline:
        """The gateway's RSS and Redis's memory now."""
        return cls(gateway_rss_kb(cluster), await redis_memory(redis))


_KEY_PARTS = (
    # a table's keys, codes and create requests: by kind, whatever the table or code
    (
        re.compile(r"^(dominos:\{[^}]*\}:(?:table|outbox|timerlease|leases|code|create)):.*$"),
        r"\1:*",
    ),
    (re.compile(r"^(dominos:\{[^}]*\}:limit):.*$"), r"\1:*"),
    # shards and client addresses (hash tags)
    (re.compile(r"\{[^}]*\}"), "{S}"),
)


async def redis_breakdown(redis: Redis, live: int) -> dict[str, dict[str, float]]:
    """Every key by kind (table ids and codes folded): how many, and ``MEMORY USAGE`` bytes
    (all elements sampled) per live table, largest first."""
    keys: Counter[str] = Counter()
    size: Counter[str] = Counter()
    batch: list[bytes] = []

    async def flush() -> None:
        pipe = redis.pipeline(transaction=False)
        for key in batch:
            pipe.memory_usage(key, samples=0)
        for key, used in zip(batch, await pipe.execute(), strict=True):
            kind = key.decode(errors="replace")
            for pattern, replacement in _KEY_PARTS:
                kind = pattern.sub(replacement, kind)
            keys[kind] += 1
            size[kind] += int(used or 0)
        batch.clear()

    async for key in redis.scan_iter(count=1000):
        batch.append(key)
        if len(batch) >= 1000:
            await flush()
    if batch:
        await flush()
    return {
        kind: {"keys": keys[kind], "bytes_per_table": size[kind] / max(live, 1)}
        for kind, _ in size.most_common()
    }
