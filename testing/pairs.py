"""Before/after comparison of load-bench results (``bench.pairs``): the order of interleaved
runs, each run's headline figures, each side's median and the printed table; a commit checked
out as a detached ``git worktree``. Pure helpers, no bench code: the bench's command line and
the tests both use them.
"""

from __future__ import annotations

import contextlib
import math
import os
import statistics
import subprocess
import sys
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

__all__ = [
    "HEADLINES",
    "SIDES",
    "checkout",
    "headline",
    "largest_held",
    "medians",
    "order",
    "ramp_table",
    "table",
]

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


def _step_p99s(result: dict[str, Any]) -> dict[int, float]:
    """Each step's p99 (ms) by its number of tables; a step with errors counts as infinite
    (it is never good)."""
    return {
        int(step["tables"]): (
            float(step["figures"]["views_p99_ms"]) if not step["figures"]["errors"] else math.inf
        )
        for step in result["steps"]
    }


def largest_held(steps: Iterable[tuple[int, bool]]) -> int:
    """The number of tables of the last step before the first that did not hold, in the
    order given (``(tables, held)``; 0: the first did not)."""
    largest = 0
    for tables, held in steps:
        if not held:
            break
        largest = tables
    return largest


#: Looser p99 limits the ramp table also judges by (those above the run's own limit): on a
#: slow machine the commit measured first may hold no step at the target's limit, and the
#: ratio of the largest N held needs a step on both sides.
LOOSER_LIMITS_MS = (20.0, 25.0, 30.0, 50.0)


def _largest_under(p99s: dict[int, float], limit_ms: float) -> int:
    """The largest number of tables whose step and every smaller step held ``limit_ms``."""
    return largest_held((tables, p99s[tables] < limit_ms) for tables in sorted(p99s))


def ramp_table(results: dict[str, list[dict[str, Any]]]) -> list[str]:
    """For ramps (``--ramp``) taken in pairs: every step's p99 in each run and each side's
    median, then the largest N of each run and of each side's medians (every step up to N
    under the p99 limit), with the ratio after / before. One run's ramp ends at its first
    step that a pause of the machine (not of the cluster) pushed over the limit; the median
    of each step over several runs is what the cluster holds. Empty unless every run is a
    ramp with the same steps."""
    runs = [run for side in SIDES for run in results[side]]
    if not runs or any(run.get("scenario") != "ramp" for run in runs):
        return []
    limit = float(runs[0]["config"]["p99_limit_ms"])
    p99s = {side: [_step_p99s(run) for run in results[side]] for side in SIDES}
    steps = sorted(next(each for side in SIDES for each in p99s[side]))
    if any(sorted(each) != steps for side in SIDES for each in p99s[side]):
        return []
    middle = {
        side: {n: statistics.median(run[n] for run in p99s[side]) for n in steps} for side in SIDES
    }
    header = [f"{side} {n + 1}" for side in SIDES for n in range(len(p99s[side]))]
    lines = [f"{'p99 (ms) by tables':34}" + "".join(f"{h:>11}" for h in header)]
    lines[0] += f"{'before':>11}{'after':>11}"
    for n in steps:
        cells = [run[n] for side in SIDES for run in p99s[side]]
        row = f"{n:<34}" + "".join(f"{_cell(cell):>11}" for cell in cells)
        lines.append(row + f"{_cell(middle['before'][n]):>11}{_cell(middle['after'][n]):>11}")
    for each in (limit, *(looser for looser in LOOSER_LIMITS_MS if looser > limit)):
        largest = [_largest_under(run, each) for side in SIDES for run in p99s[side]]
        before, after = (_largest_under(middle[side], each) for side in SIDES)
        ratio = f"{after / before:.2f}x" if before else ""
        row = f"{f'largest N, p99 < {each:g} ms':34}" + "".join(f"{n:>11}" for n in largest)
        lines.append(row + f"{before:>11}{after:>11}{ratio:>11}")
    lines.append("(median columns: each step's median p99 over the side's runs, and its ramp;")
    lines.append(f" the limits after {limit:g} ms: a ratio where the before side holds no step)")
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


def generate_stubs(tree: Path, python: str = sys.executable) -> None:
    """The tree's protobuf modules, generated from its own ``protos/`` into its ``gen/``."""
    subprocess.run([python, "tools/gen_protos.py"], cwd=tree, check=True, stdout=subprocess.DEVNULL)


def tree_environment(tree: Path, environ: Mapping[str, str], python: str) -> dict[str, str]:
    """The environment of a bench run from ``tree``: ``python``'s directory first on
    ``PATH`` and the tree's own stubs (``gen/``) first on ``PYTHONPATH``, so the run and
    every service it starts import the contract of that commit."""
    path = os.pathsep.join(filter(None, (str(tree / "gen"), environ.get("PYTHONPATH"))))
    return {
        **environ,
        "PATH": f"{Path(python).parent}{os.pathsep}{environ.get('PATH', '')}",
        "PYTHONPATH": path,
    }
