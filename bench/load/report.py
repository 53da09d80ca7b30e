"""The printed results: one table for a run (:func:`print_step`: every figure, its target
and its verdict), one row per step for a ramp (:func:`print_ramp`); progress on stderr."""

from __future__ import annotations

import math
import re
import sys
from collections import Counter
from collections.abc import Sequence
from typing import Any

from bench.gateway_bench import FLOOR_VIEW_BYTES
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
from bench.load.gc_pauses import summary as gc_summary
from bench.table_bench import FLOOR_MESSAGE_BYTES
from testing.stalls import describe as describe_stalls
from testing.stats import PERCENTILES

Row = tuple[str, str, str, str]


def progress(message: str) -> None:
    """A progress line on stderr (the tables go to stdout)."""
    print(message, file=sys.stderr, flush=True)


def _verdict(ok: bool | None) -> str:
    return "-" if ok is None else "met" if ok else "MISSED"


def _dist(figures: dict[str, float], digits: int = 2) -> str:
    if not figures.get("count"):
        return "no sample"
    parts = "  ".join(f"{name} {figures[name]:.{digits}f}" for name, _ in PERCENTILES)
    return f"{parts}  (n {figures['count']:.0f})"


def _process_label(name: str) -> str:
    return {
        "table": "table service",
        "timer": "timer service",
        "gateway": "gateway",
        "redis": "redis-server",
        "nats": "nats-server",
        "floor_server": "floor grpc server",
        "bench": "bench (floor, timer sub)",
    }.get(name, name)


def _row(label: str, value: str, target: str = "", verdict: str = "") -> Row:
    return (label, value, target, verdict)


def _print_heading(results: dict[str, Any], step: dict[str, Any]) -> None:
    cfg = results["config"]
    print(
        f"load [{cfg['scenario']}]: {step['tables']} tables x 4 seats = {step['streams']} streams"
        f" over {step['connections']} connections, {cfg['generators']} generator processes;"
        f" + {step['away_tables']} tables of absent players (auto-played every 5 s);"
        f" 1 action per table every {cfg['pace_s']:g} s ({step['offered_per_s']:.1f}/s offered),"
        f" {cfg['seconds']:g} s recorded after {cfg['warmup_s']:g} s warm-up"
    )
    load = step["loadavg"]
    print(
        f"machine: {results['machine']['cpus']} CPUs, Python {results['machine']['python']},"
        f" grpc {results['machine']['grpc']}; load average {load['before'][0]:.2f} before,"
        f" {load['after'][0]:.2f} after; tables seated in {step['seat_s']:.1f} s"
    )


def _latency_rows(step: dict[str, Any]) -> list[Row]:
    lat, ok = step["latency_ms"], step["verdicts"]
    skipped = ", ".join(
        f"{n} {k.removeprefix('PHASE_').lower()}" for k, n in step["skipped"].items()
    )
    errors = "; ".join(f"{n} x {k}" for k, n in sorted(step["errors"].items(), key=lambda i: -i[1]))
    warm = sum(step["warmup_errors"].values())
    return [
        _row(
            "action → 4 views, from schedule (ms)",
            _dist(lat["views_from_schedule"]),
            f"p99 <= {TARGET_P99_MS:g}",
            _verdict(ok["p99"]),
        ),
        _row("action → answer, from schedule (ms)", _dist(lat["rpc_from_schedule"])),
        _row("action → 4 views, from send (ms)", _dist(lat["views_from_send"])),
        _row("send lateness vs schedule (ms)", _dist(lat["send_lateness"])),
        _row("generator event-loop lag (ms)", _dist(lat["generator_loop_lag"])),
        _row(
            "commands/s sustained",
            f"{step['commands_per_s']:.1f}  (offered {step['offered_per_s']:.1f};"
            f" slots skipped: {skipped or 'none'}; {step['views_per_s']:.0f} views/s received)",
        ),
        _row(
            "errors (by gRPC status)",
            f"{step['error_count']}{'  ' + errors if errors else ''}"
            f"{f'  (+{warm} in warm-up)' if warm else ''}",
            "0",
            _verdict(ok["errors"]),
        ),
    ]


