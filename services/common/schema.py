# ruff: noqa: E501  (the key table in the docstring has long rows)
"""The Redis schema of the cluster, in one place: every key, every hash field, and the typed
records stored in them. No other module spells a key or a field name; the services' Lua
scripts take their field names from :func:`lua` and their keys as arguments.

**Shards.** Every table belongs to one of :data:`SHARDS` shards, :func:`shard_of` its id.
Every key of a table and every index entry about it live under the shard's hash tag
``{sNN}``, so each atomic step (a commit, a claim, a lease) touches one hash slot and runs
unchanged on a single Redis or on Redis Cluster. An invitation code and a create request id
are drawn or matched to their table's shard (:func:`shard_of` of the code, of the request id
hash), so that the commit that writes them is still one slot. Budgets of a client address
live under the address's own tag.

| key | type | holds | written by |
|---|---|---|---|
| ``dominos:{S}:table:<T>`` | hash | one table (:class:`TableRecord`, fields :class:`Field`) | table |
| ``dominos:{S}:outbox:<T>`` | sorted set | events committed, not yet acknowledged by NATS, scored by version | table |
| ``dominos:{S}:limit:<T>:<name>`` | string | a table's budget counters (lobby changes, connections per seat) | table |
| ``dominos:{S}:timerlease:<T>`` | string | the timer's claim on the running clock (value: its turn number) | timer |
| ``dominos:{S}:leases:<T>`` | hash | presence leases, seat -> holder (``<gateway>:<stream>``) | gateway |
| ``dominos:{S}:deadlines`` | sorted set | the shard's tables scored by their running clock's deadline (ms) | table |
| ``dominos:{S}:pending`` | sorted set | the shard's tables with a non-empty outbox, scored by when it filled | table |
| ``dominos:{S}:phase:<phase>`` | sorted set | the shard's live tables per phase, scored by expiry | table |
| ``dominos:{S}:presence`` | sorted set | ``<T>:<seat>`` scored by the lease's expiry (Redis clock, ms) | gateway |
| ``dominos:{S}:code:<CODE>`` | string | the table id of an invitation code | table |
| ``dominos:{S}:create:<rid>`` | string | ``<table id>|<fingerprint>`` of a create request id (10 minutes) | table |
| ``dominos:joinfail:{<address>}`` | string | failed joins of a client address this minute (D6) | table |
| ``dominos:joinfail:{<address>}:c:<connection>`` | string | failed joins of one client connection this minute | table |
| ``dominos:limit:<name>:{<subject>}:<window>`` | string | budgets that are not a table's (creates per address, cluster-wide) | table |
| ``dominos:lobbies:{<address>}`` | sorted set | open lobbies created from an address, scored by expiry | table |
| ``dominos:timers`` | sorted set | live timer replicas scored by their heartbeat's expiry (they divide the shards) | timer |

``S`` is ``s00`` .. ``s63``. Every value of the table hash is at most 64 bytes (the state and
the log are cut in chunks), so Redis keeps it in its compact listpack encoding: a live table
costs about 1.3 KB.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from string import Template
from typing import Any, Final, TypeVar

from services.rules import TableState, decode_state

__all__ = [
    "JOIN_REQUESTS_KEPT",
    "LOAD_FIELDS",
    "MAX_STATE_CHUNKS",
    "PHASES",
    "PREFIX",
    "SEATS",
    "SEAT_REQUESTS_KEPT",
    "SHARDS",
    "TIMERS_KEY",
    "Field",
    "Pattern",
    "RecordChanges",
    "RequestRecord",
    "SeatChange",
    "SeatRecord",
    "TableRecord",
    "clock_fields",
    "clock_of",
    "code_key",
    "connection_failures_key",
    "create_key",
    "deadlines_key",
    "digest_of",
    "join_failures_key",
    "limit_key",
    "lobbies_key",
    "lua",
    "outbox_key",
    "pending_key",
    "phase_key",
    "presence_key",
    "presence_leases_key",
    "presence_member",
    "shard_of",
    "shards_of",
    "table_key",
    "table_limit_key",
    "timer_lease_key",
]

_Item = TypeVar("_Item")

PREFIX: Final = "dominos"
SEATS: Final = 4
#: Table phases as the phase indexes name them.
PHASES: Final = ("waiting", "playing", "round_over", "finished", "closed")
#: Request ids remembered per seat, and for joins per table (3 keeps each field under the
#: 64 bytes of Redis's compact hash encoding). Clients retry their last command, not older.
SEAT_REQUESTS_KEPT: Final = 3
JOIN_REQUESTS_KEPT: Final = 3
#: The state is cut in chunks of 64 bytes; this many are read with the table (768 bytes).
MAX_STATE_CHUNKS: Final = 12

# -- keys ------------------------------------------------------------------------------------

#: How many shards the tables and their indexes are divided into (fixed: a table's keys are
#: named by its shard, so changing it is a data migration).
SHARDS: Final = 64
#: Every timer replica's heartbeat (the replicas divide the shards between them).
TIMERS_KEY: Final = f"{PREFIX}:timers"


def shard_of(name: str | bytes) -> int:
    """The shard of a table id, an invitation code or a create request id's hash."""
    data = name.encode() if isinstance(name, str) else name
    return zlib.crc32(data) % SHARDS


