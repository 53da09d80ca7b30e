"""Trust at the table (issue 13, S6, D7): a view stream belongs to the token it was opened
with, a freed seat's token works nowhere, a create or join replay needs its secret request
id, and a stream misses no version at its start. Real processes: two gateways."""

from __future__ import annotations

import asyncio
import statistics
import time
from collections.abc import Awaitable
from typing import Any

import grpc
import pytest
from dominos.v1 import game_pb2, gateway_pb2

from services.client.api import DominosClient, SeatCredentials
from services.client.stream import error_reason
from testing.players import seat_four
from testing.waiting import wait_for

from .conftest import E2ECluster


def _open_streams(e2e: E2ECluster) -> float:
    total = 0.0
    for gateway in e2e.gateways[:2]:
        for line in gateway.scrape().splitlines():
            if line.startswith("dominos_gateway_view_streams "):
                total += float(line.split()[1])
    return total


async def _refusal(call: Any) -> tuple[grpc.StatusCode, str | None]:
    with pytest.raises(grpc.aio.AioRpcError) as raised:
        await call
    return raised.value.code(), error_reason(raised.value)


async def _read_until_end(call: Any, views: list[game_pb2.TableView]) -> grpc.aio.AioRpcError:
    """Read a stream until it ends; the error it ended with (the test fails on a clean end)."""
    try:
        while (message := await call.read()) is not grpc.aio.EOF:
            views.append(message.view)
    except grpc.aio.AioRpcError as error:
        return error
    raise AssertionError("the stream ended with OK")


async def test_a_stream_ends_when_its_seat_is_freed_and_never_sees_the_next_occupant(
    e2e: E2ECluster,
) -> None:
    """A player leaves with streams open on both gateways; a newcomer takes the seat and the
    game starts: the old streams end at the leave, with TOKEN_INVALID, and received no view
    of the leave or after it (no hand of the newcomer)."""
    one, two = (DominosClient(g.address) for g in e2e.gateways[:2])
    try:
        host, code, _ = await one.create_table("Host")
        leaver, _ = await one.join_table(code, "Leaver")
        streams = [one.watch(leaver), two.watch(leaver)]
        seen: list[list[game_pb2.TableView]] = [[], []]
        for call, views in zip(streams, seen, strict=True):
            views.append((await call.read()).view)
        ended = [
            asyncio.create_task(_read_until_end(c, v)) for c, v in zip(streams, seen, strict=True)
        ]
        left_at = await one.leave(leaver)
        errors = await asyncio.wait_for(asyncio.gather(*ended), timeout=10)
        for error in errors:
            assert error.code() == grpc.StatusCode.PERMISSION_DENIED
            assert error_reason(error) == "TOKEN_INVALID"
        assert all(v.version < left_at for views in seen for v in views)
        # The seat is taken again and the game starts: the old token sees nothing of it.
        newcomer, _ = await two.join_table(code, "Newcomer")
        assert newcomer.seat == leaver.seat
        for name in ("C", "D"):
            await one.join_table(code, name)
        await one.start(host)
        for client in (one, two):
            code_, reason = await _refusal(client.view(leaver))
            assert (code_, reason) == (grpc.StatusCode.PERMISSION_DENIED, "TOKEN_INVALID")
            code_, reason = await _refusal(client.watch(leaver).read())
            assert (code_, reason) == (grpc.StatusCode.PERMISSION_DENIED, "TOKEN_INVALID")
        # The newcomer's own stream works and shows its hand.
        mine = await two.watch(newcomer).read()
        assert len(mine.view.hand) == 7 and mine.view.your_seat == newcomer.seat
    finally:
        await asyncio.gather(one.close(), two.close())


async def test_a_freed_seats_streams_on_another_gateway_end_within_a_bounded_time(
    e2e: E2ECluster,
) -> None:
    """LeaveTable on one gateway → the end of the leaver's stream on the other; the p99 is
    printed for the notes (issue 13 asks for it) and bounded by the bus, not by a resync."""
    one, two = (DominosClient(g.address) for g in e2e.gateways[:2])
    delays: list[float] = []
    try:
        _, code, _ = await one.create_table("Host")
        for _ in range(40):
            seat, _ = await one.join_table(code, "Guest")
            call = two.watch(seat)
            await call.read()
            ended = asyncio.create_task(_read_until_end(call, []))
            started = time.perf_counter()
            await one.leave(seat)
            error = await asyncio.wait_for(ended, timeout=10)
            delays.append(time.perf_counter() - started)
            assert error_reason(error) == "TOKEN_INVALID"
    finally:
        await asyncio.gather(one.close(), two.close())
    delays.sort()
    p50, p99 = statistics.median(delays), delays[int(len(delays) * 0.99) - 1]
    print(
        f"\nleave -> old stream ended (other gateway): p50 {p50 * 1e3:.1f}, p99 {p99 * 1e3:.1f} ms"
    )
    assert p99 < 5.0  # far below the 30 s resync: the bus event ends it


