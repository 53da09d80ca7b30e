"""The services' Redis clients (``services.common.connections``) against a real Redis and a
real Redis Cluster: a pipeline is timed as one command and is freed as soon as it is
dropped (no reference cycle left for the garbage collector, which stalls a busy process)."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Callable
from typing import Any

from services.common.dependency_metrics import REDIS_COMMAND_SECONDS

KEY = "dominos:{t}:table:pipelined"


def _timed_pipelines() -> float:
    return float(REDIS_COMMAND_SECONDS.labels("PIPELINE")._sum.get())


async def _pipeline_freed_by_reference_count(client: Any, *, freed: bool = True) -> None:
    """Run a pipeline with the collector off: its time must be recorded and, when ``freed``,
    dropping it must free it at once."""
    before = _timed_pipelines()
    gc.disable()
    try:
        pipe = client.pipeline(transaction=False)
        pipe.set(KEY, b"1")
        pipe.get(KEY)
        assert await pipe.execute() == [True, b"1"]
        dropped = weakref.ref(pipe)
        del pipe
        if freed:
            assert dropped() is None  # freed by its reference count, not left in a cycle
    finally:
        gc.enable()
    assert _timed_pipelines() > before


async def test_a_pipeline_is_timed_as_one_command_and_freed_when_dropped(
    redis_connect: Callable[[str], Any],
) -> None:
    await _pipeline_freed_by_reference_count(redis_connect("table"))
