"""The timer's sweep in parts (issue 22): a part reads only its shards' indexes, every shard
belongs to exactly one part, and the overdue gauges cover every part's latest sweep."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest

from services.common.credentials import new_table_id
from services.common.presence import PresenceLeases
from services.common.schema import SHARDS, Field, deadlines_key, shard_of, table_key
from services.timer import metrics
from services.timer.claims import TimerStore
from services.timer.service import OVERDUE_GRACE_MS, SWEEP_PARTS, TimerService


def _table_in(shard: int) -> str:
    while True:
        table_id = new_table_id()
        if shard_of(table_id) == shard:
            return table_id


async def _index(redis: Any, shard: int, deadline_ms: int) -> str:
    """A table of ``shard`` with a turn clock ending at ``deadline_ms``, in its index."""
    table_id = _table_in(shard)
    await redis.hset(table_key(table_id), mapping={Field.TURN: 3, Field.DEADLINE_KIND: 1})
    await redis.zadd(deadlines_key(shard), {table_id: deadline_ms})
    return table_id


async def test_each_part_sweeps_its_own_shards_and_the_gauges_add_up_every_part(
    redis_connect: Callable[[str], Any], nats_connect: Callable[..., Any]
) -> None:
    redis = redis_connect("table")
    timer = TimerService(
        TimerStore(redis_connect("timer")),
        PresenceLeases(redis_connect("timer")),
        await nats_connect("timer"),
        retry_ms=2_000,
        sweep_ms=1_000,
    )
    now = int(time.time() * 1000)
    soon = {shard: await _index(redis, shard, now + 1_500) for shard in range(SHARDS)}
    late = now - OVERDUE_GRACE_MS - 60_000
    overdue = [await _index(redis, shard, late) for shard in (3, 3, 11, 5)]  # parts 3 and 5

    await timer.sweep(3, SWEEP_PARTS)
    learned = {shard for shard, table_id in soon.items() if timer.schedule.get(table_id)}
    assert learned == {s for s in range(SHARDS) if s % SWEEP_PARTS == 3}
    assert {t for t in overdue if timer.schedule.get(t)} == set(overdue[:3])
    assert metrics.OVERDUE._value.get() == 3
    assert metrics.OLDEST_OVERDUE._value.get() >= 60

    await timer.sweep(5, SWEEP_PARTS)
    assert metrics.OVERDUE._value.get() == 4  # part 3's count is kept beside part 5's
    for part in range(SWEEP_PARTS):
        await timer.sweep(part, SWEEP_PARTS)
    assert all(timer.schedule.get(table_id) for table_id in soon.values())

    await redis.zrem(deadlines_key(3), *overdue[:2])
    await timer.sweep()  # a whole sweep replaces every part's count
    assert metrics.OVERDUE._value.get() == 2
    with pytest.raises(ValueError, match="parts"):
        await timer.sweep(0, 3)