def _timer_and_floor_rows(step: dict[str, Any]) -> list[Row]:
    figures, ok, timer = step["figures"], step["verdicts"], step["timer"]
    rows = [
        _row(
            "timer lateness fired - deadline (ms)",
            _dist(timer["fired_late_ms"], 0)
            + f"  {', '.join(f'{n} {k}' for k, n in timer['by_kind'].items())};"
            f" {timer['refired']} refired",
            f"p99 <= {TARGET_TIMER_P99_MS:g}",
            _verdict(ok["timer_p99"]),
        ),
        _row("timer lateness received - deadline (ms)", _dist(timer["received_late_ms"], 0)),
    ]
    labels = {
        "redis_evalsha": "floor: redis EVALSHA `return 1` (ms)",
        "nats_pub_sub": f"floor: nats pub→sub {FLOOR_MESSAGE_BYTES} B (ms)",
        "grpc_unary": "floor: grpc unary, empty (ms)",
        "grpc_stream": f"floor: grpc stream msg {FLOOR_VIEW_BYTES} B (ms)",
    }
    rows += [_row(labels[name], _dist(values, 3)) for name, values in step["floor_ms"].items()]
    rows.append(_row("floor: sum of p50s (ms)", f"{figures['floor_sum_p50_ms']:.3f}"))
    rows.append(
        _row(
            "idle: p50 (ms), p50 / floor",
            f"{figures['views_p50_ms']:.3f} ms, {figures['p50_over_floor']:.1f}x the floor",
            f"<= {TARGET_IDLE_P50_MS:g} ms, <= {TARGET_IDLE_FLOOR_RATIO:g}x",
            " ".join(_verdict(ok[k]) for k in ("idle_p50", "idle_floor_ratio")),
        )
    )
    return rows


def _cpu_rows(step: dict[str, Any], seconds: float) -> list[Row]:
    figures = step["figures"]
    rows = []
    for name in (
        *PROCESSES,
        *sorted(n for n in step["cpu_s"] if n.startswith("generator")),
        "floor_server",
        "bench",
    ):
        if name not in step["cpu_s"]:
            continue
        cpu = step["cpu_s"][name]
        peak = step["peak_rss_kb"].get(name)
        rows.append(
            _row(
                f"CPU, peak RSS: {_process_label(name)}",
                f"{cpu:6.1f} s ({100 * cpu / seconds:5.1f} % of a CPU,"
                f" {100 * step['cpu_s_system'][name] / cpu if cpu else 0:3.0f} % in the kernel),"
                f" {step['cpu_s_per_1k_commands'][name]:6.2f} s per 1k commands†,"
                f" peak {peak / 1024 if peak else math.nan:6.0f} MB",
            )
        )
    other = step["cpu_s_other_processes"]
    return [
        *rows,
        _row(
            "CPU, cluster (5 processes above)",
            f"{figures['cpu_s_cluster']:6.1f} s ({100 * figures['cpu_s_cluster'] / seconds:5.1f} %"
            f" of a CPU), {figures['cpu_s_per_1k_cluster']:6.2f} s per 1k commands†"
            f" († {step['counts']['answered']} answered + {step['timer_commands']} fired by the"
            " timer); at this CPU per table one whole core holds"
            f" {figures.get('tables_per_core_at_saturation', math.nan):.0f} tables",
        ),
        _row(
            "CPU, rest of the machine (not this bench)",
            f"{other:6.1f} s ({100 * other / seconds:5.1f} % of a CPU): other processes' load",
        ),
        *_switch_rows(step),
        *_redis_command_rows(step),
        *_gc_rows(step),
        *_stall_rows(step),
    ]


def _switch_rows(step: dict[str, Any]) -> list[Row]:
    """The cluster's context switches per command (voluntary + involuntary), by process:
    every wake-up of a thread is one; an involuntary one is a thread the scheduler stopped
    for another (on a shared core, the cluster's processes take turns)."""
    switches = step.get("context_switches_per_command")
    if not switches:
        return []
    shown = ", ".join(
        f"{name} {s['voluntary']:.1f} + {s['involuntary']:.1f}"
        for name, s in switches.items()
        if name in PROCESSES
    )
    return [_row("context switches per command†: waits + preemptions", shown)]


def _stall_rows(step: dict[str, Any]) -> list[Row]:
    """With ``--stalls``: what the commands over the p99 limit were in flight during."""
    stalls = step.get("stalls")
    if stalls is None:
        return []
    return [_row("slow commands, and the stalls they overlapped", describe_stalls(stalls))]


def _gc_rows(step: dict[str, Any]) -> list[Row]:
    """The services' garbage-collection pauses over the recorded time (each stops its whole
    process: a long one is in the latency tail)."""
    pauses = step.get("gc_pauses")
    if not pauses:
        return []
    return [_row("GC pauses while recorded: collections (longest), s (CPU)", gc_summary(pauses))]


