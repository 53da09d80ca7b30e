"""Tables in Redis: one atomic compare-and-set per accepted command.

The keys and the record are :mod:`services.common.schema`'s. :meth:`TableStore.commit` runs
one Lua script that checks the version, writes the state, appends to the log, adds the event
to the outbox, updates the deadline and phase indexes of the table's shard and refreshes
every expiry (D5): all or nothing, in one hash slot, so the same code runs on a single Redis
and on Redis Cluster. Reads across shards (the relay's pending tables, the phase gauge) are
pipelined: one round trip per Redis node.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final, NamedTuple

from redis.asyncio import Redis

from services.common.published import deadline_kind
from services.common.redis_wire import execute_many
from services.common.schema import (
    LOAD_FIELDS,
    PHASES,
    SEATS,
    SHARDS,
    Field,
    RecordChanges,
    SeatRecord,
    TableRecord,
    clock_fields,
    code_key,
    create_key,
    deadlines_key,
    lua,
    outbox_key,
    pending_key,
    phase_key,
    shard_of,
    shards_of,
    table_key,
)
from services.common.scripts import ScriptCall, call_script, call_scripts
from services.rules import Phase, TableState

CREATE_TTL_MS: Final = 10 * 60 * 1000

# KEYS (all in the table's shard): 1 the table, 2 its outbox, 3 the deadlines, 4 the pending
# index, 5 its invitation code, 6 the create request (written when ARGV[10] is not empty),
# 7.. one phase index per phase. ARGV: 1 expected ``<version>:<last command's ms>`` (0: must
# not exist; the time too, because a version number can come back with other content after
# Redis lost writes, and a replica's cached record must not pass for it), 2 new version,
# 3 state, 4 log entry, 5 event, 6 deadline ms (0: no clock), 7 lifetime ms, 8 table id,
# 9 now ms, 10 create fingerprint, 11 its lifetime ms, 12 ``<phase>:<phase before>`` (each
# an index in KEYS from 7, 1-based; 0: no table before), 13.. bookkeeping fields as name,
# value pairs. The table leaves the other phase indexes only when its phase changes: the
# compare-and-set proves the record is the one read, and every commit keeps a table in
# exactly its phase's index (one command less per index on every other commit). The state's
# chunks, the log's new or grown chunks and the bookkeeping fields go in one HSET. Returns
# {1, the outbox's events older than this one} (its own event the caller has: no need to
# send it back), or {0, the version found}.
_COMMIT = lua("""
local T = KEYS[1]
local held = redis.call('HMGET', T, '$VERSION', '$LAST_TIME', '$STATE_CHUNKS', '$LOG_CHUNKS')
local cur = held[1]
if ARGV[1] == '0' then
  if cur then return {0, tonumber(cur)} end
elseif not cur or cur .. ':' .. (held[2] or '0') ~= ARGV[1] then
  return {0, cur and tonumber(cur) or -1}
