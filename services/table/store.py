"""Tables in Redis: one atomic compare-and-set per accepted command.

The keys and the record are :mod:`services.common.schema`'s. :meth:`TableStore.commit` runs
one Lua script that checks the version, writes the state, appends to the log, adds the event
to the outbox, updates the deadline and phase indexes and refreshes every expiry (D5): all or
nothing. The global indexes (deadlines, pending, phases) and the invitation codes live
outside the table's hash slot, so this layout needs a single Redis primary (with replicas or
Sentinel).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final, NamedTuple

from redis.asyncio import Redis

from services.common.published import deadline_kind
from services.common.schema import (
    DEADLINES_KEY,
    LOAD_FIELDS,
    PENDING_KEY,
    PHASES,
    Field,
    RecordChanges,
    TableRecord,
    clock_fields,
    code_key,
    connection_failures_key,
    create_key,
    join_failures_key,
    lua,
    outbox_key,
    phase_key,
    table_key,
)
from services.rules import TableState, encode_state

CREATE_TTL_MS: Final = 10 * 60 * 1000

# KEYS: 1 the table, 2 its outbox, 3 deadlines, 4 pending, 5 the code key or '', 6 the create
# key or '', 7.. one phase index per phase. ARGV: 1 expected version (0: must not exist),
# 2 new version, 3 state, 4 log entry, 5 event, 6 deadline ms (0: no clock), 7 lifetime ms,
# 8 table id, 9 now ms, 10 create fingerprint, 11 its lifetime ms, 12 the phase (index in
# KEYS from 7, 1-based), 13.. bookkeeping fields as name, value pairs.
_COMMIT = lua("""
local T = KEYS[1]
local cur = redis.call('HGET', T, '$VERSION')
if ARGV[1] == '0' then
  if cur then return {0, tonumber(cur)} end
elseif cur ~= ARGV[1] then
  return {0, cur and tonumber(cur) or -1}
end
local CH = 64
local state, entry = ARGV[3], ARGV[4]
local old_sn = tonumber(redis.call('HGET', T, '$STATE_CHUNKS') or '0')
local sn = 0
for i = 1, #state, CH do
  redis.call('HSET', T, '$STATE' .. sn, string.sub(state, i, i + CH - 1))
  sn = sn + 1
end
for i = sn, old_sn - 1 do redis.call('HDEL', T, '$STATE' .. i) end
local ln = tonumber(redis.call('HGET', T, '$LOG_CHUNKS') or '0')
local pos = 1
if ln > 0 then
  local last = redis.call('HGET', T, '$LOG' .. (ln - 1))
  local room = CH - #last
  if room > 0 then
    redis.call('HSET', T, '$LOG' .. (ln - 1), last .. string.sub(entry, 1, room))
    pos = room + 1
  end
end
while pos <= #entry do
  redis.call('HSET', T, '$LOG' .. ln, string.sub(entry, pos, pos + CH - 1))
  ln = ln + 1
  pos = pos + CH
end
local fields = {'$VERSION', ARGV[2], '$STATE_CHUNKS', sn, '$LOG_CHUNKS', ln}
for i = 13, #ARGV do fields[#fields + 1] = ARGV[i] end
redis.call('HSET', T, unpack(fields))
local id, now, ttl = ARGV[8], tonumber(ARGV[9]), tonumber(ARGV[7])
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[5])
redis.call('ZADD', KEYS[4], 'NX', now, id)
if ARGV[6] == '0' then
  redis.call('ZREM', KEYS[3], id)
else
  redis.call('ZADD', KEYS[3], ARGV[6], id)
end
redis.call('PEXPIRE', T, ttl)
redis.call('PEXPIRE', KEYS[2], ttl)
if KEYS[5] ~= '' then redis.call('SET', KEYS[5], id, 'PX', ttl) end
if KEYS[6] ~= '' then redis.call('SET', KEYS[6], id .. '|' .. ARGV[10], 'PX', ARGV[11]) end
local phase = 6 + tonumber(ARGV[12])
for i = 7, #KEYS do
  if i == phase then
    redis.call('ZADD', KEYS[i], now + ttl, id)
  else
    redis.call('ZREM', KEYS[i], id)
  end
