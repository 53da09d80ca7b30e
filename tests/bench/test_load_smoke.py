"""``python -m bench.load --smoke``: the load benchmark runs end to end (its own cluster, two
generator processes, the floor) and writes every figure, with no error, so it cannot rot;
with the floor pipeline after the cluster and beside it (``--pipeline beside``)."""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from testing.services import ROOT

CLUSTER = ("table", "timer", "gateway", "redis", "nats")
FIGURES = (
    *(f"views_{p}_ms" for p in ("p50", "p90", "p99", "p99.9", "max")),
    *(f"rpc_{p}_ms" for p in ("p50", "p99")),
    "send_lateness_p99_ms",
    "generator_lag_p99_ms",
    "commands_per_s",
    "offered_per_s",
    "errors",
    *(f"timer_fired_late_{p}_ms" for p in ("p50", "p99", "max")),
    "timer_first_firings",
    *(
        f"floor_{name}_p50_ms"
        for name in ("redis_evalsha", "nats_pub_sub", "grpc_unary", "grpc_stream")
    ),
    "floor_sum_p50_ms",
    "p50_over_floor",
    *(f"cpu_s_{name}" for name in (*CLUSTER, "generator0", "generator1")),
    *(f"cpu_s_per_1k_{name}" for name in CLUSTER),
    "cpu_s_per_1k_cluster",
    "tables_per_core_at_saturation",
    *(f"peak_rss_mb_{name}" for name in (*CLUSTER, "generator0", "generator1")),
    "redis_bytes_per_table_end",
    "redis_memory_usage_median_bytes",
    "gateway_bytes_per_stream",
    # The floor pipeline at the same N (issue 22), and the cluster against it.
    "pipeline_views_p50_ms",
    "pipeline_views_p99_ms",
    "pipeline_cpu_s_per_1k",
    *(f"pipeline_cpu_s_per_1k_{name}" for name in ("gateway", "table", "redis", "nats")),
    "cpu_over_pipeline",
    "p50_over_pipeline",
)


@pytest.mark.slow
@pytest.mark.parametrize("pipeline", ["last", "beside"])
def test_load_smoke(tmp_path: Path, pipeline: str) -> None:
    out = tmp_path / "load-smoke.json"
    # One of the two runs with the stall probes (--stalls): they must not change the rest.
    stalls = ["--stalls", str(tmp_path / "stalls")] if pipeline == "last" else []
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "bench.load",
            "--smoke",
            "--pipeline",
            pipeline,
            "--json",
            str(out),
            *stalls,
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "action → 4 views, from schedule (ms)" in done.stdout
    results = json.loads(out.read_text())
    assert results["scenario"] == "smoke"
    [step] = results["steps"]
    figures = step["figures"]
    missing = [name for name in FIGURES if name not in figures]
    assert not missing, f"figures missing: {missing}"
    unset = [
        name
        for name in FIGURES
        if not isinstance(figures[name], int | float) or math.isnan(figures[name])
    ]
    assert not unset, f"figures without a value: {unset}"
    assert step["errors"] == {}, step["errors"]
    assert step["warmup_errors"] == {}, step["warmup_errors"]
    assert figures["errors"] == 0
    assert step["counts"]["answered"] > 50
    assert figures["timer_first_firings"] > 0
    assert figures["views_p50_ms"] > 0 and figures["floor_sum_p50_ms"] > 0
    assert all(figures[f"cpu_s_{name}"] > 0 for name in ("table", "gateway", "generator0"))
    # Capacity by CPU: the tables one core holds at the cluster's CPU per table and second.
    busy = figures["cpu_s_cluster"] / step["recorded_s"]
    assert figures["tables_per_core_at_saturation"] == pytest.approx(figures["tables"] / busy)
    assert "one whole core holds" in done.stdout
    assert results["seating"]["seat_errors"] == {}
    # The floor's Redis and NATS hops went to servers of their own: their CPU is not the
    # cluster's (sampled 50 times a second, as many calls as the commands at 250 tables).
    servers = results["servers"]
    assert servers["floor"]["redis"] != servers["cluster"]["redis"]
    assert servers["floor"]["nats"] != servers["cluster"]["nats"]
    # The floor pipeline played the same tables without an error, and costs less than the
    # cluster (it does a move's I/O and nothing else).
    assert step["pipeline"]["errors"] == {}
    assert step["pipeline"]["moves"] > 50
    assert figures["cpu_over_pipeline"] > 1
    assert "cluster CPU per command / pipeline's" in done.stdout
    # It played the cluster's schedule (same tables, same pace) over the recorded seconds,
    # after the cluster or beside it.
    offered = figures["offered_per_s"] * step["recorded_s"]
    assert step["pipeline"]["moves"] == pytest.approx(offered, rel=0.1)
    # The services' garbage-collection pauses over the recorded time, from their metrics:
    # young collections happen in every busy service within seconds, each timed.
    pauses = step["gc_pauses"]
    assert set(pauses) == {"table", "timer", "gateway"}
    for role in ("table", "gateway"):
        young = pauses[role]["young"]
        assert young["collections"] > 0 and young["seconds"] > 0, (role, young)
        assert 0 < young["longest_under_s"] <= 1.0
        # Their CPU, from dominos_gc_cpu_seconds_total: some, and never more than the pauses.
        assert 0 < young["cpu_seconds"] <= young["seconds"] + 0.001, (role, young)
    assert "GC pauses while recorded" in done.stdout
    assert re.search(r"gateway: young \d+ \(< [\d.]+ ms\).*?s \(CPU [\d.]+ s\)", done.stdout)
    # Context switches per command of every cluster process: each command wakes the gateway
    # and the table service several times (gRPC, Redis, NATS).
    switches = step["context_switches_per_command"]
    assert set(CLUSTER) <= set(switches)
    assert all(switches[name]["voluntary"] >= 1 for name in ("table", "gateway"))
    assert "context switches per command" in done.stdout
    if stalls:
        _assert_stalls_probed(tmp_path / "stalls", step, done.stdout)
    else:
        assert "stalls" not in step


def _assert_stalls_probed(directory: Path, step: dict[str, Any], report: str) -> None:
    """Every service and generator ran the probe (its file exists, from its start); the step
    tells what its commands over the limit overlapped, one line of the report."""
    probed = sorted(path.stem.rpartition("-")[0] for path in directory.iterdir())
    assert probed == ["gateway", "generator", "generator", "table", "timer"]
    figures = step["stalls"]
    assert figures["limit_ms"] == 15.0
    over = sum(figures["overlapping"].values())
    assert figures["none"] <= figures["slow_commands"] <= over + figures["none"]
    assert all(
        key.split()[0] in {"gateway", "table", "timer", "generator"} for key in figures["stalls"]
    )
    assert "slow commands, and the stalls they overlapped" in report