async def test_the_hosts_token_stops_working_when_the_host_closes_the_table(
    e2e: E2ECluster,
) -> None:
    client = DominosClient(e2e.gateways[0].address)
    try:
        host, code, _ = await client.create_table("Host")
        guest, _ = await client.join_table(code, "Guest")
        host_stream = client.watch(host)
        await host_stream.read()
        ended = asyncio.create_task(_read_until_end(host_stream, []))
        await client.leave(host)
        error = await asyncio.wait_for(ended, timeout=10)
        assert (error.code(), error_reason(error)) == (
            grpc.StatusCode.PERMISSION_DENIED,
            "TOKEN_INVALID",
        )
        for call in (client.view(host), client.watch(host).read(), client.start(host)):
            code_, reason = await _refusal(call)
            assert (code_, reason) == (grpc.StatusCode.PERMISSION_DENIED, "TOKEN_INVALID")
        # The guest still reads the closed table, once, and its stream ends with OK.
        assert (await client.view(guest)).phase == game_pb2.PHASE_CLOSED
        views = [m.view async for m in client.watch(guest)]
        assert [v.phase for v in views] == [game_pb2.PHASE_CLOSED]
    finally:
        await client.close()


@pytest.mark.parametrize("weak", ["1", "join-1", "a" * 40, "0123456789abcdef0123"])
async def test_create_and_join_refuse_a_request_id_anyone_could_replay(
    e2e: E2ECluster, weak: str
) -> None:
    """A retried create/join answers the seat token: its request id must be a secret."""
    client = DominosClient(e2e.gateways[0].address)
    try:
        _, code, _ = await client.create_table("Host")
        create = client.stub.CreateTable(
            gateway_pb2.CreateTableRequest(request_id=weak, host_name="Eve"), timeout=10
        )
        join = client.stub.JoinTable(
            gateway_pb2.JoinTableRequest(request_id=weak, invitation_code=code, player_name="Eve"),
            timeout=10,
        )
        for call in (create, join):
            assert await _refusal(call) == (
                grpc.StatusCode.INVALID_ARGUMENT,
                "REQUEST_ID_MALFORMED",
            )
    finally:
        await client.close()


async def test_a_join_replay_returns_the_token_only_with_the_secret_request_id(
    e2e: E2ECluster,
) -> None:
    client = DominosClient(e2e.gateways[0].address)
    try:
        _, code, _ = await client.create_table("Host")
        secret = "3f2a9c1e-7b44-4d0e-9a61-c2b8e5f07d19"
        request = gateway_pb2.JoinTableRequest(
            request_id=secret, invitation_code=code, player_name="Bo"
        )
        first = await client.stub.JoinTable(request, timeout=10)
        again = await client.stub.JoinTable(request, timeout=10)  # the caller's own retry
        assert again.seat_token == first.seat_token
        # Someone who knows the name and the code but not the secret id gets a new seat.
        other = await client.stub.JoinTable(
            gateway_pb2.JoinTableRequest(
                request_id="8d0b6e5a-21c4-4f9e-b3a7-65e1f0c9d2a4",
                invitation_code=code,
                player_name="Bob",
            ),
            timeout=10,
        )
        assert other.seat != first.seat and other.seat_token != first.seat_token
    finally:
        await client.close()


async def _wave(streams: Awaitable[list[list[int]]], movers: list[asyncio.Task[int]]) -> Any:
    """The wave's results, once every stream saw its versions; a mover that stopped (its
    command refused) fails the test with its error, not as a wave that waits for nothing."""
    wave = asyncio.ensure_future(streams)
    try:
        await asyncio.wait([wave, *movers], timeout=30, return_when=asyncio.FIRST_COMPLETED)
        for mover in movers:
            if mover.done():
                mover.result()
        assert wave.done(), "a wave's streams did not all see four versions in 30 s"
        return wave.result()
    finally:
        wave.cancel()


async def test_streams_opened_while_the_table_moves_miss_no_version(e2e: E2ECluster) -> None:
    """Issue 13: a version published while a stream's subscription was not yet confirmed was
    lost. 2,000 streams open in waves (each wave's feeds are new: the last one closed) on two
    gateways while the tables change every few ms; every stream sees consecutive versions."""
    clients = [DominosClient(g.address) for g in e2e.gateways[:2]]
    moving = True
    tables: list[list[SeatCredentials]] = []
    try:
        for _ in range(4):
            lobby = await seat_four(clients[:1], ["Host", "P1", "P2", "P3"])
            tables.append(lobby.seats)

        async def move(host: SeatCredentials) -> int:
            moves, target = 0, 100
            while moving:
                target = 150 if target == 100 else 100
                await clients[0].set_target(host, target)
                moves += 1
                await asyncio.sleep(0.005)
            return moves

        movers = [asyncio.create_task(move(seats[0])) for seats in tables]

        async def one_stream(client: DominosClient, seat: SeatCredentials) -> list[int]:
            call = client.watch(seat)
            versions: list[int] = []
            try:
                async for message in call:
                    versions.append(message.view.version)
                    if len(versions) == 4:
                        return versions
            finally:
                call.cancel()
            return versions

        streams = 0
        for wave in range(50):
            batch = [
                one_stream(clients[(wave + i) % 2], tables[i % 4][(i // 4) % 4]) for i in range(40)
            ]
            results = await _wave(asyncio.gather(*batch), movers)
            for versions in results:
                assert versions == list(range(versions[0], versions[0] + 4)), versions
            streams += len(results)
            # Wait until both gateways closed this wave's streams: the next wave's feeds are new.
            await wait_for(lambda: _open_streams(e2e) == 0, timeout=10)
        moving = False
        moves = await asyncio.gather(*movers)
        assert streams == 2_000 and min(moves) > 10
    finally:
        moving = False
        await asyncio.gather(*(c.close() for c in clients))
