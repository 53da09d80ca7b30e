"""What one client may hold on a gateway, through real processes: view streams per
seat token (the newest replaces the oldest), per address, connections per address, the
connections of a seat per minute, and the maximum connection age that makes clients
reconnect (so they spread over new replicas)."""

from __future__ import annotations

import asyncio
import functools
import time
from collections.abc import Iterator
from typing import Any

import grpc
import pytest

from services.client.api import DominosClient, SeatCredentials
from services.client.stream import error_reason
from services.common.service_errors import limit_of
from testing.cluster import ProcessCluster, clock_env
from testing.waiting import wait_for

CAPS = {
    "DOMINOS_STREAMS_PER_SEAT": "2",
    "DOMINOS_STREAMS_PER_ADDRESS": "6",
    "DOMINOS_CONNECTIONS_PER_ADDRESS": "4",
    "DOMINOS_MAX_CONNECTION_IDLE_SECONDS": "1",
    "DOMINOS_CONNECTIONS_PER_SEAT_MINUTE": "4",
}


@pytest.fixture(scope="module")
def capped() -> Iterator[ProcessCluster]:
    cluster = ProcessCluster.start(env={**clock_env(30, 30, 1), **CAPS})
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture
def gateway(capped: ProcessCluster) -> Iterator[str]:
    """A gateway of its own for one test: its caps count this test's connections only."""
    process = capped.add("gateway")
    try:
        yield process.address
    finally:
        process.stop()


@pytest.fixture(scope="module")
def aging() -> Iterator[ProcessCluster]:
    cluster = ProcessCluster.start(
        env={
            **clock_env(30, 30, 1),
            "DOMINOS_MAX_CONNECTION_AGE_SECONDS": "1",
            "DOMINOS_MAX_CONNECTION_AGE_GRACE_SECONDS": "0.5",
        },
    )
    try:
        yield cluster
    finally:
        cluster.stop()


async def first_view(call: Any) -> int:
    message = await asyncio.wait_for(call.read(), timeout=10)
    return int(message.view.version)


async def reaches(call: Any, version: int) -> None:
    """Read the stream until it shows ``version`` (presence changes come in between)."""
    while await first_view(call) < version:
        pass


async def ended(call: Any) -> grpc.aio.AioRpcError:
    with pytest.raises(grpc.aio.AioRpcError) as raised:
        while await asyncio.wait_for(call.read(), timeout=10) is not grpc.aio.EOF:
            pass
    return raised.value


async def seated(client: DominosClient) -> tuple[SeatCredentials, str]:
    host, code, _ = await client.create_table("Host")
    return host, code


async def test_a_third_stream_of_a_token_ends_the_oldest_and_the_others_stay_live(
    gateway: str,
) -> None:
    client = DominosClient(gateway)
    try:
        host, code = await seated(client)
        guest, _ = await client.join_table(code, "Bo")
        # One after the other: two calls opened at once race to their slots, and the oldest
        # is the one whose slot the gateway took first, not the one created first.
        calls = []
        for _ in range(2):
            calls.append(client.watch(guest))
            await first_view(calls[-1])
        newest = client.watch(guest)
        await first_view(newest)
        error = await ended(calls[0])
        assert error.code() == grpc.StatusCode.ABORTED
        assert error_reason(error) == "STREAM_REPLACED"
        # The two newest still receive the next version.
        view = await client.set_target(host, 150)
        for call in (calls[1], newest):
            await reaches(call, view.version)
        for call in (calls[1], newest):
            call.cancel()
    finally:
        await client.close()


async def test_an_address_opens_so_many_streams_and_connections(gateway: str) -> None:
    address = gateway
    client = DominosClient(address)
    others: list[DominosClient] = []
    calls: list[Any] = []
    try:
        _, code = await seated(client)
        seats = [(await client.join_table(code, name))[0] for name in ("Bo", "Cy", "Di")]
        # Six streams (two per seat: the seat cap) from this address: the address's cap.
        for seat in seats:
            for _ in range(2):
                calls.append(client.watch(seat))
                await first_view(calls[-1])
        refused = client.watch(seats[0])
        error = await ended(refused)
        assert error.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert limit_of(error) == "streams_per_address"
        for call in calls:
            call.cancel()
        # Connections with a call in progress: four hold a stream each (the cap); a fifth
        # connection's call is refused; one that closes frees its place at once.
        others = [DominosClient(address) for _ in range(5)]

        async def admitted(other: DominosClient) -> bool:
            try:
                await other.view(seats[0])
            except grpc.aio.AioRpcError as error:
                assert limit_of(error) in ("connections_per_address", "streams_per_address")
                return False
            return True

        async def holds_stream(other: DominosClient, seat: Any) -> bool:
            call = other.watch(seat)
            try:
                await first_view(call)
            except grpc.aio.AioRpcError as error:  # the cancelled streams are not all gone yet
                assert limit_of(error) == "streams_per_address"
                return False
            calls.append(call)
            return True

        for index, other in enumerate(others[:4]):
            seat = seats[index % 3]
            await wait_for(functools.partial(holds_stream, other, seat), timeout=10, interval=0.2)
        with pytest.raises(grpc.aio.AioRpcError) as raised:
            await others[4].view(seats[0])
        assert raised.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert limit_of(raised.value) == "connections_per_address"
        await others[0].close()
        await wait_for(lambda: admitted(others[4]), timeout=10, interval=0.2)
    finally:
        for call in calls:
            call.cancel()
        for other in others:
            await other.close()
        await client.close()


async def test_a_seat_that_reconnects_in_a_loop_is_slowed_down(gateway: str) -> None:
    client = DominosClient(gateway)
    try:
        _, code = await seated(client)
        guest, _ = await client.join_table(code, "Flapper")
        for _ in range(4):
            call = client.watch(guest)
            await first_view(call)
            call.cancel()
        error = await ended(client.watch(guest))
        assert error.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert limit_of(error) == "connections_per_seat"
    finally:
        await client.close()


async def test_an_old_connection_is_asked_to_reconnect_and_the_client_comes_back(
    aging: ProcessCluster,
) -> None:
    client = DominosClient(aging.gateways[0].address)
    try:
        host, _ = await seated(client)
        call = client.watch(host)
        await first_view(call)
        started = time.monotonic()
        error = await ended(call)
        assert error.code() == grpc.StatusCode.UNAVAILABLE
        assert time.monotonic() - started < 5  # age 1 s + grace 0.5 s, then GOAWAY
        # The channel reconnects by itself: a new stream on a new connection works.
        again = client.watch(host)
        assert await first_view(again) >= 1
        again.cancel()
    finally:
        await client.close()