end
return {1, redis.call('ZRANGE', KEYS[2], 0, -1)}
""")

# Clear published events from the outboxes of several tables in one step. KEYS: the pending
# index, then one outbox per table; ARGV: per table, the last published version and its id.
_PUBLISHED = """
for i = 2, #KEYS do
  redis.call('ZREMRANGEBYSCORE', KEYS[i], '-inf', ARGV[2 * i - 3])
  if redis.call('ZCARD', KEYS[i]) == 0 then redis.call('ZREM', KEYS[1], ARGV[2 * i - 2]) end
end
return 1
"""

# Look an invitation code up within the failure budgets of the client's connection and of its
# address (D6, issue 15), atomically: the checks, the lookup and the count of a miss are one
# step, so attempts in flight together cannot all pass the check before any is counted.
# KEYS: code key, the connection's failure counter, the address's; ARGV: connection budget,
# address budget, window ms. Returns {1, table id} | {0, 0} (no such code, counted) |
# {-1, window ms left, 1 (connection) or 2 (address)} (budget spent, nothing looked up).
_JOIN_LOOKUP = """
for i = 2, 3 do
  local failures = tonumber(redis.call('GET', KEYS[i]) or '0')
  if failures >= tonumber(ARGV[i - 1]) then
    return {-1, math.max(redis.call('PTTL', KEYS[i]), 1), i - 1}
  end
end
local table_id = redis.call('GET', KEYS[1])
if table_id then return {1, table_id} end
for i = 2, 3 do
  if redis.call('INCR', KEYS[i]) == 1 then redis.call('PEXPIRE', KEYS[i], ARGV[3]) end
end
return {0, 0}
"""


class Client(NamedTuple):
    """Who sent a create or a join, as the gateway saw it: the address budgets count by
    (IPv4, or an IPv6 /64) and the connection (gateway and address with port)."""

    address: str
    connection: str


class JoinLookup(NamedTuple):
    """The answer of :meth:`TableStore.join_lookup`."""

    table_id: str | None = None  # the code's table; None: no such code, or limited
    limited: str = ""  # which failure budget is spent ("connection", "address"): nothing looked up
    retry_after_ms: int = 0  # when limited: ms until the window ends


@dataclass(frozen=True, slots=True)
class Commit:
    """Everything one accepted command writes, atomically: the state after it over the record
    it was applied to (``None``: the table is created), its log entry and bus event, the
    table's lifetime from now, and its bookkeeping changes."""

    before: TableRecord | None
    state: TableState
    now_ms: int
    log_entry: bytes
    event: bytes
    ttl_ms: int
    changes: RecordChanges = field(default_factory=RecordChanges)
    create_request: tuple[str, str] | None = None  # (request hash, fingerprint)


