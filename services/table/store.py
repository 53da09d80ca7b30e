# ruff: noqa: E501  (the key table in the docstring has long rows)
"""Tables in Redis: one atomic compare-and-set per accepted command.

Keys (every key of a table carries the hash tag ``{<table_id>}``):

| key | type | holds |
|---|---|---|
| ``dominos:{T}:table`` | hash | the whole table: ``v`` version, ``s0``.. the state (engine codec) and ``l0``.. the command log (``command_log``), each cut in 64-byte chunks (``sn``/``ln`` chunks); ``tn`` turn number, ``dk`` deadline kind, ``lt`` time of the last command, ``code``, per seat ``n<s>`` token nonce, ``h<s>`` SHA-256 of the token and ``r<s>`` its last request ids, ``rj`` the last join request ids |
| ``dominos:{T}:outbox`` | sorted set | events committed but not yet acknowledged by NATS, scored by version |
| ``dominos:deadlines`` | sorted set | table id scored by the running clock's deadline (ms), for the timer service |
| ``dominos:outbox:pending`` | sorted set | tables with a non-empty outbox, scored by when it filled, for the relay |
| ``dominos:code:<CODE>`` | string | the table id of an invitation code |
| ``dominos:create:<rid>`` | string | ``<table id>|<fingerprint>`` of a create request id (10 minutes) |
| ``dominos:joinfail:<address>`` | string | failed join attempts of a client address in the current minute (D6) |
| ``dominos:joinfail:c:<connection>`` | string | failed join attempts of one client connection in the current minute |
| ``dominos:phase:<phase>`` | sorted set | live tables in each phase, scored by expiry (the ``dominos_tables`` gauge) |

Every value of the table hash is at most 64 bytes, so Redis keeps the hash in its compact
listpack encoding (``hash-max-listpack-value`` 64, the default): a live table costs about
1.3 KB in all. ``commit`` runs one Lua script that checks the version, writes the state,
appends to the log, adds the event to the outbox, updates the deadline index and refreshes
every expiry (D5): all or nothing. The global keys (deadlines, pending, codes) live outside
the table's hash slot, so this layout needs a single Redis primary (with replicas or
Sentinel), not Redis Cluster.
"""

from __future__ import annotations

import struct
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, NamedTuple

from redis.asyncio import Redis

from services.table.rules import TableState, decode_state

PREFIX: Final = "dominos"
DEADLINES_KEY: Final = f"{PREFIX}:deadlines"
PENDING_KEY: Final = f"{PREFIX}:outbox:pending"
CREATE_TTL_MS: Final = 10 * 60 * 1000
#: Table phases as the phase indexes name them.
PHASES: Final = ("waiting", "playing", "round_over", "finished", "closed")
#: Request ids remembered per seat, and for joins per table (3 keeps each field under the
#: 64 bytes of Redis's compact hash encoding). Clients retry their last command, not older.
SEAT_REQUESTS_KEPT: Final = 3
JOIN_REQUESTS_KEPT: Final = 3

#: The state is cut in chunks of 64 bytes; this many are read with the table (768 bytes).
MAX_STATE_CHUNKS: Final = 12
_LOAD_FIELDS: Final = (
    "v", "sn", "tn", "dk", "lt", "code", "rj",
    *(f"{k}{s}" for s in range(4) for k in ("n", "h", "r")),
    *(f"s{i}" for i in range(MAX_STATE_CHUNKS)),
)  # fmt: skip

_REQUEST: Final = struct.Struct(">8s8sI")  # request-id hash, fingerprint, version
_JOIN_REQUEST: Final = struct.Struct(">8s8sIB")  # ... and the seat taken

