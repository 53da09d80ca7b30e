"""Presence leases: which view streams are open on a seat, on Redis's clock.

Every open view stream holds a lease of its own: the field ``<seat>|<holder>`` of the hash
``dominos:{S}:leases:<T>`` (holder ``<gateway id>:<stream number>``, value: its expiry in ms
on Redis's clock), renewed by its gateway. A seat is connected while any of its leases lives:
a player with streams on two gateways (a reconnection racing the old stream, two devices)
stays connected until the last one ends, whichever order they end in. The index of the
table's shard ``dominos:{S}:presence`` (member ``<T>:<seat>``, score = the seat's latest
lease expiry) lets the timer service find the seats whose every lease a crashed gateway left
behind. Claiming one removes it from the index and its leases from the hash, so exactly one
timer replica reports it; the table service checks that no lease came back before it marks
a seat away.
(One hash per table rather than a key per lease: fewer keys, and a table's leases go with
its hash's expiry.) A field named ``<seat>`` alone is a lease of release 0.2.0's first
format (one holder per seat); it counts as held until claimed.

Expiries are taken on Redis's clock, so the gateways' and timers' clocks never decide
whether a lease ran out.
"""

from __future__ import annotations

from typing import Any

from redis.asyncio import Redis

from services.common.redis_wire import execute_many
from services.common.schema import (
    SHARDS,
    presence_key,
    presence_leases_key,
    presence_member,
    shard_of,
    shards_of,
)
from services.common.scripts import ScriptCall, call_scripts

__all__ = ["PresenceLeases", "lease_field"]

