"""The timer service's Redis side: the deadline index and atomic claims.

- The table service writes every table's running clock into its shard's sorted set
  ``dominos:{S}:deadlines`` (score = deadline ms) in the same atomic step as the state, with
  the clock's turn number and kind in the table's hash.
- A due deadline is **claimed** before it fires: a Lua script checks that the index still
  holds that deadline for that turn (the table has not moved on) and takes the lease
  ``dominos:{S}:timerlease:<T>`` (value: the turn number) for the retry interval unless it is
  already held for that turn. Exactly one replica wins;
  if its message is lost or it dies, the lease expires and the deadline fires again.

Keys and fields are :mod:`services.common.schema`'s. A claim touches one shard (one hash
slot): a batch of due deadlines is claimed one shard at a time.
"""

from __future__ import annotations

from typing import Any

from redis.asyncio import Redis

from services.common.redis_wire import execute, execute_many, score_pairs
from services.common.schema import (
    Field,
    clock_of,
    deadlines_key,
    lua,
    shards_of,
    table_key,
    timer_lease_key,
)
from services.common.scripts import ScriptCall, call_scripts

_CLAIM = lua("""
local results = {}
local lease = ARGV[1]
for i = 0, (#KEYS - 1) / 2 - 1 do
  local table_id, deadline, turn = ARGV[2 + 3 * i], ARGV[3 + 3 * i], ARGV[4 + 3 * i]
  local state, lease_key = KEYS[2 + 2 * i], KEYS[3 + 2 * i]
  local score = redis.call('ZSCORE', KEYS[1], table_id)
  if not score or tonumber(score) ~= tonumber(deadline)
      or redis.call('HGET', state, '$TURN') ~= turn then
    results[#results + 1] = -1
  elseif redis.call('GET', lease_key) == turn then
    results[#results + 1] = 0
  else
    redis.call('SET', lease_key, turn, 'PX', lease)
    results[#results + 1] = 1
  end
end
return results
""")


def _deadlines(rows: list[tuple[bytes, float]]) -> list[tuple[str, int]]:
    """``(table_id, deadline_ms)`` of deadline-index rows read with their scores."""
    return [(member.decode(), int(score)) for member, score in rows]


def _page(shard: int, until_ms: int, offset: int, count: int) -> tuple[str | int, ...]:
    """The command reading one page of a shard's deadline index, with the rows' scores."""
    key = deadlines_key(shard)
    return ("ZRANGEBYSCORE", key, "-inf", until_ms, "WITHSCORES", "LIMIT", offset, count)


class TimerStore:
    """Deadline index reads and claims."""

    def __init__(self, redis: Redis) -> None:
        self.redis: Any = redis
        self._claim = redis.register_script(_CLAIM)

    async def first_pages(
        self, shards: list[int], until_ms: int, count: int
    ) -> dict[int, list[tuple[str, int]]]:
        """The first page of each shard's deadline index, earliest first: ``(table_id,
        deadline_ms)`` of the clocks ending before ``until_ms`` (one round trip per node)."""
        pages = await execute_many(
            self.redis,
            [_page(shard, until_ms, 0, count) for shard in shards],
        )
        return {
            shard: _deadlines(score_pairs(rows)) for shard, rows in zip(shards, pages, strict=True)
        }

    async def index_page(
        self, shard: int, until_ms: int, offset: int, count: int
    ) -> list[tuple[str, int]]:
        """One page of a shard's deadline index from position ``offset`` (see
        :meth:`first_pages`)."""
        return _deadlines(
            score_pairs(await execute(self.redis, *_page(shard, until_ms, offset, count)))
        )

    async def clocks(self, table_ids: list[str]) -> list[tuple[int, int] | None]:
        """``(turn_number, kind)`` of each table's running clock (None: the table expired)."""
        if not table_ids:
            return []
        fields = await execute_many(
            self.redis,
            [
                ("HMGET", table_key(table_id), Field.TURN, Field.DEADLINE_KIND)
                for table_id in table_ids
            ],
        )
        return [clock_of(turn, kind) for turn, kind in fields]

    async def claim(self, due: list[tuple[str, int, int]], lease_ms: int) -> list[int]:
        """Claim due deadlines ``(table_id, deadline_ms, turn_number)``, atomically per shard
        (the shards' claims pipelined: one round trip).

        For each: 1 this replica fires it, 0 another replica holds the claim, -1 the table
        has moved on (or expired).
        """
        by_table = {table_id: (deadline, turn) for table_id, deadline, turn in due}
        groups = shards_of(by_table)
        calls: list[ScriptCall] = []
        for shard, tables in groups.items():
            keys = [deadlines_key(shard)]
            args: list[str | int] = [lease_ms]
            for table_id in tables:
                keys += [table_key(table_id), timer_lease_key(table_id)]
                args += [table_id, *by_table[table_id]]
            calls.append((self._claim, keys, args))
        results: dict[str, int] = {}
        answers = await call_scripts(self.redis, calls) if calls else []
        for tables, claimed in zip(groups.values(), answers, strict=True):
            results.update(zip(tables, (int(r) for r in claimed), strict=True))
        return [results[table_id] for table_id, _, _ in due]
