"""The public API (``dominos.v1.DominosService``): the clients' only door.

Commands are forwarded to the table service with a deadline and retried on UNAVAILABLE
(safe: every command carries a request id, so a retry acts at most once). The seat token
comes from the ``authorization: Bearer <token>`` metadata; the client's address (without
its port) is passed on for the join rate limit (D6). Errors of the table service reach the
client unchanged: status code, message and rich details.

``WatchTable`` authenticates the seat, registers the stream with the process's fan-out hub,
takes a renewable presence lease for the seat and marks it connected (S3, S4); when the
stream ends or its connection is lost, the lease is released and the seat marked
disconnected, unless another stream of the same seat is still open.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import itertools
import random
import time
from collections.abc import Awaitable, Callable, Hashable, Mapping
from dataclasses import dataclass
from typing import Any, Final, TypeVar

import grpc
from dominos.v1 import gateway_pb2, gateway_pb2_grpc, table_pb2

from services.common import credentials, requests
from services.common.commands import (
    ANSWER_FRIENDLY_END,
    BY_FIELD,
    CREATE_TABLE,
    DRAW_TILE,
    JOIN_TABLE,
    LEAVE_TABLE,
    PASS,
    PLAY_TILE,
    PROPOSE_FRIENDLY_END,
    SET_TARGET,
    START_GAME,
    CommandSpec,
)
from services.common.grpc_server import MIN_CLIENT_PING_INTERVAL_MS
from services.common.log_sampling import LogSampler
from services.common.logging import bound_context, get_logger
from services.common.metrics import package_version
from services.common.peers import client_address
from services.common.projection import watch_response_from_parts
from services.common.service_errors import DETAILS_KEY, Limit, Reason, ServiceError, abort
from services.gateway import metrics
from services.gateway.admission import Admission, replaced
from services.gateway.hub import Hub, Version, WatcherClosed
from services.gateway.presence import LeaseKeeper
from services.gateway.refusals import Refusals
from services.rules import Phase

log = get_logger(__name__)

_Reply = TypeVar("_Reply")
_Request = TypeVar("_Request")
_Handler = Callable[[Any, _Request, Any], Awaitable[_Reply]]

CALL_TIMEOUT_S: Final = 5.0


@dataclass(frozen=True, slots=True)
class Retry:
    """Which upstream failures a call is retried after, how often, and from what delay
    (doubling, with up to ``jitter`` of it added at random). A failure of ``unavailable_after``
    still there after the last attempt is answered UNAVAILABLE (retry later), not relayed."""

    codes: tuple[grpc.StatusCode, ...]
    attempts: int
    delay_s: float
    jitter: float = 0.0
    unavailable_after: tuple[grpc.StatusCode, ...] = ()


#: A command: retried after UNAVAILABLE, and after CANCELLED, which here means the table
#: service went away mid-call (a restart), not our client. It carries a request id: it acts
#: at most once.
COMMAND_RETRY: Final = Retry(
    (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.CANCELLED), attempts=3, delay_s=0.05
)
#: Marking a seat connected when a stream opens: harmless twice, so also retried when the
#: table changed too fast (ABORTED), with jitter; still ABORTED after that: UNAVAILABLE.
PRESENCE_RETRY: Final = Retry(
    (*COMMAND_RETRY.codes, grpc.StatusCode.ABORTED),
    attempts=5,
    delay_s=0.02,
    jitter=1.0,
    unavailable_after=(grpc.StatusCode.ABORTED,),
)
#: The contract's protobuf package.
CONTRACT: Final = gateway_pb2.DESCRIPTOR.package
#: Why a watcher closes when the gateway shuts down.
SHUTDOWN: Final = "shutdown"
#: Upstream failures expected in operation (the table service down, restarting or frozen past
#: CALL_TIMEOUT_S); any other failure without an ErrorInfo is logged as an error.
_UPSTREAM_TRANSIENT: Final = (
    grpc.StatusCode.UNAVAILABLE,
    grpc.StatusCode.CANCELLED,
    grpc.StatusCode.DEADLINE_EXCEEDED,
)
_DONE = (Phase.FINISHED, Phase.CLOSED)
#: One line per failed call would let clients flood the log while the table service is down:
#: the lines are sampled per status code (the metric counts every failure).
_FAILURE_LOGS = LogSampler()


def _upstream_failure(error: grpc.aio.AioRpcError) -> ServiceError:
    """The client's answer to a table-service failure that is not one of its rejections (those
    carry their ErrorInfo): a transport error, a timeout, an oversized call or a crash. Every
    such failure is UNAVAILABLE / UNAVAILABLE, retryable with the same request id (a command
    commits atomically, at most once); the upstream message (internal addresses) never
    reaches the client."""
    code = error.code()
    level = log.warning if code in _UPSTREAM_TRANSIENT else log.error
    _FAILURE_LOGS.log(
        level, "table service call failed", key=code, code=code.name, details=error.details()
    )
    metrics.UPSTREAM_FAILURES.labels(code=code.name).inc()
    return ServiceError(
        grpc.StatusCode.UNAVAILABLE,
        Reason.UNAVAILABLE,
        "the table service is unavailable; retry with the same request_id",
    )


def _observe_fanout(version: Version, waiting: int) -> None:
    """Record a view written: how long after its commit and its arrival here (versions read
    as snapshots have neither), and how many versions still wait behind it."""
    metrics.STREAM_QUEUE_DEPTH.observe(waiting)
    if version.received:
        metrics.FANOUT_SECONDS.observe(max(time.monotonic() - version.received, 0.0))
    if version.committed_at_ms:
        metrics.VIEW_LATENCY.observe(max(time.time() * 1000 - version.committed_at_ms, 0) / 1000)


def _method_name(method: Any) -> str:
    """The RPC name of a table-channel method (``Execute``), for metric labels."""
    return str(getattr(method, "name", "") or "unknown")


def _ended(context: Any) -> bool:
    """Whether the client's own call is over (then there is no one to retry for)."""
    try:
        return bool(context.cancelled() or context.done())
    except Exception:
        return False


