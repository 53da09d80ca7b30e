"""A step's headline numbers, flat (what ``bench.compare`` compares), and its verdicts
against the targets of ``bench.load.config``."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from bench.load.config import (
    MEMORY_MIN_TABLES,
    PROCESSES,
    TARGET_GATEWAY_BYTES_PER_STREAM,
    TARGET_IDLE_FLOOR_RATIO,
    TARGET_IDLE_P50_MS,
    TARGET_P99_MS,
    TARGET_REDIS_BYTES_PER_TABLE,
    TARGET_TIMER_P99_MS,
)
from testing.stats import PERCENTILES


def _ms(figures: dict[str, float], key: str) -> float:
    return figures.get(key, math.nan)


def _latency(step: dict[str, Any]) -> dict[str, float]:
    lat = step["latency_ms"]
    figures: dict[str, float] = {}
    for key, label in (
        ("views_from_schedule", "views"),
        ("rpc_from_schedule", "rpc"),
        ("views_from_send", "views_from_send"),
    ):
        for name, _ in PERCENTILES:
            figures[f"{label}_{name}_ms"] = _ms(lat[key], name)
    figures["send_lateness_p99_ms"] = _ms(lat["send_lateness"], "p99")
    figures["generator_lag_p99_ms"] = _ms(lat["generator_loop_lag"], "p99")
    return figures


def _throughput(step: dict[str, Any]) -> dict[str, float]:
    return {
        "offered_per_s": step["offered_per_s"],
        "commands_per_s": step["commands_per_s"],
        "views_per_s": step["views_per_s"],
        "errors": step["error_count"],
        "skipped_slots": sum(step["skipped"].values()),
    }


def _timer(step: dict[str, Any]) -> dict[str, float]:
    timer = step["timer"]
    figures = {
        f"timer_fired_late_{name}_ms": _ms(timer["fired_late_ms"], name)
        for name in ("p50", "p99", "max")
    }
    figures["timer_received_late_p99_ms"] = _ms(timer["received_late_ms"], "p99")
    figures["timer_first_firings"] = timer["first_firings"]
    figures["timer_refired"] = timer["refired"]
    return figures


def _floor(step: dict[str, Any], views_p50_ms: float) -> dict[str, float]:
    figures: dict[str, float] = {}
    floor_sum = 0.0
    for name, values in step["floor_ms"].items():
        figures[f"floor_{name}_p50_ms"] = values["p50"]
        floor_sum += values["p50"]
    figures["floor_sum_p50_ms"] = floor_sum
    figures["p50_over_floor"] = views_p50_ms / floor_sum if floor_sum else math.nan
    return figures


def _cpu(step: dict[str, Any]) -> dict[str, float]:
    figures: dict[str, float] = {}
    cluster_cpu = sum(step["cpu_s"][name] for name in PROCESSES)
    for name, seconds in step["cpu_s"].items():
        figures[f"cpu_s_{name}"] = seconds
        figures[f"cpu_s_system_{name}"] = step["cpu_s_system"][name]
        figures[f"cpu_s_per_1k_{name}"] = step["cpu_s_per_1k_commands"][name]
    figures["cpu_s_cluster"] = cluster_cpu
    figures["cpu_s_other_processes"] = step["cpu_s_other_processes"]
    commands = step["counts"]["answered"] + step["timer_commands"]
    figures["cpu_s_per_1k_cluster"] = cluster_cpu * 1000 / commands if commands else math.nan
    # Capacity by CPU (issue 22): the tables one whole core would hold at this step's cluster
    # CPU per table and second (the p99 criterion of a ramp is set by tail noise long before
    # the cluster's cores are full).
    busy = cluster_cpu / step["recorded_s"] if step.get("recorded_s") else 0.0
    figures["tables_per_core_at_saturation"] = step["tables"] / busy if busy else math.nan
    return figures


def _memory(step: dict[str, Any]) -> dict[str, float]:
    mem = step["memory"]
    figures = {
        f"peak_rss_mb_{name}": kb / 1024 if kb is not None else math.nan
        for name, kb in step["peak_rss_kb"].items()
    }
    for key in (
        "gateway_bytes_per_stream",
        "gateway_bytes_per_stream_end",
        "redis_bytes_per_table_seated",
        "redis_bytes_per_table_end",
        "redis_client_buffer_bytes_per_table_end",
        "redis_keys_per_table_end",
    ):
        figures[key] = mem[key]
    figures["redis_memory_usage_median_bytes"] = mem["memory_usage_bytes"]["median"]
    return figures


def step_figures(step: dict[str, Any]) -> dict[str, float]:
    """The headline numbers of a step, flat (what ``bench.compare`` compares)."""
    figures: dict[str, float] = {
        "tables": step["tables"],
        "away_tables": step["away_tables"],
        "streams": step["streams"],
        **_latency(step),
        **_throughput(step),
        **_timer(step),
    }
    figures.update(_floor(step, figures["views_p50_ms"]))
    figures.update(_cpu(step))
    figures.update(_memory(step))
    return figures


def verdicts(figures: dict[str, float], idle: bool) -> dict[str, bool | None]:
    """Each target: True met, False missed, None not applicable (no sample, not idle, too
    few tables for a per-table or per-stream memory figure: ``MEMORY_MIN_TABLES``)."""
    few = figures["tables"] < MEMORY_MIN_TABLES

    def check(value: float, ok: Callable[[float], bool]) -> bool | None:
        return None if math.isnan(value) else ok(value)

    return {
        "p99": check(figures["views_p99_ms"], lambda v: v <= TARGET_P99_MS),
        "errors": figures["errors"] == 0,
        "timer_p99": check(figures["timer_fired_late_p99_ms"], lambda v: v <= TARGET_TIMER_P99_MS),
        "idle_p50": check(figures["views_p50_ms"], lambda v: v <= TARGET_IDLE_P50_MS)
        if idle
        else None,
        "idle_floor_ratio": check(figures["p50_over_floor"], lambda v: v <= TARGET_IDLE_FLOOR_RATIO)
        if idle
        else None,
        "redis_per_table": None
        if few
        else check(
            figures["redis_bytes_per_table_end"], lambda v: v <= TARGET_REDIS_BYTES_PER_TABLE
        ),
        "gateway_per_stream": None
        if few
        else check(
            figures["gateway_bytes_per_stream"], lambda v: v <= TARGET_GATEWAY_BYTES_PER_STREAM
        ),
    }


def pipeline_figures(step: dict[str, Any]) -> dict[str, float]:
    """The floor pipeline's latency and CPU per move at the step's N, and the cluster's as
    multiples of them (issue 22's targets: CPU <= 1.5x, idle p50 <= 1.5x)."""
    pipeline = step["pipeline"]
    views = pipeline["latency_ms"]["views_from_schedule"]
    moves = pipeline["moves"]
    cpu = sum(pipeline["cpu_s"].values())
    per_1k = cpu * 1000 / moves if moves else math.nan
    figures = {
        "pipeline_views_p50_ms": _ms(views, "p50"),
        "pipeline_views_p99_ms": _ms(views, "p99"),
        "pipeline_cpu_s_per_1k": per_1k,
        "pipeline_errors": float(sum(pipeline["errors"].values())),
    }
    for name, seconds in pipeline["cpu_s_per_1k_moves"].items():
        figures[f"pipeline_cpu_s_per_1k_{name}"] = seconds
    cluster = step["figures"]
    figures["cpu_over_pipeline"] = cluster["cpu_s_per_1k_cluster"] / per_1k if per_1k else math.nan
    p50 = figures["pipeline_views_p50_ms"]
    figures["p50_over_pipeline"] = cluster["views_p50_ms"] / p50 if p50 else math.nan
    return figures