def _itself(item: Any) -> Any:
    return item


def shards_of(
    items: Iterable[_Item], table_of: Callable[[_Item], str] = _itself
) -> dict[int, list[_Item]]:
    """``items`` grouped by the shard of their table (``table_of(item)``; by default the
    items are table ids), in their order within each shard."""
    groups: dict[int, list[_Item]] = {}
    for item in items:
        groups.setdefault(shard_of(table_of(item)), []).append(item)
    return groups


def _tag(shard: int | str) -> str:
    """The hash tag of a shard (``*`` for a glob over every shard)."""
    return "{*}" if shard == "*" else f"{{s{shard:02d}}}"


def _table(kind: str, table_id: str) -> str:
    shard: int | str = "*" if table_id == "*" else shard_of(table_id)
    return f"{PREFIX}:{_tag(shard)}:{kind}:{table_id}"


def table_key(table_id: str) -> str:
    """The hash of a table."""
    return _table("table", table_id)


def outbox_key(table_id: str) -> str:
    """The outbox of a table."""
    return _table("outbox", table_id)


def table_limit_key(table_id: str, name: str) -> str:
    """The counter of one of a table's budgets (in the table's hash slot)."""
    return f"{_table('limit', table_id)}:{name}"


def timer_lease_key(table_id: str) -> str:
    """The claim lease of a table's running clock."""
    return _table("timerlease", table_id)


def presence_leases_key(table_id: str) -> str:
    """The gateways' presence leases on a table's seats (a hash: seat -> holder)."""
    return _table("leases", table_id)


def presence_member(table_id: str, seat: int) -> str:
    """A lease's member of its shard's presence index."""
    return f"{table_id}:{seat}"


def deadlines_key(shard: int | str) -> str:
    """A shard's deadline index (member table id, score its running clock's deadline)."""
    return f"{PREFIX}:{_tag(shard)}:deadlines"


def pending_key(shard: int | str) -> str:
    """A shard's tables with unpublished events (score: when their outbox filled)."""
    return f"{PREFIX}:{_tag(shard)}:pending"


def phase_key(shard: int | str, phase: str) -> str:
    """A shard's index of the live tables in a phase (member table id, score its expiry)."""
    return f"{PREFIX}:{_tag(shard)}:phase:{phase}"


def presence_key(shard: int | str) -> str:
    """A shard's index of presence leases (member ``<T>:<seat>``, score its expiry)."""
    return f"{PREFIX}:{_tag(shard)}:presence"


def code_key(code: str) -> str:
    """The table id of an invitation code (in the code's shard, which is its table's)."""
    shard: int | str = "*" if code == "*" else shard_of(code)
    return f"{PREFIX}:{_tag(shard)}:code:{code}"


def create_key(request_hash: str) -> str:
    """The table created by a create request id (in its shard, which is its table's)."""
    shard: int | str = "*" if request_hash == "*" else shard_of(request_hash)
    return f"{PREFIX}:{_tag(shard)}:create:{request_hash}"


def join_failures_key(address: str) -> str:
    """Failed joins of a client address in the current minute."""
    return f"{PREFIX}:joinfail:{{{address}}}"


def connection_failures_key(address: str, connection: str) -> str:
    """Failed joins of one client connection in the current minute (in its address's slot,
    so that both budgets of a join are checked in one step)."""
    return f"{PREFIX}:joinfail:{{{address}}}:c:{connection}"


def limit_key(name: str, subject: str, window: str = "") -> str:
    """The counter of a budget that is not a table's (``subject``: e.g. a client address,
    or ``cluster``; ``window``: when a budget has several, e.g. ``m`` and ``h``)."""
    key = f"{PREFIX}:limit:{name}:{{{subject}}}"
    return f"{key}:{window}" if window else key


def lobbies_key(address: str) -> str:
    """The open lobbies created from a client address."""
    return f"{PREFIX}:lobbies:{{{address}}}"


