"""Hostile and malformed input at the gateway: every public RPC, fuzzed (short set).

A module-scoped cluster of real processes (Redis, NATS, table, timer, gateway) serves a pool
of tables in every phase (lobby, full lobby, playing, finished, closed). Hypothesis draws
requests of every public RPC with random and boundary fields (empty, huge, negative and
uint32/uint64-max numbers, unknown ``End`` values, tiles with halves above 6 or low > high,
names up to 100 KB with unicode and control characters, random/short/long request ids),
hostile credentials (no token, garbage, the right shape but wrong, another seat's, another
table's, a seat that left, oversized metadata), table ids of other tables, unknown or
malformed ones, commands for finished and closed tables, and replayed request ids with
the same or another payload.

For every case: the status code is one gateway.proto documents for that RPC (never UNKNOWN
or INTERNAL); a refusal carries a documented ``ErrorReason`` consistent with its code
(game.proto), except RESOURCE_EXHAUSTED from gRPC itself for an oversized message or
metadata; and a refusal changed nothing (every pool table's hash, outbox and deadline and
the set of tables and codes are compared before and after). An accepted command changed
exactly what the engine says: one new log entry, the command itself, one version more (or
nothing, for a repeated request id). Replies never show a seat anything ``view_for`` would
not. At the end: no process crashed and the services' memory stayed bounded.
"""

from __future__ import annotations

import hashlib
import os
import string
import uuid
from collections import Counter, deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Final

import grpc
import pytest
import redis
from dominos.v1 import game_pb2, gateway_pb2, gateway_pb2_grpc
from google.protobuf.message import Message
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from services.common.grpc_server import MAX_RECEIVE_MESSAGE_BYTES
from services.common.projection import table_view
from services.common.schema import Pattern, code_key, deadlines_key, outbox_key, shard_of, table_key
from services.common.service_errors import reason_of
from services.rules import (
    AnswerEnd,
    Create,
    Draw,
    Expire,
    Join,
    Leave,
    Pass,
    Phase,
    Play,
    ProposeEnd,
    SetPresence,
    SetTarget,
    Start,
    TableState,
    legal_moves,
    replay,
    validate_name,
)
from services.rules.events import PresenceChanged
from services.rules.tiles import HIGH, LOW, tile_index, tiles_of
from testing.cluster import FAST_ENV, ProcessCluster
from testing.waiting import wait_until

from .contract import RPC_ERRORS, check_status, undocumented_reason
from .reporting import long_enabled, report
from .tables import log_of, read_fields, state_of, version_of

EXAMPLES = int(os.environ.get("DOMINOS_CHAOS_FUZZ_EXAMPLES", "1000" if long_enabled() else "80"))
#: Turns and away turns of an hour: nothing moves unless the fuzzer moves it. A break of 0
#: lets the timer deal the next round at once after a round the fuzzer ended.
FUZZ_ENV = {
    "DOMINOS_TURN_SECONDS": "3600",
    "DOMINOS_AWAY_TURN_SECONDS": "3600",
    "DOMINOS_ROUND_BREAK_SECONDS": "0",
    "DOMINOS_JOIN_RATE_LIMIT": "100000",
    "DOMINOS_JOIN_FAILURES_PER_CONNECTION": "100000",
    "DOMINOS_PRESENCE_LEASE_SECONDS": "3",
}
RSS_LIMIT_MB = 300
#: Tables in the pool (every case compares them all before and after).
MAX_POOL = 10
#: The seat of a remembered join whose seat was freed since.
FREED = -1
KINDS = ("lobby", "full", "playing", "finished", "closed")
PRINTABLE = string.printable[:95]  # ' ' .. '~'
B64URL = string.ascii_letters + string.digits + "-_"
CODE_ALPHABET = "ABCDEFGHJKMNPQRSTVWXYZ23456789"
CODE_LENGTH = 10
OK = grpc.StatusCode.OK


# -- the pool of tables ---------------------------------------------------------------------


@dataclass
class FuzzTable:
    """A table of the pool and the credentials the fuzzer holds for it."""

    table_id: str
    code: str
    tokens: dict[int, str] = field(default_factory=dict)
    left: list[tuple[int, str]] = field(default_factory=list)
    #: Per seat, the request ids the table remembers (the last three accepted commands).
    remembered: dict[int, deque[tuple[str, bytes]]] = field(default_factory=dict)
    #: The joins it remembers: (request id, payload, seat or FREED, the token it gave).
    joins: deque[tuple[str, bytes, int, str]] = field(default_factory=lambda: deque(maxlen=3))
    #: The last accepted command per seat, to replay: (rpc, request, token).
    last: dict[int, tuple[str, Message, str]] = field(default_factory=dict)

    def remember(self, seat: int, rid: str, request: Message) -> None:
        self.remembered.setdefault(seat, deque(maxlen=3)).append((rid, payload(request)))


def payload(request: Message) -> bytes:
    """What a repeated request must match: its type and its serialised fields."""
    return (
        request.DESCRIPTOR.full_name.encode() + b":" + request.SerializeToString(deterministic=True)
    )


def fields_only(stored: bytes) -> bytes:
    """The serialised fields of a :func:`payload` (what the service fingerprints)."""
    return stored.split(b":", 1)[1]


@dataclass
class Outcome:
    """One fuzz case's answer."""

    code: grpc.StatusCode
    reason: str | None
    reply: Any
    changed: bool
    before: dict[str, Any]
    after: dict[str, Any]


