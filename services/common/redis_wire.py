"""Redis commands packed and read here, for the calls every move and every sweep makes.

redis-py spends about as much CPU around a command as the round trip itself: the command's
dispatch, its encoder, its response callbacks, its pipeline objects (a ``GET`` ~150 µs of
client CPU, 98 µs sent as bytes on the same connection; a pipeline of 64
``ZRANGEBYSCORE`` ~1.1 ms, ~0.5 ms as bytes; issue 22). On a single Redis this module packs
the commands itself (RESP arrays of bulk strings), writes them on one connection of the
client's pool and reads the replies with that connection's parser, under one socket timeout
for the round trip: the same connection handling (health check after idle, the pool's
waiting, a connection closed on any failure), the same retry policy (the connection's
``Retry``: a dropped connection is closed and the commands sent again), and the same
``dominos_redis_command_seconds`` series (the command's name, or ``PIPELINE``).

A Redis Cluster client goes through redis-py unchanged (slot routing, redirections): the
replies are the same wire replies in both cases, so callers read them one way
(:func:`score_pairs` for ``WITHSCORES``).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from typing import Any

from redis.asyncio import Redis
from redis.asyncio.cluster import RedisCluster
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import DataError, ResponseError
from redis.exceptions import TimeoutError as RedisTimeoutError

from services.common.dependency_metrics import redis_command_histogram

#: hiredis's C packer (redis[hiredis]): byte for byte what :func:`_python_pack` writes.
_c_pack: Any
try:
    from hiredis import pack_command as _c_pack
except ImportError:  # pragma: no cover - redis-py without its hiredis extra
    _c_pack = None

__all__ = ["Arg", "driven_directly", "execute", "execute_many", "pack", "score_pairs", "wired"]

#: What a command argument may be (what redis-py's encoder takes, less memoryviews).
Arg = bytes | str | int | float


def wired(redis: Any) -> bool:
    """Whether ``redis`` is a single Redis's client, whose commands this module sends."""
    return isinstance(redis, Redis) and not isinstance(redis, RedisCluster)


def _bulk(value: Arg) -> bytes:
    if isinstance(value, bytes):
        data = value
    elif isinstance(value, str):
        data = value.encode()
    elif isinstance(value, int) and not isinstance(value, bool):
        data = b"%d" % value
    elif isinstance(value, float):
        data = repr(value).encode()
    else:  # as redis-py's encoder: no bool, no None
        raise DataError(f"a Redis argument must be bytes, str or a number, not {value!r}")
    return b"$%d\r\n%b\r\n" % (len(data), data)


def _python_pack(command: Sequence[Arg]) -> bytes:
    return b"*%d\r\n" % len(command) + b"".join(map(_bulk, command))


def pack(command: Sequence[Arg]) -> bytes:
    """One command as the Redis protocol sends it: an array of bulk strings.

    Packed by hiredis's C packer when it takes every argument (~3x less CPU than Python's:
    a commit's ~30 arguments, a sweep's 64 commands; issue 22), else here: an argument
    hiredis refuses by its exact type (an ``IntEnum``) is packed as its number, one that
    redis-py would refuse too (``bool``, ``None``, a list) raises ``DataError``."""
    if _c_pack is not None:
        try:
            packed: bytes = _c_pack(command if type(command) is tuple else tuple(command))
            return packed
        except TypeError:
            pass
    return _python_pack(command)


async def _round_trip(redis: Redis, packed: bytes, count: int, label: Arg) -> list[Any]:
    """Send ``packed`` (``count`` commands) on one pooled connection and read as many
    replies, timed as the command ``label``; an error reply is returned in its place (as
    redis-py's ``ResponseError``)."""
    started = time.perf_counter()
    try:
        return await _exchange(redis, packed, count)
    finally:
        redis_command_histogram(label).observe(time.perf_counter() - started)


def _raise_first_error(replies: list[Any]) -> None:
    """Raise the first error reply of ``replies``, if any."""
    for reply in replies:
        if isinstance(reply, ResponseError):
            raise reply


#: Connections a client's round trips keep between them, per pool (a few: the pool's other
#: users, redis-py's own commands, still find free ones among its 64).
KEPT_PER_POOL = 4


def _kept(pool: Any) -> list[Any]:
    """The connections ``pool``'s round trips keep for the next ones (made on first use)."""
    kept: list[Any] | None = getattr(pool, "_dominos_wire_kept", None)
    if kept is None:
        kept = pool._dominos_wire_kept = []
    return kept


