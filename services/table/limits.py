# ruff: noqa: E501  (the key table in the docstring has long rows)
"""Budgets that keep one client from exhausting the cluster (issue 15), counted in Redis so
that they hold across every gateway and table-service replica.

A :class:`Budget` allows ``limit`` events per fixed window of ``window_ms``. :meth:`Limiter.take`
checks several budgets and counts one event against each in one atomic step: either every
budget has room and all are counted, or none is and the answer names the first spent budget
and when its window ends (the ``RetryInfo`` of the refusal). Attempts in flight together
cannot all pass the check before any is counted.

Counters are plain strings that expire with their window:

| key | counts |
|---|---|
| ``dominos:limit:creates:<address>:m`` / ``:h`` | ``CreateTable`` attempts of a client address per minute / hour |
| ``dominos:limit:creates:cluster`` | ``CreateTable`` attempts of everyone per second |
| ``dominos:{T}:limit:lobby`` | lobby changes of a table (joins, leaves, targets) per minute |
| ``dominos:{T}:limit:presence:<seat>`` | connections of a seat per minute |

Open lobbies of an address are a sorted set, ``dominos:lobbies:<address>`` (table ids scored
by when their lobby expires), checked and reserved by :meth:`Limiter.reserve_lobby`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

from redis.asyncio import Redis

from services.common.schema import PHASES, lobbies_key, phase_key

__all__ = ["Budget", "Limiter", "Spent"]

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

# Count an address's open lobbies and reserve one for a new table. KEYS: the address's lobby
# set, the phase index of lobbies, then the other phases' indexes; ARGV: now, cap, table id,
# its lobby's expiry, grace (ms). A member leaves the set when its lobby expired, or when its
# table is no longer a lobby: it is in another phase's index (it started or closed), or its
# reservation is older than the grace and it is in no index (its create failed). Returns {1}
# reserved | {0, ms until the oldest lobby expires}.
_RESERVE_LOBBY = """
local now = tonumber(ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local lifetime = tonumber(ARGV[4]) - now
for _, id in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
  if not redis.call('ZSCORE', KEYS[2], id) then
    local gone = tonumber(redis.call('ZSCORE', KEYS[1], id)) - lifetime < now - tonumber(ARGV[5])
    for i = 3, #KEYS do
      if redis.call('ZSCORE', KEYS[i], id) then gone = true end
    end
    if gone then redis.call('ZREM', KEYS[1], id) end
  end
end
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[2]) then
  local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
  return {0, math.max(tonumber(oldest[2]) - now, 1)}
end
redis.call('ZADD', KEYS[1], ARGV[4], ARGV[3])
redis.call('PEXPIRE', KEYS[1], lifetime)
return {1}
"""

#: The phase indexes the lobby reservation reads: lobbies first, then the others.
LOBBY_FIRST: Final = ("waiting", *(phase for phase in PHASES if phase != "waiting"))
#: A reservation is kept this long even while its table is not (yet) in the lobby index.
RESERVATION_GRACE_MS: Final = 10_000


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
        self._take = redis.register_script(_TAKE)
        self._reserve = redis.register_script(_RESERVE_LOBBY)

    async def take(self, budgets: Sequence[tuple[str, Budget]]) -> Spent | None:
        """Count one event against every ``(counter key, budget)``, or none when one of
        them is spent (that one is returned). A budget with a limit of 0 or less is off."""
        active = [(key, budget) for key, budget in budgets if budget.limit > 0]
        if not active:
            return None
        args: list[Any] = []
        for _, budget in active:
            args += [budget.limit, budget.window_ms]
        answer = await self._take(keys=[key for key, _ in active], args=args)
        which = int(answer[0])
        if which == 0:
            return None
        return Spent(active[which - 1][1], int(answer[1]))

    async def reserve_lobby(
        self, address: str, table_id: str, cap: int, now_ms: int, lobby_ttl_ms: int
    ) -> int:
        """Reserve one of the ``cap`` open lobbies of ``address`` for ``table_id``: 0 when
        reserved (or when ``cap`` is 0: no cap), else the ms until the oldest expires."""
        if cap <= 0:
            return 0
        answer = await self._reserve(
            keys=[lobbies_key(address), *(phase_key(phase) for phase in LOBBY_FIRST)],
            args=[now_ms, cap, table_id, now_ms + lobby_ttl_ms, RESERVATION_GRACE_MS],
        )
        return 0 if int(answer[0]) == 1 else int(answer[1])
