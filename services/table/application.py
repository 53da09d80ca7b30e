"""The table service's use cases: authenticate, run the rules, commit atomically, publish.

:class:`TableApp` knows nothing of gRPC servers: it takes contract requests and returns
contract responses, raising :class:`~services.common.service_errors.ServiceError` for every
refusal (and then nothing changed). Every command that changes a table runs through one
loop, :meth:`TableApp._transact`: take the table record (this replica's last one of it from
:class:`~services.table.record_cache.RecordCache`, else read from Redis), decide (check the
seat token, answer a repeated request id with its first answer, apply the engine), and
compare-and-set the result in Redis; on a version conflict (another replica won the race, or
the cached record was stale) it reads the table and decides again. Only a decision over the
table as read from Redis refuses or answers without writing. After the commit the table's
outbox is published on NATS.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from typing import Any, Final, Generic, NamedTuple, TypeVar

import grpc
from dominos.v1 import game_pb2, gateway_pb2

from services.common import credentials, requests
from services.common.commands import CREATE_TABLE, JOIN_TABLE, CommandSpec, spec_of
from services.common.logging import get_logger
from services.common.projection import table_view, view_answer_bytes, view_parts
from services.common.published import is_held, published_state, seat_holders, table_event
from services.common.schema import (
    JOIN_REQUESTS_KEPT,
    SEAT_REQUESTS_KEPT,
    RecordChanges,
    RequestRecord,
    SeatChange,
    TableRecord,
    connection_failures_key,
    digest_of,
    join_failures_key,
    limit_key,
    shard_of,
    table_limit_key,
)
from services.common.service_errors import Limit, Reason, ServiceError, rate_limited
from services.rules import (
    CLASSIC,
    AnswerEnd,
    Command,
    Create,
    Draw,
    Expire,
    Join,
    Leave,
    Pass,
    Phase,
    Play,
    ProposeEnd,
    RuleError,
    SetPresence,
    SetTarget,
    Start,
    TableState,
    Timing,
    Transition,
    apply,
    create,
    encode_state_unseeded,
    replay,
)
from services.rules.options import NO_OPTIONS
from services.rules.robot_seats import robot_plays
from services.table import metrics
from services.table.command_log import decode_log, encode_entry
from services.table.fresh_views import FreshViews
from services.table.limits import Budget, Limiter, Spent
from services.table.publisher import EventPublisher, OutboxEvent
from services.table.record_cache import RecordCache
from services.table.robot_turns import RobotTurnPublisher
from services.table.store import Client, Commit, TableStore
from services.table.table_locks import TableLocks

log = get_logger(__name__)

MAX_ATTEMPTS: Final = 8

SeatedRequest = (
    gateway_pb2.LeaveTableRequest
    | gateway_pb2.SetTargetRequest
    | gateway_pb2.StartGameRequest
    | gateway_pb2.PlayTileRequest
    | gateway_pb2.PassRequest
    | gateway_pb2.DrawTileRequest
    | gateway_pb2.ProposeFriendlyEndRequest
    | gateway_pb2.AnswerFriendlyEndRequest
)
#: The moves a robot makes through ``RobotService.RobotAct``.
RobotMove = gateway_pb2.PlayTileRequest | gateway_pb2.PassRequest | gateway_pb2.DrawTileRequest
_Answer = TypeVar("_Answer")
_Written_co = TypeVar("_Written_co", covariant=True)


@dataclass(frozen=True, slots=True)
class Limits:
    """The budgets that keep one client from exhausting the cluster (D6, issue 15); 0 turns
    a budget off. Sized for real use: a café of ten tables behind one address creates, joins
    and reconnects well within them (README "Limits")."""

    #: ``CreateTable`` attempts per client address per minute, and per hour.
    creates_per_address_minute: int = 20
    creates_per_address_hour: int = 120
    #: ``CreateTable`` attempts of everyone per second (all gateways, all replicas).
    creates_per_second: int = 20
    #: Lobbies open at once that were created from one client address.
    lobbies_per_address: int = 30
    #: Failed joins (no such code) per client connection, and per address, per minute.
    join_failures_per_connection: int = 5
    join_failures_per_address: int = 12000
    #: Lobby changes (joins, leaves, target changes) of one table per minute.
    lobby_changes_per_minute: int = 30
    #: Connections (a view stream turning the seat connected) of one seat per minute.
    connections_per_seat_minute: int = 20


@dataclass(frozen=True, slots=True)
class Policy:
    """What the service decides beyond the rules: clocks (D8), lifetimes (D5), limits (D6)."""

    timing: Timing = field(default_factory=Timing)
    lobby_ttl_ms: int = 3_600_000
    finished_ttl_ms: int = 86_400_000
    limits: Limits = field(default_factory=Limits)
    token_secret: bytes = b"dev-only-insecure-token-secret"


MINUTE_MS: Final = 60_000
HOUR_MS: Final = 3_600_000
SECOND_MS: Final = 1_000
#: The seat of a remembered join whose seat was freed since (a leave before the start).
SEAT_FREED: Final = 255


class Acted(NamedTuple):
    """The table after a seat's command (or its repeat), and that seat."""

    state: TableState
    seat: int


