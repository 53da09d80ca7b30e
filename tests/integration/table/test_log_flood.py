"""A flood of oversized bad requests grows the services' logs by a bounded amount.

Real processes: a table service and a gateway (``python -m services.<name>``, logging at
INFO to a file) on the session's Redis and NATS. Each test sends :data:`FLOOD` malformed
requests whose string fields are tens of KB (with control characters), checks that every one
is still answered with its status and reason, and measures how much the service logs grew:
client-sized values never reach a log line (only validated values are bound, every logged
string is truncated) and rejection lines are sampled, so the growth stays below
:data:`MAX_GROWTH` however large or many the requests are.
"""

from __future__ import annotations

import asyncio
import uuid
from collections import Counter
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

import grpc
import pytest
from dominos.v1 import gateway_pb2, gateway_pb2_grpc, table_pb2, table_pb2_grpc

from services.common.caller_auth import CallerCredentials
from services.common.service_errors import reason_of
from testing.secrets import SESSION_SECRETS
from testing.servers import NatsServer, RedisServer
from testing.services import ServiceProcess

FLOOD = 1_000
#: Size of an oversized field: below the servers' 64 KB message limit (two such fields in
#: one message are half this size each).
BIG = 60_000
#: The most a flood of FLOOD requests may add to a service's log.
MAX_GROWTH = 64 * 1024
CONCURRENCY = 32
#: A valid-looking but unknown seat token (43 characters of URL-safe base64).
FAKE_TOKEN = "A" * 43

INVALID = grpc.StatusCode.INVALID_ARGUMENT
DENIED = grpc.StatusCode.PERMISSION_DENIED
TOO_BIG = grpc.StatusCode.RESOURCE_EXHAUSTED
UNIMPLEMENTED = grpc.StatusCode.UNIMPLEMENTED

Case = tuple[Callable[[], Awaitable[Any]], grpc.StatusCode, str | None]


def junk(size: int) -> str:
    """``size`` characters of client garbage: control characters, a terminal escape, a fake
    JSON line, then filler."""
    head = '\n\r\t\x00\x1b[31m{"level":"error","event":"forged"}\u2028'
    return (head + "x" * size)[:size]


def rid() -> str:
    return uuid.uuid4().hex


@pytest.fixture(scope="module")
def services(
    redis_server: RedisServer, nats_server: NatsServer
) -> Iterator[tuple[ServiceProcess, ServiceProcess]]:
    """A table service and a gateway in front of it, both logging at INFO to files."""
    redis_server.ensure_running()
    nats_server.ensure_running()
    env = {"DOMINOS_LOG_LEVEL": "info"}
    table = ServiceProcess(
        "services.table",
        {
            **env,
            "DOMINOS_REDIS_URL": redis_server.url_for("table"),
            "DOMINOS_NATS_URL": nats_server.url_for("table"),
        },
    ).start()
    gateway: ServiceProcess | None = None
    try:
        gateway = ServiceProcess(
            "services.gateway",
            {
                **env,
                "DOMINOS_REDIS_URL": redis_server.url_for("gateway"),
                "DOMINOS_NATS_URL": nats_server.url_for("gateway"),
                "DOMINOS_TABLE_SERVICE_ADDR": table.address,
            },
        ).start()
        yield table, gateway
    finally:
        codes = [gateway.stop() if gateway else 0, table.stop()]
        # The logs of a flood can be large when the bound is broken: don't leave them behind.
        for process in (gateway, table):
            if process is not None:
                process.log_path.unlink(missing_ok=True)
        assert codes == [0, 0], codes


async def flood(cases: list[Case]) -> Counter[tuple[str, str | None]]:
    """Send FLOOD requests cycling through ``cases`` (CONCURRENCY at a time); assert each got
    its expected status and reason; count the outcomes."""
    outcomes: Counter[tuple[str, str | None]] = Counter()
    gate = asyncio.Semaphore(CONCURRENCY)

    async def one(index: int) -> None:
        call, code, reason = cases[index % len(cases)]
        async with gate:
            with pytest.raises(grpc.aio.AioRpcError) as caught:
                await call()
        error = caught.value
        assert (error.code(), reason_of(error)) == (code, reason), (index, error)
        outcomes[(code.name, reason)] += 1

    await asyncio.gather(*(one(i) for i in range(FLOOD)))
    assert sum(outcomes.values()) == FLOOD
    return outcomes


def size(process: ServiceProcess) -> int:
    return process.log_path.stat().st_size


def check_growth(*measured: tuple[ServiceProcess, int]) -> None:
    """Each process's log grew by less than MAX_GROWTH since its size ``before``."""
    growth = {process.module: size(process) - before for process, before in measured}
    print(f"log growth (bytes) for {FLOOD} bad requests: {growth}")
    tails = {process.module: process.log_tail(3)[:1000] for process, _ in measured}
    assert all(grown < MAX_GROWTH for grown in growth.values()), (growth, tails)