class Lab:
    """The fuzzer's side: a gateway stub, Redis, the pool, the counters."""

    def __init__(self, cluster: ProcessCluster) -> None:
        self.cluster = cluster
        self.channel = grpc.insecure_channel(cluster.gateways[0].address)
        self.stub: Any = gateway_pb2_grpc.DominosServiceStub(self.channel)
        self.redis: Any = redis.Redis.from_url(cluster.redis.url_for("admin"))
        self.pool: list[FuzzTable] = []
        self.current: dict[str, FuzzTable] = {}
        self.creates: dict[str, tuple[bytes, str]] = {}
        self.cases: Counter[str] = Counter()
        self.outcomes: Counter[str] = Counter()
        self.accepted: Counter[str] = Counter()
        #: Refused cases during which an earlier stream's presence reached a table.
        self.background_presence = 0
        self.undocumented: set[str] = set()

    def close(self) -> None:
        self.channel.close()
        self.redis.close()

    # -- reading the truth ----------------------------------------------------------------

    def state(self, table: FuzzTable) -> TableState:
        state = state_of(read_fields(self.redis, table.table_id))
        assert state is not None, f"table {table.table_id} vanished"
        return state

    def kind(self, table: FuzzTable) -> str:
        state = self.state(table)
        if state.phase is Phase.WAITING:
            return "full" if "" not in state.names else "lobby"
        if state.phase in (Phase.PLAYING, Phase.ROUND_OVER):
            return "playing"
        return "finished" if state.phase is Phase.FINISHED else "closed"

    def snapshot(self) -> dict[str, Any]:
        """Everything of the pool's tables a refused request must leave as it was."""
        with self.redis.pipeline(transaction=False) as pipe:
            for table in self.pool:
                pipe.hgetall(table_key(table.table_id))
                pipe.zrange(outbox_key(table.table_id), 0, -1, withscores=True)
                pipe.zscore(deadlines_key(shard_of(table.table_id)), table.table_id)
                pipe.get(code_key(table.code))
            pipe.keys(Pattern.TABLE)
            pipe.keys(Pattern.CODES)
            results = pipe.execute()
        snap: dict[str, Any] = {"tables": sorted(results[-2]), "codes": sorted(results[-1])}
        for i, table in enumerate(self.pool):
            snap[table.table_id] = tuple(results[4 * i : 4 * i + 4])
        return snap

    def settle(self) -> None:
        """Wait until no background work is left on the pool: the timer dealt the round a
        command ended (break 0), no stream is connected, every outbox is published."""

        def quiet() -> bool:
            with self.redis.pipeline(transaction=False) as pipe:
                for table in self.pool:
                    pipe.hgetall(table_key(table.table_id))
                    pipe.zcard(outbox_key(table.table_id))
                results = pipe.execute()
            for fields, outbox in zip(results[::2], results[1::2], strict=True):
                state = state_of(fields)
                if state is None or outbox:
                    return False
                if state.phase is Phase.ROUND_OVER or any(state.connected):
                    return False
            return True

        wait_until(quiet, timeout=15, interval=0.01, message="the pool settled")

    # -- building tables (legitimate traffic, not counted) ---------------------------------

    def auth(self, token: str) -> tuple[tuple[str, str], ...]:
        return (("authorization", f"Bearer {token}"),)

    def create(self, name: str = "Host", target: int = 50) -> FuzzTable:
        reply = self.stub.CreateTable(
            gateway_pb2.CreateTableRequest(request_id=rid(), host_name=name, target=target),
            timeout=10,
        )
        table = FuzzTable(reply.table_id, reply.invitation_code, {0: reply.seat_token})
        self.add(table)
        return table

    def join(self, table: FuzzTable, name: str) -> int:
        reply = self.stub.JoinTable(
            gateway_pb2.JoinTableRequest(
                request_id=rid(), invitation_code=table.code, player_name=name
            ),
            timeout=10,
        )
        table.tokens[reply.seat] = reply.seat_token
        table.remembered.pop(reply.seat, None)
        table.last.pop(reply.seat, None)
        self.settle()
        return int(reply.seat)

    def leave(self, table: FuzzTable, seat: int) -> None:
        token = table.tokens[seat] if seat == 0 else table.tokens.pop(seat)  # host: closes
        self.stub.LeaveTable(
            gateway_pb2.LeaveTableRequest(request_id=rid(), table_id=table.table_id),
            metadata=self.auth(token),
            timeout=10,
        )
        table.left.append((seat, token))

    def start(self, table: FuzzTable) -> None:
        self.stub.StartGame(
            gateway_pb2.StartGameRequest(request_id=rid(), table_id=table.table_id),
            metadata=self.auth(table.tokens[0]),
            timeout=10,
        )

    def build(self, kind: str) -> FuzzTable:
        table = self.create()
        if kind == "closed":
            self.leave(table, 0)
            return table
        for name in ("Ana", "Bo"):
            self.join(table, name)
        self.leave(table, 2)  # a seat that left: its token must be worthless
        self.join(table, "Cy")
        if kind != "lobby":
            self.join(table, "Di")
        if kind in ("playing", "finished"):
            self.start(table)
        if kind == "finished":
            self.play_to_the_end(table)
        self.settle()
        assert self.kind(table) == kind
        return table

    def play_to_the_end(self, table: FuzzTable) -> None:
        """The turn seat plays its first legal move (or passes) until the game is over."""

        def finished() -> bool:
            state = self.state(table)
            if state.phase is Phase.FINISHED:
                return True
            if state.phase is Phase.PLAYING and state.round is not None:
                token = table.tokens[state.round.turn]
                view = self.stub.GetTableView(
                    gateway_pb2.GetTableViewRequest(table_id=table.table_id),
                    metadata=self.auth(token),
                    timeout=10,
                ).view
                if view.legal_moves:
                    move = view.legal_moves[0]
                    self.stub.PlayTile(
                        gateway_pb2.PlayTileRequest(
                            request_id=rid(), table_id=table.table_id, tile=move.tile, end=move.end
                        ),
                        metadata=self.auth(token),
                        timeout=10,
                    )
                else:
                    self.stub.Pass(
                        gateway_pb2.PassRequest(request_id=rid(), table_id=table.table_id),
                        metadata=self.auth(token),
                        timeout=10,
                    )
            return False

        wait_until(finished, timeout=60, interval=0, message="the game finished")

    def table(self, kind: str) -> FuzzTable:
        """A pool table in that phase now (a new one when the fuzzer moved them all on)."""
        current = self.current.get(kind)
        if current is not None and current in self.pool and self.kind(current) == kind:
            return current
        table = next((t for t in self.pool if self.kind(t) == kind), None) or self.build(kind)
        self.current[kind] = table
        return table

    def add(self, table: FuzzTable) -> None:
        """Put a table in the pool; the oldest tables no phase uses leave it (they are no
        longer compared: the pool is what the fuzzer targets)."""
        self.pool.append(table)
        while len(self.pool) > MAX_POOL:
            spare = next(t for t in self.pool if t not in self.current.values())
            self.pool.remove(spare)
        self.settle()  # its outbox is cleared in the background

    def seat_proved(self, table: FuzzTable, token: str) -> int | None:
        """The seat ``token`` proves at ``table`` now (the stored digest of an occupied seat)."""
        fields = read_fields(self.redis, table.table_id)
        state = state_of(fields)
        digest = hashlib.sha256(token.encode()).digest()
        for seat in range(4):
            if fields.get(f"h{seat}".encode()) == digest and state and state.names[seat]:
                return seat
        return None

    def other(self, table: FuzzTable) -> FuzzTable:
        return next(t for t in self.pool if t is not table)

    # -- one fuzz case --------------------------------------------------------------------

    def call(self, rpc: str, request: Message, metadata: tuple[tuple[str, str], ...]) -> Outcome:
        """Send one case and check what every case must satisfy."""
        md_bytes = sum(len(k) + len(v) for k, v in metadata)
        before = self.snapshot()
        reply: Any = None
        detail = ""
        try:
            if rpc == "WatchTable":
                stream = self.stub.WatchTable(request, metadata=metadata, timeout=10)
                try:
                    reply = next(stream)
                finally:
                    stream.cancel()
            else:
                reply = getattr(self.stub, rpc)(request, metadata=metadata, timeout=10)
            code, reason = OK, None
        except grpc.RpcError as error:
            code, reason = error.code(), reason_of(error)
            detail = error.details()
        self.cases[rpc] += 1
        self.outcomes[f"{rpc} {code.name} {reason or ''}".strip()] += 1
        problem = check_status(
            rpc, code, reason, request_bytes=request.ByteSize(), metadata_bytes=md_bytes
        )
        assert problem is None, f"{problem}: {detail!r} for {short(request)}"
        if request.ByteSize() > MAX_RECEIVE_MESSAGE_BYTES:
            assert code == grpc.StatusCode.RESOURCE_EXHAUSTED, (code, short(request))
        if undocumented_reason(rpc, code, reason):
            self.undocumented.add(f"{rpc}: {code.name}/{reason}")
        after = self.snapshot()
        changed = after != before
        if code != OK and changed and rpc != "WatchTable" and presence_only(before, after):
            # A seat's stream of an earlier case ended meanwhile and its presence reached the
            # table during this call: background work, not this refused request's doing (a
            # refused WatchTable gets no such allowance).
            self.background_presence += 1
            changed = False
        if code != OK:
            assert not changed, (
                f"{rpc} refused ({code.name} {reason}) but changed the tables: "
                f"{diff(before, after)} for {short(request)}"
            )
        else:
            self.accepted[rpc] += 1
        return Outcome(code, reason, reply, changed, before, after)

    def new_entries(self, outcome: Outcome, table: FuzzTable) -> list[Any]:
        """The log entries an accepted command added to ``table``."""
        old = log_of(dict(outcome.before[table.table_id][0]))
        fields = dict(outcome.after[table.table_id][0])
        new = log_of(fields)
        assert new[: len(old)] == old, "the log was rewritten"
        added = [command for command, _ in new[len(old) :]]
        assert version_of(fields) == version_of(dict(outcome.before[table.table_id][0])) + len(
            added
        ), "the version did not follow the log"
        return added


