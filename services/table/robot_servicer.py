"""The table service's ``dominos.v1.RobotService``: the robots' door (issue 20).

A thin adapter like :class:`~services.table.servicer.TableServicer`: it reads a robot
seat's view and applies a robot's move through :class:`~services.table.application.TableApp`,
which checks that a robot plays the seat at the version the move applies to. Only the
caller ``bots`` reaches it (the interceptor's grants, :mod:`services.table.server`).
"""

from __future__ import annotations

from typing import Any

from dominos.v1 import table_pb2, table_pb2_grpc

from services.common.service_errors import Reason, ServiceError, abort, invalid
from services.table import metrics
from services.table.application import TableApp
from services.table.servicer import UNAVAILABLE_ERRORS, call_context, unavailable


class RobotServicer(table_pb2_grpc.RobotServiceServicer):
    """``dominos.v1.RobotService`` over a :class:`TableApp`."""

    def __init__(self, app: TableApp) -> None:
        self.app = app

    async def RobotView(  # noqa: N802 (gRPC method name)
        self, request: table_pb2.RobotViewRequest, context: Any
    ) -> table_pb2.RobotViewResponse:
        """The view of a seat a robot plays."""
        with call_context("robot_view", table_id=request.table_id):
            try:
                view = await self.app.robot_view(request.table_id, request.seat)
                return table_pb2.RobotViewResponse(view=view)
            except ServiceError as error:
                await abort(context, error)
            except UNAVAILABLE_ERRORS:
                await abort(context, unavailable())

    async def RobotAct(  # noqa: N802
        self, request: table_pb2.RobotActRequest, context: Any
    ) -> table_pb2.RobotActResponse:
        """A robot's move."""
        kind = request.WhichOneof("command")
        inner: Any = getattr(request, kind) if kind else None
        with call_context(f"robot_{kind}" if kind else "robot_act", inner):
            try:
                if inner is None:
                    raise invalid(Reason.COMMAND_MISSING, "a RobotActRequest carries one move")
                view = await self.app.robot_act(request.seat, inner)
                metrics.ROBOT_MOVES.labels(kind or "none").inc()
                return table_pb2.RobotActResponse(view=view)
            except ServiceError as error:
                metrics.COMMANDS_REJECTED.labels(f"robot_{kind or 'none'}", error.reason).inc()
                await abort(context, error)
            except UNAVAILABLE_ERRORS:
                await abort(context, unavailable())