_NOW = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
"""

# The seat's leases in hash KEYS[1]: ``latest`` (the latest expiry of a live one; now + 1 for
# a lease of the first format, whose expiry is the index's) and ``fields`` (all of them, live
# or not). Needs ``now`` and ``seat``.
_SEAT_LEASES = """
local prefix = seat .. '|'
local latest, fields = 0, {}
local all = redis.call('HGETALL', KEYS[1])
for i = 1, #all, 2 do
  local f = all[i]
  if f == seat then
    fields[#fields + 1] = f
    latest = math.max(latest, now + 1)
  elseif string.sub(f, 1, #prefix) == prefix then
    fields[#fields + 1] = f
    local expiry = tonumber(all[i + 1]) or 0
    if expiry > now then latest = math.max(latest, expiry) end
  end
end
"""

# Take or renew leases, a table at a time. KEYS: the index, then one lease hash per table;
# ARGV: the lease time (ms), then per table the number of its leases and per lease its seat,
# holder and index member. One HSET and one PEXPIRE per table, one ZADD for every member:
# a table's four seats cost three commands, not twelve. The hash outlives its leases by a
# few lease times, so it never outlives an abandoned table for long.
_RENEW_LEASES = (
    _NOW
    + """
local ttl = tonumber(ARGV[1])
local expiry = now + ttl
local members = {}
local a = 2
for i = 2, #KEYS do
  local fields = {}
  for j = 1, tonumber(ARGV[a]) do
    local seat, holder, member = ARGV[a + 3 * j - 2], ARGV[a + 3 * j - 1], ARGV[a + 3 * j]
    fields[#fields + 1] = seat .. '|' .. holder
    fields[#fields + 1] = expiry
    members[#members + 1] = expiry
    members[#members + 1] = member
  end
  a = a + 1 + 3 * tonumber(ARGV[a])
  redis.call('HSET', KEYS[i], unpack(fields))
  redis.call('PEXPIRE', KEYS[i], 3 * ttl)
end
redis.call('ZADD', KEYS[1], 'GT', unpack(members))
return #members / 2
"""
)

# Give ``holder``'s lease back: 1 when it was the seat's last live lease (the seat is now
# disconnected: its dead leases go too, and it leaves the index), else 0. KEYS: hash, index;
# ARGV: seat, holder, member.
_RELEASE_LEASE = (
    _NOW
    + """
local seat = ARGV[1]
if redis.call('HDEL', KEYS[1], seat .. '|' .. ARGV[2]) == 0 then return 0 end
"""
    + _SEAT_LEASES
    + """
if latest > 0 then return 0 end
if #fields > 0 then redis.call('HDEL', KEYS[1], unpack(fields)) end
redis.call('ZREM', KEYS[2], ARGV[3])
return 1
"""
)

# Claim a seat whose every lease ran out (on Redis's clock): 1 claimed (it leaves the index,
# its leases the hash), 0 renewed meanwhile (re-indexed at its latest expiry) or already
# claimed. KEYS: hash, index; ARGV: seat, member.
_CLAIM_EXPIRED_LEASE = (
    _NOW
    + """
local seat = ARGV[1]
local indexed = redis.call('ZSCORE', KEYS[2], ARGV[2])
if not indexed or tonumber(indexed) > now then return 0 end
"""
    + _SEAT_LEASES
    + """
if latest > now + 1 then
  redis.call('ZADD', KEYS[2], latest, ARGV[2])
  return 0
end
if #fields > 0 then redis.call('HDEL', KEYS[1], unpack(fields)) end
redis.call('ZREM', KEYS[2], ARGV[2])
return 1
"""
)


def lease_field(seat: int, holder: str) -> str:
    """The hash field of ``holder``'s lease on ``seat``."""
    return f"{seat}|{holder}"


class PresenceLeases:
    """Takes, renews, gives back and claims presence leases (each service uses its part:
    gateways renew and release, the timer claims, the table service checks)."""

    def __init__(self, redis: Redis) -> None:
        self.redis: Any = redis
        self._renew_many = redis.register_script(_RENEW_LEASES)
        self._release = redis.register_script(_RELEASE_LEASE)
        self._claim_lease = redis.register_script(_CLAIM_EXPIRED_LEASE)

    async def held(self, table_id: str, seat: int) -> bool:
        """Whether any stream holds (or took back) a lease on the seat."""
        fields = await self.redis.hkeys(presence_leases_key(table_id))
        own, prefix = str(seat).encode(), f"{seat}|".encode()
        return any(field == own or field.startswith(prefix) for field in fields)

    async def renew(self, table_id: str, seat: int, holder: str, ttl_ms: int) -> None:
        """Take or renew ``holder``'s lease on a seat for ``ttl_ms``."""
        await self.renew_many([(table_id, seat, holder)], ttl_ms)

    async def renew_many(self, leases: list[tuple[str, int, str]], ttl_ms: int) -> None:
        """Renew many ``(table_id, seat, holder)`` leases in one round trip (a call per
        lease cost the gateway's event loop ~30 µs each: 4,000 leases stalled every stream of
        the gateway for a moment every renewal round): a script call per shard, pipelined,
        each renewing its tables' leases a table at a time."""
        calls: list[ScriptCall] = []
        for shard, group in shards_of(leases, lambda lease: lease[0]).items():
            tables: dict[str, list[tuple[int, str]]] = {}
            for table_id, seat, holder in group:
                tables.setdefault(table_id, []).append((seat, holder))
            keys = [presence_key(shard)]
            args: list[str | int] = [ttl_ms]
            for table_id, seats in tables.items():
                keys.append(presence_leases_key(table_id))
                args.append(len(seats))
                for seat, holder in seats:
                    args += [seat, holder, presence_member(table_id, seat)]
            calls.append((self._renew_many, keys, args))
        if calls:
            await call_scripts(self.redis, calls)

    async def release(self, table_id: str, seat: int, holder: str) -> bool:
        """Give ``holder``'s lease back (its stream ended); True when no other stream holds
        the seat any more (then it is disconnected)."""
        return bool(
            await self._release(
                keys=[presence_leases_key(table_id), presence_key(shard_of(table_id))],
                args=[seat, holder, presence_member(table_id, seat)],
            )
        )

    async def claim_expired(
        self, now_ms: int, shards: list[int] | None = None, limit: int = 1000
    ) -> list[tuple[str, int]]:
        """Claim the seats of ``shards`` (default: all) whose every lease ran out by
        ``now_ms``: ``(table_id, seat)`` each, at most ``limit`` per shard.

        A seat with a lease renewed meanwhile is re-indexed, not returned; a claimed one leaves
        the index, so exactly one replica reports it.
        """
        shards = list(range(SHARDS)) if shards is None else shards
        pages = await execute_many(
            self.redis,
            [
                ("ZRANGEBYSCORE", presence_key(shard), "-inf", now_ms, "LIMIT", 0, limit)
                for shard in shards
            ],
        )
        claimed = []
        for shard, members in zip(shards, pages, strict=True):
            for raw in members:
                member = raw.decode()
                table_id, _, seat = member.rpartition(":")
                won = await self._claim_lease(
                    keys=[presence_leases_key(table_id), presence_key(shard)], args=[seat, member]
                )
                if int(won) == 1:
                    claimed.append((table_id, int(seat)))
        return claimed