def rid() -> str:
    return uuid.uuid4().hex


def short(message: Message) -> str:
    text = str(message).replace("\n", " ")
    return text if len(text) < 300 else text[:300] + f"... ({message.ByteSize()} bytes)"


#: The fields of a state a presence change may move (S3, D3: a deadline may shorten).
_PRESENCE_FIELDS: Final = ("version", "connected", "last_action", "deadline_ms", "turn_number")


def presence_only(before: dict[str, Any], after: dict[str, Any]) -> bool:
    """Whether every difference between two snapshots is a presence change of a table: its
    state's newest action is a seat connecting or disconnecting, and nothing else of the
    state moved (its version, connection flags, deadline and clock number aside)."""
    if (before["tables"], before["codes"]) != (after["tables"], after["codes"]):
        return False
    for key in set(before) - {"tables", "codes"}:
        if before[key] == after.get(key):
            continue
        old, new = state_of(before[key][0]), state_of(after[key][0])
        if old is None or new is None or not isinstance(new.last_action, PresenceChanged):
            return False
        same = {name: getattr(old, name) for name in _PRESENCE_FIELDS}
        if new._replace(**same) != old or before[key][3] != after[key][3]:
            return False
    return True


def diff(before: dict[str, Any], after: dict[str, Any]) -> str:
    keys = [k for k in set(before) | set(after) if before.get(k) != after.get(k)]
    return ", ".join(f"{k}: {before.get(k)!r:.200} -> {after.get(k)!r:.200}" for k in keys)


# -- strategies -------------------------------------------------------------------------------

BIG = st.sampled_from([25, 64, 65, 255, 256, 257, 4096, 16_384, 65_000, 65_600, 70_000, 100_000])
TEXT = st.one_of(
    st.text(max_size=40),
    st.text(alphabet=st.characters(codec="ascii"), max_size=40),
    st.text(alphabet=st.characters(categories=("Cc", "Cf", "Zl", "Zp", "Zs", "Mn")), max_size=8),
    st.sampled_from(["", " ", "\t", "\x00", "\u202e", "\u200b", "é" * 24, "👍" * 24, "👍" * 25]),
    st.builds(lambda c, n: c * n, st.characters(exclude_categories=["Cs"]), BIG),
)
NAMES = st.one_of(TEXT, st.sampled_from(["Ana", " Bo ", "x" * 24, "x" * 25, "Zoë", "李"]))
VALID_NAMES = st.sampled_from(["Ana", " Bo ", "x" * 24, "Zoë", "李", "\uff28ost", "a b"])
VALID_TARGETS = st.sampled_from([0, 50, 100, 250, 500])


