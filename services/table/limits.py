# ruff: noqa: E501  (the key table in the docstring has long rows)
"""Budgets that keep one client from exhausting the cluster (issue 15), counted in Redis so
that they hold across every gateway and table-service replica.

A :class:`Budget` allows ``limit`` events per fixed window of ``window_ms``. :meth:`Limiter.take`
checks several budgets and counts one event against each: either every budget has room and
all are counted, or none is and the answer names the first spent budget and when its window
ends (the ``RetryInfo`` of the refusal). Budgets in one hash slot are checked and counted in
one atomic step, so attempts in flight together cannot all pass the check before any is
counted; budgets in several slots (an address's and the cluster's) are taken slot by slot,
and a refusal in a later slot refunds the earlier ones.

Counters are plain strings that expire with their window (keys: :mod:`services.common.schema`):

| key | counts |
|---|---|
| ``dominos:limit:creates:{<address>}:m`` / ``:h`` | ``CreateTable`` attempts of a client address per minute / hour |
| ``dominos:limit:creates:{cluster}`` | ``CreateTable`` attempts of everyone per second |
| ``dominos:{S}:limit:<T>:lobby`` | lobby changes of a table (joins, leaves, targets) per minute |
| ``dominos:{S}:limit:<T>:presence:<seat>`` | connections of a seat per minute |

Open lobbies of an address are a sorted set, ``dominos:lobbies:{<address>}`` (table ids scored
by when their lobby expires), checked and reserved by :meth:`Limiter.reserve_lobby`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final, TypeVar

from redis.asyncio import Redis
from redis.crc import key_slot

from services.common.schema import PHASES, lobbies_key, phase_key, shard_of

__all__ = ["Budget", "Limiter", "Spent"]

_Item = TypeVar("_Item")

# Check every budget, then count in all of them. KEYS: one counter per budget; ARGV: per
# budget its limit and window (ms). Returns {0} when counted, {i, ms left} when budget i
# (1-based) is spent (nothing counted).
_TAKE = """
for i = 1, #KEYS do
  local used = tonumber(redis.call('GET', KEYS[i]) or '0')
  if used >= tonumber(ARGV[2 * i - 1]) then
    return {i, math.max(redis.call('PTTL', KEYS[i]), 1)}
  end
end
for i = 1, #KEYS do
  if redis.call('INCR', KEYS[i]) == 1 then redis.call('PEXPIRE', KEYS[i], ARGV[2 * i]) end
end
return {0}
"""

# Give back one event counted by _TAKE (a later slot's budget was spent). KEYS: the counters.
_REFUND = """
for i = 1, #KEYS do
  if tonumber(redis.call('GET', KEYS[i]) or '0') > 0 then redis.call('DECR', KEYS[i]) end
end
return 1
"""

# Reserve one of an address's open lobbies for a new table. KEYS: the address's lobby set;
# ARGV: now, cap, table id, its lobby's expiry (ms). Lobbies that expired leave the set (the
# ones that started or closed were pruned before, see Limiter.reserve_lobby). Returns {1}
# reserved | {0, ms until the oldest lobby expires}.
_RESERVE_LOBBY = """
local now = tonumber(ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[2]) then
  local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
  return {0, math.max(tonumber(oldest[2]) - now, 1)}
