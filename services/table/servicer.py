"""The table service's gRPC servicer: a thin adapter from ``dominos.v1.TableService`` to
:class:`~services.table.application.TableApp`.

Each method binds the call's context for the logs, calls the application, and turns a
:class:`ServiceError` into the gRPC status with its rich details; a Redis or NATS outage
becomes UNAVAILABLE (retrying with the same request id is safe).
"""

from __future__ import annotations

from typing import Any

import grpc
from dominos.v1 import gateway_pb2, table_pb2, table_pb2_grpc
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from services.common.connections import DEPENDENCY_ERRORS
from services.common.logging import bound_context, get_logger
from services.table import metrics
from services.table.application import TableApp
from services.table.service_errors import ServiceError, abort, invalid

log = get_logger(__name__)

_UNAVAILABLE = (RedisConnectionError, RedisTimeoutError, ConnectionError, TimeoutError)


class TableServicer(table_pb2_grpc.TableServiceServicer):
    """``dominos.v1.TableService`` over a :class:`TableApp`."""

    def __init__(self, app: TableApp) -> None:
        self.app = app

    async def Execute(  # noqa: N802 (gRPC method name)
        self, request: table_pb2.ExecuteRequest, context: Any
    ) -> table_pb2.ExecuteResponse:
        """Apply one command (see table.proto)."""
        kind = request.WhichOneof("command")
        inner: Any = getattr(request, kind) if kind else None
        with bound_context(
            command=kind,
            table_id=getattr(inner, "table_id", None),
            request_id=getattr(inner, "request_id", None),
        ):
            try:
                return await self._execute(request, kind, inner, context)
            except ServiceError as error:
                metrics.COMMANDS_REJECTED.labels(kind or "none", error.reason).inc()
                log.info("table.command_rejected", reason=error.reason, code=error.code.name)
                await abort(context, error)
            except _UNAVAILABLE as error:
                DEPENDENCY_ERRORS.labels("redis").inc()
                log.warning("table.dependency_unavailable", error=repr(error))
                await abort(context, _unavailable())

    async def _execute(
        self, request: table_pb2.ExecuteRequest, kind: str | None, inner: Any, context: Any
    ) -> table_pb2.ExecuteResponse:
        if kind == "create_table":
            return table_pb2.ExecuteResponse(create_table=await self.app.create_table(inner))
        if kind == "join_table":
            peer = request.peer or context.peer() or "unknown"
            return table_pb2.ExecuteResponse(join_table=await self.app.join_table(inner, peer))
        if kind is None:
            raise invalid("COMMAND_MISSING", "an ExecuteRequest carries one command")
        _, result = await self.app.seated_command(inner, request.seat_token)
        if kind == "leave_table":
            assert isinstance(result, gateway_pb2.LeaveTableResponse)
            return table_pb2.ExecuteResponse(leave_table=result)
        responses: dict[str, Any] = {
            "set_target": gateway_pb2.SetTargetResponse,
            "start_game": gateway_pb2.StartGameResponse,
            "play_tile": gateway_pb2.PlayTileResponse,
            "pass": gateway_pb2.PassResponse,
        }
        return table_pb2.ExecuteResponse(**{kind: responses[kind](view=result)})

    async def SetPresence(  # noqa: N802
        self, request: table_pb2.SetPresenceRequest, context: Any
    ) -> table_pb2.SetPresenceResponse:
        """Mark a seat connected or disconnected."""
        with bound_context(table_id=request.table_id, command="set_presence"):
            try:
                version = await self.app.set_presence(
                    request.table_id, request.seat_token, request.connected
                )
                return table_pb2.SetPresenceResponse(version=version)
            except ServiceError as error:
                metrics.COMMANDS_REJECTED.labels("set_presence", error.reason).inc()
                await abort(context, error)
            except _UNAVAILABLE:
                DEPENDENCY_ERRORS.labels("redis").inc()
                await abort(context, _unavailable())

    async def GetView(  # noqa: N802
        self, request: table_pb2.GetViewRequest, context: Any
    ) -> table_pb2.GetViewResponse:
        """A seat's current view."""
        try:
            view = await self.app.view(request.table_id, request.seat_token)
            return table_pb2.GetViewResponse(view=view)
        except ServiceError as error:
            await abort(context, error)
        except _UNAVAILABLE:
            await abort(context, _unavailable())

    async def GetSnapshot(  # noqa: N802
        self, request: table_pb2.GetSnapshotRequest, context: Any
    ) -> table_pb2.GetSnapshotResponse:
        """A table's full internal state."""
        try:
            version, state = await self.app.snapshot(request.table_id)
            return table_pb2.GetSnapshotResponse(version=version, state=state)
        except ServiceError as error:
            await abort(context, error)
        except _UNAVAILABLE:
            await abort(context, _unavailable())


def _unavailable() -> ServiceError:
    return ServiceError(
        grpc.StatusCode.UNAVAILABLE, "UNAVAILABLE", "a dependency is unavailable; retry"
    )
