"""Playing one robot's turn: think, read the seat's view, decide, move (issue 20).

:meth:`TurnPlayer.play` takes a :class:`RobotTurn` (ids only) and answers what became of it
(one of :data:`services.bots.metrics.OUTCOMES`). The decision is drawn from a random source
seeded by the table, version and seat, and the move's request id names the version: two
replicas that play the same turn (a redelivery) send the same move, which the table applies
once. The table service checks the move like a person's, and that a robot still plays the
seat (a player who came back mid-turn has it: the robot's late move changes nothing).
"""

from __future__ import annotations

import asyncio
import hashlib
import random
import time
from collections.abc import Awaitable, Callable
from typing import Any, Final

import grpc
from dominos.v1 import events_pb2, game_pb2, gateway_pb2, table_pb2

from services.bots import metrics
from services.bots.think import ThinkTime
from services.bots.views import observation_of
from services.common.logging import get_logger
from services.common.service_errors import reason_of
from services.robots.chance import Stream
from services.robots.levels import Level, decide
from services.rules import Draw, Pass, Play
from services.rules.tiles import HIGH, LOW

log = get_logger(__name__)

#: How long one call to the table service may take.
CALL_TIMEOUT_S: Final = 2.0
#: Refusals that mean the table moved on (the turn is over, or the seat went back to its
#: player): the move is simply not needed any more.
_STALE: Final = frozenset(
    {
        "VERSION_CONFLICT",
        "NOT_YOUR_TURN",
        "ROBOT_SEAT",
        "TABLE_NOT_FOUND",
        "ROUND_NOT_IN_PLAY",
        "GAME_OVER",
        "VOTE_OPEN",
        "REQUEST_ID_REUSED",
    }
)


def _seed(turn: events_pb2.RobotTurn) -> int:
    digest = hashlib.sha256(f"{turn.table_id}:{turn.version}:{turn.seat}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


def move_request(
    turn: events_pb2.RobotTurn, decision: Play | Draw | Pass, version: int
) -> table_pb2.RobotActRequest:
    """The ``RobotActRequest`` of ``decision`` at ``version`` (request id ``robot-<v>``)."""
    common = {"request_id": f"robot-{version}", "table_id": turn.table_id}
    request = table_pb2.RobotActRequest(seat=turn.seat)
    if isinstance(decision, Play):
        request.play_tile.CopyFrom(
            gateway_pb2.PlayTileRequest(
                **common,
                tile=game_pb2.Tile(low=LOW[decision.tile], high=HIGH[decision.tile]),
                end=decision.end,  # type: ignore[arg-type]
                expected_version=version,
            )
        )
    elif isinstance(decision, Draw):
        request.draw_tile.CopyFrom(gateway_pb2.DrawTileRequest(**common, expected_version=version))
    else:  # ``pass`` is a Python keyword: the field is reached by name
        getattr(request, "pass").CopyFrom(
            gateway_pb2.PassRequest(**common, expected_version=version)
        )
    return request


class TurnPlayer:
    """Plays robots' turns through the table service's ``RobotService`` stub ``robots``."""

    def __init__(
        self,
        robots: Any,
        think: ThinkTime,
        *,
        clock: Callable[[], float] = time.time,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        chance: random.Random | None = None,
    ) -> None:
        self.robots = robots
        self.think = think
        self.clock = clock
        self.sleep = sleep
        self.chance = chance or random.Random()

    async def play(self, turn: events_pb2.RobotTurn) -> str:
        """Play ``turn``; its outcome (``moved``, ``stale``, ``late``, ``refused``, ``failed``)."""
        started = self.clock()
        delay = self.think.delay(self.chance, int(started * 1000), turn.deadline_ms)
        if delay is None:
            return "late"
        await self.sleep(delay)
        try:
            reply = await self.robots.RobotView(
                table_pb2.RobotViewRequest(table_id=turn.table_id, seat=turn.seat),
                timeout=CALL_TIMEOUT_S,
            )
        except grpc.aio.AioRpcError as error:
            return self._refused(error, turn)
        view = reply.view
        if view.version != turn.version or view.turn_seat != turn.seat:
            return "stale"
        level = Level(turn.level)
        observation = observation_of(view)
        began = time.perf_counter()
        decision = decide(level, observation, Stream(_seed(turn)))
        metrics.DECISION_SECONDS.labels(level.name.lower()).observe(time.perf_counter() - began)
        request = move_request(turn, decision, view.version)
        try:
            await self.robots.RobotAct(request, timeout=CALL_TIMEOUT_S)
        except grpc.aio.AioRpcError as error:
            return self._refused(error, turn)
        metrics.MOVES.labels(level.name.lower(), request.WhichOneof("command")).inc()
        metrics.TURN_SECONDS.observe(max(0.0, self.clock() - started))
        return "moved"

    @staticmethod
    def _refused(error: grpc.aio.AioRpcError, turn: events_pb2.RobotTurn) -> str:
        reason = reason_of(error)
        if reason in _STALE:
            return "stale"
        if error.code() in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED):
            return "failed"
        log.warning(
            "bots.move_refused",
            table_id=turn.table_id,
            version=turn.version,
            code=error.code().name,
            reason=reason,
        )
        return "refused"
