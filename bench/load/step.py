"""One step of a scenario: seat the tables it adds, play every table for warm-up + recorded
seconds while the floor is sampled, and gather what every process measured (the step's
results, before ``bench.load.figures`` flattens them)."""

from __future__ import annotations

import asyncio
import math
import os
import resource
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from redis.asyncio import Redis

from bench.histogram import Histogram
from bench.load.config import MEMORY_SAMPLE, Config, away_tables
from bench.load.floor import LoadFloor
from bench.load.gc_pauses import Pauses
from bench.load.gc_pauses import between as gc_between
from bench.load.gc_pauses import read as read_gc_pauses
from bench.load.generator import HISTOGRAMS, GeneratorProcess, RunOrder, Window
from bench.load.pipeline import PipelineRun
from bench.load.profiles import finish_profiles, start_profiles
from bench.load.report import progress
from bench.load.watch import (
    Baseline,
    TimerWatch,
    commands_between,
    cpu_now,
    gateway_rss_kb,
    redis_breakdown,
    redis_commands,
    redis_memory,
    switches_now,
)
from services.table.store import TableStore
from testing.cluster import ProcessCluster
from testing.procfs import machine_busy_s, peak_rss_kb
from testing.stalls import attribute, read_stalls
from testing.stats import PERCENTILES

_perf_ns = time.perf_counter_ns


@dataclass
class Rig:
    """What every step runs on: the cluster, the bench's own clients and watchers, and the
    generator processes."""

    cluster: ProcessCluster
    redis: Redis
    floor: LoadFloor
    timer: TimerWatch
    baseline: Baseline
    generators: list[GeneratorProcess]


@dataclass(frozen=True)
class Memory:
    """The gateway's RSS (KB) and Redis's memory at one moment."""

    gateway_kb: int
    redis: dict[str, int]


@dataclass
class Played:
    """What the generators answered for a step, and this process's readings around the
    recorded time (CPU of every process, the machine's busy time, the load average)."""

    window: Window
    answers: list[dict[str, Any]]
    cpu_start: dict[str, tuple[float, float]]
    cpu_end: dict[str, tuple[float, float]]
    busy_s: float
    loadavg: dict[str, tuple[float, float, float]]
    #: The cluster Redis's ``INFO commandstats`` at the start and the end of the recorded time.
    redis_start: dict[str, dict[str, int]]
    redis_end: dict[str, dict[str, int]]
    #: The services' garbage-collection pause histograms at the start and the end of it.
    gc_start: Pauses
    gc_end: Pauses
    #: The floor pipeline played beside the cluster over the same seconds (``--pipeline
    #: beside``), else None.
    pipeline: dict[str, Any] | None = None
    #: Every process's (voluntary, involuntary) context switches at the start and the end.
    switches_start: dict[str, tuple[int, int]] = field(default_factory=dict)
    switches_end: dict[str, tuple[int, int]] = field(default_factory=dict)

    @property
    def cpu(self) -> dict[str, float]:
        """User + system CPU seconds of each process over the recorded time."""
        return {name: sum(self.cpu_end[name]) - sum(self.cpu_start[name]) for name in self.cpu_end}

    @property
    def cpu_system(self) -> dict[str, float]:
        """System CPU seconds of each process over the recorded time."""
        return {name: self.cpu_end[name][1] - self.cpu_start[name][1] for name in self.cpu_end}


def new_seat_log() -> dict[str, Any]:
    """What the seating of every step adds up to (per generator index where it is a count)."""
    return {
        "reopened": {},
        "seat_errors": {},
        "sample": [],
        "tables": {},
        "away": {},
        "connections": {},
    }