def _redis_command_rows(step: dict[str, Any]) -> list[Row]:
    """Redis's commands per command of the cluster (calls, and the microseconds Redis spent
    in them), the costliest first: what a move and the periodic work cost the store."""
    commands = step.get("redis_commands")
    if not commands:
        return []
    total = sum(row["usec"] for row in commands.values())
    shown = ", ".join(
        f"{name} {row['calls']:.2f} ({row['usec']:.0f} µs)"
        for name, row in list(commands.items())[:8]
    )
    return [_row("redis per command†: calls (µs inside)", f"{total:.0f} µs in all: {shown}")]


def _memory_rows(step: dict[str, Any]) -> list[Row]:
    figures, ok, mem = step["figures"], step["verdicts"], step["memory"]
    usage, kinds, gateway = mem["memory_usage_bytes"], mem["redis_breakdown"], mem["gateway_rss_kb"]
    few = "; too few tables, fixed costs dominate" if step["tables"] < MEMORY_MIN_TABLES else ""
    return [
        _row(
            "redis bytes per live table",
            f"{figures['redis_bytes_per_table_end']:.0f} (used_memory delta at the end, of which"
            f" {figures['redis_client_buffer_bytes_per_table_end']:.0f} client buffers;"
            f" {figures['redis_bytes_per_table_seated']:.0f} after seating;"
            f" {figures['redis_keys_per_table_end']:.1f} keys);"
            f" MEMORY USAGE median {usage['median']:.0f}, max {usage['max']:.0f} (n {usage['n']})"
            + few,
            f"<= {TARGET_REDIS_BYTES_PER_TABLE}",
            _verdict(ok["redis_per_table"]),
        ),
        _row(
            "redis MEMORY USAGE per live table, by key",
            ", ".join(
                f"{kind} {v['bytes_per_table']:.0f}"
                for kind, v in kinds.items()
                if v["bytes_per_table"] >= 1
            )
            + f" (sum {sum(v['bytes_per_table'] for v in kinds.values()):.0f})",
        ),
        _row(
            "gateway bytes per open stream",
            f"{figures['gateway_bytes_per_stream']:.0f} (VmRSS {gateway['baseline'] / 1024:.0f} →"
            f" {gateway['seated'] / 1024:.0f} MB after seating;"
            f" {figures['gateway_bytes_per_stream_end']:.0f} at the end;"
            f" a bare grpc.aio stream, same connections:"
            f" {mem.get('grpc_stream_floor_bytes', math.nan):.0f}{few})",
            f"<= {TARGET_GATEWAY_BYTES_PER_STREAM}",
            _verdict(ok["gateway_per_stream"]),
        ),
    ]


def _problem_rows(results: dict[str, Any]) -> list[Row]:
    rows = []
    seating = results["seating"]
    if seating["reopened"] or seating["seat_errors"]:
        problems = [
            f"{n} x {k}" for k, n in {**seating["reopened"], **seating["seat_errors"]}.items()
        ]
        rows.append(_row("seating: streams reopened, tables failed", "; ".join(problems)))
    found = [f"{n} x {event}" for event, n in log_summary(results.get("log_problems", {})).items()]
    rows.append(_row("service warnings/errors while running", "; ".join(found) or "none"))
    return rows


def _pipeline_rows(step: dict[str, Any]) -> list[Row]:
    """The floor pipeline beside the cluster (issue 22), when it ran at this step."""
    if "pipeline" not in step:
        return []
    f, pipeline = step["figures"], step["pipeline"]
    per_process = ", ".join(
        f"{name} {seconds:.2f}" for name, seconds in pipeline["cpu_s_per_1k_moves"].items()
    )
    return [
        _row(
            "floor pipeline: action -> 4 views (ms)",
            _dist(pipeline["latency_ms"]["views_from_schedule"]),
        ),
        _row(
            "floor pipeline: CPU s per 1k moves",
            f"{f['pipeline_cpu_s_per_1k']:.2f} ({per_process}); errors {f['pipeline_errors']:.0f}",
        ),
        _row(
            "cluster CPU per command / pipeline's",
            f"{f['cpu_over_pipeline']:.2f}x",
            "<= 1.5x",
            _verdict(f["cpu_over_pipeline"] <= 1.5),
        ),
        _row("cluster p50 / pipeline's p50", f"{f['p50_over_pipeline']:.2f}x", "idle: <= 1.5x"),
    ]


