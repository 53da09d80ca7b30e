"""What becomes of a robot's turn (issue 20): the move a decision becomes, and the outcome
of each answer of the table service. The table service here is a stand-in object (this is a
unit test of the mapping; the whole path runs against real services in tests/e2e)."""

from __future__ import annotations

from typing import Any

import grpc
import pytest
from dominos.v1 import events_pb2, game_pb2, table_pb2

from services.bots.think import ThinkTime
from services.bots.turns import TurnPlayer, move_request
from services.common.projection import table_view
from services.common.service_errors import Reason, ServiceError
from services.rules import Draw, Pass, Play
from services.rules.options import TableOptions
from tests.unit.rules.option_builders import WEB_DRAW_2, started

NOW_S = 1_000.0
TURN = events_pb2.RobotTurn(
    table_id="t-opts", version=0, seat=0, level=game_pb2.ROBOT_LEVEL_SOLID, deadline_ms=0
)


def test_each_decision_becomes_its_move_with_the_versions_request_id() -> None:
    play = move_request(TURN, Play(0, 27, 2), 41)
    assert play.WhichOneof("command") == "play_tile"
    assert (play.play_tile.tile.low, play.play_tile.tile.high, play.play_tile.end) == (6, 6, 2)
    assert (play.play_tile.request_id, play.play_tile.expected_version) == ("robot-41", 41)
    assert move_request(TURN, Draw(0), 41).WhichOneof("command") == "draw_tile"
    passed = move_request(TURN, Pass(0), 41)
    assert passed.WhichOneof("command") == "pass" and passed.seat == 0
    assert getattr(passed, "pass").table_id == "t-opts"


class RpcError(grpc.aio.AioRpcError):  # type: ignore[misc]
    def __init__(self, code: grpc.StatusCode, reason: str = "") -> None:
        trailer = ServiceError(code, Reason(reason), "x").trailing_metadata() if reason else ()
        super().__init__(code, grpc.aio.Metadata(), grpc.aio.Metadata(*trailer), "x")


class Table:
    """Answers RobotView with a real projection, RobotAct as told."""

    def __init__(self, act_error: Exception | None = None) -> None:
        self.state = started(WEB_DRAW_2, TableOptions(practice=(2,)), humans=1)
        self.act_error = act_error
        self.acts: list[table_pb2.RobotActRequest] = []

    async def RobotView(self, request: Any, **_: Any) -> Any:
        return table_pb2.RobotViewResponse(view=table_view(self.state, request.seat, 0))

    async def RobotAct(self, request: Any, **_: Any) -> Any:
        self.acts.append(request)
        if self.act_error is not None:
            raise self.act_error
        return table_pb2.RobotActResponse()


async def _no_sleep(_: float) -> None:
    return None


def _turn(table: Table, **changes: Any) -> events_pb2.RobotTurn:
    assert table.state.round is not None
    turn = events_pb2.RobotTurn(
        table_id="t-opts",
        version=table.state.version,
        seat=table.state.round.turn,
        level=game_pb2.ROBOT_LEVEL_SOLID,
        deadline_ms=int(NOW_S * 1000) + 5_000,
    )
    for name, value in changes.items():
        setattr(turn, name, value)
    return turn


def _player(table: Table) -> TurnPlayer:
    return TurnPlayer(table, ThinkTime(0.1, 0.2), clock=lambda: NOW_S, sleep=_no_sleep)


async def test_a_robot_moves_on_its_turn_with_a_legal_move() -> None:
    table = Table()
    assert await _player(table).play(_turn(table)) == "moved"
    (act,) = table.acts
    assert act.WhichOneof("command") in ("play_tile", "draw_tile", "pass")


async def test_a_turn_the_table_moved_past_or_whose_clock_ran_out_is_not_played() -> None:
    table = Table()
    assert await _player(table).play(_turn(table, version=table.state.version - 1)) == "stale"
    assert await _player(table).play(_turn(table, deadline_ms=int(NOW_S * 1000))) == "late"
    assert table.acts == []


@pytest.mark.parametrize(
    ("error", "outcome"),
    [
        (RpcError(grpc.StatusCode.PERMISSION_DENIED, "ROBOT_SEAT"), "stale"),
        (RpcError(grpc.StatusCode.ABORTED, "VERSION_CONFLICT"), "stale"),
        (RpcError(grpc.StatusCode.UNAVAILABLE), "failed"),
        (RpcError(grpc.StatusCode.FAILED_PRECONDITION, "TILE_DOES_NOT_FIT"), "refused"),
    ],
)
async def test_each_answer_of_the_table_service_has_its_outcome(
    error: Exception, outcome: str
) -> None:
    table = Table(act_error=error)
    assert await _player(table).play(_turn(table)) == outcome


async def test_two_replicas_playing_the_same_turn_send_the_same_move() -> None:
    table = Table()
    turn = _turn(table)
    await _player(table).play(turn)
    await _player(table).play(turn)
    assert table.acts[0] == table.acts[1]