_COMMIT = """
local T = KEYS[1]
local cur = redis.call('HGET', T, 'v')
if ARGV[1] == '0' then
  if cur then return {0, tonumber(cur)} end
elseif cur ~= ARGV[1] then
  return {0, cur and tonumber(cur) or -1}
end
local CH = 64
local state, entry = ARGV[3], ARGV[4]
local old_sn = tonumber(redis.call('HGET', T, 'sn') or '0')
local sn = 0
for i = 1, #state, CH do
  redis.call('HSET', T, 's' .. sn, string.sub(state, i, i + CH - 1))
  sn = sn + 1
end
for i = sn, old_sn - 1 do redis.call('HDEL', T, 's' .. i) end
local ln = tonumber(redis.call('HGET', T, 'ln') or '0')
local pos = 1
if ln > 0 then
  local last = redis.call('HGET', T, 'l' .. (ln - 1))
  local room = CH - #last
  if room > 0 then
    redis.call('HSET', T, 'l' .. (ln - 1), last .. string.sub(entry, 1, room))
    pos = room + 1
  end
end
while pos <= #entry do
  redis.call('HSET', T, 'l' .. ln, string.sub(entry, pos, pos + CH - 1))
  ln = ln + 1
  pos = pos + CH
end
local fields = {'v', ARGV[2], 'sn', sn, 'ln', ln}
local n = tonumber(ARGV[10])
for i = 1, 2 * n do fields[#fields + 1] = ARGV[10 + i] end
redis.call('HSET', T, unpack(fields))
local d = tonumber(ARGV[11 + 2 * n])
for i = 1, d do redis.call('HDEL', T, ARGV[11 + 2 * n + i]) end
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[5])
redis.call('ZADD', KEYS[4], 'NX', ARGV[9], ARGV[8])
if ARGV[6] == '0' then
  redis.call('ZREM', KEYS[3], ARGV[8])
else
  redis.call('ZADD', KEYS[3], ARGV[6], ARGV[8])
end
local ttl = tonumber(ARGV[7])
redis.call('PEXPIRE', T, ttl)
redis.call('PEXPIRE', KEYS[2], ttl)
if KEYS[5] ~= '' then redis.call('SET', KEYS[5], ARGV[8], 'PX', ttl) end
if KEYS[6] ~= '' then
  local made = ARGV[8] .. '|' .. ARGV[12 + 2 * n + d]
  redis.call('SET', KEYS[6], made, 'PX', ARGV[13 + 2 * n + d])
end
for i = 7, #KEYS do
  if KEYS[i] == KEYS[6 + tonumber(ARGV[14 + 2 * n + d])] then
    redis.call('ZADD', KEYS[i], tonumber(ARGV[9]) + ttl, ARGV[8])
  else
    redis.call('ZREM', KEYS[i], ARGV[8])
  end
end
return {1, redis.call('ZRANGE', KEYS[2], 0, -1)}
"""

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


def table_key(table_id: str) -> str:
    """The hash of a table."""
    return f"{PREFIX}:{{{table_id}}}:table"


def outbox_key(table_id: str) -> str:
    """The outbox of a table."""
    return f"{PREFIX}:{{{table_id}}}:outbox"


def phase_key(phase: str) -> str:
    """The index of the live tables in a phase (member table id, score its expiry)."""
    return f"{PREFIX}:phase:{phase}"


def code_key(code: str) -> str:
    """The table id of an invitation code."""
    return f"{PREFIX}:code:{code}"


def create_key(request_hash: str) -> str:
    """The table created by a create request id."""
    return f"{PREFIX}:create:{request_hash}"


@dataclass(frozen=True, slots=True)
class RequestRecord:
    """A request id the table remembers: its hash, its payload's fingerprint, the version
    it produced and (for joins) the seat it took."""

    request_hash: bytes
    fingerprint: bytes
    version: int
    seat: int = -1


def pack_requests(records: list[RequestRecord], joins: bool = False) -> bytes:
    """The stored form of a list of request records."""
    if joins:
        return b"".join(
            _JOIN_REQUEST.pack(r.request_hash, r.fingerprint, r.version, r.seat) for r in records
        )
    return b"".join(_REQUEST.pack(r.request_hash, r.fingerprint, r.version) for r in records)


