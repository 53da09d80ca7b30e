"""The table service's budgets (issue 15, D6), against real Redis and gRPC: creates per
address and cluster-wide, open lobbies per address, failed joins per connection under an
address ceiling, lobby changes per table, connections per seat. Every refusal is
RESOURCE_EXHAUSTED / RATE_LIMITED with the limit in ``ErrorInfo.metadata["limit"]`` and a
``RetryInfo``, and changes nothing."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import grpc
import pytest
from dominos.v1 import gateway_pb2, table_pb2

from services.common.schema import SHARDS, phase_key
from services.common.service_errors import limit_of, reason_of, retry_delay_of
from services.table.server import create_server

from .client import Seat, TableClient, rid
from .conftest import table_settings

A, B = "ipv4:203.0.113.7", "ipv6:[2001:db8:7::]/64"

Factory = Callable[..., Awaitable[TableClient]]


@pytest.fixture
async def limited(
    redis_server: Any, nats_server: Any, redis_client: Any, nats_client: Any
) -> AsyncIterator[Factory]:
    """``await limited(creates_per_address_minute=3, ...)``: a table service with those
    budgets (the others off) and a client of it calling as the gateway."""
    started: list[tuple[Any, TableClient]] = []

    async def start(**budgets: int) -> TableClient:
        settings = table_settings(
            redis_server.url_for("table"), nats_server.url_for("table"), **budgets
        )
        server, port = await create_server(settings)
        client = TableClient(f"127.0.0.1:{port}")
        started.append((server, client))
        return client

    yield start
    for server, client in started:
        await client.close()
        await server.stop()


async def refusal(call: Awaitable[Any]) -> tuple[str | None, float]:
    """The limit a call was refused for (RATE_LIMITED only) and its RetryInfo delay (s)."""
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await call
    error = caught.value
    assert error.code() == grpc.StatusCode.RESOURCE_EXHAUSTED, error
    assert reason_of(error) == "RATE_LIMITED"
    delay = retry_delay_of(error)
    assert delay is not None
    return limit_of(error), delay


async def live_tables(redis_client: Any) -> int:
    total = 0
    for shard in range(SHARDS):
        for phase in ("waiting", "playing", "closed"):
            total += await redis_client.zcard(phase_key(shard, phase))
    return int(total)


async def test_creates_are_limited_per_address_and_a_repeat_costs_nothing(
    limited: Factory, redis_client: Any
) -> None:
    client = await limited(creates_per_address_minute=3)
    request = gateway_pb2.CreateTableRequest(request_id=rid(), host_name="Ana")
    first = await client.execute(peer=A, create_table=request)
    for _ in range(2):
        await client.create(peer=A)
    before = await live_tables(redis_client)
    limit, retry_s = await refusal(client.create(peer=A))
    assert limit == "creates_per_address"
    assert 0 < retry_s <= 60
    assert await live_tables(redis_client) == before  # the refusal wrote nothing
    # A retried create (same request id) is answered, not counted.
    again = await client.execute(peer=A, create_table=request)
    assert again.table_id == first.table_id
    # Another address has its own budget.
    await client.create(peer=B)


async def test_the_hourly_budget_holds_when_the_minute_resets(limited: Factory) -> None:
    client = await limited(creates_per_address_minute=10, creates_per_address_hour=2)
    for _ in range(2):
        await client.create(peer=A)
    limit, retry_s = await refusal(client.create(peer=A))
    assert limit == "creates_per_address"
    assert 60 < retry_s <= 3600  # the hour's window, not the minute's


async def test_creates_of_everyone_are_limited_cluster_wide(limited: Factory) -> None:
    """Fifty creates at once from fifty addresses, five allowed a second: five tables."""
    client = await limited(creates_per_second=5)
    results = await asyncio.gather(
        *(client.create(peer=f"ipv4:198.51.100.{i}") for i in range(50)),
        return_exceptions=True,
    )
    made = [r for r in results if not isinstance(r, BaseException)]
    refused = [r for r in results if isinstance(r, grpc.aio.AioRpcError)]
    assert len(made) == 5
    assert len(refused) == 45
    assert {limit_of(r) for r in refused} == {"creates_per_second"}


async def test_open_lobbies_per_address_are_capped_until_one_starts_or_closes(
    limited: Factory,
) -> None:
    client = await limited(lobbies_per_address=2)
    first, code, _ = await client.create(peer=A)
    await client.create(peer=A)
    limit, retry_s = await refusal(client.create(peer=A))
    assert limit == "lobbies_per_address"
    assert 3000 < retry_s <= 3600  # until the oldest lobby expires (1 h)
    # The first lobby's game starts: it is no longer a lobby of A.
    for name in ("Bo", "Cy", "Di"):
        await client.join(code, name)
    await client.start(first)
    third, _, _ = await client.create(peer=A)
    await refusal(client.create(peer=A))
    # The host of the third lobby leaves: the table closes, A may open another.
    await client.execute(
        third.token,
        leave_table=gateway_pb2.LeaveTableRequest(request_id=rid(), table_id=third.table_id),
    )
    await client.create(peer=A)


async def test_fifty_creates_at_once_open_no_more_lobbies_than_the_cap(limited: Factory) -> None:
    client = await limited(lobbies_per_address=4)
    results = await asyncio.gather(
        *(client.create(peer=A) for _ in range(50)), return_exceptions=True
    )
    assert sum(not isinstance(r, BaseException) for r in results) == 4


async def test_wrong_codes_on_one_connection_never_lock_out_another_connection(
    limited: Factory,
) -> None:
    """D6, issue 15: failed joins are counted per connection, under an address ceiling. A
    connection that guesses is stopped at its budget; a player on another connection of the
    same address joins with the right code at once; only the address ceiling (which one
    address cannot reach within the connection caps, README "Limits") stops everyone."""
    client = await limited(join_failures_per_connection=2, join_rate_limit=5)
    _, code, _ = await client.create()
    wrong = "ZZZZZZZZZZ"

    async def guess(connection: str) -> grpc.StatusCode:
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await client.join(wrong, "Eve", peer=A, connection=connection)
        return caught.value.code()

    assert [await guess("gw1/c1") for _ in range(2)] == [grpc.StatusCode.NOT_FOUND] * 2
    limit, retry_s = await refusal(client.join(wrong, "Eve", peer=A, connection="gw1/c1"))
    assert limit == "join_failures_per_connection"
    assert 0 < retry_s <= 60
    # The same address, another connection, the right code: seated.
    seat = await client.join(code, "Bo", peer=A, connection="gw1/c2")
    assert seat.seat == 1
    # Three more failures on other connections reach the address's ceiling of five...
    assert [await guess(c) for c in ("gw1/c3", "gw1/c3", "gw2/c4")] == [
        grpc.StatusCode.NOT_FOUND
    ] * 3
    limit, _ = await refusal(client.join(code, "Cy", peer=A, connection="gw2/c5"))
    assert limit == "join_failures_per_address"
    # ...which holds for that address only.
    assert (await client.join(code, "Cy", peer=B, connection="gw2/c6")).seat == 2


async def test_lobby_changes_of_a_table_are_limited(limited: Factory, redis_client: Any) -> None:
    client = await limited(lobby_changes_per_minute=4)
    host, code, _ = await client.create()
    await client.join(code, "Bo")  # 1
    for target in (150, 200, 250):  # 2, 3, 4
        await client.execute(
            host.token,
            set_target=gateway_pb2.SetTargetRequest(
                request_id=rid(), table_id=host.table_id, target=target
            ),
        )
    version = (await client.view(host)).version
    limit, _ = await refusal(
        client.execute(
            host.token,
            set_target=gateway_pb2.SetTargetRequest(
                request_id=rid(), table_id=host.table_id, target=300
            ),
        )
    )
    assert limit == "lobby_changes"
    limit, _ = await refusal(client.join(code, "Cy"))
    assert limit == "lobby_changes"
    view = await client.view(host)
    assert view.version == version and view.target == 250  # nothing changed


async def test_a_seat_that_connects_too_often_is_refused_and_may_still_drop(
    limited: Factory,
) -> None:
    client = await limited(connections_per_seat_minute=3)
    host, code, _ = await client.create()
    guest = await client.join(code, "Bo")

    async def presence(seat: Seat, connected: bool) -> Any:
        return await client.stub.SetPresence(
            table_pb2.SetPresenceRequest(
                table_id=seat.table_id, seat_token=seat.token, connected=connected
            )
        )

    for _ in range(3):
        await presence(guest, True)
        await presence(guest, False)
    limit, retry_s = await refusal(presence(guest, True))
    assert limit == "connections_per_seat"
    assert 0 < retry_s <= 60
    await presence(guest, False)  # dropping is never refused
    await presence(host, True)  # another seat has its own budget
