"""The table service's gRPC servicer: a thin adapter from ``dominos.v1.TableService`` to
:class:`~services.table.application.TableApp`.

Each method binds the call's context for the logs, calls the application, and turns a
:class:`ServiceError` into the gRPC status with its rich details; a Redis or NATS outage
becomes UNAVAILABLE (retrying with the same request id is safe).

Only values of a valid shape are bound to the log context: a ``table_id`` or ``request_id``
that fails its validator is bound as ``"<invalid>"`` (the request itself is rejected by the
application with its precise reason). Every rejection is counted in the metrics, but its log
line (``table.command_rejected``) and ``table.dependency_unavailable`` are sampled per reason
(:class:`~services.common.log_sampling.LogSampler`): a client sending bad requests as fast
as it can does not flood the log.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any, Final

import grpc
from dominos.v1 import table_pb2, table_pb2_grpc
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from services.common import requests
from services.common.caller_auth import GATEWAY, current_caller
from services.common.connections import DEPENDENCY_ERRORS
from services.common.log_sampling import LogSampler
from services.common.logging import INVALID, REDACTED, bound_context, get_logger
from services.common.peers import client_address
from services.common.service_errors import Reason, ServiceError, abort, invalid
from services.rules.binary import varint
from services.table import metrics
from services.table.application import TableApp
from services.table.store import Client

log = get_logger(__name__)

UNAVAILABLE_ERRORS = (RedisConnectionError, RedisTimeoutError, ConnectionError, TimeoutError)

#: Lines of per-request failures (rejections, dependency outages), sampled per reason.
_SAMPLED = LogSampler()
#: Commands whose request id is a secret (it proves the seat on a retry): never logged.
_SECRET_REQUEST_IDS: Final = frozenset({"create_table", "join_table"})
#: Each command's entry of ``ExecuteResponse.result``: its tag (field number, bytes).
_RESULT_TAGS: Final = {
    field.name: varint(field.number << 3 | 2)
    for field in table_pb2.ExecuteResponse.DESCRIPTOR.fields
}
#: The table service's methods whose handlers answer bytes already serialised.
EXECUTE_METHOD: Final = "/dominos.v1.TableService/Execute"
EXECUTE_STREAM_METHOD: Final = "/dominos.v1.TableService/ExecuteStream"
#: The tags of ``ExecuteStreamResponse.seq`` (varint) and ``.response`` (bytes).
_OUTCOME_SEQ: Final = varint(1 << 3)
_OUTCOME_RESPONSE: Final = varint(2 << 3 | 2)


def _checked(validate: Callable[[str], str], value: str) -> str:
    """``value`` if ``validate`` accepts it, else :data:`INVALID`: what the logs may show."""
    try:
        return validate(value)
    except ServiceError:
        return INVALID


def call_context(
    command: str | None, inner: Any = None, *, table_id: str | None = None
) -> AbstractContextManager[None]:
    """The log context of a call: its command and, when its request has them, its validated
    ``table_id`` and ``request_id`` (never the request id of a create or join: a retry with
    it answers the seat token)."""
    values: dict[str, Any] = {"command": command}
    if table_id is None and inner is not None and hasattr(inner, "table_id"):
        table_id = inner.table_id
    if table_id is not None:
        values["table_id"] = _checked(requests.table_id, table_id)
    if inner is not None and hasattr(inner, "request_id"):
        values["request_id"] = (
            REDACTED
            if command in _SECRET_REQUEST_IDS
            else _checked(requests.request_id, inner.request_id)
        )
    return bound_context(**values)


class TableServicer(table_pb2_grpc.TableServiceServicer):
    """``dominos.v1.TableService`` over a :class:`TableApp`."""

    def __init__(self, app: TableApp, *, callers_authenticated: bool = True) -> None:
        self.app = app
        #: False only in development without caller credentials: then every caller is
        #: trusted to pass on its client's address.
        self.callers_authenticated = callers_authenticated
        #: Set when the service starts shutting down: streams take no more commands.
        self.draining = False
        #: The handlers of the command streams waiting for their next frame.
        self._idle_streams: set[asyncio.Task[Any]] = set()

    async def Execute(  # noqa: N802 (gRPC method name)
        self, request: table_pb2.ExecuteRequest, context: Any
    ) -> bytes:
        """Apply one command (see table.proto); the answer is the serialised
        ``ExecuteResponse``."""
        kind = request.WhichOneof("command")
        inner: Any = getattr(request, kind) if kind else None
        with call_context(kind, inner):
            try:
                return await self._execute(request, kind, inner, context)
            except ServiceError as error:
                _rejected(kind, error)
                await abort(context, error)
            except UNAVAILABLE_ERRORS as error:
                await abort(context, _unavailable(error))

    async def ExecuteStream(  # noqa: N802 (gRPC method name)
        self, frames: Any, context: Any
    ) -> None:
        """Apply each frame's command in turn and answer its serialised ``ExecuteStreamResponse``
        (see table.proto), until the caller half-closes the stream; once the service drains,
        the stream ends (OK) after the command in hand, and an idle one at once (cancelled),
        so its caller opens the next one on a replica that stays."""
        task = asyncio.current_task()
        assert task is not None
        self._idle_streams.add(task)
        try:
            while not self.draining:
                frame = await context.read()
                if frame is grpc.aio.EOF:
                    return
                self._idle_streams.discard(task)
                await context.write(await self._outcome(frame, context))
                self._idle_streams.add(task)
        finally:
            self._idle_streams.discard(task)

    def drain(self) -> None:
        """Stop taking commands on streams: each ends after the command in hand; an idle
        one is cancelled now (the runtime's drain callback)."""
        self.draining = True
        for task in self._idle_streams:
            task.cancel()

    async def _outcome(self, frame: table_pb2.ExecuteStreamRequest, context: Any) -> bytes:
        """A frame's ``ExecuteStreamResponse``, serialised: Execute's answer or its refusal."""
        request = frame.request
        kind = request.WhichOneof("command")
        inner: Any = getattr(request, kind) if kind else None
        with call_context(kind, inner):
            try:
                answer = await self._execute(request, kind, inner, context)
                return (
                    _OUTCOME_SEQ
                    + varint(frame.seq)
                    + _OUTCOME_RESPONSE
                    + varint(len(answer))
                    + answer
                )
            except ServiceError as error:
                _rejected(kind, error)
                return _refusal(frame.seq, error)
            except UNAVAILABLE_ERRORS as error:
                return _refusal(frame.seq, _unavailable(error))

    async def _execute(
        self, request: table_pb2.ExecuteRequest, kind: str | None, inner: Any, context: Any
    ) -> bytes:
        if kind is None:
            raise invalid(Reason.COMMAND_MISSING, "an ExecuteRequest carries one command")
        client = self._client(request, context)
        result = await self.app.execute_serialized(inner, request.seat_token, client)
        # The ExecuteResponse's bytes: its one entry, the command's response (sent as they are:
        # the server's Execute handler takes answers already serialised, see server.py).
        return _RESULT_TAGS[kind] + varint(len(result)) + result

    def _client(self, request: table_pb2.ExecuteRequest, context: Any) -> Client:
        """Who the budgets count a create or a join by. Only a gateway speaks for a client
        (its address and connection); any other caller is counted as itself."""
        speaks_for_client = current_caller() == GATEWAY or not self.callers_authenticated
        if speaks_for_client and request.peer:
            return Client(request.peer[:128], (request.connection or request.peer)[:192])
        own = context.peer() or "unknown"
        return Client(client_address(own)[:128], own[:192])

    async def SetPresence(  # noqa: N802
        self, request: table_pb2.SetPresenceRequest, context: Any
    ) -> table_pb2.SetPresenceResponse:
        """Mark a seat connected or disconnected."""
        with call_context("set_presence", table_id=request.table_id):
            try:
                version = await self.app.set_presence(
                    request.table_id, request.seat_token, request.connected
                )
                return table_pb2.SetPresenceResponse(version=version)
            except ServiceError as error:
                metrics.COMMANDS_REJECTED.labels("set_presence", error.reason).inc()
                await abort(context, error)
            except UNAVAILABLE_ERRORS:
                DEPENDENCY_ERRORS.labels("redis").inc()
                await abort(context, unavailable())

    async def GetView(  # noqa: N802
        self, request: table_pb2.GetViewRequest, context: Any
    ) -> table_pb2.GetViewResponse:
        """A seat's current view."""
        with call_context("get_view", table_id=request.table_id):
            try:
                view = await self.app.view(request.table_id, request.seat_token)
                return table_pb2.GetViewResponse(view=view)
            except ServiceError as error:
                await abort(context, error)
            except UNAVAILABLE_ERRORS:
                await abort(context, unavailable())

    async def GetSnapshot(  # noqa: N802
        self, request: table_pb2.GetSnapshotRequest, context: Any
    ) -> table_pb2.GetSnapshotResponse:
        """A table's full internal state."""
        with call_context("get_snapshot", table_id=request.table_id):
            try:
                version, state, holders = await self.app.snapshot(request.table_id)
                return table_pb2.GetSnapshotResponse(
                    version=version, state=state, seat_holders=holders
                )
            except ServiceError as error:
                await abort(context, error)
            except UNAVAILABLE_ERRORS:
                await abort(context, unavailable())


def _refusal(seq: int, error: ServiceError) -> bytes:
    """The serialised ``ExecuteStreamResponse`` of a refused command: Execute's status."""
    refusal = table_pb2.CommandRefusal(
        code=error.code.value[0], message=error.message, status=error.status().SerializeToString()
    )
    return table_pb2.ExecuteStreamResponse(seq=seq, refusal=refusal).SerializeToString()


def _rejected(kind: str | None, error: ServiceError) -> None:
    """Count a refused command and log it (sampled per reason)."""
    metrics.COMMANDS_REJECTED.labels(kind or "none", error.reason).inc()
    _SAMPLED.log(
        log.info,
        "table.command_rejected",
        key=("rejected", error.reason),
        reason=error.reason,
        code=error.code.name,
    )


def _unavailable(error: BaseException) -> ServiceError:
    """Count and log (sampled) a dependency's failure; the refusal the caller gets."""
    DEPENDENCY_ERRORS.labels("redis").inc()
    _SAMPLED.log(
        log.warning,
        "table.dependency_unavailable",
        key=("unavailable", type(error).__name__),
        error=repr(error),
    )
    return unavailable()


def unavailable() -> ServiceError:
    return ServiceError(
        grpc.StatusCode.UNAVAILABLE, Reason.UNAVAILABLE, "a dependency is unavailable; retry"
    )
