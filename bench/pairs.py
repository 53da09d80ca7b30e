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
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from testing.pairs import SIDES, checkout, headline, order, table


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
