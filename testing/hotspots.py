"""Samples by function from py-spy's raw collapsed stacks (``bench.load.hotspots``' logic):
the functions with the most samples of their own (the frame on top of the stack) and with
the most samples in all (anywhere on the stack, counted once per stack).

A frame is named as py-spy names it, ``function (module path)``, without its line number,
so that every line of one function adds up.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable

__all__ = ["Hotspots", "function_of", "parse", "render"]

_LINE = re.compile(r":\d+\)$")


def function_of(frame: str) -> str:
    """``frame`` without its line number: ``run (asyncio/runners.py:118)`` →
    ``run (asyncio/runners.py)``."""
    return _LINE.sub(")", frame.strip())


class Hotspots:
    """Samples by function: its own (on top of the stack) and in all (on the stack)."""

    def __init__(self) -> None:
        self.total = 0
        self.own: Counter[str] = Counter()
        self.inclusive: Counter[str] = Counter()

    def add(self, stack: list[str], samples: int) -> None:
        """Count ``samples`` of one stack, outermost frame first."""
        if not stack or samples <= 0:
            return
        functions = [function_of(frame) for frame in stack]
        self.total += samples
        self.own[functions[-1]] += samples
        for function in set(functions):
            self.inclusive[function] += samples


def parse(lines: Iterable[str]) -> Hotspots:
    """The hotspots of py-spy's raw output: one stack per line, frames joined by ``;``,
    then a space and the stack's sample count. Lines that are not such are skipped."""
    hotspots = Hotspots()
    for line in lines:
        stack, _, count = line.rstrip("\n").rpartition(" ")
        if not stack or not count.isdigit():
            continue
        hotspots.add(stack.split(";"), int(count))
    return hotspots


def render(hotspots: Hotspots, top: int) -> str:
    """The ``top`` functions by own samples, then by samples in all, with their shares."""
    if hotspots.total == 0:
        return "no samples"
    lines = [f"{hotspots.total} samples"]
    for title, counter in (("own", hotspots.own), ("in all", hotspots.inclusive)):
        lines.append(f"\n-- by samples {title} --")
        for function, samples in counter.most_common(top):
            lines.append(f"{100 * samples / hotspots.total:6.2f} %  {samples:7d}  {function}")
    return "\n".join(lines)