FRESH_IDS = st.sampled_from(["fresh", "fresh", "fresh", "replay_same", "replay_other"]).map(
    lambda k: (k, "")
)
LITERAL_IDS = st.one_of(
    TEXT,
    st.text(alphabet=PRINTABLE, min_size=1, max_size=64),
    st.sampled_from(["0", "a" * 64, "a" * 65, "~" * 64, "\x7f", "é", " "]),
).map(lambda s: ("literal", s))
REQUEST_IDS = st.one_of(FRESH_IDS, FRESH_IDS, LITERAL_IDS)
UINT32 = st.one_of(
    st.sampled_from([0, 1, 6, 7, 49, 50, 100, 450, 500, 501, 550, 2**31 - 1, 2**31, 2**32 - 1]),
    st.integers(0, 2**32 - 1),
)
ENDS = st.one_of(
    st.sampled_from([0, 1, 2, 3, -1, 2**31 - 1, -(2**31)]), st.integers(-(2**31), 2**31 - 1)
)
TOKENS = st.sampled_from(
    [
        "own",
        "other_seat",
        "other_table",
        "left",
        "garbage",
        "shaped",
        "none",
        "empty",
        "no_scheme",
        "lower_scheme",
        "basic",
        "huge",
    ]
)
SEATS = st.sampled_from(["turn", "host", 0, 1, 2, 3])
TABLE_IDS = st.sampled_from(["same", "same", "other_table", "unknown", "malformed"])
VERSIONS = st.sampled_from(["none", "current", "random"])


@st.composite
def credentials(draw: st.DrawFn, prefer: str = "playing", seat: str = "any") -> dict[str, Any]:
    """The table, seat, token, table id and request id of a seated request, resolved against
    the pool when the case runs. Two cases in three are well-formed (the right token of a seat,
    the table's own id, a fresh or replayed request id), mostly at a table in the ``prefer``
    phase (and mostly from the ``seat`` given: "turn", "host"), so accepted commands move the
    tables on; the rest are anything at all."""
    valid = draw(st.integers(0, 2)) > 0
    kinds = [prefer] * (12 if valid else 3) + list(KINDS)
    seats: list[str | int] = ["turn", "turn", "host", 1, 2, 3]
    if seat == "turn":
        seats = ["turn"]
    elif seat == "host":
        seats = ["host", "host", "host", 1]
    return {
        "valid": valid,
        "kind": draw(st.sampled_from(kinds)),
        "seat": draw(st.sampled_from(seats) if valid else SEATS),
        "token": "own" if valid else draw(TOKENS),
        "rid": draw(FRESH_IDS if valid else REQUEST_IDS),
        "garbage": draw(st.text(alphabet=PRINTABLE, max_size=120)),
        "shaped": draw(st.text(alphabet=B64URL, min_size=43, max_size=43)),
        "huge": draw(st.sampled_from([8_000, 9_000, 12_000, 17_000, 40_000])),
        "table_id": "same" if valid else draw(TABLE_IDS),
        "unknown_id": draw(st.text(alphabet=B64URL, min_size=22, max_size=22)),
        "malformed_id": draw(TEXT),
        "version": draw(st.sampled_from(["none", "none", "current"]) if valid else VERSIONS),
        "random_version": draw(st.integers(1, 2**64 - 1)),
    }


@dataclass
class Resolved:
    """A seated request's credentials against the current pool."""

    table: FuzzTable
    seat: int | None  # the seat the token proves at ``table`` (None: it proves none)
    token: str
    metadata: tuple[tuple[str, str], ...]
    table_id: str
    expected_version: int


def resolve(lab: Lab, spec: dict[str, Any]) -> Resolved:
    """The table, token, metadata, table id and expected version a spec names now."""
    table = lab.table(spec["kind"])
    state = lab.state(table)
    seated = sorted(table.tokens)
    choice = spec["seat"]
    if choice == "turn":
        seat = state.round.turn if state.round is not None else 0
    else:
        seat = 0 if choice == "host" else int(choice)
    if seat not in table.tokens:
        seat = seated[0] if seated else 0
    token = table.tokens.get(seat, "")
    kind = spec["token"]
    if kind == "other_seat":
        token = next((table.tokens[s] for s in seated if s != seat), token)
    elif kind == "other_table":
        other = lab.other(table)
        token = next(iter(other.tokens.values()), other.left[0][1] if other.left else "")
    elif kind == "left":
        left = table.left or next(t.left for t in lab.pool if t.left)
        token = left[-1][1]
    elif kind in ("garbage", "shaped"):
        token = spec[kind]
    elif kind == "huge":
        token = "A" * spec["huge"]
    metadata: tuple[tuple[str, str], ...] = {
        "none": (),
        "empty": (("authorization", ""),),
        "no_scheme": (("authorization", token),),
        "lower_scheme": (("authorization", f"bearer {token}"),),
        "basic": (("authorization", f"Basic {token}"),),
    }.get(kind, (("authorization", f"Bearer {token}"),))
    table_id = {
        "same": table.table_id,
        "other_table": lab.other(table).table_id,
        "unknown": spec["unknown_id"],
        "malformed": spec["malformed_id"],
    }[spec["table_id"]]
    # The table the request names, when it is one of the pool (the token may be its own).
    table = next((t for t in lab.pool if t.table_id == table_id), table)
    proves = None
    if table_id == table.table_id and kind not in ("none", "empty", "basic"):
        proves = lab.seat_proved(table, token)
    version = {"none": 0, "current": state.version, "random": spec["random_version"]}
    return Resolved(table, proves, token, metadata, table_id, version[spec["version"]])


