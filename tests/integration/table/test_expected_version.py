"""``expected_version`` (issue 17): a command sent with the version of the caller's latest view
is refused VERSION_CONFLICT only when the game changed since, never because a seat connected
or dropped meanwhile."""

from __future__ import annotations

from typing import Any

import grpc
import pytest
from dominos.v1 import gateway_pb2, table_pb2

from services.common.service_errors import reason_of

from .client import Seat, TableClient, rid


async def presence(client: TableClient, seat: Seat, connected: bool) -> int:
    reply = await client.stub.SetPresence(
        table_pb2.SetPresenceRequest(
            table_id=seat.table_id, seat_token=seat.token, connected=connected
        )
    )
    return int(reply.version)


async def set_target(client: TableClient, host: Seat, target: int, expected: int) -> Any:
    return await client.execute(
        host.token,
        set_target=gateway_pb2.SetTargetRequest(
            request_id=rid(), table_id=host.table_id, target=target, expected_version=expected
        ),
    )


async def test_other_seats_reconnecting_is_no_conflict_for_a_move_of_the_latest_view(
    client: TableClient,
) -> None:
    seats = await client.full_table(target=50)
    view = await client.start(seats[0])
    seen = view.version
    turn = seats[view.turn_seat]
    others = [s for s in seats if s.seat != view.turn_seat]
    for seat in others:  # every other seat connects and drops: two new versions each
        await presence(client, seat, True)
        assert await presence(client, seat, False) > seen
    move = (await client.view(turn)).legal_moves[0]
    played = await client.execute(
        turn.token,
        play_tile=gateway_pb2.PlayTileRequest(
            request_id=rid(),
            table_id=turn.table_id,
            tile=move.tile,
            end=move.end,
            expected_version=seen,
        ),
    )
    assert played.view.version > seen + 2 * len(others)


async def test_a_change_of_the_game_since_the_callers_version_is_a_conflict(
    client: TableClient,
) -> None:
    host, code, created = await client.create()
    seen = created.view.version
    await presence(client, host, True)  # presence only: no conflict
    after = await set_target(client, host, 150, seen)
    await client.join(code, "Bo")  # a join changes the lobby: the older versions conflict
    for stale in (seen, after.view.version):
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await set_target(client, host, 200, stale)
        assert refused.value.code() == grpc.StatusCode.ABORTED
        assert reason_of(refused.value) == "VERSION_CONFLICT"
    current = (await client.view(host)).version
    with pytest.raises(grpc.aio.AioRpcError) as future:  # a version nobody has seen yet
        await set_target(client, host, 200, current + 1)
    assert reason_of(future.value) == "VERSION_CONFLICT"
    assert (await set_target(client, host, 200, current)).view.target == 200