@dataclass(frozen=True, slots=True)
class Write(Generic[_Written_co]):
    """What one pass of the command loop writes: the command, its transition, the
    bookkeeping changes, and the answer once committed."""

    command: Command
    transition: Transition
    answer: _Written_co
    changes: RecordChanges = field(default_factory=RecordChanges)


class _Committed(NamedTuple):
    """A version just written, to publish: the state, the outbox's older events still
    waiting (serialised, in version order) and its own event."""

    state: TableState
    pending: list[bytes]
    event: OutboxEvent


#: One pass of the command loop over a loaded record at a time: a :class:`Write`, or the
#: answer itself when nothing is written (a repeated request, a command that changes nothing).
Decide = Callable[[TableRecord, int], Awaitable["Write[_Answer] | _Answer"]]


@dataclass(frozen=True, slots=True)
class RequestId:
    """A request id as the table remembers it: its hash, and its payload's fingerprint."""

    request_hash: bytes
    fingerprint: bytes

    @classmethod
    def of(cls, request_id: str, request: Any) -> RequestId:
        return cls(requests.request_hash(request_id), requests.fingerprint(request))

    def earlier(self, records: tuple[RequestRecord, ...]) -> RequestRecord | None:
        """The record of this request id, if remembered; REQUEST_ID_REUSED when it was sent
        with another payload."""
        for record in records:
            if record.request_hash == self.request_hash:
                if record.fingerprint != self.fingerprint:
                    raise _request_id_reused()
                return record
        return None

    def record(self, version: int, seat: int = -1) -> RequestRecord:
        """The record of this request, which produced ``version``."""
        return RequestRecord(self.request_hash, self.fingerprint, version, seat)


def _spent(spent: Spent, message: str) -> ServiceError:
    return rate_limited(Limit(spent.budget.name), message, spent.retry_after_ms / 1000)


def _not_found() -> ServiceError:
    return ServiceError(grpc.StatusCode.NOT_FOUND, Reason.TABLE_NOT_FOUND, "no such table")


def _token_invalid() -> ServiceError:
    return ServiceError(
        grpc.StatusCode.PERMISSION_DENIED, Reason.TOKEN_INVALID, "not a seat of this table"
    )


def _request_id_reused(
    message: str = "this request_id was used for another request",
) -> ServiceError:
    return ServiceError(grpc.StatusCode.ALREADY_EXISTS, Reason.REQUEST_ID_REUSED, message)


def _not_a_robot_seat(message: str = "no robot plays this seat") -> ServiceError:
    return ServiceError(grpc.StatusCode.PERMISSION_DENIED, Reason.ROBOT_SEAT, message)


def _require_robot_seat(state: TableState, seat: int) -> None:
    """ROBOT_SEAT unless a robot plays ``seat`` of ``state`` now."""
    if not (0 <= seat < state.rules.seats and robot_plays(state, seat)):
        raise _not_a_robot_seat()


def _version_conflict(message: str) -> ServiceError:
    return ServiceError(grpc.StatusCode.ABORTED, Reason.VERSION_CONFLICT, message)


def _drawn(draw: Callable[[], str], shard: int) -> str:
    """A fresh random value of ``draw`` in ``shard`` (64 draws on average, ~1 µs each)."""
    while True:
        value = draw()
        if shard_of(value) == shard:
            return value