# -- the fixture --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def lab() -> Iterator[Lab]:
    cluster = ProcessCluster.start(env={**FAST_ENV, **FUZZ_ENV})
    lab = Lab(cluster)
    try:
        for kind in KINDS:
            lab.build(kind)
        yield lab
    finally:
        lab.close()
        cluster.stop()


FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


# -- seated commands --------------------------------------------------------------------------


def state_at(lab: Lab, table: FuzzTable, version: int) -> TableState:
    """The table as it was at ``version``: its log replayed that far."""
    return replay(log_of(read_fields(lab.redis, table.table_id))[:version])


def check_reply_view(lab: Lab, table: FuzzTable, seat: int, view: game_pb2.TableView) -> None:
    """A view in a reply is exactly the seat's projection of that stored version (S6)."""
    assert view.table_id == table.table_id and view.your_seat == seat, (view.table_id, seat)
    state = state_at(lab, table, view.version)
    assert state.version == view.version, "a reply view of a version the log does not have"
    assert view == table_view(state, seat, view.server_time_ms), f"reply view != v{view.version}"


def seated_case(
    lab: Lab,
    rpc: str,
    spec: dict[str, Any],
    build: Callable[[str, str, int, Resolved], Message],
    command_of: Callable[[int, Any], Any],
) -> Outcome:
    """Run one seated command (Leave, SetTarget, Start, Play, Pass) and check its effect.

    ``build(request_id, table_id, expected_version, resolved)`` makes the request;
    ``command_of(seat, request)`` is the engine command an acceptance must log.
    """
    res = resolve(lab, spec)
    kind, literal = spec["rid"]
    metadata = res.metadata
    replay_of = res.table.last.get(res.seat) if res.seat is not None else None
    if kind in ("replay_same", "replay_other") and replay_of is not None and replay_of[0] == rpc:
        # The seat's last accepted command again: as it was, or with another payload.
        _, first, token = replay_of
        metadata = lab.auth(token)
        request: Message = type(first).FromString(first.SerializeToString())
        if kind == "replay_other":
            request.expected_version = first.expected_version + 1  # type: ignore[attr-defined]
        res.table_id = res.table.table_id
    else:
        kind = "literal" if kind == "literal" else "fresh"
        request = build(
            literal if kind == "literal" else rid(), res.table_id, res.expected_version, res
        )
    seat, table = res.seat, res.table
    request_id = request.request_id  # type: ignore[attr-defined]
    remembered = dict(table.remembered.get(seat, ())) if seat is not None else {}
    outcome = lab.call(rpc, request, metadata)
    if kind == "replay_same":
        assert outcome.code == OK and not outcome.changed, (rpc, outcome.code, outcome.reason)
    if kind == "replay_other":
        assert outcome.code == grpc.StatusCode.ALREADY_EXISTS, (rpc, outcome.code, outcome.reason)
    if outcome.code == grpc.StatusCode.ALREADY_EXISTS:
        assert request_id in remembered, "REQUEST_ID_REUSED for an id this seat never used"
        assert remembered[request_id] != payload(request)
    if outcome.code != OK:
        return outcome
    assert seat is not None, f"{rpc} accepted without a token proving a seat: {short(request)}"
    if not outcome.changed:
        earlier = remembered.get(request_id)
        assert earlier is not None, f"{rpc} accepted, changed nothing, and is not a repeat"
        assert earlier == payload(request), f"{rpc} answered as a repeat of another request"
        return outcome
    assert request_id not in remembered, "a remembered request id acted twice"
    added = lab.new_entries(outcome, table)
    expected = command_of(seat, request)
    if isinstance(expected, Start):
        assert isinstance(added[0], Start) and added[0].seat == seat, (added, expected)
    else:
        assert added[0] == expected, (added, expected)
    assert all(isinstance(c, Expire) for c in added[1:]), added  # the timer's next deal
    table.remember(seat, request_id, request)
    table.last[seat] = (rpc, request, table.tokens[seat])
    if rpc == "LeaveTable":
        # A guest's token dies with the seat; the host's closes the table and stays its own.
        table.left.append((seat, table.tokens[seat] if seat == 0 else table.tokens.pop(seat)))
        table.last.pop(seat, None)
        # The joins that took the seat are not repeated any more (REQUEST_ID_REUSED).
        table.joins = deque(
            ((r, p, FREED if s == seat else s, t) for r, p, s, t in table.joins), maxlen=3
        )
    else:
        check_reply_view(lab, table, seat, outcome.reply.view)
    lab.settle()
    return outcome


@given(spec=credentials(prefer="lobby"))
@FUZZ
def test_leave_table(lab: Lab, spec: dict[str, Any]) -> None:
    seated_case(
        lab,
        "LeaveTable",
        spec,
        lambda r, t, v, _: gateway_pb2.LeaveTableRequest(
            request_id=r, table_id=t, expected_version=v
        ),
        lambda seat, _: Leave(seat),
    )


@given(
    spec=credentials(prefer="lobby", seat="host"),
    target=st.one_of(VALID_TARGETS, VALID_TARGETS, UINT32),
)
@FUZZ
def test_set_target(lab: Lab, spec: dict[str, Any], target: int) -> None:
    seated_case(
        lab,
        "SetTarget",
        spec,
        lambda r, t, v, _: gateway_pb2.SetTargetRequest(
            request_id=r, table_id=t, target=target, expected_version=v
        ),
        lambda seat, request: SetTarget(seat, request.target),
    )


@given(spec=credentials(prefer="full", seat="host"))
@FUZZ
def test_start_game(lab: Lab, spec: dict[str, Any]) -> None:
    seated_case(
        lab,
        "StartGame",
        spec,
        lambda r, t, v, _: gateway_pb2.StartGameRequest(
            request_id=r, table_id=t, expected_version=v
        ),
        lambda seat, _: Start(seat, 0),
    )