def print_step(results: dict[str, Any], step: dict[str, Any]) -> None:
    """The table of one run."""
    _print_heading(results, step)
    rows = [
        *_latency_rows(step),
        *_timer_and_floor_rows(step),
        *_pipeline_rows(step),
        *_cpu_rows(step, results["config"]["seconds"]),
        *_memory_rows(step),
        *_problem_rows(results),
    ]
    _print_rows(("figure", "value", "target", "verdict"), rows)


def log_summary(problems: dict[str, dict[str, dict[str, int]]]) -> dict[str, int]:
    """The services' warnings and errors while running, one line per kind (task numbers and
    other digits folded, tracebacks cut to their first line)."""
    counts: Counter[str] = Counter()
    for service, parts in problems.items():
        for event, n in parts["run"].items():
            first = " ".join(event.split())
            counts[f"{service}: {re.sub(r'[0-9]+', 'N', first)[:100]}"] += n
    return dict(counts.most_common())


def _print_rows(head: tuple[str, ...], rows: Sequence[tuple[str, ...]]) -> None:
    widths = [max(len(r[i]) for r in (head, *rows)) for i in range(len(head))]
    widths[1] = min(widths[1], 110)
    for r in (head, *rows):
        print("  ".join(cell.ljust(widths[i]) for i, cell in enumerate(r)).rstrip())


RAMP_HEAD = (
    "tables", "streams", "offered/s", "cmds/s", "p50", "p90", "p99", "p99.9", "max",
    "errors", "timer p99", "floor p50", "p50/floor", "cluster CPU", "CPU s/1k", "tables/core@100%",
    "gw B/stream", "redis B/table", "others' CPU", "step",
)  # fmt: skip


def _ramp_row(step: dict[str, Any], seconds: float) -> tuple[str, ...]:
    f = step["figures"]
    return (
        f"{f['tables']:.0f}",
        f"{f['streams']:.0f}",
        f"{f['offered_per_s']:.1f}",
        f"{f['commands_per_s']:.1f}",
        *(f"{f[f'views_{n}_ms']:.2f}" for n in ("p50", "p90", "p99", "p99.9", "max")),
        f"{f['errors']:.0f}",
        f"{f['timer_fired_late_p99_ms']:.0f}",
        f"{f['floor_sum_p50_ms']:.3f}",
        f"{f['p50_over_floor']:.1f}x",
        f"{100 * f['cpu_s_cluster'] / seconds:.0f} %",
        f"{f['cpu_s_per_1k_cluster']:.2f}",
        f"{f.get('tables_per_core_at_saturation', math.nan):.0f}",
        f"{f['gateway_bytes_per_stream']:.0f}",
        f"{f['redis_bytes_per_table_end']:.0f}",
        f"{100 * f['cpu_s_other_processes'] / seconds:.0f} %",
        "good" if step["good"] else "BAD",
    )


def print_ramp(results: dict[str, Any]) -> None:
    """The table of a ramp: one row per step."""
    cfg = results["config"]
    print(
        f"load [ramp]: steps of {cfg['seconds']:g} s (after {cfg['warmup_s']:g} s warm-up) at one"
        f" action per table every {cfg['pace_s']:g} s, {cfg['generators']} generator processes;"
        f" {results['machine']['cpus']} CPUs; a step is good when p99 < {cfg['p99_limit_ms']:g} ms"
        " and no errors"
    )
    rows = [_ramp_row(step, cfg["seconds"]) for step in results["steps"]]
    widths = [max(len(r[i]) for r in (RAMP_HEAD, *rows)) for i in range(len(RAMP_HEAD))]
    for r in (RAMP_HEAD, *rows):
        print("  ".join(cell.rjust(widths[i]) for i, cell in enumerate(r)))
    best = results["largest_good_tables"]
    cores = results.get("cluster_cores")
    per_core = (
        f"; {results['largest_good_tables_per_core']:.0f} tables per cluster core" if cores else ""
    )
    print(
        f"largest N with p99 < {cfg['p99_limit_ms']:g} ms and no errors: {best if best else 'none'}"
        f" ({best * 4 if best else 0} streams, {best / cfg['pace_s'] if best else 0:.0f} actions/s)"
        f"{per_core}"
    )
    for step in results["steps"]:
        if "pipeline" in step:
            _print_rows(("figure", "value", "target", "verdict"), _pipeline_rows(step))


def print_report(results: dict[str, Any]) -> None:
    """One table: the run's figures, or a ramp's steps."""
    if results["config"]["scenario"] == "ramp":
        print_ramp(results)
    else:
        print_step(results, results["steps"][-1])