async def _exchange(redis: Redis, packed: bytes, count: int) -> list[Any]:
    """The untimed round trip of :func:`_round_trip`, retried as the connection says.

    A connection that served a round trip in full is kept for the next one instead of going
    back to the pool (at most :data:`KEPT_PER_POOL`): the pool's lock, condition, wait
    timeout and bookkeeping cost ~13 µs of a round trip's ~75 (issue 22). It stays the
    pool's, counted in use, and checked as the pool checks a connection it hands out
    (``ensure_connection``: closed by the server or by ``pool.disconnect()`` meanwhile, it
    connects again). A connection that failed, or that redis-py would drive itself, goes back
    to the pool as before."""
    pool: Any = redis.connection_pool
    kept = _kept(pool)
    if kept:
        connection = kept.pop()
        try:  # the pool's own check of what it hands out: reconnected if closed meanwhile
            await pool.ensure_connection(connection)
        except BaseException:
            await pool.release(connection)
            raise
    else:
        connection = await pool.get_connection()
    direct = driven_directly(connection)

    async def send_and_read() -> list[Any]:
        if direct:
            return await _send_and_read(connection, packed, count)
        # A send or a read that is interrupted (cancelled, timed out) closes the connection
        # itself (redis-py's): replies left unread never answer a later command.
        await connection.send_packed_command(packed)
        replies: list[Any] = []
        for _ in range(count):
            try:
                replies.append(await connection.read_response())
            except ResponseError as error:  # read in full: the connection stays in step
                replies.append(error)
        return replies

    async def dropped(_error: Exception) -> None:
        await connection.disconnect()

    served = False
    try:
        replies: list[Any] = await connection.retry.call_with_retry(send_and_read, dropped)
        served = True
        return replies
    finally:
        if served and direct and connection.is_connected and len(kept) < KEPT_PER_POOL:
            kept.append(connection)
        else:
            await pool.release(connection)


#: What :func:`_send_and_read` uses of a redis-py asyncio connection besides its public
#: methods (redis-py 8): its stream writer and its parser's read.
_CONNECTION_PARTS = ("_writer", "_read_response_from_parser")


def driven_directly(connection: Any) -> bool:
    """Whether :func:`_send_and_read` can drive ``connection`` (else the connection's own
    ``send_packed_command`` and ``read_response`` do, as before: a later redis-py may
    rename what it needs)."""
    return all(hasattr(connection, part) for part in _CONNECTION_PARTS)


async def _send_and_read(connection: Any, packed: bytes, count: int) -> list[Any]:
    """Write ``packed`` and read ``count`` replies under ONE socket timeout, an error reply
    in its place: what ``send_packed_command`` and ``read_response`` do per command, less
    their costs per command (a task for the write's ``wait_for``, a timeout per reply: ~17
    µs of a single command's ~56 µs, ~460 µs of a 64-command pipeline's ~520 µs; issue 22).
    As there: a health check (PING) on a connection idle for its interval, and a connection
    closed on any failure or interruption (no unread reply ever answers a later command),
    raised as redis-py raises it (``ConnectionError``, ``TimeoutError``: the retry policy's)."""
    if not connection.is_connected:
        await connection.connect()
    await connection.check_health()
    writer = connection._writer
    try:
        if writer is None or writer.transport.is_closing():
            raise ConnectionError("Connection closed by the server before write")
        writer.write(packed)
        replies: list[Any] = []
        async with asyncio.timeout(connection.socket_timeout):
            if writer.transport.get_write_buffer_size():
                await writer.drain()
            for _ in range(count):
                replies.append(await connection._read_response_from_parser())
    except TimeoutError as error:
        await connection.disconnect(nowait=True)
        raise RedisTimeoutError(f"Timeout with {count} Redis replies due") from error
    except OSError as error:
        await connection.disconnect(nowait=True)
        raise RedisConnectionError(f"Error while talking to Redis: {error.args}") from error
    except BaseException:
        await connection.disconnect(nowait=True)
        raise
    if connection.health_check_interval:
        loop = asyncio.get_running_loop()
        connection.next_health_check = loop.time() + connection.health_check_interval
    return replies


async def execute(redis: Any, *command: Arg) -> Any:
    """One command's reply (an error reply raised as redis-py raises it). The command's name
    is a ``str``, as for redis-py (a Redis Cluster client finds its keys by it)."""
    if not wired(redis):
        return await redis.execute_command(*command)
    replies = await _round_trip(redis, pack(command), 1, command[0])
    _raise_first_error(replies)
    return replies[0]


async def execute_many(
    redis: Any, commands: Sequence[Sequence[Arg]], *, raise_on_error: bool = True
) -> list[Any]:
    """The replies of ``commands``, in order, in one round trip (a Redis Cluster client: one
    per node, as its pipeline sends them). An error reply is raised (the first one) once
    every reply is read, or with ``raise_on_error=False`` returned in its place."""
    if not commands:
        return []
    if not wired(redis):
        async with redis.pipeline(transaction=False) as pipe:
            for command in commands:
                pipe.execute_command(*command)
            return list(await pipe.execute(raise_on_error=raise_on_error))
    replies = await _round_trip(redis, b"".join(map(pack, commands)), len(commands), "PIPELINE")
    if raise_on_error:
        _raise_first_error(replies)
    return replies


def score_pairs(reply: Sequence[Any]) -> list[tuple[bytes, float]]:
    """``(member, score)`` of a ``WITHSCORES`` reply, whichever shape it came in: flat
    (RESP2), nested pairs (RESP3) or redis-py's tuples."""
    if not reply:
        return []
    if isinstance(reply[0], (list, tuple)):
        return [(member, float(score)) for member, score in reply]
    return [(reply[i], float(reply[i + 1])) for i in range(0, len(reply), 2)]