class TableStore:
    """Reads and atomically writes tables in Redis (``redis.asyncio``, bytes responses)."""

    def __init__(self, redis: Redis) -> None:
        self.redis: Any = redis  # bytes responses; redis-py's stubs type them as bytes | str
        self._commit = redis.register_script(_COMMIT)
        self._published = redis.register_script(_PUBLISHED)
        self._join_lookup = redis.register_script(_JOIN_LOOKUP)

    async def load(self, table_id: str) -> TableRecord | None:
        """The table, or ``None`` when it does not exist (never created, or expired)."""
        return TableRecord.read(table_id, await self.redis.hmget(table_key(table_id), LOAD_FIELDS))

    async def table_exists(self, table_id: str) -> bool:
        """Whether the table exists (not expired)."""
        return bool(await self.redis.exists(table_key(table_id)))

    async def code_taken(self, code: str) -> bool:
        """Whether a live table already uses this code."""
        return bool(await self.redis.exists(code_key(code)))

    async def created_by(self, request_hash: str) -> tuple[str, str] | None:
        """``(table id, fingerprint)`` of the table a create request id made, if remembered."""
        value = await self.redis.get(create_key(request_hash))
        if not value:
            return None
        table_id, _, fingerprint = value.decode().partition("|")
        return table_id, fingerprint

    async def commit(self, commit: Commit) -> list[bytes] | None:
        """Write ``commit`` if the table is still at the version it was read at.

        Returns the outbox after the write (every unpublished event, in version order), or
        ``None`` when the version moved on (nothing was written).
        """
        state, before, changes = commit.state, commit.before, commit.changes
        code = changes.code or (before.code if before is not None else "")
        keys = [
            table_key(state.table_id),
            outbox_key(state.table_id),
            DEADLINES_KEY,
            PENDING_KEY,
            code_key(code) if code else "",
            create_key(commit.create_request[0]) if commit.create_request else "",
            *(phase_key(p) for p in PHASES),
        ]
        args: list[Any] = [
            before.version if before is not None else 0,
            state.version,
            encode_state(state),
            commit.log_entry,
            commit.event,
            state.deadline_ms,
            commit.ttl_ms,
            state.table_id,
            commit.now_ms,
            commit.create_request[1] if commit.create_request else "",
            CREATE_TTL_MS,
            PHASES.index(state.phase.name.lower()) + 1,
        ]
        for name, value in (
            *changes.fields(),
            *clock_fields(state.turn_number, deadline_kind(state), commit.now_ms),
        ):
            args += [name, value]
        result = await self._commit(keys=keys, args=args)
        if int(result[0]) != 1:
            return None
        return list(result[1])

    async def mark_published(self, versions: Mapping[str, int]) -> None:
        """Drop every outbox event up to its table's version in ``versions`` (acknowledged by
        NATS), for any number of tables in one round trip."""
        if not versions:
            return
        args: list[Any] = []
        for table_id, version in versions.items():
            args += [version, table_id]
        await self._published(keys=[PENDING_KEY, *(outbox_key(t) for t in versions)], args=args)

    async def outbox(self, table_id: str) -> list[bytes]:
        """The table's unpublished events, in version order."""
        return list(await self.redis.zrange(outbox_key(table_id), 0, -1))

    async def pending_tables(self, older_than_ms: int, limit: int = 500) -> list[str]:
        """Tables whose outbox filled before ``older_than_ms`` (left behind by a crash)."""
        ids = await self.redis.zrangebyscore(PENDING_KEY, "-inf", older_than_ms, 0, limit)
        return [i.decode() for i in ids]

    async def forget_pending(self, table_id: str) -> None:
        """Remove a table from the pending index (its keys expired)."""
        await self.redis.zrem(PENDING_KEY, table_id)

    async def read_log(self, table_id: str) -> bytes:
        """The table's command log."""
        key = table_key(table_id)
        chunks = int(await self.redis.hget(key, Field.LOG_CHUNKS) or 0)
        if not chunks:
            return b""
        return b"".join(await self.redis.hmget(key, [Field.log_chunk(i) for i in range(chunks)]))

    async def join_lookup(
        self,
        code: str,
        client: Client,
        budgets: tuple[int, int],
        window_ms: int,
    ) -> JoinLookup:
        """The table with this invitation code, looked up within the client's budgets of
        failed attempts per window: its connection's, then its address's (D6); a miss counts
        against both (one atomic step)."""
        answer = await self._join_lookup(
            keys=[
                code_key(code),
                connection_failures_key(client.connection),
                join_failures_key(client.address),
            ],
            args=[*budgets, window_ms],
        )
        kind = int(answer[0])
        if kind == 1:
            return JoinLookup(table_id=answer[1].decode())
        if kind == -1:
            which = "connection" if int(answer[2]) == 1 else "address"
            return JoinLookup(limited=which, retry_after_ms=int(answer[1]))
        return JoinLookup()

    async def tables_by_phase(self, now_ms: int) -> dict[str, int]:
        """Live tables per phase, cluster-wide (expired ones are pruned from the indexes)."""
        async with self.redis.pipeline(transaction=False) as pipe:
            for phase in PHASES:
                pipe.zremrangebyscore(phase_key(phase), "-inf", now_ms)
                pipe.zcard(phase_key(phase))
            results = await pipe.execute()
        return {phase: int(results[2 * i + 1]) for i, phase in enumerate(PHASES)}

    async def memory_usage(self, table_id: str) -> int:
        """Bytes Redis uses for the table's own keys and its index entries (``MEMORY USAGE``)."""
        total = 0
        for key in (table_key(table_id), outbox_key(table_id)):
            total += int(await self.redis.memory_usage(key, samples=0) or 0)
        loaded = await self.load(table_id)
        if loaded is not None and loaded.code:
            total += int(await self.redis.memory_usage(code_key(loaded.code), samples=0) or 0)
        return total
