"""Interleaved before/after runs of ``bench.load`` for two commits, and the median of each side.

Usage: ``python -m bench.pairs BEFORE AFTER [--pairs 2] [--out DIR] -- <bench.load options>``
(``make bench-pairs A=<rev> B=<rev> ARGS="--tables 250"``).

One run of the load bench on a shared machine differs from the next by up to ±15 % (CPU
frequency, neighbours): a change of a few percent is only seen over several runs of both
commits taken in turn. Each commit is checked out once (``git worktree``, detached, removed
afterwards) and the runs alternate ABBA…: A B, then B A, so that a drift of the machine
during the session weighs on both sides alike. Each run writes its own results file
(``DIR/<side>-<n>.json``, for ``bench.compare``); the table printed at the end gives every
run's headline figures and each side's median, with the ratio after / before.

Both trees run on this checkout's virtualenv (generated protobuf modules included): compare
commits whose contract (``protos/``) and dependencies are the same.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

#: The headline figures of a run (``steps[-1].figures``), with their labels.
HEADLINES: tuple[tuple[str, str], ...] = (
    ("cpu_s_per_1k_cluster", "cluster CPU s per 1k commands"),
    ("cpu_s_per_1k_gateway", "  gateway"),
    ("cpu_s_per_1k_table", "  table service"),
    ("pipeline_cpu_s_per_1k", "floor pipeline CPU s per 1k"),
    ("cpu_over_pipeline", "cluster CPU / floor pipeline's"),
    ("views_p50_ms", "action -> 4 views p50 (ms)"),
    ("views_p99_ms", "action -> 4 views p99 (ms)"),
    ("pipeline_views_p50_ms", "floor pipeline p50 (ms)"),
    ("p50_over_pipeline", "p50 / floor pipeline's"),
    ("errors", "errors"),
)
SIDES = ("before", "after")


def order(pairs: int) -> list[tuple[str, int]]:
    """The runs, in the order they are taken: ABBA… (``(side, n)``, n from 1 per side)."""
    runs: list[tuple[str, int]] = []
    for n in range(1, pairs + 1):
        first, second = SIDES if n % 2 else SIDES[::-1]
        runs += [(first, n), (second, n)]
    return runs


def headline(result: dict[str, Any]) -> dict[str, float]:
    """The headline figures of a ``bench.load`` result (its last step)."""
    figures = result["steps"][-1]["figures"]
    return {key: float(figures[key]) for key, _ in HEADLINES if key in figures}


def medians(runs: Sequence[dict[str, float]]) -> dict[str, float]:
    """The median of each figure over ``runs`` (those that have it)."""
    keys = {key for run in runs for key in run}
    return {key: statistics.median(run[key] for run in runs if key in run) for key in keys}


def table(results: dict[str, list[dict[str, float]]]) -> list[str]:
    """The printed comparison: every run's figures, each side's median, after / before."""
    counts = {side: len(results[side]) for side in SIDES}
    header = [f"{side} {n + 1}" for side in SIDES for n in range(counts[side])]
    lines = [f"{'figure':34}" + "".join(f"{h:>11}" for h in header)]
    lines[0] += f"{'before':>11}{'after':>11}{'after/bef.':>11}"
    middle = {side: medians(results[side]) for side in SIDES}
    for key, label in HEADLINES:
        cells = [run.get(key) for side in SIDES for run in results[side]]
        if all(cell is None for cell in cells):
            continue
        row = f"{label:34}" + "".join(f"{_cell(cell):>11}" for cell in cells)
        before, after = middle["before"].get(key), middle["after"].get(key)
        ratio = f"{after / before:.2f}x" if before and after is not None else ""
        row += f"{_cell(before):>11}{_cell(after):>11}{ratio:>11}"
        lines.append(row)
    lines.append("(median columns: the median of each side's runs)")
    return lines


def _cell(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


@contextlib.contextmanager
def checkout(repo: Path, revision: str, parent: Path) -> Iterator[Path]:
    """A detached worktree of ``revision``, removed afterwards."""
    path = parent / revision.replace("/", "_")
    subprocess.run(
        ["git", "-C", str(repo), "worktree", "add", "--detach", "-f", str(path), revision],
        check=True,
        capture_output=True,
    )
    try:
        yield path
    finally:
        subprocess.run(
            ["git", "-C", str(repo), "worktree", "remove", "--force", str(path)],
            check=False,
            capture_output=True,
        )


def run_once(tree: Path, options: Sequence[str], out: Path) -> dict[str, float]:
    """One ``bench.load`` run from ``tree``; its headline figures."""
    command = [sys.executable, "-m", "bench.load", *options, "--json", str(out)]
    environment = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}
    subprocess.run(command, cwd=tree, env=environment, check=True, stdout=subprocess.DEVNULL)
    return headline(json.loads(out.read_text()))


def main(argv: Sequence[str] | None = None) -> None:
    """Parse the command line, run the pairs, print the table."""
    arguments = list(sys.argv[1:] if argv is None else argv)
    split = arguments.index("--") if "--" in arguments else len(arguments)
    parser = argparse.ArgumentParser(prog="python -m bench.pairs", description=__doc__)
    parser.add_argument("before", help="the commit measured first (e.g. main)")
    parser.add_argument("after", help="the commit compared with it (e.g. HEAD)")
    parser.add_argument("--pairs", type=int, default=2, help="runs of each commit (2)")
    parser.add_argument("--out", type=Path, help="where the results files go (a new dir)")
    config = parser.parse_args(arguments[:split])
    options = arguments[split + 1 :]
    if config.pairs < 1:
        parser.error("--pairs must be at least 1")
    repo = Path(__file__).resolve().parent.parent
    out = config.out or Path(tempfile.mkdtemp(prefix="bench-pairs-"))
    out.mkdir(parents=True, exist_ok=True)
    results: dict[str, list[dict[str, float]]] = {side: [] for side in SIDES}
    with (
        tempfile.TemporaryDirectory(prefix="bench-pairs-trees-") as parent,
        checkout(repo, config.before, Path(parent) / "a") as before,
        checkout(repo, config.after, Path(parent) / "b") as after,
    ):
        trees = {"before": before, "after": after}
        for side, n in order(config.pairs):
            print(f"[pairs] {side} {n}: {' '.join(options) or '(defaults)'}", flush=True)
            path = out / f"{side}-{n}.json"
            results[side].append(run_once(trees[side], options, path))
    print(f"before = {config.before}, after = {config.after}; results files in {out}")
    print("\n".join(table(results)))


if __name__ == "__main__":
    main()
