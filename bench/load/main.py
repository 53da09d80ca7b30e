"""The entry point of ``python -m bench.load``: every step of the scenario against one
cluster, the printed table and the results file (``bench/results/load-<scenario>-<time>.json``
or ``--json``); with ``--generator`` / ``--floor-server``, the child processes' loops."""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import os
import platform
import resource
import sys
from datetime import UTC, datetime
from typing import Any

import grpc
import nats
import uvloop
from redis.asyncio import Redis

from bench.gateway_bench import measure, measure_floor
from bench.load.config import RESULTS_DIR, Config, build_config, parser
from bench.load.figures import pipeline_figures, step_figures, verdicts
from bench.load.floor import LoadFloor, floor_server_main
from bench.load.generator import GeneratorProcess, generator_main
from bench.load.pipeline import child_main, measure_pipeline
from bench.load.report import print_report, progress
from bench.load.step import Rig, new_seat_log, run_step
from bench.load.watch import Baseline, TimerWatch
from services.common.bus import TIMER_SUBJECT
from testing.cluster import ProcessCluster
from testing.pairs import largest_held
from testing.pinning import pin
from testing.secrets import SESSION_SECRETS
from testing.servers import NatsServer, RedisServer
from testing.stalls import probe_env


def _json_safe(value: Any) -> Any:
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, dict):
        return {str(k): _json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_json_safe(v) for v in value]
    return value


async def _run_steps(config: Config, rig: Rig, seat_log: dict[str, Any]) -> list[dict[str, Any]]:
    """Every step in turn, on the tables of the steps before; a ramp stops at its first bad
    step unless ``--keep-going``."""
    steps: list[dict[str, Any]] = []
    seated = 0
    for tables in config.steps:
        progress(f"[load] step: {tables} tables ...")
        step = await run_step(config, tables, rig, seated, seat_log)
        seated = tables
        step["figures"] = step_figures(step)
        step["verdicts"] = verdicts(step["figures"], config.scenario == "idle")
        step["good"] = (
            step["figures"]["views_p99_ms"] < config.p99_limit_ms and step["figures"]["errors"] == 0
        )
        steps.append(step)
        f = step["figures"]
        progress(
            f"[load]   p50 {f['views_p50_ms']:.2f} p99 {f['views_p99_ms']:.2f} ms,"
            f" {f['commands_per_s']:.0f} cmds/s, {f['errors']:.0f} errors"
        )
        if not step["good"] and config.scenario == "ramp" and not config.keep_going:
            break
    return steps


def _largest_good(steps: list[dict[str, Any]]) -> int:
    """The largest number of tables before the first bad step (0: none)."""
    return largest_held((step["tables"], step["good"]) for step in steps)


async def _stream_floor(last: dict[str, Any]) -> None:
    """The memory of a bare ``grpc.aio`` stream, as many as the last step held."""
    progress("[load] memory floor: a bare grpc.aio stream ...")
    kb = await measure_floor(last["streams"], max(1, last["connections"]), 64)
    last["memory"]["grpc_stream_floor_bytes"] = kb * 1024
    last["figures"]["grpc_stream_floor_bytes"] = kb * 1024


def _results(
    config: Config, steps: list[dict[str, Any]], seat_log: dict[str, Any]
) -> dict[str, Any]:
    return {
        "scenario": config.scenario,
        "config": config.to_json(),
        "machine": {
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "grpc": grpc.__version__,
            "platform": platform.platform(),
        },
        "seating": {k: seat_log[k] for k in ("reopened", "seat_errors")},
        "steps": steps,
        "largest_good_tables": _largest_good(steps),
        "figures": steps[-1]["figures"] if steps else {},
    }