@st.composite
def tiles(draw: st.DrawFn) -> tuple[str, int, int, int]:
    """``(how, low, high, end)``: a legal move, a tile of the hand, or any numbers at all."""
    how = draw(st.sampled_from(["legal", "legal", "legal", "hand", "random"]))
    return how, draw(UINT32), draw(UINT32), draw(ENDS)


@given(spec=credentials(prefer="playing", seat="turn"), tile=tiles(), pick=st.integers(0, 50))
@FUZZ
def test_play_tile(
    lab: Lab, spec: dict[str, Any], tile: tuple[str, int, int, int], pick: int
) -> None:
    how, low, high, end = tile

    def build(r: str, t: str, v: int, res: Resolved) -> Message:
        lo, hi, e = low, high, end
        state = lab.state(res.table)
        rnd = state.round
        if how != "random" and res.seat is not None and rnd is not None:
            moves = legal_moves(state, res.seat)
            hand = list(tiles_of(rnd.hands[res.seat]))
            if how == "legal" and moves:
                move = moves[pick % len(moves)]
                lo, hi, e = LOW[move.tile], HIGH[move.tile], move.end
            elif hand:
                tile = hand[pick % len(hand)]
                lo, hi, e = LOW[tile], HIGH[tile], 1 + pick % 2
        return gateway_pb2.PlayTileRequest(
            request_id=r,
            table_id=t,
            tile=game_pb2.Tile(low=lo, high=hi),
            end=e,  # type: ignore[arg-type]
            expected_version=v,
        )

    seated_case(
        lab,
        "PlayTile",
        spec,
        build,
        lambda seat, request: Play(
            seat, tile_index(request.tile.low, request.tile.high), request.end
        ),
    )


@given(spec=credentials(prefer="playing", seat="turn"))
@FUZZ
def test_pass(lab: Lab, spec: dict[str, Any]) -> None:
    seated_case(
        lab,
        "Pass",
        spec,
        lambda r, t, v, _: gateway_pb2.PassRequest(request_id=r, table_id=t, expected_version=v),
        lambda seat, _: Pass(seat),
    )


@given(spec=credentials(prefer="playing", seat="turn"))
@FUZZ
def test_draw_tile(lab: Lab, spec: dict[str, Any]) -> None:
    """DrawTile on the pool's classic tables (no stock): always refused (CANNOT_DRAW,
    MUST_PLAY or the seat and table checks), never a change, whatever the credentials."""
    seated_case(
        lab,
        "DrawTile",
        spec,
        lambda r, t, v, _: gateway_pb2.DrawTileRequest(
            request_id=r, table_id=t, expected_version=v
        ),
        lambda seat, _: Draw(seat),
    )


@given(spec=credentials(prefer="playing"), accept=st.booleans())
@FUZZ
def test_friendly_end(lab: Lab, spec: dict[str, Any], accept: bool) -> None:
    """ProposeFriendlyEnd and AnswerFriendlyEnd on the pool's classic tables (no friendly
    end, issue 20): always refused (FRIENDLY_END_UNAVAILABLE, NO_VOTE_OPEN or the seat and
    table checks), never a change, whatever the credentials."""
    seated_case(
        lab,
        "ProposeFriendlyEnd",
        spec,
        lambda r, t, v, _: gateway_pb2.ProposeFriendlyEndRequest(
            request_id=r, table_id=t, expected_version=v
        ),
        lambda seat, _: ProposeEnd(seat),
    )
    seated_case(
        lab,
        "AnswerFriendlyEnd",
        spec,
        lambda r, t, v, _: gateway_pb2.AnswerFriendlyEndRequest(
            request_id=r, table_id=t, accept=accept, expected_version=v
        ),
        lambda seat, request: AnswerEnd(seat, request.accept),
    )


# -- reads ---------------------------------------------------------------------------------------


@given(spec=credentials(prefer="playing"))
@FUZZ
def test_get_table_view(lab: Lab, spec: dict[str, Any]) -> None:
    res = resolve(lab, spec)
    request = gateway_pb2.GetTableViewRequest(table_id=res.table_id)
    outcome = lab.call("GetTableView", request, res.metadata)
    assert not outcome.changed, "a read changed a table"
    if outcome.code == OK:
        assert res.seat is not None, "a view without a token proving a seat"
        check_reply_view(lab, res.table, res.seat, outcome.reply.view)


@given(spec=credentials(prefer="playing"))
@FUZZ
def test_watch_table(lab: Lab, spec: dict[str, Any]) -> None:
    res = resolve(lab, spec)
    request = gateway_pb2.WatchTableRequest(table_id=res.table_id)
    outcome = lab.call("WatchTable", request, res.metadata)
    if outcome.code != OK:
        return
    assert res.seat is not None, "a stream without a token proving a seat"
    check_reply_view(lab, res.table, res.seat, outcome.reply.view)
    lab.settle()  # the stream ended: the seat is marked disconnected again
    # Opening a stream may only record the seat's presence.
    old = log_of(dict(outcome.before[res.table.table_id][0]))
    added = [c for c, _ in log_of(read_fields(lab.redis, res.table.table_id))[len(old) :]]
    assert all(isinstance(c, SetPresence) and c.seat == res.seat for c in added), added


# -- create and join -------------------------------------------------------------------------------