def _seat_freed(joins: tuple[RequestRecord, ...], seat: int) -> tuple[RequestRecord, ...]:
    """The join records with those that took ``seat`` marked :data:`SEAT_FREED`."""
    return tuple(replace(r, seat=SEAT_FREED) if r.seat == seat else r for r in joins)


class TableApp:
    """Every table command of the contract, against Redis (truth) and NATS (notifications)."""

    def __init__(
        self,
        store: TableStore,
        publisher: EventPublisher | None,
        policy: Policy,
        *,
        clock: Callable[[], float] = time.time,
        on_applied: Callable[[Command, Transition], Any] | None = None,
        robot_turns: RobotTurnPublisher | None = None,
        cache: RecordCache | None = None,
    ) -> None:
        self.store = store
        #: The last record of each table this replica wrote (issue 22): commands start from
        #: it, the commit's compare-and-set catches a stale one.
        self.cache = RecordCache() if cache is None else cache
        #: The views of the versions just committed here, for the commands' answers.
        self.fresh_views = FreshViews()
        #: Commands of one table wait for each other here (not for other tables').
        self.locks = TableLocks()
        self.publisher = publisher
        self.robot_turns = robot_turns
        self.policy = policy
        self.limiter = Limiter(store.redis)
        self.clock = clock
        self.on_applied = on_applied

    def now_ms(self) -> int:
        """The service clock, ms since the epoch."""
        return int(self.clock() * 1000)

    # -- public commands -------------------------------------------------------------------

    async def execute(self, request: Any, token: str, client: Client) -> Any:
        """Any command of the contract (:mod:`services.common.commands`): its response."""
        spec = spec_of(request)
        if spec is CREATE_TABLE:
            return await self.create_table(request, client)
        if spec is JOIN_TABLE:
            return await self.join_table(request, client)
        return await self.seated_command(request, token)

    async def create_table(
        self, request: gateway_pb2.CreateTableRequest, client: Client
    ) -> gateway_pb2.CreateTableResponse:
        """Open a table with the caller as host (seat 0) and a fresh invitation code, within
        the creation budgets of the client's address and of the cluster, and the cap on the
        address's open lobbies (issue 15). A repeat of an earlier create costs no budget."""
        rid = requests.secret_request_id(request.request_id)
        host = requests.name(request.host_name)
        if request.HasField("rules"):
            rules, target = requests.rules(request.rules, request.target)
        else:
            rules, target = CLASSIC, requests.target(request.target, zero_means_default=True)
        options = (
            requests.options(request.options, rules) if request.HasField("options") else NO_OPTIONS
        )
        rid_hash = requests.request_hash(rid).hex()
        fingerprint = requests.fingerprint(request).hex()
        earlier = await self.store.created_by(rid_hash)
        if earlier is not None:
            return await self._repeat_create(earlier, fingerprint)
        await self._take(self._create_budgets(client), "too many tables created; retry later")
        # The table, its code and its create request share a shard: one slot per commit.
        shard = shard_of(rid_hash)
        table_id = _drawn(credentials.new_table_id, shard)
        now = self.now_ms()
        wait_ms = await self.limiter.reserve_lobby(
            client.address,
            table_id,
            self.policy.limits.lobbies_per_address,
            now,
            self.policy.lobby_ttl_ms,
        )
        if wait_ms:
            raise rate_limited(
                Limit.LOBBIES_PER_ADDRESS,
                "too many open lobbies created from this address; start or leave one first",
                wait_ms / 1000,
            )
        code = _drawn(credentials.new_code, shard)
        while await self.store.code_taken(code):  # 9.2e12 codes per shard: never loops
            code = _drawn(credentials.new_code, shard)
        command = Create(table_id, host, target, self.policy.timing, rules, options)
        try:
            transition = create(command, now)
        except RuleError as exc:
            raise ServiceError.from_rule(exc) from None
        nonce = credentials.new_nonce()
        token = credentials.seat_token(self.policy.token_secret, table_id, 0, nonce)
        changes = RecordChanges(
            seats={0: SeatChange(nonce=nonce, digest=credentials.token_digest(token))}, code=code
        )
        write = Write(command, transition, None, changes)
        if not await self._commit(None, write, now, (rid_hash, fingerprint)):
            raise self._contention()  # a table id drawn twice: practically never
        return gateway_pb2.CreateTableResponse(
            table_id=table_id,
            invitation_code=code,
            seat=0,
            seat_token=token,
            view=self.fresh_views.view(transition.state, 0, now),
        )

    async def join_table(
        self, request: gateway_pb2.JoinTableRequest, client: Client
    ) -> gateway_pb2.JoinTableResponse:
        """Take the lowest free seat of the table with this code (R2, D4). Failed attempts
        are limited per client connection and, with a ceiling, per address (D6, issue 15);
        a join counts as a lobby change of its table."""
        rid = RequestId.of(requests.secret_request_id(request.request_id), request)
        player = requests.name(request.player_name)
        code = requests.invitation_code(request.invitation_code)
        # A join counts as a failure of its connection and address until its code is found
        # (checked and counted in one step: attempts in flight cannot all pass the check);
        # a found code gives the count back.
        counted = self._join_budgets(client)
        await self._take(counted, "too many failed join attempts; retry later")
        table_id = await self.store.table_of_code(code)
        if table_id is None:
            raise ServiceError(
                grpc.StatusCode.NOT_FOUND, Reason.CODE_NOT_FOUND, "no table has this code"
            )
        await self.limiter.give_back([key for key, _ in counted])
        await self._take_lobby_change(table_id)

        async def decide(
            record: TableRecord, now: int
        ) -> Write[gateway_pb2.JoinTableResponse] | gateway_pb2.JoinTableResponse:
            earlier = rid.earlier(record.joins)
            if earlier is not None:
                if earlier.seat == SEAT_FREED:
                    raise _request_id_reused(
                        "the seat this join took was freed since; join with a new request_id"
                    )
                state = await self._state_at(table_id, earlier.version)
                nonce = record.seats[earlier.seat].nonce
                return self._join_response(
                    state, earlier.seat, self._token(table_id, earlier.seat, nonce)
                )
            command = Join(player)
            transition = self._apply(record.state, command, now)
            after = transition.state
            seat = next(s for s in range(4) if after.names[s] != record.state.names[s])
            nonce = credentials.new_nonce()
            token = self._token(table_id, seat, nonce)
            # A repeat of an earlier occupant's join must never answer with this seat's new
            # token (D7): the seat's older join records are marked freed.
            joins = (*_seat_freed(record.joins, seat), rid.record(after.version, seat))
            changes = RecordChanges(
                seats={
                    seat: SeatChange(
                        nonce=nonce, digest=credentials.token_digest(token), requests=()
                    )
                },
                joins=joins[-JOIN_REQUESTS_KEPT:],
            )
            return Write(command, transition, self._join_response(after, seat, token), changes)

        return await self._transact(table_id, decide)

    async def execute_serialized(self, request: Any, token: str, client: Client) -> bytes:
        """:meth:`execute`'s response, serialised: a seat's view after its command is joined
        from the commit's view parts as bytes, never parsed into a message and serialised
        again (issue 22: ~10 µs a command)."""
        if spec_of(request).seated:
            return await self.seated_command_bytes(request, token)
        answer: Any = await self.execute(request, token, client)
        return bytes(answer.SerializeToString())

    async def seated_command(self, request: SeatedRequest, token: str) -> Any:
        """Leave, set the target, start, play or pass for the seat the token proves; the
        command's response (:mod:`services.common.commands`)."""
        return spec_of(request).response.FromString(await self.seated_command_bytes(request, token))

    async def seated_command_bytes(self, request: SeatedRequest, token: str) -> bytes:
        """:meth:`seated_command`'s response, serialised (a response that answers a view
        holds it as field 1 and nothing else: :func:`view_answer_bytes`)."""
        spec, acted = await self._seated(request, token)
        if not spec.answers_view:
            return bytes(spec.response(version=acted.state.version).SerializeToString())
        view = self.fresh_views.view_bytes(acted.state, acted.seat, self.now_ms())
        return view_answer_bytes(view)

    async def _seated(self, request: SeatedRequest, token: str) -> tuple[CommandSpec, Acted]:
        """A seat's command applied: its spec, and the table after it with the seat."""
        spec = spec_of(request)
        rid = requests.request_id(request.request_id)
        table_id = requests.table_id(request.table_id)
        requests.seat_token(token)
        build = self._command_builder(request)
        if spec.lobby_change:
            await self._take_lobby_change(table_id)
        leaving = isinstance(request, gateway_pb2.LeaveTableRequest)
        acted = await self._act(
            table_id,
            build,
            token=token,
            request=RequestId.of(rid, request),
            expected_version=request.expected_version,
            leaving=leaving,
        )
        return spec, acted

    async def robot_view(self, table_id: str, seat: int) -> game_pb2.TableView:
        """The view of ``seat`` for the robot playing it now (issue 20): the same projection
        a person there gets; ROBOT_SEAT when no robot plays the seat (any more)."""
        requests.table_id(table_id)
        record = await self._load(table_id)
        _require_robot_seat(record.state, seat)
        return table_view(record.state, seat, self.now_ms())

    async def robot_act(self, seat: int, request: RobotMove) -> game_pb2.TableView:
        """A robot's move for ``seat``, checked like a person's (issue 20). Refused with
        ROBOT_SEAT, changing nothing, when no robot plays the seat at the table's current
        version (its player came back): the check runs in the command loop, against the
        version the move is applied to."""
        rid = requests.request_id(request.request_id)
        table_id = requests.table_id(request.table_id)
        build = self._command_builder(request)
        acted = await self._act(
            table_id,
            build,
            seat=seat,
            robot=True,
            request=RequestId.of(rid, request),
            expected_version=request.expected_version,
        )
        return self.fresh_views.view(acted.state, acted.seat, self.now_ms())

    async def set_presence(self, table_id: str, token: str, connected: bool) -> int:
        """Record that the seat's client connected or dropped (S3, S4, D3); the version after."""
        requests.table_id(table_id)
        requests.seat_token(token)
        if connected:
            # Bounded per seat, once the token proved it (issue 15): a client that connects
            # and drops in a loop would make every gateway fan out a version each time.
            record = await self._load(table_id)
            seat = self._seat_of(record, token, allow_left_seat=False)
            budget = Budget(
                Limit.CONNECTIONS_PER_SEAT,
                self.policy.limits.connections_per_seat_minute,
                MINUTE_MS,
            )
            await self._take(
                [(table_limit_key(table_id, f"presence:{seat}"), budget)],
                "this seat connected too often; retry later",
            )
        acted = await self._act(table_id, lambda seat: SetPresence(seat, connected), token=token)
        return acted.state.version

    async def expire(self, table_id: str, turn_number: int) -> TableState | None:
        """Apply a timer expiry (R11 auto-play, D1 next deal) if it still names the current
        clock and is due; ``None`` when it is stale (a late or repeated timer changes nothing)."""

        async def decide(record: TableRecord, now: int) -> Write[TableState] | None:
            command = Expire(turn_number)
            try:
                transition = apply(record.state, command, now)
            except RuleError:
                return None
            return Write(command, transition, transition.state)

        return await self._transact(table_id, decide, missing=lambda: None)

    async def presence_expired(self, table_id: str, seat: int) -> int | None:
        """A gateway's presence lease on ``seat`` ran out (the gateway died): mark the seat
        disconnected (S3, D3). Returns the version after, None when the table is gone."""
        if not await self.store.table_exists(table_id):
            return None
        try:
            acted = await self._act(table_id, lambda _: SetPresence(seat, False), seat=seat)
        except ServiceError:  # the seat was freed meanwhile (before the start)
            return None
        return acted.state.version

    async def view(self, table_id: str, token: str) -> game_pb2.TableView:
        """The seat's current view."""
        requests.table_id(table_id)
        requests.seat_token(token)
        record = await self._load(table_id)
        seat = self._seat_of(record, token, allow_left_seat=False)
        return table_view(record.state, seat, self.now_ms())

    async def snapshot(self, table_id: str) -> tuple[int, bytes, bytes]:
        """The table's version, its state without the seed and its seat holders (for
        gateways to confirm or heal the event stream)."""
        requests.table_id(table_id)
        record = await self._load(table_id)
        holders = seat_holders(record.state, lambda seat: record.seats[seat].digest)
        return record.version, published_state(record.state), holders

    # -- budgets ---------------------------------------------------------------------------

    def _create_budgets(self, client: Client) -> list[tuple[str, Budget]]:
        limits = self.policy.limits
        return [
            (
                limit_key("creates", client.address, "m"),
                Budget(Limit.CREATES_PER_ADDRESS, limits.creates_per_address_minute, MINUTE_MS),
            ),
            (
                limit_key("creates", client.address, "h"),
                Budget(Limit.CREATES_PER_ADDRESS, limits.creates_per_address_hour, HOUR_MS),
            ),
            (
                limit_key("creates", "cluster"),
                Budget(Limit.CREATES_PER_SECOND, limits.creates_per_second, SECOND_MS),
            ),
        ]

    def _join_budgets(self, client: Client) -> list[tuple[str, Budget]]:
        limits = self.policy.limits
        return [
            (
                connection_failures_key(client.address, client.connection),
                Budget(
                    Limit.JOIN_FAILURES_PER_CONNECTION,
                    limits.join_failures_per_connection,
                    MINUTE_MS,
                ),
            ),
            (
                join_failures_key(client.address),
                Budget(
                    Limit.JOIN_FAILURES_PER_ADDRESS, limits.join_failures_per_address, MINUTE_MS
                ),
            ),
        ]

    async def _take(self, budgets: list[tuple[str, Budget]], message: str) -> None:
        """Count one event against ``budgets``, or refuse (RATE_LIMITED) when one is spent."""
        spent = await self.limiter.take(budgets)
        if spent is not None:
            metrics.RATE_LIMITED.labels(spent.budget.name).inc()
            raise _spent(spent, message)

    async def _take_lobby_change(self, table_id: str) -> None:
        budget = Budget(Limit.LOBBY_CHANGES, self.policy.limits.lobby_changes_per_minute, MINUTE_MS)
        await self._take(
            [(table_limit_key(table_id, "lobby"), budget)],
            "this table's lobby changed too often; retry later",
        )

    # -- the command loop ------------------------------------------------------------------

    async def _transact(
        self,
        table_id: str,
        decide: Decide[_Answer],
        *,
        missing: Callable[[], _Answer] | None = None,
    ) -> _Answer:
        """Take the table (cached, else loaded), ``decide`` over it, compare-and-set what it
        decided; on a version conflict decide again over the table read from Redis (so does
        a cached record's refusal or answer without a write; ``decide`` refuses what no
        longer holds, e.g. an ``expected_version``). A missing table is ``missing()`` (default:
        TABLE_NOT_FOUND). Commands of one table run one at a time in this replica
        (:class:`TableLocks`) from the read to the compare-and-set: only other replicas'
        writes make a compare-and-set fail. The version is published after."""
        async with self.locks.hold(table_id):
            record = self.cache.get(table_id)
            cached = record is not None
            for _ in range(MAX_ATTEMPTS):
                if record is None:
                    record = await self.store.load(table_id)
                    cached = False
                    metrics.CACHE_MISS.inc()
                    if record is None:
                        self.cache.drop(table_id)
                        if missing is None:
                            raise _not_found()
                        return missing()
                else:
                    metrics.CACHE_HIT.inc()
                # Never before the table's previous command (a clock stepped back, or
                # replicas' clocks apart), so that the log replays exactly.
                now = max(self.now_ms(), record.last_time_ms)
                try:
                    decided = await decide(record, now)
                except ServiceError:
                    if not cached:
                        raise
                    record = None  # a refusal stands only on the table as it is in Redis
                    continue
                if not isinstance(decided, Write):
                    if not cached:
                        return decided
                    # What a cached record answers without writing (a repeat, a command
                    # that changes nothing, a stale timer) is decided again over the table
                    # in Redis.
                    record = None
                    continue
                committed = await self._write(record, decided, now)
                if committed is not None:
                    break
                if cached:
                    metrics.CACHE_STALE.inc()
                else:
                    metrics.CAS_CONFLICTS.inc()
                self.cache.drop(table_id)
                record = None
            else:
                raise self._contention()
        # Published once the table's next command may run: a slow NATS delays this answer,
        # not the table's other commands (each version's message id makes a repeat harmless,
        # and gateways put versions in order).
        await self._publish(committed)
        return decided.answer

    async def _act(
        self,
        table_id: str,
        build: Callable[[int], Command],
        *,
        token: str = "",
        seat: int | None = None,
        robot: bool = False,
        request: RequestId | None = None,
        expected_version: int = 0,
        leaving: bool = False,
    ) -> Acted:
        """A seat's command: the seat the token proves (or ``seat``, for a trusted internal
        caller; with ``robot``, only while a robot plays it), its request id answered once
        (a repeat answers the state it produced)."""

        async def decide(record: TableRecord, now: int) -> Write[Acted] | Acted:
            acting = seat if seat is not None else self._seat_of(record, token, leaving)
            if robot:
                _require_robot_seat(record.state, acting)
            kept = record.seats[acting].requests
            earlier = request.earlier(kept) if request is not None else None
            if earlier is not None:
                return Acted(await self._state_at(table_id, earlier.version), acting)
            if leaving and not is_held(record.state, acting):
                raise _token_invalid()  # a freed seat may only repeat its leave
            # Presence changes since the caller's version are no conflict (issue 17): only a
            # version that changed the game, or a version the caller cannot have seen.
            if expected_version and not (
                record.action_version <= expected_version <= record.version
            ):
                raise _version_conflict(
                    f"the table changed since version {expected_version}"
                    f" (it is at version {record.version})"
                )
            command = build(acting)
            transition = self._apply(record.state, command, now)
            after = transition.state
            if after is record.state:
                return Acted(after, acting)
            seats = {}
            if request is not None:
                remembered = (*kept, request.record(after.version))[-SEAT_REQUESTS_KEPT:]
                seats[acting] = SeatChange(requests=remembered)
            joins = None
            if after.names[acting] == "" and record.state.names[acting] != "":
                # The seat was freed (a leave before the start): its join is not repeated any
                # more (acting again would break "acts once", answering with the seat's
                # token would hand out a later occupant's, D7).
                joins = _seat_freed(record.joins, acting)
            changes = RecordChanges(seats=seats, joins=joins)
            return Write(command, transition, Acted(after, acting), changes)

        return await self._transact(table_id, decide)

    def _apply(self, state: TableState, command: Command, now: int) -> Transition:
        try:
            return apply(state, command, now)
        except RuleError as exc:
            raise ServiceError.from_rule(exc) from None

    async def _commit(
        self,
        record: TableRecord | None,
        write: Write[Any],
        now: int,
        create_request: tuple[str, str] | None = None,
    ) -> bool:
        """Compare-and-set ``write`` over ``record`` (``None``: create); publish after.

        Returns False when another writer changed the table first (nothing written).
        """
        committed = await self._write(record, write, now, create_request)
        if committed is None:
            return False
        await self._publish(committed)
        return True

    async def _write(
        self,
        record: TableRecord | None,
        write: Write[Any],
        now: int,
        create_request: tuple[str, str] | None = None,
    ) -> _Committed | None:
        """Compare-and-set ``write`` over ``record`` (``None``: create) and remember the
        record written; ``None`` when another writer changed the table first (nothing
        written). :meth:`_publish` sends what it returns."""
        state = write.transition.state
        stored, published = encode_state_unseeded(state)
        views = view_parts(state)  # every seat's view, once: the event's and the answer's
        event = table_event(
            state, lambda seat: digest_of(record, write.changes, seat), now, views, published
        )
        ttl = (
            self.policy.lobby_ttl_ms
            if state.phase is Phase.WAITING
            else self.policy.finished_ttl_ms
        )
        previous_ms = record.last_time_ms if record is not None else 0
        commit = Commit(
            before=record,
            state=state,
            now_ms=now,
            log_entry=encode_entry(write.command, now, previous_ms),
            event=event.SerializeToString(),
            ttl_ms=ttl,
            encoded=stored,
            changes=write.changes,
            create_request=create_request,
            acts=not isinstance(write.command, SetPresence),
        )
        pending = await self.store.commit(commit)
        if pending is None:
            return None
        self.cache.put(commit.record())
        self.fresh_views.remember(state, views)
        if self.on_applied is not None:
            self.on_applied(write.command, write.transition)
        return _Committed(state, pending, OutboxEvent(event, commit.event))

    async def _publish(self, committed: _Committed) -> None:
        """Publish a committed version (after the outbox's older ones) and its robot turn;
        a failure is logged and counted (the relay re-publishes what the outbox holds; the
        short clock plays a robot's seat whose turn was not published)."""
        state, pending, event = committed
        if self.publisher is not None:
            try:
                outbox = [*map(OutboxEvent.parse, pending), event]
                await self.publisher.publish_events(
                    state.table_id, outbox, clear_in_background=True
                )
            except Exception:  # the relay re-publishes what is left in the outbox
                metrics.PUBLISH_FAILURES.inc()
                log.exception(
                    "table.publish_failed", table_id=state.table_id, version=state.version
                )
        if self.robot_turns is not None and state.options.robots:
            try:
                if await self.robot_turns.publish(state):
                    metrics.ROBOT_TURNS_PUBLISHED.inc()
            except Exception:  # the short clock plays the seat instead (robot_turns)
                metrics.PUBLISH_FAILURES.inc()
                log.warning("table.robot_turn_unpublished", table_id=state.table_id)

    # -- helpers ---------------------------------------------------------------------------

    async def _load(self, table_id: str) -> TableRecord:
        record = await self.store.load(table_id)
        if record is None:
            raise _not_found()
        return record

    def _seat_of(self, record: TableRecord, token: str, allow_left_seat: bool) -> int:
        digest = credentials.token_digest(token)
        for seat, kept in enumerate(record.seats):
            if kept.digest is not None and credentials.same_hash(kept.digest, digest):
                if record.state.robots[seat]:
                    raise _not_a_robot_seat("a robot took this seat: its player did not return")
                if not allow_left_seat and not is_held(record.state, seat):
                    break  # a freed seat's token works nowhere (the host's of a closed table)
                return seat
        raise _token_invalid()

    async def _state_at(self, table_id: str, version: int) -> TableState:
        """The table as it was at ``version``: its log replayed that far."""
        entries = decode_log(await self.store.read_log(table_id))
        return replay(entries[:version])

    def _token(self, table_id: str, seat: int, nonce: str) -> str:
        return credentials.seat_token(self.policy.token_secret, table_id, seat, nonce)

    def _join_response(
        self, state: TableState, seat: int, token: str
    ) -> gateway_pb2.JoinTableResponse:
        return gateway_pb2.JoinTableResponse(
            table_id=state.table_id,
            seat=seat,
            seat_token=token,
            view=self.fresh_views.view(state, seat, self.now_ms()),
        )

    async def _repeat_create(
        self, earlier: tuple[str, str], fingerprint: str
    ) -> gateway_pb2.CreateTableResponse:
        table_id, first_fingerprint = earlier
        if first_fingerprint != fingerprint:
            raise _request_id_reused()
        record = await self._load(table_id)
        state = await self._state_at(table_id, 1)
        return gateway_pb2.CreateTableResponse(
            table_id=table_id,
            invitation_code=record.code,
            seat=0,
            seat_token=self._token(table_id, 0, record.seats[0].nonce),
            view=table_view(state, 0, self.now_ms()),
        )

    def _command_builder(self, request: SeatedRequest) -> Callable[[int], Command]:
        if isinstance(request, gateway_pb2.PlayTileRequest):
            tile = requests.tile(request.tile.low, request.tile.high)
            end = requests.end(request.end)
            return lambda seat: Play(seat, tile, end)
        if isinstance(request, gateway_pb2.PassRequest):
            return Pass
        if isinstance(request, gateway_pb2.DrawTileRequest):
            return Draw
        if isinstance(request, gateway_pb2.ProposeFriendlyEndRequest):
            return ProposeEnd
        if isinstance(request, gateway_pb2.AnswerFriendlyEndRequest):
            accept = request.accept
            return lambda seat: AnswerEnd(seat, accept)
        if isinstance(request, gateway_pb2.StartGameRequest):
            seed = secrets.randbits(128)
            return lambda seat: Start(seat, seed)
        if isinstance(request, gateway_pb2.SetTargetRequest):
            target = requests.target(request.target, zero_means_default=False)
            return lambda seat: SetTarget(seat, target)
        return Leave

    @staticmethod
    def _contention() -> ServiceError:
        return _version_conflict("too many concurrent changes; retry")
