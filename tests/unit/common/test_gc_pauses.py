"""Garbage-collector pauses are timed by generation (``services.common.gc_pauses``)."""

from __future__ import annotations

import gc
import time
from typing import Any

from services.common.gc_pauses import GC_CPU, GC_PAUSE, watch_gc_pauses


def _series(metric: Any, generation: str) -> dict[str, float]:
    """The samples of ``metric`` for ``generation``, by their name's last part (``count``,
    ``sum``, ``total``...)."""
    found = {}
    for family in metric.collect():
        for sample in family.samples:
            if sample.labels.get("generation") == generation:
                found[sample.name.rsplit("_", 1)[-1]] = float(sample.value)
    return found


def _timed(generation: str) -> tuple[float, float]:
    """(collections timed, seconds) of ``generation`` so far."""
    found = _series(GC_PAUSE, generation)
    return found["count"], found["sum"]


def _cpu(generation: str) -> float:
    """CPU seconds counted for ``generation`` so far."""
    return _series(GC_CPU, generation)["total"]


def test_every_collection_is_timed_once_in_its_generation() -> None:
    watch_gc_pauses()
    watch_gc_pauses()  # a second start adds no second clock
    gc.disable()  # no automatic collection in between
    try:
        before = {generation: _timed(generation) for generation in "012"}
        gc.collect(1)
        gc.collect(2)
        after = {generation: _timed(generation) for generation in "012"}
    finally:
        gc.enable()
    assert after["0"] == before["0"]
    for generation in "12":
        assert after[generation][0] == before[generation][0] + 1
        assert after[generation][1] > before[generation][1]


def test_a_collection_counts_its_cpu_time_not_the_time_its_thread_waited() -> None:
    """A young collection whose thread is held off the CPU for 50 ms (a callback sleeping
    after the clock's start, as a busy core would) pauses the process that long, but adds
    only the collector's own CPU time to ``dominos_gc_cpu_seconds_total``."""
    watch_gc_pauses()

    def held_off(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            time.sleep(0.05)

    gc.disable()
    gc.callbacks.append(held_off)  # after the clock: runs inside the timed pause
    try:
        cycles: list[list[object]] = [[] for _ in range(2_000)]  # young objects to walk
        for node in cycles:
            node.append(node)
        before = {generation: (_cpu(generation), _timed(generation)[1]) for generation in "012"}
        gc.collect(0)
        after = {generation: (_cpu(generation), _timed(generation)[1]) for generation in "012"}
    finally:
        gc.callbacks.remove(held_off)
        gc.enable()
    assert after["1"] == before["1"] and after["2"] == before["2"]
    cpu = after["0"][0] - before["0"][0]
    pause = after["0"][1] - before["0"][1]
    assert pause >= 0.05
    assert 0 < cpu < 0.01, (cpu, pause)
