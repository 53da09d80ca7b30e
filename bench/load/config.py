"""What one invocation of the load benchmark does (:class:`Config`, from the command line:
:func:`parser`, :func:`build_config`) and the targets its figures are judged against."""

from __future__ import annotations

import argparse
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import bench.load
from testing.pinning import parse_cpus

ROOT = Path(__file__).resolve().parents[2]
RESULTS_DIR = ROOT / "bench" / "results"

TARGET_P99_MS = 15.0
TARGET_TIMER_P99_MS = 10.0
TARGET_IDLE_P50_MS = 1.5
TARGET_IDLE_FLOOR_RATIO = 2.0
TARGET_REDIS_BYTES_PER_TABLE = 1536
TARGET_GATEWAY_BYTES_PER_STREAM = 10240
RAMP_STEPS = (100, 250, 500, 1000, 1500, 2000, 2500)

MEMORY_SAMPLE = 50  # tables whose MEMORY USAGE is read
MEMORY_MIN_TABLES = 500  # below, fixed costs swamp the per-table and per-stream deltas
#: The cluster's processes (their CPU makes the cluster's).
PROCESSES = ("table", "timer", "gateway", "redis", "nats")


@dataclass(frozen=True, slots=True)
class Config:
    """What one invocation does."""

    scenario: str
    steps: tuple[int, ...]
    pace_s: float
    seconds: float
    warmup_s: float
    generators: int
    channels: int
    seat_concurrency: int
    floor_hz: float
    p99_limit_ms: float
    away_fraction: float
    stream_floor: bool
    keep_going: bool
    seed: int
    #: Cores the cluster's processes (and the floor pipeline's) run on; () = unpinned.
    cluster_cpus: tuple[int, ...] = ()
    #: Cores the load generators (and the bench itself) run on; () = unpinned.
    generator_cpus: tuple[int, ...] = ()
    #: The floor pipeline after the cluster: at the last step's N, at every step's, or not;
    #: or ``beside``: at every step, played at the same time as the cluster, its CPU read
    #: over the same seconds (both see the machine in the same state).
    pipeline: str = "last"
    #: Where py-spy writes flame graphs of the gateway and the table service over the last
    #: step's recorded time (None: no profile).
    profile_dir: Path | None = None
    #: py-spy's output: ``flamegraph`` (an ``.svg``), ``raw`` (collapsed stacks, one per
    #: line with its sample count: ``.txt``) or ``speedscope`` (``.json``).
    profile_format: str = "flamegraph"
    #: py-spy's samples a second (more samples show thin costs, at some CPU of py-spy's).
    profile_rate_hz: int = 100
    #: Where the stall probes of the services and generators write (None: not probed); each
    #: step then tells what its commands over the p99 limit overlapped
    #: (:mod:`testing.stalls`).
    stalls_dir: Path | None = None

    def to_json(self) -> dict[str, Any]:
        """The ``config`` of the results."""
        return {
            "scenario": self.scenario,
            "steps": list(self.steps),
            "pace_s": self.pace_s,
            "seconds": self.seconds,
            "warmup_s": self.warmup_s,
            "generators": self.generators,
            "channels": self.channels,
            "seat_concurrency": self.seat_concurrency,
            "keep_going": self.keep_going,
            "floor_hz": self.floor_hz,
            "p99_limit_ms": self.p99_limit_ms,
            "away_fraction": self.away_fraction,
            "seed": self.seed,
            "cluster_cpus": list(self.cluster_cpus),
            "generator_cpus": list(self.generator_cpus),
            "pipeline": self.pipeline,
            "profile_dir": str(self.profile_dir) if self.profile_dir else None,
            "profile_format": self.profile_format,
            "profile_rate_hz": self.profile_rate_hz,
            "stalls_dir": str(self.stalls_dir) if self.stalls_dir else None,
        }


def away_tables(config: Config, tables: int) -> int:
    """Tables of absent players beside ``tables`` played ones (at least one)."""
    return math.ceil(tables * config.away_fraction) if config.away_fraction > 0 else 0


