"""The timer service's Redis side: the deadline index and atomic claims.

- The table service writes every table's running clock into the sorted set
  ``dominos:deadlines`` (score = deadline ms) in the same atomic step as the state, with the
  clock's turn number and kind in the table's hash.
- A due deadline is **claimed** before it fires: a Lua script checks that the index still
  holds that deadline for that turn (the table has not moved on) and takes the lease
  ``dominos:{T}:timerlease`` (value: the turn number) for the retry interval unless it is
  already held for that turn. Exactly one replica wins;
  if its message is lost or it dies, the lease expires and the deadline fires again.

Keys and fields are :mod:`services.common.schema`'s.
"""

from __future__ import annotations

from typing import Any

from redis.asyncio import Redis

from services.common.schema import (
    DEADLINES_KEY,
    Field,
    clock_of,
    lua,
    table_key,
    timer_lease_key,
)

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


class TimerStore:
    """Deadline index reads and claims."""

    def __init__(self, redis: Redis) -> None:
        self.redis: Any = redis
        self._claim = redis.register_script(_CLAIM)

    async def index_page(self, until_ms: int, offset: int, count: int) -> list[tuple[str, int]]:
        """One page of the deadline index, earliest first: ``(table_id, deadline_ms)`` of the
        clocks ending before ``until_ms``, from position ``offset``."""
        rows = await self.redis.zrangebyscore(
            DEADLINES_KEY, "-inf", until_ms, offset, count, withscores=True
        )
        return [(member.decode(), int(score)) for member, score in rows]

    async def clocks(self, table_ids: list[str]) -> list[tuple[int, int] | None]:
        """``(turn_number, kind)`` of each table's running clock (None: the table expired)."""
        if not table_ids:
            return []
        async with self.redis.pipeline(transaction=False) as pipe:
            for table_id in table_ids:
                pipe.hmget(table_key(table_id), Field.TURN, Field.DEADLINE_KIND)
            fields = await pipe.execute()
        return [clock_of(turn, kind) for turn, kind in fields]

    async def claim(self, due: list[tuple[str, int, int]], lease_ms: int) -> list[int]:
        """Claim due deadlines ``(table_id, deadline_ms, turn_number)`` in one atomic step.

        For each: 1 this replica fires it, 0 another replica holds the claim, -1 the table
        has moved on (or expired).
        """
        if not due:
            return []
        keys = [DEADLINES_KEY]
        args: list[str | int] = [lease_ms]
        for table_id, deadline_ms, turn_number in due:
            keys += [table_key(table_id), timer_lease_key(table_id)]
            args += [table_id, deadline_ms, turn_number]
        return [int(r) for r in await self._claim(keys=keys, args=args)]