@given(
    rid_choice=st.one_of(FRESH_IDS, REQUEST_IDS),
    name=st.one_of(VALID_NAMES, NAMES),
    target=st.one_of(VALID_TARGETS, UINT32),
)
@FUZZ
def test_create_table(lab: Lab, rid_choice: tuple[str, str], name: str, target: int) -> None:
    kind, literal = rid_choice
    if kind == "literal":
        request_id = literal
    elif kind in ("replay_same", "replay_other") and lab.creates:
        request_id = next(iter(lab.creates))
    else:
        request_id = rid()
    request = gateway_pb2.CreateTableRequest(request_id=request_id, host_name=name, target=target)
    if kind == "replay_same" and request_id in lab.creates:
        request = gateway_pb2.CreateTableRequest.FromString(fields_only(lab.creates[request_id][0]))
    earlier = lab.creates.get(request.request_id)
    outcome = lab.call("CreateTable", request, ())
    if earlier is not None and earlier[0] == payload(request):
        assert outcome.code == OK and not outcome.changed, (outcome.code, outcome.reason)
        assert outcome.reply.table_id == earlier[1]
        return
    if earlier is not None and outcome.code in (OK, grpc.StatusCode.FAILED_PRECONDITION):
        raise AssertionError(f"a reused create request id answered {outcome.code.name}")
    if outcome.code == grpc.StatusCode.ALREADY_EXISTS:
        assert earlier is not None, "REQUEST_ID_REUSED for a create id never used"
    if outcome.code != OK:
        return
    reply = outcome.reply
    new = set(outcome.after["tables"]) - set(outcome.before["tables"])
    assert new == {table_key(reply.table_id).encode()}, new
    fields = read_fields(lab.redis, reply.table_id)
    entries = log_of(fields)
    assert len(entries) == 1 and version_of(fields) == 1
    create = entries[0][0]
    assert isinstance(create, Create)
    assert (create.table_id, create.host_name, create.target) == (
        reply.table_id,
        validate_name(name),
        target or 100,
    )
    lab.creates[request.request_id] = (payload(request), reply.table_id)
    table = FuzzTable(reply.table_id, reply.invitation_code, {0: reply.seat_token})
    check_reply_view(lab, table, 0, reply.view)
    lab.add(table)


@given(
    rid_choice=st.one_of(FRESH_IDS, REQUEST_IDS),
    name=st.one_of(VALID_NAMES, NAMES),
    code=st.one_of(
        st.tuples(st.just("lobby"), st.sampled_from(["as is", "lower", "spaced", "dashed"])),
        st.tuples(
            st.sampled_from(["lobby", *KINDS]),
            st.sampled_from(["as is", "lower", "spaced", "dashed"]),
        ),
        st.tuples(
            st.just("shaped"),
            st.text(alphabet=CODE_ALPHABET, min_size=CODE_LENGTH, max_size=CODE_LENGTH),
        ),
        st.tuples(st.just("text"), TEXT),
    ),
)
@FUZZ
def test_join_table(
    lab: Lab, rid_choice: tuple[str, str], name: str, code: tuple[str, str]
) -> None:
    where, variant = code
    table: FuzzTable | None = None
    typed = variant
    if where in KINDS:
        table = lab.table(where)
        typed = {
            "as is": table.code,
            "lower": table.code.lower(),
            "spaced": f"  {table.code[:4]} {table.code[4:]} ",
            "dashed": f"{table.code[:4]}-{table.code[4:]}",
        }[variant]
    kind, literal = rid_choice
    request = gateway_pb2.JoinTableRequest(
        request_id=literal if kind == "literal" else rid(), invitation_code=typed, player_name=name
    )
    if kind in ("replay_same", "replay_other") and table is not None and table.joins:
        _, first, _, _ = table.joins[-1]
        request = gateway_pb2.JoinTableRequest.FromString(fields_only(first))
        if kind == "replay_other":
            request.player_name = "Other" if request.player_name != "Other" else "Another"
    else:
        kind = "literal" if kind == "literal" else "fresh"
    remembered = {r: (p, s, t) for r, p, s, t in table.joins} if table is not None else {}
    outcome = lab.call("JoinTable", request, ())
    freed = request.request_id in remembered and remembered[request.request_id][1] == FREED
    if kind == "replay_same" and not freed:
        assert outcome.code == OK and not outcome.changed, (outcome.code, outcome.reason)
    if kind == "replay_other" or (kind == "replay_same" and freed):
        assert outcome.code == grpc.StatusCode.ALREADY_EXISTS, (outcome.code, outcome.reason)
    if outcome.code == grpc.StatusCode.ALREADY_EXISTS:
        assert request.request_id in remembered, "REQUEST_ID_REUSED for a join id never used"
        assert freed or remembered[request.request_id][0] != payload(request)
    if outcome.code != OK:
        return
    assert table is not None, "a join accepted with a code of no table"
    reply = outcome.reply
    assert reply.table_id == table.table_id
    if not outcome.changed:
        earlier = remembered.get(request.request_id)
        assert earlier is not None and earlier[0] == payload(request), "not a repeat"
        assert reply.seat == earlier[1]
        assert reply.seat_token == earlier[2], "a repeated join answered with another token"
        return
    added = lab.new_entries(outcome, table)
    assert added == [Join(validate_name(name))], added
    table.tokens[reply.seat] = reply.seat_token
    table.remembered.pop(reply.seat, None)
    table.last.pop(reply.seat, None)
    table.joins.append((request.request_id, payload(request), reply.seat, reply.seat_token))
    check_reply_view(lab, table, reply.seat, reply.view)
    lab.settle()


# -- defects found by the fuzzer, fixed: their regression tests -----------------------------


def rpc_status(
    call: Callable[..., Any], *args: Any, **kwargs: Any
) -> tuple[grpc.StatusCode, str | None, Any]:
    try:
        return OK, None, call(*args, **kwargs)
    except grpc.RpcError as error:
        return error.code(), reason_of(error), error.details()


def test_a_request_just_under_the_receive_limit_gets_its_contract_status(lab: Lab) -> None:
    lab.settle()
    before = lab.snapshot()
    statuses = []
    for under in (0, 10, 30, 60):
        name = "x" * 65_600
        request = gateway_pb2.CreateTableRequest(request_id=rid(), host_name=name)
        excess = request.ByteSize() - (MAX_RECEIVE_MESSAGE_BYTES - under)
        request.host_name = name[: len(name) - excess]
        assert request.ByteSize() == MAX_RECEIVE_MESSAGE_BYTES - under
        code, reason, _ = rpc_status(lab.stub.CreateTable, request, timeout=10)
        statuses.append((request.ByteSize(), code.name, reason))
    assert lab.snapshot() == before
    assert all(s[1:] == ("INVALID_ARGUMENT", "NAME_INVALID") for s in statuses), statuses


