"""``services.common.redis_wire`` against a real Redis (the services' clients, ACL users): the
replies are redis-py's, error replies stay in their place, a dropped connection is sent
again, a cancelled call never leaves its replies for the next one, and the calls are timed
in ``dominos_redis_command_seconds`` as redis-py's were."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest
from prometheus_client import REGISTRY
from redis.asyncio import Redis
from redis.exceptions import NoPermissionError, ResponseError
from redis.exceptions import TimeoutError as RedisTimeoutError

from services.common import redis_wire
from services.common.redis_wire import (
    driven_directly,
    execute,
    execute_many,
    pack,
    score_pairs,
    wired,
)
from testing.waiting import wait_for

INDEX = "dominos:{7}:deadlines"
TABLE = "dominos:{7}:table:wired"
_SERIES = "dominos_redis_command_seconds"


def _observed(command: str) -> float:
    """How many calls ``dominos_redis_command_seconds`` counted for ``command``."""
    return REGISTRY.get_sample_value(f"{_SERIES}_count", {"command": command}) or 0.0


def test_a_command_is_packed_as_an_array_of_bulk_strings() -> None:
    assert pack(("SET", b"k\r\n", 12, -3, 0.5, "é")) == (
        b"*6\r\n$3\r\nSET\r\n$3\r\nk\r\n\r\n$2\r\n12\r\n$2\r\n-3\r\n$3\r\n0.5\r\n$2\r\n\xc3\xa9\r\n"
    )


@pytest.mark.parametrize("value", [True, None, [1]])
def test_an_argument_redis_py_would_refuse_is_refused(value: Any) -> None:
    with pytest.raises(Exception, match="Redis argument"):
        pack(("SET", "k", value))


def test_scores_read_the_same_from_every_reply_shape() -> None:
    expected = [(b"a", 1.0), (b"b", 2.5)]
    assert score_pairs([b"a", b"1", b"b", b"2.5"]) == expected  # RESP2
    assert score_pairs([[b"a", 1.0], [b"b", 2.5]]) == expected  # RESP3
    assert score_pairs([(b"a", 1.0), (b"b", 2.5)]) == expected  # redis-py's pairs
    assert score_pairs([]) == []


async def test_replies_are_those_of_a_redis_py_pipeline(
    redis_connect: Callable[[str], Any],
) -> None:
    timer = redis_connect("timer")
    table = redis_connect("table")
    assert wired(timer)
    await table.zadd(INDEX, {"t1": 100, "t2": 200, "t3": 300})
    commands = [
        ("ZRANGEBYSCORE", INDEX, "-inf", 250, "WITHSCORES", "LIMIT", 0, 10),
        ("ZRANGEBYSCORE", INDEX, "-inf", 250, "LIMIT", 1, 10),
        ("ZRANGEBYSCORE", "dominos:{8}:deadlines", "-inf", 250, "LIMIT", 0, 10),
    ]
    before = _observed("PIPELINE")
    wired_replies = await execute_many(timer, commands)
    assert _observed("PIPELINE") == before + 1
    async with timer.pipeline(transaction=False) as pipe:
        pipe.zrangebyscore(INDEX, "-inf", 250, 0, 10, withscores=True)
        pipe.zrangebyscore(INDEX, "-inf", 250, 1, 10)
        pipe.zrangebyscore("dominos:{8}:deadlines", "-inf", 250, 0, 10)
        expected = await pipe.execute()
    assert score_pairs(wired_replies[0]) == [(m, float(s)) for m, s in expected[0]]
    assert wired_replies[1:] == expected[1:] == [[b"t2"], []]


async def test_an_error_reply_keeps_its_place_and_the_connection_in_step(
    redis_connect: Callable[[str], Any],
) -> None:
    table = redis_connect("table")
    await table.set(TABLE, b"not a hash")
    commands = [("GET", TABLE), ("HGET", TABLE, "v"), ("GET", TABLE)]
    replies = await execute_many(table, commands, raise_on_error=False)
    assert replies[0] == replies[2] == b"not a hash"
    assert isinstance(replies[1], ResponseError) and "WRONGTYPE" in str(replies[1])
    with pytest.raises(ResponseError, match="WRONGTYPE"):
        await execute_many(table, commands)
    with pytest.raises(ResponseError, match="WRONGTYPE"):
        await execute(table, "HGET", TABLE, "v")
    # Every reply was read: the pool's connection answers the next command, not an old one.
    assert await execute(table, "GET", TABLE) == b"not a hash"


async def test_a_command_outside_the_identitys_rights_is_refused_by_redis(
    redis_connect: Callable[[str], Any],
) -> None:
    gateway = redis_connect("gateway")
    with pytest.raises(NoPermissionError):
        await execute(gateway, "SET", TABLE, b"forged")
    assert await redis_connect("table").get(TABLE) is None


async def test_a_dropped_connection_is_sent_again_on_a_new_one(
    redis_connect: Callable[[str], Any], redis_client: Redis
) -> None:
    table = redis_connect("table")
    await execute(table, "SET", TABLE, b"kept")
    killed = await redis_client.client_kill_filter(user="table")
    assert killed >= 1
    before = _observed("GET")
    assert await execute(table, "GET", TABLE) == b"kept"
    assert _observed("GET") == before + 1


async def _blocked_clients(client: Redis) -> int:
    return sum(1 for entry in await client.client_list() if entry.get("cmd") == "blpop")


async def test_a_cancelled_call_leaves_no_reply_for_the_next_one(redis_client: Redis) -> None:
    queue = "dominos:wire:queue"
    await redis_client.set(TABLE, b"current")
    call = asyncio.create_task(execute(redis_client, "BLPOP", queue, 5))
    # Sent, and waiting in Redis for its reply:
    await wait_for(lambda: _blocked_clients(redis_client), message="BLPOP never reached Redis")
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    # Had its connection gone back to the pool, this push would answer the next command.
    await redis_client.rpush(queue, b"late")
    for _ in range(5):
        assert await execute(redis_client, "GET", TABLE) == b"current"


async def test_the_installed_redis_py_connections_are_driven_directly(
    redis_client: Redis,
) -> None:
    """The installed redis-py still has what the direct path uses (one timeout per round
    trip, no task per write): a release that renames it falls back to its own send and read,
    slower, and fails this test so that someone looks."""
    pool: Any = redis_client.connection_pool
    connection = await pool.get_connection()
    try:
        assert driven_directly(connection)
    finally:
        await pool.release(connection)


async def test_a_round_trip_past_the_socket_timeout_closes_its_connection(
    redis_server: Any, redis_client: Redis
) -> None:
    """A pipeline whose replies come too late raises redis-py's TimeoutError, and its
    connection is closed: the late replies never answer a later command."""
    queue = "dominos:wire:slow"
    await redis_client.set(TABLE, b"current")
    impatient = Redis.from_url(redis_server.url_for("admin"), socket_timeout=0.3)
    try:
        with pytest.raises(RedisTimeoutError):
            await execute_many(impatient, [("GET", TABLE), ("BLPOP", queue, 2)])
        await redis_client.rpush(queue, b"late")
        for _ in range(3):
            assert await execute(impatient, "GET", TABLE) == b"current"
    finally:
        await impatient.aclose()


async def test_consecutive_round_trips_reuse_one_connection_without_the_pool(
    redis_connect: Callable[[str], Any],
) -> None:
    table = redis_connect("table")
    pool = table.connection_pool
    await execute(table, "SET", TABLE, b"kept")
    taken = 0
    take = pool.get_connection

    async def counted(*args: Any, **kwargs: Any) -> Any:
        nonlocal taken
        taken += 1
        return await take(*args, **kwargs)

    pool.get_connection = counted
    for _ in range(5):
        assert await execute(table, "GET", TABLE) == b"kept"
    await execute_many(table, [("GET", TABLE), ("EXISTS", TABLE)])
    assert taken == 0
    assert len(redis_wire._kept(pool)) == 1


async def test_a_kept_connection_closed_meanwhile_connects_again(
    redis_connect: Callable[[str], Any], redis_client: Redis
) -> None:
    table = redis_connect("table")
    await execute(table, "SET", TABLE, b"kept")
    await table.connection_pool.disconnect()  # what closing the client does
    assert await execute(table, "GET", TABLE) == b"kept"
    await redis_client.client_kill_filter(user="table")  # the server drops it
    await wait_for(
        lambda: _eof_seen(redis_wire._kept(table.connection_pool)),
        message="the killed connection's end never reached the client",
    )
    assert await execute(table, "GET", TABLE) == b"kept"


async def _eof_seen(kept: list[Any]) -> bool:
    await asyncio.sleep(0)
    return all(c._reader is None or c._reader.at_eof() for c in kept)


async def test_no_more_than_a_few_connections_are_kept_and_the_rest_go_back(
    redis_connect: Callable[[str], Any],
) -> None:
    table = redis_connect("table")
    pool = table.connection_pool
    await asyncio.gather(*(execute(table, "GET", f"{TABLE}:{i}") for i in range(12)))
    kept = redis_wire._kept(pool)
    assert 1 <= len(kept) <= redis_wire.KEPT_PER_POOL
    assert set(pool._in_use_connections) == set(kept)


async def test_a_failed_round_trip_gives_its_connection_back_to_the_pool(
    redis_server: Any, redis_client: Redis
) -> None:
    impatient = Redis.from_url(redis_server.url_for("admin"), socket_timeout=0.3)
    try:
        with pytest.raises(RedisTimeoutError):
            await execute(impatient, "BLPOP", "dominos:wire:never", 2)
        pool: Any = impatient.connection_pool
        assert redis_wire._kept(pool) == []
        assert not pool._in_use_connections
    finally:
        await impatient.aclose()