class Pattern:
    """Each kind of key as a glob (the ACL rules of ``cluster_auth.redis``)."""

    TABLE: Final = table_key("*")
    OUTBOX: Final = outbox_key("*")
    TABLE_LIMITS: Final = table_limit_key("*", "*")
    TIMER_LEASE: Final = timer_lease_key("*")
    LEASES: Final = presence_leases_key("*")
    DEADLINES: Final = deadlines_key("*")
    PENDING: Final = pending_key("*")
    PHASES: Final = phase_key("*", "*")
    PRESENCE: Final = presence_key("*")
    CODES: Final = code_key("*")
    CREATES: Final = create_key("*")
    JOIN_FAILURES: Final = f"{PREFIX}:joinfail:*"
    LIMITS: Final = f"{PREFIX}:limit:*"
    LOBBIES: Final = f"{PREFIX}:lobbies:*"
    TIMERS: Final = TIMERS_KEY


# -- the table hash --------------------------------------------------------------------------


class Field:
    """The fields of a table's hash."""

    VERSION: Final = "v"
    STATE_CHUNKS: Final = "sn"  # how many state chunks
    LOG_CHUNKS: Final = "ln"  # how many log chunks
    TURN: Final = "tn"  # the running clock's turn number (the timer's claim checks it)
    DEADLINE_KIND: Final = "dk"  # the running clock's kind (events.proto DeadlineKind)
    LAST_TIME: Final = "lt"  # ms of the last command (the next is never applied before it)
    CODE: Final = "code"
    JOINS: Final = "rj"  # the last join request records
    ACTION_VERSION: Final = "av"  # the last version that changed more than a seat's presence

    @staticmethod
    def state_chunk(index: int) -> str:
        return f"s{index}"

    @staticmethod
    def log_chunk(index: int) -> str:
        return f"l{index}"

    @staticmethod
    def nonce(seat: int) -> str:
        """The seat token's nonce."""
        return f"n{seat}"

    @staticmethod
    def digest(seat: int) -> str:
        """SHA-256 of the seat token."""
        return f"h{seat}"

    @staticmethod
    def requests(seat: int) -> str:
        """The seat's last request records."""
        return f"r{seat}"


def lua(script: str) -> str:
    """A Lua script with its ``$name`` placeholders replaced by field names: ``$VERSION``,
    ``$TURN``, ... (the constants of :class:`Field`), ``$STATE`` / ``$LOG`` (the prefixes of
    the chunk fields)."""
    names = {k: v for k, v in vars(Field).items() if k.isupper()}
    return Template(script).substitute(
        names, STATE=Field.state_chunk(0)[:-1], LOG=Field.log_chunk(0)[:-1]
    )


#: Every field :meth:`TableRecord.read` needs, in the order it asks for them.
LOAD_FIELDS: Final = (
    Field.VERSION,
    Field.ACTION_VERSION,
    Field.STATE_CHUNKS,
    Field.TURN,
    Field.DEADLINE_KIND,
    Field.LAST_TIME,
    Field.CODE,
    Field.JOINS,
    *(f(s) for s in range(SEATS) for f in (Field.nonce, Field.digest, Field.requests)),
    *(Field.state_chunk(i) for i in range(MAX_STATE_CHUNKS)),
)

_REQUEST: Final = struct.Struct(">8s8sI")  # request-id hash, fingerprint, version
_JOIN_REQUEST: Final = struct.Struct(">8s8sIB")  # ... and the seat taken


@dataclass(frozen=True, slots=True)
class RequestRecord:
    """A request id the table remembers: its hash, its payload's fingerprint, the version
    it produced and (for joins) the seat it took."""

    request_hash: bytes
    fingerprint: bytes
    version: int
    seat: int = -1


def _pack(records: Iterable[RequestRecord], joins: bool) -> bytes:
    if joins:
        return b"".join(
            _JOIN_REQUEST.pack(r.request_hash, r.fingerprint, r.version, r.seat) for r in records
        )
    return b"".join(_REQUEST.pack(r.request_hash, r.fingerprint, r.version) for r in records)


def _unpack(data: bytes | None, joins: bool) -> tuple[RequestRecord, ...]:
    if not data:
        return ()
    layout = _JOIN_REQUEST if joins else _REQUEST
    return tuple(RequestRecord(*fields) for fields in layout.iter_unpack(data))


@dataclass(frozen=True, slots=True)
class SeatRecord:
    """What the table keeps of a seat's holder: the token's nonce and digest (``None``: no
    one ever held it), and the last request ids it sent (oldest first)."""

    nonce: str = ""
    digest: bytes | None = None
    requests: tuple[RequestRecord, ...] = ()


