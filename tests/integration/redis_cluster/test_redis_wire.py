"""``services.common.redis_wire`` on a Redis Cluster: the commands go through redis-py's
cluster pipeline (each to its slot's node) and read as on a single Redis."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from redis.exceptions import ResponseError

from services.common.redis_wire import execute, execute_many, score_pairs, wired
from services.common.schema import SHARDS, deadlines_key


async def test_a_sweep_over_every_shard_reads_as_on_a_single_redis(
    cluster_connect: Callable[[str], Any],
) -> None:
    table, timer = cluster_connect("table"), cluster_connect("timer")
    assert not wired(timer)
    for shard in range(SHARDS):
        await table.zadd(deadlines_key(shard), {f"t{shard}": 1000 + shard, "late": 10**9})
    pages = await execute_many(
        timer,
        [
            ("ZRANGEBYSCORE", deadlines_key(shard), "-inf", 5000, "WITHSCORES", "LIMIT", 0, 10)
            for shard in range(SHARDS)
        ],
    )
    assert [score_pairs(page) for page in pages] == [
        [(f"t{shard}".encode(), float(1000 + shard))] for shard in range(SHARDS)
    ]
    assert await execute(timer, "ZRANGEBYSCORE", deadlines_key(3), "-inf", "+inf") == [
        b"t3",
        b"late",
    ]


async def test_an_error_reply_keeps_its_place_on_a_cluster(
    cluster_connect: Callable[[str], Any],
) -> None:
    table = cluster_connect("table")
    key = "dominos:{5}:table:wired"
    await table.set(key, b"not a hash")
    replies = await execute_many(table, [("GET", key), ("HGET", key, "v")], raise_on_error=False)
    assert replies[0] == b"not a hash" and isinstance(replies[1], ResponseError)
    with pytest.raises(ResponseError):
        await execute_many(table, [("GET", key), ("HGET", key, "v")])
