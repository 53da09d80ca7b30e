"""Keepalive as the contract documents it (issue 17): a client may ping an idle view stream
as often as every 10 s (``MIN_CLIENT_PING_INTERVAL_MS``) and is never dropped for it; a
client that never pings keeps its stream too (the gateway's own pings keep the connection);
a client pinging every second is told to calm down (HTTP/2 GOAWAY "too_many_pings") and its
stream ends. Each stream stays idle (no table change, so no data) for more than 60 s, on a
real gateway, with the real gRPC core arguments (the server's behaviour is what is checked,
not its option names)."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import grpc
import pytest
from dominos.v1 import gateway_pb2, gateway_pb2_grpc

from services.client.api import DominosClient
from services.common.grpc_server import MIN_CLIENT_PING_INTERVAL_MS, SERVER_OPTIONS
from tests.chaos.contract import PROTOS

from .conftest import E2ECluster

IDLE_S = 65.0


def channel(address: str, ping_every_ms: int | None) -> grpc.aio.Channel:
    """A raw client channel pinging every ``ping_every_ms`` while nothing else flows (None:
    no pings at all), as a client of another language would configure it."""
    options: list[tuple[str, Any]] = [("grpc.use_local_subchannel_pool", 1)]
    if ping_every_ms is not None:
        options += [
            ("grpc.keepalive_time_ms", ping_every_ms),
            ("grpc.keepalive_timeout_ms", 10_000),
            ("grpc.keepalive_permit_without_calls", 1),
            ("grpc.http2.max_pings_without_data", 0),
            ("grpc.http2.min_time_between_pings_ms", ping_every_ms),
        ]
    return grpc.aio.insecure_channel(address, options=options)


async def idle_stream(address: str, ping_every_ms: int | None, table: Any) -> tuple[str, float]:
    """Watch an idle table for :data:`IDLE_S`: ``("open", s)`` if the stream lasted, else
    ``(status and details, seconds until it ended)``."""
    async with channel(address, ping_every_ms) as chan:
        stub: Any = gateway_pb2_grpc.DominosServiceStub(chan)
        call = stub.WatchTable(
            gateway_pb2.WatchTableRequest(table_id=table.table_id), metadata=table.metadata()
        )
        started = time.monotonic()
        try:
            await asyncio.wait_for(call.read(), timeout=10)  # the first view
            async with asyncio.timeout(IDLE_S):
                while await call.read() is not grpc.aio.EOF:
                    pass  # a presence change of this very stream, at most
        except TimeoutError:
            return "open", time.monotonic() - started
        except grpc.aio.AioRpcError as error:
            return f"{error.code().name} {error.details()}", time.monotonic() - started
        finally:
            call.cancel()
        return "ended", time.monotonic() - started


async def test_a_client_pinging_at_the_documented_minimum_is_never_dropped(
    e2e: E2ECluster,
) -> None:
    client = DominosClient(e2e.gateways[0].address)
    try:
        seats = []
        for _ in range(3):  # a lobby each: nothing changes on them while they are watched
            host, _, _ = await client.create_table("Idle")
            seats.append(host)
        address = e2e.gateways[1].address
        documented, silent, abusive = await asyncio.gather(
            idle_stream(address, MIN_CLIENT_PING_INTERVAL_MS, seats[0]),
            idle_stream(address, None, seats[1]),
            idle_stream(address, 1_000, seats[2]),
        )
    finally:
        await client.close()
    print(f"\nkeepalive: every 10 s {documented}, none {silent}, every 1 s {abusive}")
    assert documented[0] == "open" and documented[1] >= IDLE_S
    assert silent[0] == "open"
    # Pinging ten times faster than allowed: GOAWAY (ENHANCE_YOUR_CALM, "too_many_pings").
    assert abusive[0] != "open", abusive
    assert abusive[1] < 30, abusive


def test_the_documented_minimum_is_twice_what_the_server_accepts() -> None:
    """Jitter and clock skew never make a compliant client look abusive."""
    options = dict(SERVER_OPTIONS)
    assert options["grpc.http2.min_ping_interval_without_data_ms"] * 2 <= (
        MIN_CLIENT_PING_INTERVAL_MS
    )
    assert "grpc.http2.min_recv_ping_interval_without_data_ms" not in options  # not a core arg


@pytest.mark.parametrize("name", ["gateway.proto"])
def test_the_contract_states_the_minimum(name: str) -> None:
    text = " ".join(line.strip(" /") for line in (PROTOS / name).read_text().splitlines())
    assert f"every {MIN_CLIENT_PING_INTERVAL_MS // 1000} s" in text
