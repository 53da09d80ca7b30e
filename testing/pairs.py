"""Before/after comparison of load-bench results (``bench.pairs``): the order of interleaved
runs, each run's headline figures, each side's median and the printed table; a commit checked
out as a detached ``git worktree``. Pure helpers, no bench code: the bench's command line and
the tests both use them.
"""

from __future__ import annotations

import contextlib
import statistics
import subprocess
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

__all__ = ["HEADLINES", "SIDES", "checkout", "headline", "medians", "order", "table"]

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