def unpack_requests(data: bytes | None, joins: bool = False) -> list[RequestRecord]:
    """The request records of a stored field (oldest first)."""
    if not data:
        return []
    if joins:
        return [RequestRecord(*fields) for fields in _JOIN_REQUEST.iter_unpack(data)]
    return [RequestRecord(*fields) for fields in _REQUEST.iter_unpack(data)]


@dataclass(frozen=True, slots=True)
class LoadedTable:
    """A table as read from Redis: its state and the service's bookkeeping fields."""

    table_id: str
    version: int
    state: TableState
    fields: dict[bytes, bytes]

    def field(self, name: str) -> bytes | None:
        """A raw bookkeeping field (``None`` when absent)."""
        return self.fields.get(name.encode())

    @property
    def code(self) -> str:
        """The table's invitation code."""
        return (self.field("code") or b"").decode()


@dataclass(frozen=True, slots=True)
class Commit:
    """Everything one accepted command writes, atomically."""

    table_id: str
    expected_version: int  # 0: the table must not exist yet
    state: bytes
    version: int
    log_entry: bytes
    event: bytes
    deadline_ms: int
    ttl_ms: int
    now_ms: int
    set_fields: tuple[tuple[str, bytes | str | int], ...] = ()
    delete_fields: tuple[str, ...] = ()
    code: str = ""
    create_request: tuple[str, str] | None = None  # (request hash, fingerprint)
    phase: str = "waiting"


class TableStore:
    """Reads and atomically writes tables in Redis (``redis.asyncio``, bytes responses)."""

    def __init__(self, redis: Redis) -> None:
        self.redis: Any = redis  # bytes responses; redis-py's stubs type them as bytes | str
        self._commit = redis.register_script(_COMMIT)
        self._published = redis.register_script(_PUBLISHED)
        self._join_lookup = redis.register_script(_JOIN_LOOKUP)

    async def load(self, table_id: str) -> LoadedTable | None:
        """The table, or ``None`` when it does not exist (never created, or expired)."""
        values = await self.redis.hmget(table_key(table_id), _LOAD_FIELDS)
        raw = {
            name.encode(): value
            for name, value in zip(_LOAD_FIELDS, values, strict=True)
            if value is not None
        }
        if b"v" not in raw:
            return None
        state = b"".join(raw.get(f"s{i}".encode(), b"") for i in range(int(raw[b"sn"])))
        return LoadedTable(table_id, int(raw[b"v"]), decode_state(state), raw)

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
        """Write ``commit`` if the table is still at ``expected_version``.

        Returns the outbox after the write (every unpublished event, in version order), or
        ``None`` when the version moved on (nothing was written).
        """
        keys = [
            table_key(commit.table_id),
            outbox_key(commit.table_id),
            DEADLINES_KEY,
            PENDING_KEY,
            code_key(commit.code) if commit.code else "",
            create_key(commit.create_request[0]) if commit.create_request else "",
            *(phase_key(p) for p in PHASES),
        ]
        args: list[Any] = [
            commit.expected_version,
            commit.version,
            commit.state,
            commit.log_entry,
            commit.event,
            commit.deadline_ms,
            commit.ttl_ms,
            commit.table_id,
            commit.now_ms,
            len(commit.set_fields),
        ]
        for name, value in commit.set_fields:
            args += [name, value]
        args.append(len(commit.delete_fields))
        args += list(commit.delete_fields)
        args += [commit.create_request[1] if commit.create_request else "", CREATE_TTL_MS]
        args.append(PHASES.index(commit.phase) + 1)
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
        chunks = int(await self.redis.hget(key, "ln") or 0)
        if not chunks:
            return b""
        return b"".join(await self.redis.hmget(key, [f"l{i}" for i in range(chunks)]))

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
                f"{PREFIX}:joinfail:c:{client.connection}",
                f"{PREFIX}:joinfail:{client.address}",
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
