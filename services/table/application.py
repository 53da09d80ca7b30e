"""The table service's use cases: authenticate, run the rules, commit atomically, publish.

:class:`TableApp` knows nothing of gRPC servers: it takes contract requests and returns
contract responses, raising :class:`~services.table.service_errors.ServiceError` for every
refusal (and then nothing changed). Each command runs the same loop: load the table, check
the seat token, answer a repeated request id with its first answer, apply the engine, and
compare-and-set the result in Redis; on a version conflict (another replica won the race)
it reloads and tries again. After the commit the table's outbox is published on NATS.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, Final

import grpc
from dominos.v1 import events_pb2, game_pb2, gateway_pb2

from services.common.logging import get_logger
from services.table import credentials, metrics, requests
from services.table.command_log import decode_log, encode_entry
from services.table.limits import Budget, Limiter, Spent, limit_key, table_limit_key
from services.table.projection import table_view
from services.table.published import is_held, published_state, seat_holders
from services.table.publisher import EventPublisher
from services.table.rules import (
    Command,
    Create,
    Expire,
    Join,
    Leave,
    Pass,
    Phase,
    Play,
    RuleError,
    SetPresence,
    SetTarget,
    Start,
    TableState,
    Timing,
    Transition,
    apply,
    create,
    encode_state,
    replay,
)
from services.table.service_errors import ServiceError, rate_limited
from services.table.store import (
    JOIN_REQUESTS_KEPT,
    SEAT_REQUESTS_KEPT,
    Client,
    Commit,
    LoadedTable,
    RequestRecord,
    TableStore,
    pack_requests,
    unpack_requests,
)

log = get_logger(__name__)

MAX_ATTEMPTS: Final = 8

SeatedRequest = (
    gateway_pb2.LeaveTableRequest
    | gateway_pb2.SetTargetRequest
    | gateway_pb2.StartGameRequest
    | gateway_pb2.PlayTileRequest
    | gateway_pb2.PassRequest
)


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


def _spent(spent: Spent, message: str) -> ServiceError:
    return rate_limited(spent.budget.name, message, spent.retry_after_ms / 1000)


@dataclass(frozen=True, slots=True)
class Outcome:
    """The result of one command: the state after it, the seat it acted for, and whether it
    was a repeat of an earlier request (answered from the log, nothing new written)."""

    state: TableState
    seat: int
    repeated: bool
    transition: Transition | None


def _not_found() -> ServiceError:
    return ServiceError(grpc.StatusCode.NOT_FOUND, "TABLE_NOT_FOUND", "no such table")


def _token_invalid() -> ServiceError:
    return ServiceError(
        grpc.StatusCode.PERMISSION_DENIED, "TOKEN_INVALID", "not a seat of this table"
    )


#: The seat of a remembered join whose seat was freed since (a leave before the start).
SEAT_FREED: Final = 255


def _seat_freed(joins: list[RequestRecord], seat: int) -> list[RequestRecord]:
    """The join records with those that took ``seat`` marked :data:`SEAT_FREED`."""
    return [replace(r, seat=SEAT_FREED) if r.seat == seat else r for r in joins]


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
    ) -> None:
        self.store = store
        self.publisher = publisher
        self.policy = policy
        self.limiter = Limiter(store.redis)
        self.clock = clock
        self.on_applied = on_applied

    def now_ms(self) -> int:
        """The service clock, ms since the epoch."""
        return int(self.clock() * 1000)

    def _now_after(self, loaded: LoadedTable) -> int:
        """The time to apply a command at: the clock, but never before the table's previous
        command (a clock stepped back, or replicas' clocks apart), so the log replays exactly."""
        return max(self.now_ms(), int(loaded.field("lt") or 0))

    # -- public commands -------------------------------------------------------------------

    async def create_table(
        self, request: gateway_pb2.CreateTableRequest, client: Client
    ) -> gateway_pb2.CreateTableResponse:
        """Open a table with the caller as host (seat 0) and a fresh invitation code, within
        the creation budgets of the client's address and of the cluster, and the cap on the
        address's open lobbies (issue 15). A repeat of an earlier create costs no budget."""
        rid = requests.secret_request_id(request.request_id)
        host = requests.name(request.host_name)
        target = requests.target(request.target, zero_means_default=True)
        rid_hash = requests.request_hash(rid).hex()
        fingerprint = requests.fingerprint(request).hex()
        earlier = await self.store.created_by(rid_hash)
        if earlier is not None:
            return await self._repeat_create(earlier, fingerprint)
        await self._take(self._create_budgets(client), "too many tables created; retry later")
        table_id = credentials.new_table_id()
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
                "lobbies_per_address",
                "too many open lobbies created from this address; start or leave one first",
                wait_ms / 1000,
            )
        code = credentials.new_code()
        while await self.store.code_taken(code):  # 5.9e14 codes: practically never loops
            code = credentials.new_code()
        command = Create(table_id, host, target, self.policy.timing)
        try:
            transition = create(command, now)
        except RuleError as exc:
            raise ServiceError.from_rule(exc) from None
        nonce = credentials.new_nonce()
        token = credentials.seat_token(self.policy.token_secret, table_id, 0, nonce)
        fields: tuple[tuple[str, bytes | str | int], ...] = (
            ("code", code),
            ("n0", nonce),
            ("h0", credentials.token_digest(token)),
        )
        await self._commit(
            table_id, None, transition, command, now, fields, code, (rid_hash, fingerprint)
        )
        return gateway_pb2.CreateTableResponse(
            table_id=table_id,
            invitation_code=code,
            seat=0,
            seat_token=token,
            view=table_view(transition.state, 0, now),
        )

    async def join_table(
        self, request: gateway_pb2.JoinTableRequest, client: Client
    ) -> gateway_pb2.JoinTableResponse:
        """Take the lowest free seat of the table with this code (R2, D4). Failed attempts
        are limited per client connection and, with a ceiling, per address (D6, issue 15);
        a join counts as a lobby change of its table."""
        rid = requests.secret_request_id(request.request_id)
        player = requests.name(request.player_name)
        code = requests.invitation_code(request.invitation_code)
        limits = self.policy.limits
        lookup = await self.store.join_lookup(
            code,
            client,
            (limits.join_failures_per_connection, limits.join_failures_per_address),
            MINUTE_MS,
        )
        if lookup.limited:
            metrics.RATE_LIMITED.labels(f"join_failures_per_{lookup.limited}").inc()
            raise rate_limited(
                f"join_failures_per_{lookup.limited}",
                "too many failed join attempts; retry later",
                lookup.retry_after_ms / 1000,
            )
        table_id = lookup.table_id
        if table_id is None:
            raise ServiceError(
                grpc.StatusCode.NOT_FOUND, "CODE_NOT_FOUND", "no table has this code"
            )
        await self._take_lobby_change(table_id)
        rid_hash = requests.request_hash(rid)
        fingerprint = requests.fingerprint(request)
        for _ in range(MAX_ATTEMPTS):
            loaded = await self._load(table_id)
            joins = unpack_requests(loaded.field("rj"), joins=True)
            earlier = next((r for r in joins if r.request_hash == rid_hash), None)
            if earlier is not None:
                self._same_payload(earlier, fingerprint)
                if earlier.seat == SEAT_FREED:
                    raise ServiceError(
                        grpc.StatusCode.ALREADY_EXISTS,
                        "REQUEST_ID_REUSED",
                        "the seat this join took was freed since; join with a new request_id",
                    )
                state = await self._state_at(table_id, earlier.version)
                nonce = (loaded.field(f"n{earlier.seat}") or b"").decode()
                return self._join_response(
                    state, earlier.seat, self._token(state, earlier.seat, nonce)
                )
            now = self._now_after(loaded)
            command = Join(player)
            transition = self._apply(loaded.state, command, now)
            seat = next(s for s in range(4) if transition.state.names[s] != loaded.state.names[s])
            nonce = credentials.new_nonce()
            token = credentials.seat_token(self.policy.token_secret, table_id, seat, nonce)
            record = RequestRecord(rid_hash, fingerprint, transition.state.version, seat)
            # A repeat of an earlier occupant's join must never answer with this seat's new
            # token (D7): the seat's older join records are marked freed.
            kept = _seat_freed(joins, seat)
            fields: tuple[tuple[str, bytes | str | int], ...] = (
                (f"n{seat}", nonce),
                (f"h{seat}", credentials.token_digest(token)),
                ("rj", pack_requests([*kept, record][-JOIN_REQUESTS_KEPT:], joins=True)),
                (f"r{seat}", b""),
            )
            if await self._commit(table_id, loaded, transition, command, now, fields):
                return self._join_response(transition.state, seat, token)
            metrics.CAS_CONFLICTS.inc()
        raise self._contention()

    async def seated_command(
        self, request: SeatedRequest, token: str
    ) -> tuple[Outcome, gateway_pb2.LeaveTableResponse | game_pb2.TableView]:
        """Leave, set the target, start, play or pass for the seat the token proves."""
        rid = requests.request_id(request.request_id)
        table_id = requests.table_id(request.table_id)
        requests.seat_token(token)
        build = self._command_builder(request)
        if isinstance(request, gateway_pb2.LeaveTableRequest | gateway_pb2.SetTargetRequest):
            await self._take_lobby_change(table_id)
        outcome = await self._run(
            table_id,
            token,
            build,
            rid=rid,
            fingerprint=requests.fingerprint(request),
            expected_version=request.expected_version,
            allow_left_seat=isinstance(request, gateway_pb2.LeaveTableRequest),
        )
        if isinstance(request, gateway_pb2.LeaveTableRequest):
            return outcome, gateway_pb2.LeaveTableResponse(version=outcome.state.version)
        return outcome, table_view(outcome.state, outcome.seat, self.now_ms())

    async def set_presence(self, table_id: str, token: str, connected: bool) -> int:
        """Record that the seat's client connected or dropped (S3, S4, D3); the version after."""
        requests.table_id(table_id)
        requests.seat_token(token)
        if connected:
            # Bounded per seat, once the token proved it (issue 15): a client that connects
            # and drops in a loop would make every gateway fan out a version each time.
            _, seat = await self.seat_of(table_id, token)
            budget = Budget(
                "connections_per_seat", self.policy.limits.connections_per_seat_minute, MINUTE_MS
            )
            await self._take(
                [(table_limit_key(table_id, f"presence:{seat}"), budget)],
                "this seat connected too often; retry later",
            )
        outcome = await self._run(table_id, token, lambda seat: SetPresence(seat, connected))
        return outcome.state.version

    async def expire(self, table_id: str, turn_number: int) -> TableState | None:
        """Apply a timer expiry (R11 auto-play, D1 next deal) if it still names the current
        clock and is due; ``None`` when it is stale (a late or repeated timer changes nothing)."""
        for _ in range(MAX_ATTEMPTS):
            loaded = await self.store.load(table_id)
            if loaded is None:
                return None
            now = self._now_after(loaded)
            command = Expire(turn_number)
            try:
                transition = apply(loaded.state, command, now)
            except RuleError:
                return None
            if await self._commit(table_id, loaded, transition, command, now):
                return transition.state
            metrics.CAS_CONFLICTS.inc()
        raise self._contention()

    async def presence_expired(self, table_id: str, seat: int) -> int | None:
        """A gateway's presence lease on ``seat`` ran out (the gateway died): mark the seat
        disconnected (S3, D3). Returns the version after, None when the table is gone."""
        if not await self.store.table_exists(table_id):
            return None
        try:
            outcome = await self._run(table_id, "", lambda _: SetPresence(seat, False), seat=seat)
        except ServiceError:  # the seat was freed meanwhile (before the start)
            return None
        return outcome.state.version

    async def view(self, table_id: str, token: str) -> game_pb2.TableView:
        """The seat's current view."""
        requests.table_id(table_id)
        requests.seat_token(token)
        loaded = await self._load(table_id)
        seat = self._seat_of(loaded, token, allow_left_seat=False)
        return table_view(loaded.state, seat, self.now_ms())

    async def snapshot(self, table_id: str) -> tuple[int, bytes, bytes]:
        """The table's version, its state without the seed and its seat holders (for
        gateways to confirm or heal the event stream)."""
        requests.table_id(table_id)
        loaded = await self._load(table_id)
        holders = seat_holders(loaded.state, lambda seat: loaded.field(f"h{seat}"))
        return loaded.version, published_state(loaded.state), holders

    async def seat_of(self, table_id: str, token: str) -> tuple[LoadedTable, int]:
        """The table and the seat a token proves (for the gateway's stream authentication)."""
        requests.table_id(table_id)
        requests.seat_token(token)
        loaded = await self._load(table_id)
        return loaded, self._seat_of(loaded, token, allow_left_seat=False)

    # -- budgets ---------------------------------------------------------------------------

    def _create_budgets(self, client: Client) -> list[tuple[str, Budget]]:
        limits = self.policy.limits
        return [
            (
                limit_key("creates", f"{client.address}:m"),
                Budget("creates_per_address", limits.creates_per_address_minute, MINUTE_MS),
            ),
            (
                limit_key("creates", f"{client.address}:h"),
                Budget("creates_per_address", limits.creates_per_address_hour, HOUR_MS),
            ),
            (
                limit_key("creates", "cluster"),
                Budget("creates_per_second", limits.creates_per_second, SECOND_MS),
            ),
        ]

    async def _take(self, budgets: list[tuple[str, Budget]], message: str) -> None:
        """Count one event against ``budgets``, or refuse (RATE_LIMITED) when one is spent."""
        spent = await self.limiter.take(budgets)
        if spent is not None:
            metrics.RATE_LIMITED.labels(spent.budget.name).inc()
            raise _spent(spent, message)

    async def _take_lobby_change(self, table_id: str) -> None:
        budget = Budget("lobby_changes", self.policy.limits.lobby_changes_per_minute, MINUTE_MS)
        await self._take(
            [(table_limit_key(table_id, "lobby"), budget)],
            "this table's lobby changed too often; retry later",
        )

    # -- the command loop ------------------------------------------------------------------

    async def _run(
        self,
        table_id: str,
        token: str,
        build: Callable[[int], Command],
        *,
        rid: str | None = None,
        fingerprint: bytes = b"",
        expected_version: int = 0,
        allow_left_seat: bool = False,
        seat: int | None = None,
    ) -> Outcome:
        """The command loop; ``seat`` given means a trusted internal caller (no token)."""
        rid_hash = requests.request_hash(rid) if rid is not None else b""
        trusted_seat = seat
        for _ in range(MAX_ATTEMPTS):
            loaded = await self._load(table_id)
            if trusted_seat is None:
                seat = self._seat_of(loaded, token, allow_left_seat=allow_left_seat)
            else:
                seat = trusted_seat
            records = unpack_requests(loaded.field(f"r{seat}"))
            if rid is not None:
                earlier = next((r for r in records if r.request_hash == rid_hash), None)
                if earlier is not None:
                    self._same_payload(earlier, fingerprint)
                    state = await self._state_at(table_id, earlier.version)
                    return Outcome(state, seat, True, None)
            if allow_left_seat and not is_held(loaded.state, seat):
                raise _token_invalid()  # a freed seat may only repeat its leave
            if expected_version and loaded.version != expected_version:
                raise ServiceError(
                    grpc.StatusCode.ABORTED,
                    "VERSION_CONFLICT",
                    f"the table is at version {loaded.version}",
                )
            now = self._now_after(loaded)
            command = build(seat)
            transition = self._apply(loaded.state, command, now)
            if transition.state is loaded.state:
                return Outcome(loaded.state, seat, False, transition)
            fields: tuple[tuple[str, bytes | str | int], ...] = ()
            if rid is not None:
                record = RequestRecord(rid_hash, fingerprint, transition.state.version)
                fields = ((f"r{seat}", pack_requests([*records, record][-SEAT_REQUESTS_KEPT:])),)
            if transition.state.names[seat] == "" and loaded.state.names[seat] != "":
                # The seat was freed (a leave before the start): its join is not repeated any
                # more (acting again would break "acts once", answering with the seat's
                # token would hand out a later occupant's, D7).
                joins = unpack_requests(loaded.field("rj"), joins=True)
                fields += (("rj", pack_requests(_seat_freed(joins, seat), joins=True)),)
            if await self._commit(table_id, loaded, transition, command, now, fields):
                return Outcome(transition.state, seat, False, transition)
            metrics.CAS_CONFLICTS.inc()
            if expected_version:
                raise ServiceError(
                    grpc.StatusCode.ABORTED, "VERSION_CONFLICT", "the table moved on"
                )
        raise self._contention()

    def _apply(self, state: TableState, command: Command, now: int) -> Transition:
        try:
            return apply(state, command, now)
        except RuleError as exc:
            raise ServiceError.from_rule(exc) from None

    async def _commit(
        self,
        table_id: str,
        loaded: LoadedTable | None,
        transition: Transition,
        command: Command,
        now: int,
        set_fields: tuple[tuple[str, bytes | str | int], ...] = (),
        code: str = "",
        create_request: tuple[str, str] | None = None,
    ) -> bool:
        """Compare-and-set the transition over ``loaded`` (``None``: create); publish after.

        Returns False when another writer changed the table first (nothing written).
        """
        state = transition.state
        deadline_kind = (
            events_pb2.DEADLINE_KIND_TURN
            if state.phase is Phase.PLAYING
            else events_pb2.DEADLINE_KIND_BREAK
            if state.phase is Phase.ROUND_OVER
            else events_pb2.DEADLINE_KIND_UNSPECIFIED
        )
        state_bytes = encode_state(state)
        digests = {name: value for name, value in set_fields if name[:1] == "h"}

        def digest_of(seat: int) -> bytes | None:
            value = digests.get(f"h{seat}")
            if value is None and loaded is not None:
                value = loaded.field(f"h{seat}")
            return value if isinstance(value, bytes) else None

        event = events_pb2.TableEvent(
            table_id=table_id,
            version=state.version,
            state=published_state(state),
            seat_holders=seat_holders(state, digest_of),
            committed_at_ms=now,
            deadline_kind=deadline_kind,
            deadline_ms=state.deadline_ms,
            turn_number=state.turn_number,
        )
        ttl = (
            self.policy.lobby_ttl_ms
            if state.phase is Phase.WAITING
            else self.policy.finished_ttl_ms
        )
        pending = await self.store.commit(
            Commit(
                table_id=table_id,
                expected_version=loaded.version if loaded is not None else 0,
                state=state_bytes,
                version=state.version,
                log_entry=encode_entry(
                    command, now, int(loaded.field("lt") or 0) if loaded is not None else 0
                ),
                event=event.SerializeToString(),
                deadline_ms=state.deadline_ms,
                ttl_ms=ttl,
                now_ms=now,
                set_fields=(
                    *set_fields,
                    ("tn", state.turn_number),
                    ("dk", int(deadline_kind)),
                    ("lt", now),
                ),
                code=code or (loaded.code if loaded is not None else ""),
                create_request=create_request,
                phase=state.phase.name.lower(),
            )
        )
        if pending is None:
            return False
        if self.on_applied is not None:
            self.on_applied(command, transition)
        if self.publisher is not None:
            try:
                await self.publisher.publish(table_id, pending, clear_in_background=True)
            except Exception:  # the relay re-publishes what is left in the outbox
                metrics.PUBLISH_FAILURES.inc()
                log.exception("table.publish_failed", table_id=table_id, version=state.version)
        return True

    # -- helpers ---------------------------------------------------------------------------

    async def _load(self, table_id: str) -> LoadedTable:
        loaded = await self.store.load(table_id)
        if loaded is None:
            raise _not_found()
        return loaded

    def _seat_of(self, loaded: LoadedTable, token: str, *, allow_left_seat: bool) -> int:
        digest = credentials.token_digest(token)
        for seat in range(4):
            stored = loaded.field(f"h{seat}")
            if stored is not None and credentials.same_hash(stored, digest):
                if not allow_left_seat and not is_held(loaded.state, seat):
                    break  # a freed seat's token works nowhere (the host's of a closed table)
                return seat
        raise _token_invalid()

    @staticmethod
    def _same_payload(record: RequestRecord, fingerprint: bytes) -> None:
        if record.fingerprint != fingerprint:
            raise ServiceError(
                grpc.StatusCode.ALREADY_EXISTS,
                "REQUEST_ID_REUSED",
                "this request_id was used for another request",
            )

    async def _state_at(self, table_id: str, version: int) -> TableState:
        """The table as it was at ``version``: its log replayed that far."""
        entries = decode_log(await self.store.read_log(table_id))
        return replay(entries[:version])

    def _token(self, state: TableState, seat: int, nonce: str) -> str:
        return credentials.seat_token(self.policy.token_secret, state.table_id, seat, nonce)

    def _join_response(
        self, state: TableState, seat: int, token: str
    ) -> gateway_pb2.JoinTableResponse:
        return gateway_pb2.JoinTableResponse(
            table_id=state.table_id,
            seat=seat,
            seat_token=token,
            view=table_view(state, seat, self.now_ms()),
        )

    async def _repeat_create(
        self, earlier: tuple[str, str], fingerprint: str
    ) -> gateway_pb2.CreateTableResponse:
        table_id, first_fingerprint = earlier
        if first_fingerprint != fingerprint:
            raise ServiceError(
                grpc.StatusCode.ALREADY_EXISTS,
                "REQUEST_ID_REUSED",
                "this request_id was used for another request",
            )
        loaded = await self._load(table_id)
        state = await self._state_at(table_id, 1)
        nonce = (loaded.field("n0") or b"").decode()
        return gateway_pb2.CreateTableResponse(
            table_id=table_id,
            invitation_code=loaded.code,
            seat=0,
            seat_token=credentials.seat_token(self.policy.token_secret, table_id, 0, nonce),
            view=table_view(state, 0, self.now_ms()),
        )

    def _command_builder(self, request: SeatedRequest) -> Callable[[int], Command]:
        if isinstance(request, gateway_pb2.PlayTileRequest):
            tile = requests.tile(request.tile.low, request.tile.high)
            end = requests.end(request.end)
            return lambda seat: Play(seat, tile, end)
        if isinstance(request, gateway_pb2.PassRequest):
            return Pass
        if isinstance(request, gateway_pb2.StartGameRequest):
            seed = secrets.randbits(128)
            return lambda seat: Start(seat, seed)
        if isinstance(request, gateway_pb2.SetTargetRequest):
            target = requests.target(request.target, zero_means_default=False)
            return lambda seat: SetTarget(seat, target)
        return Leave

    @staticmethod
    def _contention() -> ServiceError:
        return ServiceError(
            grpc.StatusCode.ABORTED, "VERSION_CONFLICT", "too many concurrent changes; retry"
        )