end
redis.call('ZADD', KEYS[1], ARGV[4], ARGV[3])
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[4]) - now)
return {1}
"""

#: The phase indexes the lobby reservation reads: lobbies first, then the others.
LOBBY_FIRST: Final = ("waiting", *(phase for phase in PHASES if phase != "waiting"))
#: A reservation is kept this long even while its table is not (yet) in the lobby index.
RESERVATION_GRACE_MS: Final = 10_000


def _by_slot(items: Sequence[_Item], key_of: Callable[[_Item], str]) -> list[list[_Item]]:
    """``items`` grouped by the hash slot of their key (one atomic script call each)."""
    groups: dict[int, list[_Item]] = {}
    for item in items:
        groups.setdefault(key_slot(key_of(item).encode()), []).append(item)
    return list(groups.values())


@dataclass(frozen=True, slots=True)
class Budget:
    """``limit`` events per window of ``window_ms``, named as the contract names it (the
    ``limit`` of a RATE_LIMITED error)."""

    name: str
    limit: int
    window_ms: int


@dataclass(frozen=True, slots=True)
class Spent:
    """A budget that had no room: which, and when its window ends."""

    budget: Budget
    retry_after_ms: int


class Limiter:
    """The budgets of the table service, in Redis."""

    def __init__(self, redis: Redis) -> None:
        self.redis: Any = redis
        self._take = redis.register_script(_TAKE)
        self._refund = redis.register_script(_REFUND)
        self._reserve = redis.register_script(_RESERVE_LOBBY)

    async def take(self, budgets: Sequence[tuple[str, Budget]]) -> Spent | None:
        """Count one event against every ``(counter key, budget)``, or none when one of
        them is spent (that one is returned). A budget with a limit of 0 or less is off."""
        active = [(key, budget) for key, budget in budgets if budget.limit > 0]
        taken: list[str] = []
        for group in _by_slot(active, lambda item: item[0]):
            args: list[Any] = []
            for _, budget in group:
                args += [budget.limit, budget.window_ms]
            answer = await self._take(keys=[key for key, _ in group], args=args)
            which = int(answer[0])
            if which:
                await self.give_back(taken)
                return Spent(group[which - 1][1], int(answer[1]))
            taken += [key for key, _ in group]
        return None

    async def give_back(self, keys: list[str]) -> None:
        """Give back the event :meth:`take` counted on ``keys`` (it turned out not to count:
        a join whose code exists, or a later budget that was spent)."""
        for group in _by_slot(keys, lambda key: key):
            await self._refund(keys=group)

    async def reserve_lobby(
        self, address: str, table_id: str, cap: int, now_ms: int, lobby_ttl_ms: int
    ) -> int:
        """Reserve one of the ``cap`` open lobbies of ``address`` for ``table_id``: 0 when
        reserved (or when ``cap`` is 0: no cap), else the ms until the oldest expires.

        When the address is at its cap, the reservations of tables that are no longer lobbies
        leave its set first: a table in another phase's index of its shard (it started or
        closed), or in none once its reservation is older than the grace (its create
        failed). That pruning reads other shards, so it is not atomic with the reservation;
        the reservation itself (count and add) is."""
        if cap <= 0:
            return 0
        key = lobbies_key(address)
        held = await self.redis.zrangebyscore(key, now_ms, "+inf", withscores=True)
        if len(held) >= cap:
            gone = await self._not_lobbies(held, now_ms, lobby_ttl_ms)
            if gone:
                await self.redis.zrem(key, *gone)
        answer = await self._reserve(
            keys=[key], args=[now_ms, cap, table_id, now_ms + lobby_ttl_ms]
        )
        return 0 if int(answer[0]) == 1 else int(answer[1])

    async def _not_lobbies(
        self, held: list[tuple[bytes, float]], now_ms: int, lobby_ttl_ms: int
    ) -> list[bytes]:
        """The reserved tables of ``held`` that are no longer lobbies."""
        async with self.redis.pipeline(transaction=False) as pipe:
            for table_id, _ in held:
                shard = shard_of(table_id)
                for phase in LOBBY_FIRST:
                    pipe.zscore(phase_key(shard, phase), table_id)
            scores = await pipe.execute()
        gone = []
        width = len(LOBBY_FIRST)
        for i, (table_id, expiry) in enumerate(held):
            waiting, *others = scores[i * width : (i + 1) * width]
            if waiting is not None:
                continue
            reserved_at = expiry - lobby_ttl_ms
            if any(score is not None for score in others) or (
                reserved_at < now_ms - RESERVATION_GRACE_MS
            ):
                gone.append(table_id)
        return gone