def _shares(total: int, count: int) -> list[int]:
    """``total`` split over ``count`` generators as evenly as it goes."""
    return [total // count + (i < total % count) for i in range(count)]


def _log_seating(seat_log: dict[str, Any], answer: dict[str, Any]) -> None:
    for key in ("reopened", "seat_errors"):
        for reason, n in answer[key].items():
            seat_log[key][reason] = seat_log[key].get(reason, 0) + n
    seat_log["sample"] = (seat_log["sample"] + answer["sample"])[:MEMORY_SAMPLE]
    seat_log["tables"][answer["index"]] = answer["tables"]
    seat_log["away"][answer["index"]] = answer["away_tables"]
    seat_log["connections"][answer["index"]] = answer["connections"]


async def seat_more(
    config: Config,
    tables: int,
    seated_so_far: int,
    generators: list[GeneratorProcess],
    seat_log: dict[str, Any],
) -> float:
    """Seat the tables (and tables of absent players) that ``tables`` adds to the
    ``seated_so_far``, shared over the generators; the seconds it took."""
    more = tables - seated_so_far
    more_away = away_tables(config, tables) - away_tables(config, seated_so_far)
    t0 = _perf_ns()
    if more > 0:
        shares = _shares(more, len(generators))
        away = _shares(more_away, len(generators))
        seated = await asyncio.gather(
            *(
                g.seat(share, away_share, config.seat_concurrency)
                for g, share, away_share in zip(generators, shares, away, strict=True)
                if share or away_share
            )
        )
        for answer in seated:
            _log_seating(seat_log, answer)
    return (_perf_ns() - t0) / 1e9


async def play(
    config: Config,
    tables: int,
    rig: Rig,
    every: dict[str, int],
    beside: PipelineRun | None = None,
) -> Played:
    """Every generator plays from one second from now for warm-up + seconds; meanwhile this
    process samples the floor and reads the CPU of ``every`` process around the recorded
    time. With ``beside`` (a started floor pipeline), its drivers play over the same
    seconds and its CPU is read at the same instants as the cluster's."""
    go_ns = _perf_ns() + 1_000_000_000
    window = Window.of(go_ns, config.warmup_s, config.seconds, config.pace_s)
    loadavg_before = os.getloadavg()
    answers_future = asyncio.gather(
        *(
            g.run(
                RunOrder(
                    go_ns,
                    config.warmup_s,
                    config.seconds,
                    config.pace_s,
                    config.seed + tables,
                    slow_ms=config.p99_limit_ms if config.stalls_dir is not None else 0.0,
                )
            )
            for g in rig.generators
        )
    )
    if beside is not None:
        await beside.go(go_ns)
    await asyncio.sleep(max(0.0, (window.measure_from - _perf_ns()) / 1e9))
    profilers = await start_profiles(config, tables, every)
    gc_start = await read_gc_pauses(rig.cluster)  # before the CPU readings: not counted
    cpu_start, busy_start = cpu_now(every), machine_busy_s()
    switches_start = switches_now(every)
    beside_start = beside.cpu() if beside is not None else {}
    redis_start = await redis_commands(rig.redis)
    await rig.floor.sample_for(window.measure_to, config.floor_hz)
    await asyncio.sleep(max(0.0, (window.measure_to - _perf_ns()) / 1e9))
    cpu_end, busy_end = cpu_now(every), machine_busy_s()
    switches_end = switches_now(every)
    beside_end = beside.cpu() if beside is not None else {}
    redis_end = await redis_commands(rig.redis)
    gc_end = await read_gc_pauses(rig.cluster)
    loadavg_after = os.getloadavg()
    answers = list(await answers_future)
    pipeline = await beside.results(beside_start, beside_end) if beside is not None else None
    await finish_profiles(profilers)
    return Played(
        window,
        answers,
        cpu_start,
        cpu_end,
        busy_end - busy_start,
        {"before": loadavg_before, "after": loadavg_after},
        redis_start,
        redis_end,
        gc_start,
        gc_end,
        pipeline,
        switches_start,
        switches_end,
    )


def _merge(answers: list[dict[str, Any]]) -> dict[str, Any]:
    histograms = {name: Histogram() for name in HISTOGRAMS}
    counts: Counter[str] = Counter()
    skipped: Counter[str] = Counter()
    errors: Counter[str] = Counter()
    warmup_errors: Counter[str] = Counter()
    for answer in answers:
        for name, data in answer["histograms"].items():
            histograms[name].merge(Histogram.from_json(data))
        for key in ("slots", "sent", "answered", "warmup_sent", "views_received"):
            counts[key] += answer[key]
        skipped.update(answer["skipped"])
        errors.update(answer["errors"])
        warmup_errors.update(answer["warmup_errors"])
    return {
        "histograms": histograms,
        "counts": dict(counts),
        "skipped": dict(skipped),
        "errors": dict(errors),
        "warmup_errors": dict(warmup_errors),
    }


def _latency_ms(histograms: dict[str, Histogram]) -> dict[str, dict[str, float]]:
    return {
        "views_from_schedule": histograms["views"].summary(PERCENTILES, 1e6),
        "rpc_from_schedule": histograms["rpc"].summary(PERCENTILES, 1e6),
        "views_from_send": histograms["from_send"].summary(PERCENTILES, 1e6),
        "send_lateness": histograms["send_late"].summary(PERCENTILES, 1e6),
        "generator_loop_lag": histograms["lag"].summary(PERCENTILES, 1e6),
    }


def _cpu(run: Played, commands: int, every: dict[str, int]) -> dict[str, Any]:
    """CPU per process (and per 1,000 commands), the rest of the machine's, peak RSS."""
    cpu = run.cpu
    peaks = {name: peak_rss_kb(pid) for name, pid in every.items()}
    peaks["bench"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {
        "cpu_s": cpu,
        "cpu_s_system": run.cpu_system,
        "cpu_s_other_processes": run.busy_s - sum(cpu.values()),
        "cpu_s_per_1k_commands": {
            name: seconds * 1000 / commands if commands else math.nan
            for name, seconds in cpu.items()
        },
        "peak_rss_kb": peaks,
        "context_switches_per_command": {
            name: {
                kind: (end[i] - run.switches_start[name][i]) / commands if commands else math.nan
                for i, kind in enumerate(("voluntary", "involuntary"))
            }
            for name, end in run.switches_end.items()
        },
    }


def _per(now: dict[str, int], then: dict[str, int], key: str, count: int) -> float:
    return (now[key] - then[key]) / max(count, 1)


def _memory(
    baseline: Baseline,
    seated: Memory,
    end: Memory,
    streams: int,
    live: int,
    breakdown: dict[str, dict[str, float]],
    usage: list[int],
) -> dict[str, Any]:
    """The gateway's and Redis's memory: before seating, after it, at the end; per stream,
    per live table, by key."""
    return {
        "gateway_rss_kb": {
            "baseline": baseline.gateway_rss_kb,
            "seated": seated.gateway_kb,
            "end": end.gateway_kb,
        },
        "redis": {"baseline": baseline.redis, "seated": seated.redis, "end": end.redis},
        "gateway_bytes_per_stream": (seated.gateway_kb - baseline.gateway_rss_kb)
        * 1024
        / max(streams, 1),
        "gateway_bytes_per_stream_end": (end.gateway_kb - baseline.gateway_rss_kb)
        * 1024
        / max(streams, 1),
        "redis_bytes_per_table_seated": _per(seated.redis, baseline.redis, "used", live),
        "redis_bytes_per_table_end": _per(end.redis, baseline.redis, "used", live),
        "redis_client_buffer_bytes_per_table_end": _per(end.redis, baseline.redis, "clients", live),
        "redis_keys_per_table_end": _per(end.redis, baseline.redis, "keys", live),
        "redis_breakdown": breakdown,
        "memory_usage_bytes": {
            "n": len(usage),
            "median": sorted(usage)[len(usage) // 2] if usage else math.nan,
            "max": max(usage) if usage else math.nan,
        },
    }


async def _memory_usage(redis: Redis, table_ids: list[str]) -> list[int]:
    """``MEMORY USAGE`` of each sampled table (``TableStore.memory_usage``; gone ones left out)."""
    store = TableStore(redis)
    usage = [await store.memory_usage(table_id) for table_id in table_ids]
    return [u for u in usage if u]


async def run_step(
    config: Config, tables: int, rig: Rig, seated_so_far: int, seat_log: dict[str, Any]
) -> dict[str, Any]:
    """Seat up to ``tables`` tables, play them for warm-up + seconds; the step's figures."""
    pids = rig.cluster.pids().by_name()
    seat_s = await seat_more(config, tables, seated_so_far, rig.generators, seat_log)
    played = sum(seat_log["tables"].values())  # tables actually seated (failures excluded)
    absent = sum(seat_log["away"].values())
    live, streams = played + absent, 4 * played
    progress(
        f"[load]   {played} tables (+ {absent} of absent players) seated in {seat_s:.1f} s;"
        f" playing {config.warmup_s:g} + {config.seconds:g} s"
    )
    seated = Memory(gateway_rss_kb(rig.cluster), await redis_memory(rig.redis))
    every = {**pids, **{f"generator{i}": g.pid for i, g in enumerate(rig.generators)}}
    if rig.floor.pid is not None:
        every["floor_server"] = rig.floor.pid
    beside = None
    if config.pipeline == "beside":
        beside = await PipelineRun.start(
            config,
            played,
            cluster_cpus=config.cluster_cpus,
            generator_cpus=config.generator_cpus,
        )
    try:
        run = await play(config, tables, rig, every, beside)
    finally:
        if beside is not None:
            await beside.close()
    merged = _merge(run.answers)
    redis_end = await redis_memory(rig.redis)
    end = Memory(gateway_rss_kb(rig.cluster), redis_end)
    usage = await _memory_usage(rig.redis, seat_log["sample"])
    breakdown = await redis_breakdown(rig.redis, live)
    timer_commands = rig.timer.first_firings(run.window.measure_from, run.window.measure_to)
    answered = merged["counts"]["answered"]
    histograms: dict[str, Histogram] = merged["histograms"]
    return {
        "tables": played,
        "away_tables": absent,
        "live_tables": live,
        "streams": streams,
        "connections": sum(seat_log["connections"].values()),
        "seat_s": seat_s,
        "offered_per_s": played / config.pace_s,
        "timer_commands": timer_commands,
        "latency_ms": _latency_ms(histograms),
        "histograms": {name: h.to_json() for name, h in histograms.items()},
        "counts": merged["counts"],
        "commands_per_s": answered / config.seconds,
        "recorded_s": config.seconds,
        "views_per_s": merged["counts"]["views_received"] / (config.warmup_s + config.seconds),
        "skipped": merged["skipped"],
        "errors": merged["errors"],
        "error_count": sum(merged["errors"].values()),
        "warmup_errors": merged["warmup_errors"],
        "timer": rig.timer.figures(run.window.go_ns, run.window.measure_to),
        "floor_ms": rig.floor.figures(),
        **_cpu(run, answered + timer_commands, every),
        "redis_commands": commands_between(
            run.redis_start, run.redis_end, answered + timer_commands
        ),
        "gc_pauses": gc_between(run.gc_start, run.gc_end),
        "memory": _memory(rig.baseline, seated, end, streams, live, breakdown, usage),
        "loadavg": run.loadavg,
        **({"pipeline": run.pipeline} if run.pipeline is not None else {}),
        **({"stalls": _stalls(config, run)} if config.stalls_dir is not None else {}),
    }


def _stalls(config: Config, run: Played) -> dict[str, Any]:
    """What the recorded commands over the p99 limit overlapped (``--stalls``)."""
    assert config.stalls_dir is not None
    to_wall_s = time.time() - _perf_ns() / 1e9
    slow = [(start, ms) for answer in run.answers for start, ms in answer["slow"]]
    return attribute(
        slow,
        read_stalls(config.stalls_dir),
        run.window.measure_from / 1e9 + to_wall_s,
        run.window.measure_to / 1e9 + to_wall_s,
        config.p99_limit_ms,
    )
