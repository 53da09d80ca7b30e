"""A log-bucketed latency histogram in the manner of HdrHistogram, mergeable across processes.

Values are non-negative integers (nanoseconds in the load bench). Below ``2**SUB_BITS`` every
value has its own bucket; above, each power of two is split into ``2**(SUB_BITS - 1)`` equal
buckets, so a bucket is never wider than 1/128 of its values (``SUB_BITS`` = 8): a
percentile is exact to within 0.8 %, whatever the range (a microsecond to minutes) and
whatever the number of samples, in a few kilobytes. The exact minimum, maximum and sum are
kept beside the buckets.

Percentiles are nearest-rank, as in the other benchmarks: the value reported for a rank is
the highest value of its bucket (HdrHistogram's "highest equivalent value"), capped by the
exact maximum; ``p`` = 100 is the exact maximum.

Two histograms merge by adding their bucket counts (``merge``); ``to_json`` / ``from_json``
carry one from a generator process to the parent.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

SUB_BITS = 8
_LINEAR = 1 << SUB_BITS  # values below: one bucket each
_HALF = 1 << (SUB_BITS - 1)  # buckets per power of two above


def bucket_of(value: int) -> int:
    """The bucket index of ``value`` (>= 0)."""
    if value < _LINEAR:
        return value
    shift = value.bit_length() - SUB_BITS
    return _LINEAR + (shift - 1) * _HALF + ((value >> shift) - _HALF)


def bucket_bounds(index: int) -> tuple[int, int]:
    """The lowest and highest value of bucket ``index``."""
    if index < _LINEAR:
        return index, index
    shift, offset = divmod(index - _LINEAR, _HALF)
    shift += 1
    low = (offset + _HALF) << shift
    return low, low + (1 << shift) - 1


class Histogram:
    """Counts of values per log bucket, with the exact count, sum, minimum and maximum."""

    __slots__ = ("count", "counts", "maximum", "minimum", "total")

    def __init__(self) -> None:
        self.counts: dict[int, int] = {}
        self.count = 0
        self.total = 0
        self.minimum: int | None = None
        self.maximum: int | None = None

    def record(self, value: int) -> None:
        """Count one value (negative values count as 0)."""
        value = max(int(value), 0)
        index = bucket_of(value)
        self.counts[index] = self.counts.get(index, 0) + 1
        self.count += 1
        self.total += value
        if self.maximum is None or value > self.maximum:
            self.maximum = value
        if self.minimum is None or value < self.minimum:
            self.minimum = value

    def merge(self, other: Histogram) -> Histogram:
        """Add ``other``'s counts to this one; returns self."""
        for index, count in other.counts.items():
            self.counts[index] = self.counts.get(index, 0) + count
        self.count += other.count
        self.total += other.total
        for bound in (other.minimum, other.maximum):
            if bound is not None:
                self.minimum = bound if self.minimum is None else min(self.minimum, bound)
                self.maximum = bound if self.maximum is None else max(self.maximum, bound)
        return self

    def percentile(self, p: float) -> int:
        """Nearest-rank percentile (highest value of the bucket; ``p`` = 100: the maximum)."""
        if not self.count or self.maximum is None:
            raise ValueError("no samples")
        if p >= 100.0:
            return self.maximum
        rank = max(1, math.ceil(p / 100.0 * self.count))
        seen = 0
        for index in sorted(self.counts):
            seen += self.counts[index]
            if seen >= rank:
                return min(bucket_bounds(index)[1], self.maximum)
        return self.maximum  # pragma: no cover (rank <= count)

    def mean(self) -> float:
        """The exact mean."""
        if not self.count:
            raise ValueError("no samples")
        return self.total / self.count

    def summary(self, points: Iterable[tuple[str, float]], scale: float) -> dict[str, float]:
        """``{name: percentile / scale}`` for each point, plus ``mean`` and ``count``;
        the values are NaN when there is no sample (``count`` 0)."""
        figures: dict[str, float] = {}
        for name, p in points:
            figures[name] = self.percentile(p) / scale if self.count else math.nan
        figures["mean"] = self.mean() / scale if self.count else math.nan
        figures["count"] = self.count
        return figures

    def to_json(self) -> dict[str, Any]:
        """A JSON-able form (``from_json`` reads it back)."""
        return {
            "sub_bits": SUB_BITS,
            "count": self.count,
            "total": self.total,
            "min": self.minimum,
            "max": self.maximum,
            "buckets": sorted(self.counts.items()),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Histogram:
        """The histogram ``to_json`` described."""
        if data["sub_bits"] != SUB_BITS:
            raise ValueError(f"histogram with {data['sub_bits']} sub-bucket bits")
        histogram = cls()
        histogram.counts = {int(index): int(count) for index, count in data["buckets"]}
        histogram.count = int(data["count"])
        histogram.total = int(data["total"])
        histogram.minimum = data["min"]
        histogram.maximum = data["max"]
        return histogram