async def drive(config: Config, cluster: ProcessCluster) -> dict[str, Any]:
    """Every step of the scenario against a started cluster."""
    redis = Redis.from_url(cluster.redis.url_for("admin"))
    nc = await nats.connect(cluster.nats.url_for("admin"), name="bench-timer-watch")
    timer = TimerWatch()
    await nc.subscribe(TIMER_SUBJECT, cb=timer.on_message)
    floor = LoadFloor()
    # The floor's Redis and NATS hops go to servers of their own: sampled 50 times a second,
    # against the cluster's servers they would add about as many calls as the commands at
    # 250 tables to the CPU the bench counts as the cluster's.
    floor_redis, floor_nats = (
        RedisServer(secrets=SESSION_SECRETS),
        NatsServer(secrets=SESSION_SECRETS),
    )
    generators: list[GeneratorProcess] = []
    steps: list[dict[str, Any]] = []
    seat_log = new_seat_log()
    try:
        _pin_cluster(config, cluster)
        floor_redis.start()
        floor_nats.start()
        for pid in (floor_redis.pid, floor_nats.pid):
            if pid is not None:
                pin(pid, config.generator_cpus)
        await floor.open(floor_redis.url_for("admin"), floor_nats.url_for("admin"))
        baseline = await Baseline.read(cluster, redis)
        generators = list(
            await asyncio.gather(
                *(
                    GeneratorProcess.start(i, cluster.gateway_address, config.channels)
                    for i in range(config.generators)
                )
            )
        )
        for generator in generators:
            pin(generator.pid, config.generator_cpus)
        rig = Rig(cluster, redis, floor, timer, baseline, generators)
        steps = await _run_steps(config, rig, seat_log)
        cluster.mark_logs()
    finally:
        await asyncio.gather(*(g.close() for g in generators), return_exceptions=True)
        await floor.close()
        floor_nats.cleanup()
        floor_redis.cleanup()
        with contextlib.suppress(Exception):
            await nc.close()
        await redis.aclose()
    if steps and config.stream_floor:
        await _stream_floor(steps[-1])
    results = _results(config, steps, seat_log)
    results["servers"] = {
        "cluster": {"redis": cluster.redis.port, "nats": cluster.nats.port},
        "floor": {"redis": floor_redis.port, "nats": floor_nats.port},
    }
    return results


def _pin_cluster(config: Config, cluster: ProcessCluster) -> None:
    """The cluster's processes on ``--cluster-cpus``, this one (the floor, the timer's
    watch) on ``--generator-cpus``."""
    assert cluster.redis.pid is not None and cluster.nats.pid is not None
    for pid in (cluster.redis.pid, cluster.nats.pid, *(r.pid for r in cluster.replicas)):
        pin(pid, config.cluster_cpus)
    pin(os.getpid(), config.generator_cpus)


async def _pipelines(config: Config, results: dict[str, Any]) -> None:
    """The floor pipeline at the steps ``--pipeline`` names, after the cluster stopped;
    each step gets its ``pipeline`` and the figures comparing the two."""
    steps = results["steps"]
    for step in steps:
        if "pipeline" in step:  # played beside the cluster (--pipeline beside)
            step["figures"].update(pipeline_figures(step))
    chosen = {"none": [], "beside": [], "all": steps}.get(config.pipeline, steps[-1:])
    for step in chosen:
        progress(f"[load] floor pipeline: {step['tables']} tables ...")
        step["pipeline"] = await measure_pipeline(
            config,
            step["tables"],
            cluster_cpus=config.cluster_cpus,
            generator_cpus=config.generator_cpus,
        )
        step["figures"].update(pipeline_figures(step))
        f = step["figures"]
        progress(
            f"[load]   pipeline p50 {f['pipeline_views_p50_ms']:.2f} ms,"
            f" {f['pipeline_cpu_s_per_1k']:.2f} CPU s per 1k moves;"
            f" cluster {f['cpu_over_pipeline']:.1f}x its CPU, {f['p50_over_pipeline']:.1f}x its p50"
        )
    cores = len(config.cluster_cpus) or os.cpu_count() or 1
    results["cluster_cores"] = cores
    results["largest_good_tables_per_core"] = results["largest_good_tables"] / cores


def _raise_file_limit() -> None:
    """Ten thousand connections need as many descriptors (in the gateway and the generators,
    which inherit the limit)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or soft < hard:
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def main(argv: list[str] | None = None) -> int:
    arguments = parser()
    args = arguments.parse_args(argv)
    if args.generator:
        uvloop.run(generator_main())  # the players' devices: as light as we can make them
        return 0
    if args.floor_server:
        asyncio.run(floor_server_main())
        return 0
    if child_main(args):
        return 0
    config = build_config(args, arguments)
    _raise_file_limit()
    if config.stalls_dir is not None:
        # Inherited by every process started from here: the cluster's, the generators.
        config.stalls_dir.mkdir(parents=True, exist_ok=True)
        os.environ.update(probe_env(config.stalls_dir))
    # Metrics pages on: the steps read the services' garbage-collection pauses from them.
    results = measure(
        lambda cluster: drive(config, cluster), keep_logs=args.keep_logs, metrics=True
    )
    asyncio.run(_pipelines(config, results))
    print_report(results)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    path = args.json or RESULTS_DIR / f"load-{config.scenario}-{stamp}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(_json_safe(results), indent=1) + "\n")
    print(f"results: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
