"""Garbage-collector pauses are timed by generation (``services.common.gc_pauses``)."""

from __future__ import annotations

import gc

from services.common.gc_pauses import GC_PAUSE, watch_gc_pauses


def _timed(generation: str) -> tuple[float, float]:
    """(collections timed, seconds) of ``generation`` so far."""
    found = {}
    for metric in GC_PAUSE.collect():
        for sample in metric.samples:
            if sample.labels.get("generation") == generation:
                found[sample.name.rsplit("_", 1)[-1]] = float(sample.value)
    return found["count"], found["sum"]


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