def bearer_token(context: Any) -> str:
    """The seat token of the call's ``authorization`` metadata, which must read exactly
    ``Bearer <token>`` (the contract's one form); '' when absent or in any other form (then
    the call is refused UNAUTHENTICATED / TOKEN_MISSING, saying the form)."""
    for key, value in context.invocation_metadata() or ():
        if key == "authorization":
            text = value if isinstance(value, str) else value.decode()
            scheme, _, token = text.partition(" ")
            return token if scheme == "Bearer" and token and " " not in token else ""
    return ""


def _seat_freed() -> ServiceError:
    return ServiceError(
        grpc.StatusCode.PERMISSION_DENIED,
        Reason.TOKEN_INVALID,
        "the seat of this token was freed; the token no longer works",
    )


def _shutting_down() -> ServiceError:
    return ServiceError(
        grpc.StatusCode.UNAVAILABLE,
        Reason.UNAVAILABLE,
        "this gateway is shutting down; reopen the stream (another gateway answers)",
    )


def _token_missing() -> ServiceError:
    return ServiceError(
        grpc.StatusCode.UNAUTHENTICATED,
        Reason.TOKEN_MISSING,
        "send the seat token as 'authorization: Bearer <token>' metadata",
    )


def _budget_subjects(peer: str, address: str, command: dict[str, Any]) -> dict[str, Hashable]:
    """Who each budget of the table service counts for this command (see ``refusals``)."""
    ((field, request),) = command.items()
    if field == CREATE_TABLE.field:
        return {
            Limit.CREATES_PER_ADDRESS: ("create", address),
            Limit.CREATES_PER_SECOND: ("create", address),
        }
    if field == JOIN_TABLE.field:
        return {
            Limit.JOIN_FAILURES_PER_CONNECTION: ("join", peer),
            Limit.JOIN_FAILURES_PER_ADDRESS: ("join", address),
        }
    if BY_FIELD[field].lobby_change:
        return {Limit.LOBBY_CHANGES: ("lobby", request.table_id)}
    return {}


async def _refuse(context: Any, error: ServiceError) -> None:
    """End a call the gateway's own caps refused (counted by limit)."""
    metrics.REFUSED.labels(error.metadata.get("limit", "")).inc()
    await abort(context, error)


def admitted(method: _Handler[_Request, _Reply]) -> _Handler[_Request, _Reply]:
    """Count the call against its connection's address (:class:`Admission`); refuse it
    (RESOURCE_EXHAUSTED / RATE_LIMITED) when the address may open no more connections."""

    @functools.wraps(method)
    async def call(self: GatewayServicer, request: _Request, context: Any) -> _Reply:
        peer = context.peer() or ""
        try:
            self.admission.call_started(peer)
        except ServiceError as error:
            await _refuse(context, error)
        try:
            return await method(self, request, context)
        finally:
            self.admission.call_ended(peer)

    return call


