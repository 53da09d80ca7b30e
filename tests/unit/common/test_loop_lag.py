"""Event-loop lag (issue 21): a callback that holds the loop shows as lag."""

from __future__ import annotations

import asyncio
import time

import pytest

from services.common.loop_lag import LOOP_LAG, watch_loop_lag
from testing.waiting import wait_for


def _observed() -> tuple[float, float]:
    """(count, sum) of the histogram so far."""
    count = total = 0.0
    for metric in LOOP_LAG.collect():
        for sample in metric.samples:
            if sample.name.endswith("_count"):
                count = sample.value
            elif sample.name.endswith("_sum"):
                total = sample.value
    return count, total


async def test_a_blocked_loop_is_measured_as_late_and_an_idle_one_is_not() -> None:
    task = asyncio.create_task(watch_loop_lag(interval_s=0.02))
    try:
        start_count, start_sum = _observed()
        await wait_for(lambda: _observed()[0] >= start_count + 3, timeout=5)
        idle_count, idle_sum = _observed()
        assert (idle_sum - start_sum) / (idle_count - start_count) < 0.05
        time.sleep(0.3)  # noqa: ASYNC251  (the behaviour under test: work holding the loop)
        await wait_for(lambda: _observed()[0] > idle_count, timeout=5)
        assert _observed()[1] - idle_sum >= 0.25
    finally:
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