def test_a_replayed_join_never_hands_out_another_players_seat_token(lab: Lab) -> None:
    table = lab.create()
    first = gateway_pb2.JoinTableRequest(
        request_id=rid(), invitation_code=table.code, player_name="Mallory"
    )
    mallory = lab.stub.JoinTable(first, timeout=10)
    lab.stub.LeaveTable(
        gateway_pb2.LeaveTableRequest(request_id=rid(), table_id=table.table_id),
        metadata=lab.auth(mallory.seat_token),
        timeout=10,
    )
    victim = lab.join(table, "Victim")
    assert victim == mallory.seat
    before = lab.snapshot()
    code, reason, _ = rpc_status(lambda: lab.stub.JoinTable(first, timeout=10))
    # Neither the victim's token nor a second seat: the join acted once, its seat is gone.
    assert (code, reason) == (grpc.StatusCode.ALREADY_EXISTS, "REQUEST_ID_REUSED")
    assert lab.snapshot() == before


def test_a_request_id_reused_by_another_rpc_is_refused(lab: Lab) -> None:
    table = lab.build("full")
    shared = rid()
    lab.stub.StartGame(
        gateway_pb2.StartGameRequest(request_id=shared, table_id=table.table_id),
        metadata=lab.auth(table.tokens[0]),
        timeout=10,
    )
    lab.settle()
    before = lab.snapshot()
    code, reason, _ = rpc_status(
        lambda: lab.stub.Pass(
            gateway_pb2.PassRequest(request_id=shared, table_id=table.table_id),
            metadata=lab.auth(table.tokens[0]),
            timeout=10,
        )
    )
    assert lab.snapshot() == before
    assert (code, reason) == (grpc.StatusCode.ALREADY_EXISTS, "REQUEST_ID_REUSED"), (code, reason)


def test_commands_for_an_over_table_get_reasons_their_rpc_documents(lab: Lab) -> None:
    seen = []
    for kind in ("finished", "closed"):
        table = lab.table(kind)
        host = table.tokens[0]
        calls = {
            "LeaveTable": lambda t=table, h=host: lab.stub.LeaveTable(
                gateway_pb2.LeaveTableRequest(request_id=rid(), table_id=t.table_id),
                metadata=lab.auth(h),
                timeout=10,
            ),
            "SetTarget": lambda t=table, h=host: lab.stub.SetTarget(
                gateway_pb2.SetTargetRequest(request_id=rid(), table_id=t.table_id, target=150),
                metadata=lab.auth(h),
                timeout=10,
            ),
            "StartGame": lambda t=table, h=host: lab.stub.StartGame(
                gateway_pb2.StartGameRequest(request_id=rid(), table_id=t.table_id),
                metadata=lab.auth(h),
                timeout=10,
            ),
        }
        for rpc, call in calls.items():
            code, reason, _ = rpc_status(call)
            if kind == "closed":
                # The host closed the table by leaving: the host's token works nowhere since.
                assert (code, reason) == (grpc.StatusCode.PERMISSION_DENIED, "TOKEN_INVALID")
                continue
            assert code == grpc.StatusCode.FAILED_PRECONDITION, (kind, rpc, code)
            seen.append((kind, rpc, reason))
    undocumented = [
        s for s in seen if s[2] not in RPC_ERRORS[s[1]][grpc.StatusCode.FAILED_PRECONDITION]
    ]
    assert not undocumented, undocumented


def test_watching_a_finished_table_changes_nothing(lab: Lab) -> None:
    table = lab.table("finished")
    before = read_fields(lab.redis, table.table_id)
    stream = lab.stub.WatchTable(
        gateway_pb2.WatchTableRequest(table_id=table.table_id),
        metadata=lab.auth(table.tokens[1]),
        timeout=10,
    )
    views = [message.view for message in stream]  # the final view, then OK
    assert [v.phase for v in views] == [game_pb2.PHASE_FINISHED]
    lab.settle()
    after = read_fields(lab.redis, table.table_id)
    assert version_of(after) == version_of(before), "watching a finished table changed it"


# -- after the run ---------------------------------------------------------------------------------

RPCS = (
    "DrawTile",
    "ProposeFriendlyEnd",
    "AnswerFriendlyEnd",
    "CreateTable",
    "JoinTable",
    "LeaveTable",
    "SetTarget",
    "StartGame",
    "PlayTile",
    "Pass",
    "GetTableView",
    "WatchTable",
)


def test_no_process_crashed_memory_stayed_bounded_and_every_rpc_was_fuzzed(lab: Lab) -> None:
    cluster = lab.cluster
    rss = {role: round(cluster.max_rss_mb(role), 1) for role in ("gateway", "table", "timer")}
    report(
        "fuzz",
        cases_per_rpc={rpc: lab.cases[rpc] for rpc in RPCS},
        accepted_per_rpc={rpc: lab.accepted[rpc] for rpc in RPCS},
        total_cases=sum(lab.cases.values()),
        outcomes=dict(sorted(lab.outcomes.items())),
        undocumented_reasons_seen=sorted(lab.undocumented),
        background_presence_during_refusals=lab.background_presence,
        rss_mb=rss,
        crashes=len(cluster.dead()),
    )
    print("fuzz cases per RPC:", {rpc: lab.cases[rpc] for rpc in RPCS})
    assert not cluster.dead(), (cluster.dead(), cluster.logs("table"), cluster.logs("gateway"))
    assert all(lab.cases[rpc] >= EXAMPLES // 2 for rpc in RPCS), lab.cases
    assert rss["gateway"] < RSS_LIMIT_MB and rss["table"] < RSS_LIMIT_MB, rss
