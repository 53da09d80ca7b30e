"""The robots' door of the table service (issue 20): only the bots service's credential
opens it and it opens nothing else; a robot sees its seat's view and no more, and acts
only while a robot plays the seat."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import grpc
import pytest
from dominos.v1 import game_pb2, gateway_pb2, table_pb2, table_pb2_grpc

from services.common.caller_auth import CallerCredentials
from services.common.service_errors import reason_of
from services.table.server import create_server
from testing.secrets import SESSION_SECRETS

from .client import TableClient, rid
from .conftest import table_settings

PRACTICE = gateway_pb2.CreateTableRequest(
    host_name="Ana",
    rules=game_pb2.RuleChoice(preset=game_pb2.PRESET_WEB_DRAW, seats=2),
    options=game_pb2.TableOptions(practice=[game_pb2.ROBOT_LEVEL_SOLID]),
)


@pytest.fixture
async def table_target(redis_server: Any, nats_server: Any) -> AsyncIterator[str]:
    settings = table_settings(
        redis_server.url_for("table"),
        nats_server.url_for("table"),
        table_callers=f"{SESSION_SECRETS.gateway_credential},{SESSION_SECRETS.bots_credential}",
    )
    server, port = await create_server(settings)
    yield f"127.0.0.1:{port}"
    await server.stop()


def robots_stub(target: str, credential: str) -> tuple[grpc.aio.Channel, Any]:
    channel = grpc.aio.insecure_channel(target, interceptors=[CallerCredentials(credential)])
    return channel, table_pb2_grpc.RobotServiceStub(channel)


async def test_the_bots_credential_opens_the_robots_door_and_nothing_else(
    table_target: str,
) -> None:
    gateway = TableClient(table_target)
    bots_table = TableClient(table_target, credential=SESSION_SECRETS.bots_credential)
    channel, robots = robots_stub(table_target, SESSION_SECRETS.bots_credential)
    _, gateway_robots = robots_stub(table_target, SESSION_SECRETS.gateway_credential)
    try:
        request = gateway_pb2.CreateTableRequest()
        request.CopyFrom(PRACTICE)
        request.request_id = rid()
        created = await gateway.execute(create_table=request)
        table_id = created.table_id
        # The bots service may not read a snapshot (every hand), act as a client, or watch.
        for call in (
            bots_table.stub.GetSnapshot(table_pb2.GetSnapshotRequest(table_id=table_id)),
            bots_table.stub.GetView(
                table_pb2.GetViewRequest(table_id=table_id, seat_token=created.seat_token)
            ),
        ):
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                await call
            assert refused.value.code() == grpc.StatusCode.PERMISSION_DENIED
        # Nobody but the bots service reaches the robots' door.
        with pytest.raises(grpc.aio.AioRpcError) as not_bots:
            await gateway_robots.RobotView(table_pb2.RobotViewRequest(table_id=table_id, seat=1))
        assert not_bots.value.code() == grpc.StatusCode.PERMISSION_DENIED
        # The robot's own view: its seat, its hand only once dealt.
        await gateway.execute(
            token=created.seat_token,
            start_game=gateway_pb2.StartGameRequest(request_id=rid(), table_id=table_id),
        )
        view = (await robots.RobotView(table_pb2.RobotViewRequest(table_id=table_id, seat=1))).view
        assert view.your_seat == 1 and len(view.hand) == 7
        assert view.seats[1].robot == game_pb2.ROBOT_LEVEL_SOLID
        # A person's seat is no robot's to see or to play.
        with pytest.raises(grpc.aio.AioRpcError) as human:
            await robots.RobotView(table_pb2.RobotViewRequest(table_id=table_id, seat=0))
        assert (human.value.code(), reason_of(human.value)) == (
            grpc.StatusCode.PERMISSION_DENIED,
            "ROBOT_SEAT",
        )
        act = table_pb2.RobotActRequest(
            seat=0, draw_tile=gateway_pb2.DrawTileRequest(request_id=rid(), table_id=table_id)
        )
        with pytest.raises(grpc.aio.AioRpcError) as human_move:
            await robots.RobotAct(act)
        assert reason_of(human_move.value) == "ROBOT_SEAT"
        # The robot's move at its turn is checked like a person's.
        if view.turn_seat == 0:  # the host opens: its first tile, then it is the robot's turn
            host_view = (
                await gateway.stub.GetView(
                    table_pb2.GetViewRequest(table_id=table_id, seat_token=created.seat_token)
                )
            ).view
            opener = host_view.legal_moves[0]
            await gateway.execute(
                token=created.seat_token,
                play_tile=gateway_pb2.PlayTileRequest(
                    request_id=rid(), table_id=table_id, tile=opener.tile, end=opener.end
                ),
            )
            view = (
                await robots.RobotView(table_pb2.RobotViewRequest(table_id=table_id, seat=1))
            ).view
        assert view.turn_seat == 1
        if view.legal_moves:
            move = view.legal_moves[0]
            played = await robots.RobotAct(
                table_pb2.RobotActRequest(
                    seat=1,
                    play_tile=gateway_pb2.PlayTileRequest(
                        request_id=rid(), table_id=table_id, tile=move.tile, end=move.end
                    ),
                )
            )
            assert played.view.version == view.version + 1
            assert len(played.view.hand) == len(view.hand) - 1
        else:  # nothing fits the host's opener: the robot draws
            drew = await robots.RobotAct(
                table_pb2.RobotActRequest(
                    seat=1,
                    draw_tile=gateway_pb2.DrawTileRequest(request_id=rid(), table_id=table_id),
                )
            )
            assert len(drew.view.hand) == len(view.hand) + 1
    finally:
        await gateway.close()
        await bots_table.close()
        await channel.close()