def _forwarding(spec: CommandSpec) -> Callable[..., Awaitable[Any]]:
    """The ``DominosService`` method of a command: admitted, then forwarded."""

    async def method(self: GatewayServicer, request: Any, context: Any) -> Any:
        return await self._command(spec, request, context)

    method.__name__ = method.__qualname__ = spec.rpc
    method.__doc__ = "See gateway.proto."
    return admitted(method)


class GatewayServicer(gateway_pb2_grpc.DominosServiceServicer):
    """``dominos.v1.DominosService`` over the internal table service."""

    def __init__(
        self,
        table: Any,
        hub: Hub,
        leases: LeaseKeeper,
        *,
        gateway_id: str,
        admission: Admission | None = None,
        clock: Callable[[], float] = time.time,
        execute: Callable[..., Awaitable[Any]] | None = None,
    ) -> None:
        self.table = table
        #: How a command reaches the table service: ``execute`` (the gateway's command
        #: streams, :class:`~services.common.command_streams.CommandStreams`), else the
        #: unary ``Execute``.
        self.execute = execute or table.Execute
        self.hub = hub
        self.leases = leases
        self.admission = admission or Admission(
            connections_per_address=0, streams_per_address=0, streams_per_seat=1000
        )
        #: Budget refusals of the table service, repeated here until their window ends.
        self.refusals = Refusals()
        #: Set when the gateway starts shutting down: no new stream, open ones end.
        self.draining = False
        self.gateway_id = gateway_id
        self.clock = clock
        self._stream_ids = itertools.count(1)
        #: Open streams per (table, seat, holder of the token): a seat is connected here
        #: while its current holder has one (an old holder's streams do not count).
        self._local_seats: dict[tuple[str, int, bytes], int] = {}
        self._background: set[asyncio.Task[None]] = set()
        metrics.CONNECTED_SEATS.set_function(lambda: len(self._local_seats))

    def now_ms(self) -> int:
        """The gateway's clock, ms since the epoch."""
        return int(self.clock() * 1000)

    # -- forwarding ------------------------------------------------------------------------

    async def _forward(
        self,
        method: Any,
        request: Any,
        context: Any,
        subjects: Mapping[str, Hashable] | None = None,
        retry: Retry = COMMAND_RETRY,
    ) -> Any:
        """Call the table service, retried as ``retry`` says with backoff; relay any other
        error to the client. With ``subjects`` (budget → who it counts), a budget refusal
        still held for them is answered here, and a new one is held."""
        if subjects:
            held = self.refusals.check(subjects)
            if held is not None:
                metrics.REFUSALS_REPEATED.labels(held.metadata["limit"]).inc()
                await abort(context, held)
        delay = retry.delay_s
        for attempt in range(retry.attempts + 1):
            try:
                return await method(request, timeout=CALL_TIMEOUT_S)
            except grpc.aio.AioRpcError as error:
                code = error.code()
                if code in retry.codes and attempt < retry.attempts and not _ended(context):
                    metrics.UPSTREAM_RETRIES.labels(_method_name(method), code.name).inc()
                    await asyncio.sleep(delay * (1 + retry.jitter * random.random()))
                    delay *= 2
                    continue
                if code in retry.unavailable_after:
                    await abort(context, _upstream_failure(error))
                if subjects:
                    self.refusals.remember(error, subjects)
                await self._relay(error, context)
        raise AssertionError("unreachable")  # pragma: no cover

    async def _relay(self, error: grpc.aio.AioRpcError, context: Any) -> None:
        """End the client's call with the table service's refusal (its status and rich
        details), or UNAVAILABLE for a failure that carries none."""
        details = tuple((k, v) for k, v in (error.trailing_metadata() or ()) if k == DETAILS_KEY)
        if not details:
            await abort(context, _upstream_failure(error))
        await context.abort(error.code(), error.details() or "", details)

    async def _execute(
        self, expect: type[_Reply], context: Any, token: str = "", **command: Any
    ) -> _Reply:
        peer = context.peer() or ""
        address = client_address(peer)
        request = table_pb2.ExecuteRequest(
            seat_token=token, peer=address, connection=f"{self.gateway_id}/{peer}", **command
        )
        reply = await self._forward(
            self.execute, request, context, _budget_subjects(peer, address, command)
        )
        result = getattr(reply, reply.WhichOneof("result"))
        assert isinstance(result, expect)
        return result

    async def _token(self, context: Any) -> str:
        token = bearer_token(context)
        if not token:
            await abort(context, _token_missing())
        try:
            # Refused here, not forwarded: keeps the internal envelope within its size bound.
            return requests.seat_token(token)
        except ServiceError as error:
            await abort(context, error)

    async def _command(self, spec: CommandSpec, request: Any, context: Any) -> Any:
        """Forward one command of the contract (a seat's: its token first, UNAUTHENTICATED
        when missing)."""
        token = await self._token(context) if spec.seated else ""
        return await self._execute(spec.response, context, token, **{spec.field: request})

    CreateTable = _forwarding(CREATE_TABLE)
    JoinTable = _forwarding(JOIN_TABLE)
    LeaveTable = _forwarding(LEAVE_TABLE)
    SetTarget = _forwarding(SET_TARGET)
    StartGame = _forwarding(START_GAME)
    PlayTile = _forwarding(PLAY_TILE)
    Pass = _forwarding(PASS)
    DrawTile = _forwarding(DRAW_TILE)
    ProposeFriendlyEnd = _forwarding(PROPOSE_FRIENDLY_END)
    AnswerFriendlyEnd = _forwarding(ANSWER_FRIENDLY_END)

    @admitted
    async def GetTableView(  # noqa: N802
        self, request: gateway_pb2.GetTableViewRequest, context: Any
    ) -> gateway_pb2.GetTableViewResponse:
        """See gateway.proto."""
        token = await self._token(context)
        reply = await self._forward(
            self.table.GetView,
            table_pb2.GetViewRequest(table_id=request.table_id, seat_token=token),
            context,
        )
        return gateway_pb2.GetTableViewResponse(view=reply.view)

    @admitted
    async def GetServerInfo(  # noqa: N802
        self, request: gateway_pb2.GetServerInfoRequest, context: Any
    ) -> gateway_pb2.GetServerInfoResponse:
        """See gateway.proto."""
        return gateway_pb2.GetServerInfoResponse(
            server_version=package_version(),
            contract=CONTRACT,
            min_ping_interval_ms=MIN_CLIENT_PING_INTERVAL_MS,
            streams_per_seat=self.admission.streams_per_seat,
        )

    # -- the view stream -------------------------------------------------------------------

    @admitted
    async def WatchTable(  # noqa: N802
        self, request: gateway_pb2.WatchTableRequest, context: Any
    ) -> None:
        """See gateway.proto: the current view, then one view per version; presence. The
        stream belongs to its token: it ends (PERMISSION_DENIED / TOKEN_INVALID) at the first
        version whose holder of the seat is another, before sending anything of it."""
        if self.draining:
            await abort(context, _shutting_down())
        token = await self._token(context)
        mine = credentials.token_holder(token)
        # A seat that connected too often is refused here until its window ends.
        budget: dict[str, Hashable] = {Limit.CONNECTIONS_PER_SEAT: ("seat", request.table_id, mine)}
        held = self.refusals.check(budget)
        if held is not None:
            metrics.REFUSALS_REPEATED.labels(Limit.CONNECTIONS_PER_SEAT).inc()
            await abort(context, held)
        seat, checked_at = await self._seat_of(request.table_id, token, context)
        table_id = request.table_id
        holder = f"{self.gateway_id}:{next(self._stream_ids)}"
        watcher = await self.hub.watch(table_id, seat)
        key = (table_id, seat, mine)
        try:
            # At most so many streams per address; a newer stream of the token replaces its
            # oldest beyond the seat's cap (that one's watcher closes).
            slot = self.admission.open_stream(context.peer() or "", key, watcher)
        except ServiceError as error:
            await self.hub.unwatch(watcher)
            await _refuse(context, error)
        self._local_seats[key] = self._local_seats.get(key, 0) + 1
        metrics.STREAMS.inc()
        revoked = False
        with bound_context(table_id=table_id, seat=seat):
            try:
                await self._connect(table_id, seat, token, holder, context, budget)
                ended = await self._send_versions(watcher, seat, mine, checked_at, context)
                if ended is not None:
                    revoked = ended.reason is Reason.TOKEN_INVALID
                    await abort(context, ended)
            finally:
                metrics.STREAMS.dec()
                self.admission.close_stream(slot)
                self._local_seats[key] -= 1
                if not self._local_seats[key]:
                    del self._local_seats[key]
                cleanup = asyncio.create_task(
                    self._disconnect(watcher, table_id, seat, token, holder, revoked=revoked)
                )
                self._background.add(cleanup)
                cleanup.add_done_callback(self._background.discard)

    async def _send_versions(
        self, watcher: Any, seat: int, mine: bytes, checked_at: int, context: Any
    ) -> ServiceError | None:
        """Send the seat's view of every version until the game is over (``None``), or the
        error the stream ends with: the seat's holder changed (its token was revoked), the
        watcher was replaced by a newer stream of the token, or the gateway shuts down."""
        while True:
            try:
                # Shared with the table's other streams. Awaiting the watcher's future here,
                # not a coroutine of its own, keeps a waiting stream's objects few.
                version = watcher.take()
                while version is None:
                    await watcher.wakeup()
                    version = watcher.take()
            except WatcherClosed as closed:
                if str(closed) == SHUTDOWN:
                    return _shutting_down()
                metrics.STREAMS_REPLACED.inc()
                return replaced()
            if version.holders and credentials.holder_of(version.holders, seat) != mine:
                if version.version <= checked_at:
                    continue  # older than the token check: a feed catching up
                metrics.STREAMS_REVOKED.inc()
                return _seat_freed()
            # No view is kept between versions: an idle stream holds no message. The views
            # came in parts, computed once for every stream of the table (by the table
            # service, or Hub.publish for a snapshot): the public part, the seat's own, the
            # time (the bytes parse as table_view(state, seat, now)).
            views = version.views
            assert views is not None  # every offered version went through Hub.publish
            if seat >= len(views.seats):
                continue  # no part for this seat: not a version of its rule set (never sent)
            own = views.seats[seat]
            await context.write(watch_response_from_parts(views.public, own, self.now_ms()))
            _observe_fanout(version, watcher.waiting)
            if version.phase in _DONE:
                return None

    async def _seat_of(self, table_id: str, token: str, context: Any) -> tuple[int, int]:
        """The seat the token proves at the table (the table service checks it) and the
        version it was checked at: nothing of the view it answers with is kept for the
        stream's lifetime."""
        reply = await self._forward(
            self.table.GetView,
            table_pb2.GetViewRequest(table_id=table_id, seat_token=token),
            context,
        )
        return int(reply.view.your_seat), int(reply.view.version)

    async def _connect(
        self,
        table_id: str,
        seat: int,
        token: str,
        holder: str,
        context: Any,
        budget: Mapping[str, Hashable],
    ) -> None:
        """Take the seat's presence lease and mark it connected; a refusal of the table
        service (a seat that connects too often) ends the stream with its status."""
        await self.leases.take(table_id, seat, holder)
        request = table_pb2.SetPresenceRequest(table_id=table_id, seat_token=token, connected=True)
        await self._forward(self.table.SetPresence, request, context, budget, PRESENCE_RETRY)

    async def _disconnect(
        self,
        watcher: Any,
        table_id: str,
        seat: int,
        token: str,
        holder: str,
        *,
        revoked: bool = False,
    ) -> None:
        """After a stream ended: leave the hub, release the lease, mark the seat away (not
        for a stream whose seat was freed: its token no longer speaks for the seat)."""
        with contextlib.suppress(Exception):
            await self.hub.unwatch(watcher)
        try:
            released = await self.leases.release(holder)
            mine = credentials.token_holder(token)
            if released and not revoked and (table_id, seat, mine) not in self._local_seats:
                await self.table.SetPresence(
                    table_pb2.SetPresenceRequest(
                        table_id=table_id, seat_token=token, connected=False
                    ),
                    timeout=CALL_TIMEOUT_S,
                )
        except Exception:  # the lease expires and the timer service marks the seat away
            log.warning("gateway.disconnect_failed", table_id=table_id, seat=seat)

    def end_streams(self) -> None:
        """The gateway is shutting down: refuse new view streams and end every open one with
        UNAVAILABLE / UNAVAILABLE at once, so that clients reconnect to another gateway now
        instead of at the end of the grace period. Unary calls in flight go on."""
        self.draining = True
        ended = self.admission.close_all(SHUTDOWN)
        log.info("gateway.streams_ended", streams=ended)

    async def drain(self) -> None:
        """Wait for the disconnect work of ended streams (at shutdown)."""
        if self._background:
            await asyncio.gather(*self._background, return_exceptions=True)
