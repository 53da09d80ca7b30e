"""The table service authenticates its callers (issue 14): TableService calls need a caller
credential, only a gateway may pass on a client's address, and no service starts on the
built-in secrets outside development."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import grpc
import pytest
from dominos.v1 import gateway_pb2, table_pb2
from grpc_health.v1 import health_pb2, health_pb2_grpc

from services.common.grpc_metrics import HANDLED
from services.common.settings import Settings, SettingsError
from services.gateway.server import create_server as create_gateway
from services.table.server import create_server
from testing.secrets import SESSION_SECRETS

from .client import TableClient, rid
from .conftest import table_settings

OPS = "ops.0123456789abcdef0123456789"


@pytest.fixture
async def two_callers(redis_server: Any, nats_server: Any) -> AsyncIterator[str]:
    """A table service that accepts the gateway's credential and an operator tool's."""
    settings = table_settings(
        redis_server.url_for("table"),
        nats_server.url_for("table"),
        table_callers=f"{SESSION_SECRETS.gateway_credential},{OPS}",
        join_rate_limit=3,
    )
    server, port = await create_server(settings)
    yield f"127.0.0.1:{port}"
    await server.stop()


def _refused(error: grpc.aio.AioRpcError) -> bool:
    """UNAUTHENTICATED without an ErrorInfo: a gateway turns it into UNAVAILABLE."""
    details = [k for k, _ in error.trailing_metadata() or () if k == "grpc-status-details-bin"]
    return error.code() == grpc.StatusCode.UNAUTHENTICATED and not details


@pytest.mark.parametrize("credential", ["", "gateway.wrong-secret-0123456789", "admin." + "x" * 20])
async def test_table_service_calls_without_a_valid_caller_credential_are_refused(
    client: TableClient, table_service: tuple[Any, int], credential: str
) -> None:
    host, _, _ = await client.create()
    _, port = table_service
    stranger = TableClient(f"127.0.0.1:{port}", credential=credential)
    try:
        calls = [
            stranger.stub.GetSnapshot(table_pb2.GetSnapshotRequest(table_id=host.table_id)),
            stranger.stub.GetView(
                table_pb2.GetViewRequest(table_id=host.table_id, seat_token=host.token)
            ),
            stranger.stub.Execute(
                table_pb2.ExecuteRequest(
                    create_table=gateway_pb2.CreateTableRequest(request_id=rid(), host_name="X")
                )
            ),
        ]
        for call in calls:
            with pytest.raises(grpc.aio.AioRpcError) as raised:
                await call
            assert _refused(raised.value), raised.value
        # Health stays open to probes.
        health: Any = health_pb2_grpc.HealthStub(stranger.channel)
        reply = await health.Check(health_pb2.HealthCheckRequest(service=""))
        assert reply.status == health_pb2.HealthCheckResponse.SERVING
    finally:
        await stranger.close()


@pytest.mark.parametrize("credential", ["", "gateway.wrong-secret-0123456789"])
async def test_a_strangers_bytes_are_refused_unauthenticated_before_they_are_parsed(
    table_service: tuple[Any, int], credential: str
) -> None:
    """Corrupt request bytes from a caller without a valid credential: UNAUTHENTICATED (the
    caller is checked first), not the parse error an authenticated caller would get, and the
    refusal is counted under its method with its status."""
    _, port = table_service
    metadata = (("dominos-caller", credential),) if credential else ()
    refused = HANDLED.labels("dominos.v1.TableService", "Execute", "unary", "UNAUTHENTICATED")
    before = refused._value.get()
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        execute = channel.unary_unary("/dominos.v1.TableService/Execute")
        with pytest.raises(grpc.aio.AioRpcError) as stranger:
            await execute(b"\xff\xff\xff not a request", metadata=metadata)
        assert _refused(stranger.value), stranger.value
        with pytest.raises(grpc.aio.AioRpcError) as gateway:
            await execute(
                b"\xff\xff\xff not a request",
                metadata=(("dominos-caller", SESSION_SECRETS.gateway_credential),),
            )
        assert gateway.value.code() == grpc.StatusCode.UNKNOWN  # parsed, and found corrupt
    assert refused._value.get() == before + 1


async def test_the_gateways_credential_is_served(client: TableClient) -> None:
    host, _, _ = await client.create()
    snapshot = await client.stub.GetSnapshot(table_pb2.GetSnapshotRequest(table_id=host.table_id))
    assert snapshot.version == 1


async def test_only_a_gateway_may_pass_on_a_clients_address(two_callers: str) -> None:
    """Another caller's `peer` is ignored: its failed joins all count against its own
    address, so naming a new address per guess does not bypass the limit (D6). The two
    callers' calls run side by side: each call is served as its own caller, never as the
    other one's (the caller is set per call, in the call's own context)."""
    gateway, ops = TableClient(two_callers), TableClient(two_callers, credential=OPS)
    try:
        ops_codes, gateway_codes = [], []
        for attempt in range(5):
            answers = await asyncio.gather(
                ops.join("ZZZZZZZZZZ", "Eve", peer=f"ipv4:198.51.100.{attempt}"),
                gateway.join("ZZZZZZZZZZ", "Bo", peer=f"ipv4:203.0.113.{attempt}"),
                gateway.join("ZZZZZZZZZZ", "Bo", peer=f"ipv4:203.0.113.{attempt + 100}"),
                return_exceptions=True,
            )
            assert all(isinstance(a, grpc.aio.AioRpcError) for a in answers), answers
            ops_codes.append(answers[0].code())  # type: ignore[union-attr]
            gateway_codes += [a.code() for a in answers[1:]]  # type: ignore[union-attr]
        assert ops_codes[:3] == [grpc.StatusCode.NOT_FOUND] * 3
        assert ops_codes[3:] == [grpc.StatusCode.RESOURCE_EXHAUSTED] * 2  # limited at 3
        # The gateway speaks for its clients: ten addresses, none limited.
        assert gateway_codes == [grpc.StatusCode.NOT_FOUND] * 10
    finally:
        await gateway.close()
        await ops.close()


@pytest.mark.parametrize(
    ("changes", "variable"),
    [
        ({"token_secret": Settings().token_secret}, "DOMINOS_TOKEN_SECRET"),
        ({"table_callers": ""}, "DOMINOS_TABLE_CALLERS"),
    ],
)
async def test_the_table_service_refuses_to_start_on_built_in_secrets(
    redis_server: Any, nats_server: Any, changes: dict[str, str], variable: str
) -> None:
    settings = table_settings(
        redis_server.url_for("table"), nats_server.url_for("table"), **changes
    )
    with pytest.raises(SettingsError) as raised:
        await create_server(settings)
    assert raised.value.variable == variable
    # An explicit development setting allows it (a developer's machine, never production).
    server, _ = await create_server(settings.replace(development=True))
    await server.stop()


async def test_the_gateway_refuses_to_start_without_its_caller_credential() -> None:
    with pytest.raises(SettingsError) as raised:
        await create_gateway(Settings(grpc_port=0, metrics_port=-1))
    assert raised.value.variable == "DOMINOS_CALLER_CREDENTIAL"