async def test_a_flood_of_oversized_bad_requests_barely_grows_the_table_service_log(
    services: tuple[ServiceProcess, ServiceProcess],
) -> None:
    table, _ = services
    # As the gateway calls it (authenticated): the requests reach validation.
    credentials = [CallerCredentials(SESSION_SECRETS.gateway_credential)]
    async with grpc.aio.insecure_channel(table.address, interceptors=credentials) as channel:
        stub: Any = table_pb2_grpc.TableServiceStub(channel)

        def execute(token: str = "", **command: Any) -> Callable[[], Awaitable[Any]]:
            return lambda: stub.Execute(table_pb2.ExecuteRequest(seat_token=token, **command))

        half = BIG // 2
        unknown = channel.unary_unary(f"/dominos.v1.TableService/{'X' * 4000}")
        cases: list[Case] = [
            (
                execute(create_table=gateway_pb2.CreateTableRequest(request_id=junk(BIG))),
                INVALID,
                "REQUEST_ID_MALFORMED",
            ),
            (
                execute(
                    FAKE_TOKEN,
                    play_tile=gateway_pb2.PlayTileRequest(
                        request_id=junk(half), table_id=junk(half)
                    ),
                ),
                INVALID,
                "REQUEST_ID_MALFORMED",
            ),
            (
                execute(
                    FAKE_TOKEN,
                    **{"pass": gateway_pb2.PassRequest(request_id=rid(), table_id=junk(BIG))},
                ),
                INVALID,
                "ID_MALFORMED",
            ),
            (
                execute(
                    junk(BIG),
                    start_game=gateway_pb2.StartGameRequest(request_id=rid(), table_id="A" * 22),
                ),
                DENIED,
                "TOKEN_INVALID",
            ),
            (
                execute(
                    join_table=gateway_pb2.JoinTableRequest(
                        request_id=rid(), invitation_code=junk(half), player_name=junk(half)
                    )
                ),
                INVALID,
                "NAME_INVALID",
            ),
            (
                lambda: stub.SetPresence(
                    table_pb2.SetPresenceRequest(table_id=junk(BIG), seat_token=FAKE_TOKEN)
                ),
                INVALID,
                "ID_MALFORMED",
            ),
            (
                lambda: stub.GetView(
                    table_pb2.GetViewRequest(table_id=junk(BIG), seat_token=FAKE_TOKEN)
                ),
                INVALID,
                "ID_MALFORMED",
            ),
            (
                lambda: stub.GetSnapshot(table_pb2.GetSnapshotRequest(table_id=junk(BIG))),
                INVALID,
                "ID_MALFORMED",
            ),
            # Refused by gRPC itself: a message above the limit, an unknown method.
            (
                execute(create_table=gateway_pb2.CreateTableRequest(request_id=junk(100_000))),
                TOO_BIG,
                None,
            ),
            (lambda: unknown(junk(BIG).encode()), UNIMPLEMENTED, None),
        ]
        before = size(table)
        outcomes = await flood(cases)
        check_growth((table, before))
        # Still serving normally: a good request is answered.
        created = await stub.Execute(
            table_pb2.ExecuteRequest(
                create_table=gateway_pb2.CreateTableRequest(request_id=rid(), host_name="Ana")
            )
        )
        assert len(created.create_table.table_id) == 22
    assert outcomes[(INVALID.name, "REQUEST_ID_MALFORMED")] == 200


async def test_a_flood_of_oversized_bad_public_requests_barely_grows_the_logs(
    services: tuple[ServiceProcess, ServiceProcess],
) -> None:
    table, gateway = services
    bearer = (("authorization", f"Bearer {FAKE_TOKEN}"),)
    async with grpc.aio.insecure_channel(gateway.address) as channel:
        stub: Any = gateway_pb2_grpc.DominosServiceStub(channel)
        half = BIG // 2
        cases: list[Case] = [
            (
                lambda: stub.CreateTable(
                    gateway_pb2.CreateTableRequest(request_id=junk(BIG), host_name="Ana")
                ),
                INVALID,
                "REQUEST_ID_MALFORMED",
            ),
            (
                lambda: stub.JoinTable(
                    gateway_pb2.JoinTableRequest(
                        request_id=rid(), invitation_code=junk(half), player_name=junk(half)
                    )
                ),
                INVALID,
                "NAME_INVALID",
            ),
            (
                lambda: stub.PlayTile(
                    gateway_pb2.PlayTileRequest(request_id=rid(), table_id=junk(BIG)),
                    metadata=bearer,
                ),
                INVALID,
                "ID_MALFORMED",
            ),
            (
                lambda: stub.GetTableView(
                    gateway_pb2.GetTableViewRequest(table_id=junk(BIG)), metadata=bearer
                ),
                INVALID,
                "ID_MALFORMED",
            ),
            (
                lambda: stub.StartGame(
                    gateway_pb2.StartGameRequest(request_id=rid(), table_id="A" * 22),
                    metadata=(("authorization", f"Bearer {'t' * 4000}"),),
                ),
                DENIED,
                "TOKEN_INVALID",
            ),
        ]
        before = size(table), size(gateway)
        await flood(cases)
        check_growth((table, before[0]), (gateway, before[1]))