end
local CH = 64
local state, entry = ARGV[3], ARGV[4]
local old_sn = tonumber(held[3] or '0')
local f = {}
local sn = 0
for i = 1, #state, CH do
  f[#f + 1] = '$STATE' .. sn
  f[#f + 1] = string.sub(state, i, i + CH - 1)
  sn = sn + 1
end
local ln = tonumber(held[4] or '0')
local pos = 1
if ln > 0 then
  local last = redis.call('HGET', T, '$LOG' .. (ln - 1))
  local room = CH - #last
  if room > 0 then
    f[#f + 1] = '$LOG' .. (ln - 1)
    f[#f + 1] = last .. string.sub(entry, 1, room)
    pos = room + 1
  end
end
while pos <= #entry do
  f[#f + 1] = '$LOG' .. ln
  f[#f + 1] = string.sub(entry, pos, pos + CH - 1)
  ln = ln + 1
  pos = pos + CH
end
f[#f + 1] = '$VERSION'
f[#f + 1] = ARGV[2]
f[#f + 1] = '$STATE_CHUNKS'
f[#f + 1] = sn
f[#f + 1] = '$LOG_CHUNKS'
f[#f + 1] = ln
for i = 13, #ARGV do f[#f + 1] = ARGV[i] end
redis.call('HSET', T, unpack(f))
if sn < old_sn then
  local gone = {}
  for i = sn, old_sn - 1 do gone[#gone + 1] = '$STATE' .. i end
  redis.call('HDEL', T, unpack(gone))
end
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
redis.call('SET', KEYS[5], id, 'PX', ttl)
if ARGV[10] ~= '' then redis.call('SET', KEYS[6], id .. '|' .. ARGV[10], 'PX', ARGV[11]) end
local phase, was = string.match(ARGV[12], '(%d+):(%d+)')
phase = 6 + tonumber(phase)
redis.call('ZADD', KEYS[phase], now + ttl, id)
if 6 + tonumber(was) ~= phase then
  for i = 7, #KEYS do
    if i ~= phase then redis.call('ZREM', KEYS[i], id) end
  end
end
return {1, redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', '(' .. ARGV[2])}
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


# A shard's census (the table service's gauges, every 5 s): KEYS[1] the shard's outbox
# pending index, KEYS[2..] its phase indexes; prunes the expired entries of each phase index
# (score = the table's expiry, ARGV[1] = now) and returns each phase's count, then the
# pending index's size and its oldest score (-1 when empty). One call per shard instead of
# eight commands: the sampling is a short burst on the table service's event loop.
_CENSUS = """
local counts = {}
for i = 2, #KEYS do
  redis.call('ZREMRANGEBYSCORE', KEYS[i], '-inf', ARGV[1])
  counts[#counts + 1] = redis.call('ZCARD', KEYS[i])
end
counts[#counts + 1] = redis.call('ZCARD', KEYS[1])
local first = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
counts[#counts + 1] = first[2] and math.floor(tonumber(first[2])) or -1
return counts
"""


#: Per shard, the keys of its indexes a commit writes: the deadlines, the pending outboxes,
#: then one phase index per phase (made once: every commit needs them).
_SHARD_KEYS: Final = tuple(
    (deadlines_key(shard), pending_key(shard), *(phase_key(shard, p) for p in PHASES))
    for shard in range(SHARDS)
)


#: The commit script's number of each phase's index (1-based, in :data:`PHASES`' order).
_PHASE_INDEX: Final = {phase: PHASES.index(phase.name.lower()) + 1 for phase in Phase}


def _phase_index(state: TableState) -> int:
    """The commit script's number of the phase index ``state`` belongs to (1-based)."""
    return _PHASE_INDEX[state.phase]


class Census(NamedTuple):
    """Cluster-wide counts read from the shards' indexes in one round trip."""

    #: Live tables per phase (expired ones pruned from the indexes).
    tables_by_phase: dict[str, int]
    #: Tables whose outbox holds unpublished events.
    outbox_tables: int
    #: How long (ms) the oldest unpublished outbox has waited (0 when none waits).
    outbox_oldest_ms: int


class Client(NamedTuple):
    """Who sent a create or a join, as the gateway saw it: the address budgets count by
    (IPv4, or an IPv6 /64) and the connection (gateway and address with port)."""

    address: str
    connection: str


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
    #: ``encode_state(state)``: the state as stored (encoded once with the event's copy).
    encoded: bytes
    changes: RecordChanges = field(default_factory=RecordChanges)
    create_request: tuple[str, str] | None = None  # (request hash, fingerprint)
    #: False for a change of a seat's presence only (its version is no conflict, see
    #: ``TableRecord.action_version``).
    acts: bool = True

    def record(self) -> TableRecord:
        """The table's record once this commit is written: exactly what
        :meth:`TableStore.load` reads back then."""
        before, state, changes = self.before, self.state, self.changes
        seats = list(before.seats) if before is not None else [SeatRecord()] * SEATS
        for seat, change in changes.seats.items():
            seats[seat] = change.over(seats[seat])
        if changes.joins is not None:
            joins = changes.joins
        else:
            joins = before.joins if before is not None else ()
        return TableRecord(
            table_id=state.table_id,
            version=state.version,
            state=state,
            last_time_ms=self.now_ms,
            code=self.code,
            seats=tuple(seats),
            joins=joins,
            turn_number=state.turn_number,
            deadline_kind=deadline_kind(state),
            action_version=self.action_version(),
        )

    @property
    def code(self) -> str:
        """The table's invitation code after this commit."""
        return self.changes.code or (self.before.code if self.before is not None else "")

    def action_version(self) -> int:
        """The last version that changed more than a seat's presence, after this commit."""
        if self.acts or self.before is None:
            return self.state.version
        return self.before.action_version


class TableStore:
    """Reads and atomically writes tables in Redis (``redis.asyncio``, bytes responses)."""

    def __init__(self, redis: Redis) -> None:
        self.redis: Any = redis  # bytes responses; redis-py's stubs type them as bytes | str
        self._commit = redis.register_script(_COMMIT)
        self._published = redis.register_script(_PUBLISHED)
        self._census = redis.register_script(_CENSUS)

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

        Returns the outbox's events from before this commit still waiting to be published
        (in version order; usually none: this commit's own event, ``commit.event``, follows
        them), or ``None`` when the version moved on (nothing was written).
        """
        state, before, changes = commit.state, commit.before, commit.changes
        table = table_key(state.table_id)
        deadlines, pending, *phases = _SHARD_KEYS[shard_of(state.table_id)]
        keys = [
            table,
            outbox_key(state.table_id),
            deadlines,
            pending,
            code_key(commit.code),
            create_key(commit.create_request[0]) if commit.create_request else table,
            *phases,
        ]
        args: list[Any] = [
            f"{before.version}:{before.last_time_ms}" if before is not None else 0,
            state.version,
            commit.encoded,
            commit.log_entry,
            commit.event,
            state.deadline_ms,
            commit.ttl_ms,
            state.table_id,
            commit.now_ms,
            commit.create_request[1] if commit.create_request else "",
            CREATE_TTL_MS,
            f"{_phase_index(state)}:{_phase_index(before.state) if before is not None else 0}",
        ]
        for name, value in (
            *changes.fields(),
            *clock_fields(
                state.turn_number,
                deadline_kind(state),
                commit.now_ms,
                commit.action_version(),
            ),
        ):
            args += [name, value]
        result = await call_script(self.redis, self._commit, keys, args)
        if int(result[0]) != 1:
            return None
        return list(result[1])

    async def mark_published(self, versions: Mapping[str, int]) -> None:
        """Drop every outbox event up to its table's version in ``versions`` (acknowledged by
        NATS), for any number of tables in one round trip (a script call per shard)."""
        calls: list[ScriptCall] = []
        for shard, tables in shards_of(versions).items():
            args: list[Any] = []
            for table_id in tables:
                args += [versions[table_id], table_id]
            calls.append((self._published, [pending_key(shard), *map(outbox_key, tables)], args))
        if calls:
            await call_scripts(self.redis, calls)

    async def outbox(self, table_id: str) -> list[bytes]:
        """The table's unpublished events, in version order."""
        return list(await self.redis.zrange(outbox_key(table_id), 0, -1))

    async def pending_tables(self, older_than_ms: int, limit: int = 500) -> list[str]:
        """Tables whose outbox filled before ``older_than_ms`` (left behind by a crash), at most
        ``limit`` per shard."""
        pages = await execute_many(
            self.redis,
            [
                ("ZRANGEBYSCORE", pending_key(shard), "-inf", older_than_ms, "LIMIT", 0, limit)
                for shard in range(SHARDS)
            ],
        )
        return [table_id.decode() for page in pages for table_id in page]

    async def outbox_backlog(self, now_ms: int) -> tuple[int, int]:
        """Cluster-wide: how many tables hold unpublished events, and how long (ms) the
        oldest has waited (0 when none waits), from the shards' pending indexes."""
        census = await self.census(now_ms)
        return census.outbox_tables, census.outbox_oldest_ms

    async def forget_pending(self, table_id: str) -> None:
        """Remove a table from the pending index (its keys expired)."""
        await self.redis.zrem(pending_key(shard_of(table_id)), table_id)

    async def read_log(self, table_id: str) -> bytes:
        """The table's command log."""
        key = table_key(table_id)
        chunks = int(await self.redis.hget(key, Field.LOG_CHUNKS) or 0)
        if not chunks:
            return b""
        return b"".join(await self.redis.hmget(key, [Field.log_chunk(i) for i in range(chunks)]))

    async def table_of_code(self, code: str) -> str | None:
        """The table id of an invitation code (``None``: no live table has it)."""
        table_id = await self.redis.get(code_key(code))
        return None if table_id is None else str(table_id.decode())

    async def tables_by_phase(self, now_ms: int) -> dict[str, int]:
        """Live tables per phase, cluster-wide (expired ones are pruned from the indexes)."""
        return (await self.census(now_ms)).tables_by_phase

    async def census(self, now_ms: int) -> Census:
        """Live tables per phase and the outbox backlog, cluster-wide: one script call per
        shard, all in one round trip (expired tables are pruned from the phase indexes)."""
        calls: list[ScriptCall] = [
            (
                self._census,
                [pending_key(shard), *(phase_key(shard, phase) for phase in PHASES)],
                [now_ms],
            )
            for shard in range(SHARDS)
        ]
        counts = dict.fromkeys(PHASES, 0)
        tables, oldest = 0, None
        for result in await call_scripts(self.redis, calls):
            for phase, count in zip(PHASES, result, strict=False):
                counts[phase] += int(count)
            tables += int(result[len(PHASES)])
            first = int(result[len(PHASES) + 1])
            if first >= 0 and (oldest is None or first < oldest):
                oldest = first
        return Census(counts, tables, 0 if oldest is None else max(now_ms - oldest, 0))

    async def memory_usage(self, table_id: str) -> int:
        """Bytes Redis uses for the table's own keys and its index entries (``MEMORY USAGE``)."""
        total = 0
        for key in (table_key(table_id), outbox_key(table_id)):
            total += int(await self.redis.memory_usage(key, samples=0) or 0)
        loaded = await self.load(table_id)
        if loaded is not None and loaded.code:
            total += int(await self.redis.memory_usage(code_key(loaded.code), samples=0) or 0)
        return total
