"""Percentiles of measured samples, for the tests that time something and the benchmarks.

:data:`PERCENTILES` are the points every report gives; :func:`percentile` is the
nearest-rank percentile of sorted samples; :func:`summary_ms` gives all of them (and the
mean) in milliseconds from samples in nanoseconds.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from typing import TypeVar

__all__ = ["PERCENTILES", "percentile", "summary_ms"]

#: The points of a latency report: ``(name, p)``.
PERCENTILES: tuple[tuple[str, float], ...] = (
    ("p50", 50.0),
    ("p90", 90.0),
    ("p99", 99.0),
    ("p99.9", 99.9),
    ("max", 100.0),
)

_N = TypeVar("_N", int, float)


def percentile(sorted_values: Sequence[_N], p: float) -> _N:
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
