"""Timer replicas divide the shards between them for the sweeps, and take over a dead
replica's (deadlines heard from the table events are fired by every replica, claims decide).

Every replica renews its heartbeat in the sorted set ``dominos:timers`` (member: its replica
id, score: when the heartbeat runs out, on Redis's clock) at every sweep. The live members,
sorted, give each replica a rank; a replica owns the shards whose number modulo the count of
live replicas is its rank. When a replica dies its heartbeat runs out within
:attr:`Membership.ttl_ms`, the others' next heartbeat no longer lists it, and its shards are
divided among them. While members come and go two replicas may own a shard for a moment;
that costs nothing, because a deadline is claimed atomically before it fires (one replica
wins). A replica that cannot reach Redis keeps the shards it had.
"""

from __future__ import annotations

from typing import Any, Final

from redis.asyncio import Redis

from services.common.schema import SHARDS, TIMERS_KEY

__all__ = ["Membership", "shares"]

# Renew ARGV[1]'s heartbeat for ARGV[2] ms, drop the expired ones, list the live members.
# KEYS: the heartbeat set. Times on Redis's clock.
_HEARTBEAT = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
return redis.call('ZRANGE', KEYS[1], 0, -1)
"""

#: Every shard: what a replica owns when it is alone (or runs without membership).
ALL_SHARDS: Final = tuple(range(SHARDS))


def shares(members: list[str], me: str) -> tuple[int, ...]:
    """The shards ``me`` owns among the live ``members`` (all of them if it is not listed)."""
    ranked = sorted(members)
    if me not in ranked:
        return ALL_SHARDS
    rank = ranked.index(me)
    return tuple(shard for shard in range(SHARDS) if shard % len(ranked) == rank)


class Membership:
    """One timer replica's heartbeat and the shards it owns."""

    def __init__(self, redis: Redis, replica_id: str, ttl_ms: int) -> None:
        self.redis: Any = redis
        self.replica_id = replica_id
        self.ttl_ms = ttl_ms
        self._heartbeat = redis.register_script(_HEARTBEAT)
        #: The shards this replica owns, as of its last heartbeat.
        self.owned: tuple[int, ...] = ALL_SHARDS
        #: The live replicas, as of its last heartbeat.
        self.members: tuple[str, ...] = ()

    async def heartbeat(self) -> tuple[int, ...]:
        """Renew the heartbeat and recompute the owned shards (kept as they were when Redis
        cannot be reached: the error propagates, the caller logs it)."""
        raw = await self._heartbeat(keys=[TIMERS_KEY], args=[self.replica_id, self.ttl_ms])
        self.members = tuple(member.decode() for member in raw)
        self.owned = shares(list(self.members), self.replica_id)
        return self.owned

    async def leave(self) -> None:
        """Give the shards up at once (a clean shutdown): the others take them at their next
        heartbeat instead of after the heartbeat ran out."""
        await self.redis.zrem(TIMERS_KEY, self.replica_id)