def parser() -> argparse.ArgumentParser:
    """The command line (``--generator`` and ``--floor-server``: the child processes)."""
    parser = argparse.ArgumentParser(description=(bench.load.__doc__ or "").splitlines()[0])
    scenario = parser.add_mutually_exclusive_group()
    scenario.add_argument("--tables", type=int, default=100, help="tables of four seats (100)")
    scenario.add_argument("--ramp", action="store_true", help="step ramp: largest good N")
    scenario.add_argument("--idle", action="store_true", help="one table, 0.1 s pace, 60 s")
    scenario.add_argument("--smoke", action="store_true", help="20 tables, 0.25 s pace, 15 s")
    parser.add_argument("--steps", help="ramp steps, e.g. 100,250,500 (default 100..2500)")
    parser.add_argument(
        "--keep-going", action="store_true", help="ramp: run every step, even after a bad one"
    )
    parser.add_argument("--pace", type=float, help="seconds between two actions of a table (5)")
    parser.add_argument("--seconds", type=float, help="recorded seconds (60; ramp: 20 a step)")
    parser.add_argument("--warmup", type=float, help="unrecorded seconds first (one pace)")
    parser.add_argument("--generators", type=int, default=2, help="generator processes (2)")
    parser.add_argument(
        "--channels", type=int, default=0, help="connections per generator (0: one per seat)"
    )
    parser.add_argument(
        "--seat-concurrency", type=int, default=8, help="tables seated at once per generator"
    )
    parser.add_argument("--floor-hz", type=float, default=50.0, help="floor samples a second")
    parser.add_argument("--p99-limit", type=float, default=TARGET_P99_MS, help="ramp: ms (15)")
    parser.add_argument(
        "--away",
        type=float,
        default=0.02,
        help="tables of absent players, auto-played by the timer, per played table (0.02)",
    )
    parser.add_argument(
        "--no-stream-floor", action="store_true", help="skip the bare grpc.aio stream memory"
    )
    parser.add_argument(
        "--cluster-cpus",
        default="",
        help="cores of the cluster's processes, e.g. 0 or 0-1 (default: unpinned)",
    )
    parser.add_argument(
        "--generator-cpus",
        default="",
        help="cores of the load generators and this bench, e.g. 1 (default: unpinned)",
    )
    parser.add_argument(
        "--pipeline",
        choices=("last", "all", "none", "beside"),
        default="last",
        help="the floor pipeline (a move's bare I/O) after the cluster: at the last step"
        " (default), at every step, none; beside: at every step, at the same time as the cluster",
    )
    parser.add_argument(
        "--profile",
        type=Path,
        metavar="DIR",
        help="py-spy flame graphs of the gateway and table service over the last step (DIR)",
    )
    parser.add_argument(
        "--profile-format",
        choices=("flamegraph", "raw", "speedscope"),
        default="flamegraph",
        help="the profiles' format: flame graph .svg (default), raw collapsed stacks .txt "
        "(python -m bench.load.hotspots reads them), speedscope .json",
    )
    parser.add_argument(
        "--profile-rate",
        type=int,
        default=100,
        metavar="HZ",
        help="py-spy samples a second (100)",
    )
    parser.add_argument(
        "--stalls",
        type=Path,
        metavar="DIR",
        help="note every garbage collection and event-loop stall of the services and"
        " generators in DIR; each step tells what its commands over the p99 limit overlapped",
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", type=Path, help="where to write the results")
    parser.add_argument("--keep-logs", action="store_true", help="keep the services' logs")
    parser.add_argument("--generator", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--floor-server", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--pipeline-table", nargs=2, help=argparse.SUPPRESS)
    parser.add_argument("--pipeline-gateway", nargs=2, help=argparse.SUPPRESS)
    parser.add_argument("--pipeline-driver", action="store_true", help=argparse.SUPPRESS)
    return parser


def _scenario(args: argparse.Namespace) -> tuple[str, tuple[int, ...], float, float, float]:
    """The scenario's name, steps, pace, recorded seconds and warm-up."""
    pace, seconds, warmup = args.pace, args.seconds, args.warmup
    steps: tuple[int, ...]
    if args.smoke:
        scenario, steps = "smoke", (20,)
        pace, seconds, warmup = pace or 0.25, seconds or 15.0, 2.0 if warmup is None else warmup
    elif args.idle:
        scenario, steps = "idle", (1,)
        pace, seconds = pace or 0.1, seconds or 60.0
    elif args.ramp:
        scenario = "ramp"
        steps = tuple(int(s) for s in args.steps.split(",")) if args.steps else RAMP_STEPS
        seconds = seconds or 20.0
    else:
        scenario, steps = f"tables{args.tables}", (args.tables,)
    pace = pace or 5.0
    seconds = seconds or 60.0
    warmup = pace if warmup is None else warmup
    return scenario, steps, pace, seconds, warmup


def build_config(args: argparse.Namespace, parser: argparse.ArgumentParser) -> Config:
    """The scenario the arguments name."""
    scenario, steps, pace, seconds, warmup = _scenario(args)
    if min(steps) < 1 or list(steps) != sorted(steps):
        parser.error("--tables / --steps: positive, ascending")
    if pace <= 0 or seconds <= 0 or warmup < 0 or args.generators < 1:
        parser.error("--pace, --seconds, --generators must be positive")
    try:
        cluster_cpus, generator_cpus = (
            parse_cpus(args.cluster_cpus),
            parse_cpus(args.generator_cpus),
        )
    except ValueError as error:
        parser.error(f"--cluster-cpus / --generator-cpus: {error}")
    if set(cluster_cpus) & set(generator_cpus):
        parser.error("--cluster-cpus and --generator-cpus must not share a core")
    return Config(
        scenario=scenario,
        steps=steps,
        pace_s=pace,
        seconds=seconds,
        warmup_s=warmup,
        generators=min(args.generators, steps[-1]),
        channels=args.channels,
        seat_concurrency=args.seat_concurrency,
        floor_hz=args.floor_hz,
        p99_limit_ms=args.p99_limit,
        away_fraction=args.away,
        stream_floor=not args.no_stream_floor,
        keep_going=args.keep_going,
        seed=args.seed,
        cluster_cpus=cluster_cpus,
        generator_cpus=generator_cpus,
        pipeline=args.pipeline,
        profile_dir=args.profile,
        profile_format=args.profile_format,
        profile_rate_hz=args.profile_rate,
        stalls_dir=args.stalls,
    )