@dataclass(frozen=True, slots=True)
class SeatChange:
    """What a commit changes of a seat's record (``None``: unchanged)."""

    nonce: str | None = None
    digest: bytes | None = None
    requests: tuple[RequestRecord, ...] | None = None

    def over(self, old: SeatRecord | None) -> SeatRecord:
        """The seat's record once this change is written over ``old`` (``None``: a new
        table's seat)."""
        old = old if old is not None else SeatRecord()
        return SeatRecord(
            nonce=old.nonce if self.nonce is None else self.nonce,
            digest=old.digest if self.digest is None else self.digest,
            requests=old.requests if self.requests is None else self.requests,
        )


@dataclass(frozen=True, slots=True)
class TableRecord:
    """A table as stored: its state and the service's bookkeeping around it."""

    table_id: str
    version: int
    state: TableState
    last_time_ms: int = 0
    code: str = ""
    seats: tuple[SeatRecord, ...] = (SeatRecord(),) * SEATS
    joins: tuple[RequestRecord, ...] = ()
    turn_number: int = 0
    deadline_kind: int = 0
    #: The last version that changed more than a seat's presence (``expected_version`` of a
    #: command is checked against it: a reconnection elsewhere is no conflict).
    action_version: int = 0

    @classmethod
    def read(cls, table_id: str, values: Iterable[bytes | None]) -> TableRecord | None:
        """The record from the values of :data:`LOAD_FIELDS` (``None``: no such table)."""
        raw = {
            name: value
            for name, value in zip(LOAD_FIELDS, values, strict=True)
            if value is not None
        }
        if Field.VERSION not in raw:
            return None
        chunks = int(raw[Field.STATE_CHUNKS])
        state = b"".join(raw.get(Field.state_chunk(i), b"") for i in range(chunks))
        return cls(
            table_id=table_id,
            version=int(raw[Field.VERSION]),
            state=decode_state(state),
            last_time_ms=int(raw.get(Field.LAST_TIME) or 0),
            code=(raw.get(Field.CODE) or b"").decode(),
            seats=tuple(
                SeatRecord(
                    nonce=(raw.get(Field.nonce(s)) or b"").decode(),
                    digest=raw.get(Field.digest(s)),
                    requests=_unpack(raw.get(Field.requests(s)), joins=False),
                )
                for s in range(SEATS)
            ),
            joins=_unpack(raw.get(Field.JOINS), joins=True),
            turn_number=int(raw.get(Field.TURN) or 0),
            deadline_kind=int(raw.get(Field.DEADLINE_KIND) or 0),
            action_version=int(raw.get(Field.ACTION_VERSION) or raw[Field.VERSION]),
        )


@dataclass(frozen=True, slots=True)
class RecordChanges:
    """The bookkeeping a commit writes besides the state: per seat its changes, the join
    records (``None``: unchanged), the invitation code (set once, at the creation)."""

    seats: Mapping[int, SeatChange] = field(default_factory=dict)
    joins: tuple[RequestRecord, ...] | None = None
    code: str = ""

    def fields(self) -> list[tuple[str, bytes | str]]:
        """The hash fields these changes set."""
        out: list[tuple[str, bytes | str]] = []
        if self.code:
            out.append((Field.CODE, self.code))
        if self.joins is not None:
            out.append((Field.JOINS, _pack(self.joins, joins=True)))
        for seat, change in sorted(self.seats.items()):
            if change.nonce is not None:
                out.append((Field.nonce(seat), change.nonce))
            if change.digest is not None:
                out.append((Field.digest(seat), change.digest))
            if change.requests is not None:
                out.append((Field.requests(seat), _pack(change.requests, joins=False)))
        return out


def clock_fields(
    turn_number: int, deadline_kind: int, last_time_ms: int, action_version: int
) -> list[tuple[str, int]]:
    """The fields of the running clock, of the last command's time and of the last version
    that changed more than presence."""
    return [
        (Field.TURN, turn_number),
        (Field.DEADLINE_KIND, deadline_kind),
        (Field.LAST_TIME, last_time_ms),
        (Field.ACTION_VERSION, action_version),
    ]


def clock_of(turn: bytes | None, kind: bytes | None) -> tuple[int, int] | None:
    """``(turn_number, kind)`` from a table's clock fields (``None``: the table expired)."""
    return None if turn is None else (int(turn), int(kind or 0))


def digest_of(record: TableRecord | None, changes: RecordChanges, seat: int) -> bytes | None:
    """The seat's token digest after ``changes`` are written over ``record``."""
    old = record.seats[seat] if record is not None else None
    change = changes.seats.get(seat)
    if change is None:
        return old.digest if old is not None else None
    return change.over(old).digest
