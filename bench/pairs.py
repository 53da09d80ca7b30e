"""Interleaved before/after runs of ``bench.load`` for two commits, and the median of each side.

Usage: ``python -m bench.pairs BEFORE AFTER [--pairs 2] [--out DIR] -- <bench.load options>``
(``make bench-pairs A=<rev> B=<rev> ARGS="--tables 250"``).

One run of the load bench on a shared machine differs from the next by up to ±15 % (CPU
frequency, neighbours): a change of a few percent is only seen over several runs of both
commits taken in turn. Each commit is checked out once (``git worktree``, detached, removed
afterwards) and the runs alternate ABBA…: A B, then B A, so that a drift of the machine
during the session weighs on both sides alike. Each run writes its own results file
(``DIR/<side>-<n>.json``, for ``bench.compare``); the table printed at the end gives every
run's headline figures and each side's median, with the ratio after / before. For ramps
(``--ramp``) a second table gives each step's p99 in every run and each side's median, and
the largest N by those medians: a pause of the machine during one run's step ends that run's
ramp, not the side's. ``--report --out DIR`` prints the tables of the files in DIR again.

Both trees run on this checkout's virtualenv: compare commits whose dependencies are the
same. Each tree has its own protobuf modules, generated from its own ``protos/`` into its
``gen/`` and put first on ``PYTHONPATH`` for the bench and every service it starts, so a
commit that changed the contract is measured against one before the change.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from testing.pairs import (
    SIDES,
    checkout,
    generate_stubs,
    headline,
    order,
    ramp_table,
    table,
    tree_environment,
)


def run_once(tree: Path, options: Sequence[str], out: Path) -> dict[str, Any]:
    """One ``bench.load`` run from ``tree`` (its own stubs first on the path); its results
    file's contents."""
    command = [sys.executable, "-m", "bench.load", *options, "--json", str(out)]
    environment = tree_environment(tree, os.environ, sys.executable)
    subprocess.run(command, cwd=tree, env=environment, check=True, stdout=subprocess.DEVNULL)
    result: dict[str, Any] = json.loads(out.read_text())
    return result


def main(argv: Sequence[str] | None = None) -> None:
    """Parse the command line, run the pairs, print the table."""
    arguments = list(sys.argv[1:] if argv is None else argv)
    split = arguments.index("--") if "--" in arguments else len(arguments)
    parser = argparse.ArgumentParser(prog="python -m bench.pairs", description=__doc__)
    parser.add_argument("before", help="the commit measured first (e.g. main)")
    parser.add_argument("after", help="the commit compared with it (e.g. HEAD)")
    parser.add_argument("--pairs", type=int, default=2, help="runs of each commit (2)")
    parser.add_argument("--out", type=Path, help="where the results files go (a new dir)")
    parser.add_argument(
        "--report",
        action="store_true",
        help="run nothing: print the tables of the results files already in --out",
    )
    config = parser.parse_args(arguments[:split])
    if config.report:
        if config.out is None:
            parser.error("--report needs --out")
        report(config.before, config.after, config.out, _saved(config.out))
        return
    options = arguments[split + 1 :]
    if config.pairs < 1:
        parser.error("--pairs must be at least 1")
    repo = Path(__file__).resolve().parent.parent
    out = config.out or Path(tempfile.mkdtemp(prefix="bench-pairs-"))
    out.mkdir(parents=True, exist_ok=True)
    results: dict[str, list[dict[str, Any]]] = {side: [] for side in SIDES}
    with (
        tempfile.TemporaryDirectory(prefix="bench-pairs-trees-") as parent,
        checkout(repo, config.before, Path(parent) / "a") as before,
        checkout(repo, config.after, Path(parent) / "b") as after,
    ):
        trees = {"before": before, "after": after}
        for tree in trees.values():
            generate_stubs(tree)
        for side, n in order(config.pairs):
            print(f"[pairs] {side} {n}: {' '.join(options) or '(defaults)'}", flush=True)
            path = out / f"{side}-{n}.json"
            results[side].append(run_once(trees[side], options, path))
    report(config.before, config.after, out, results)


def _saved(out: Path) -> dict[str, list[dict[str, Any]]]:
    """The results files of an earlier ``bench.pairs`` run (``<side>-<n>.json``), in order."""
    saved: dict[str, list[dict[str, Any]]] = {}
    for side in SIDES:
        paths = sorted(out.glob(f"{side}-*.json"), key=lambda path: int(path.stem.split("-")[1]))
        saved[side] = [json.loads(path.read_text()) for path in paths]
    return saved


def report(before: str, after: str, out: Path, results: dict[str, list[dict[str, Any]]]) -> None:
    """Print the headline table and, for ramps, the table of each step's p99."""
    print(f"before = {before}, after = {after}; results files in {out}")
    headlines = {side: [headline(run) for run in runs] for side, runs in results.items()}
    print("\n".join(table(headlines)))
    ramps = ramp_table(results)
    if ramps:
        print("\n".join(ramps))


if __name__ == "__main__":
    main()
