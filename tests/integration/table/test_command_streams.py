"""A table's commands on one ``TableService/ExecuteStream`` (issue 22), against a real table
service: the answers and refusals are Execute's, the stream is the caller's only while its
credential is, and a stream that ends never loses or doubles a command."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import grpc
import pytest
from dominos.v1 import gateway_pb2, table_pb2, table_pb2_grpc

from services.common.command_streams import CommandStreams
from services.common.connections import table_channel
from services.common.grpc_metrics import HANDLED, STARTED
from services.common.service_errors import reason_of
from services.common.settings import Settings
from services.common.table_channel import TableChannel
from services.table.server import create_server
from services.table.servicer import TableServicer
from testing.secrets import SESSION_SECRETS
from testing.waiting import wait_for

from .client import Seat, TableClient, rid
from .conftest import table_settings

SERVICE = "dominos.v1.TableService"


def _opened() -> float:
    return STARTED.labels(SERVICE, "ExecuteStream", "bidi_stream")._value.get()


def _ended(code: str) -> float:
    return HANDLED.labels(SERVICE, "ExecuteStream", "bidi_stream", code)._value.get()


def _connect(
    port: int, credential: str = SESSION_SECRETS.gateway_credential, **options: Any
) -> tuple[CommandStreams, TableChannel]:
    """Command streams to the replica at ``port``, with unary Executes on the same channel,
    both with ``credential`` (as the gateway builds them)."""
    channel = TableChannel(grpc.aio.insecure_channel(f"127.0.0.1:{port}"), credential)
    unary = table_pb2_grpc.TableServiceStub(channel).Execute
    return CommandStreams(channel.channel, unary, credential=credential, **options), channel


@pytest.fixture
async def streams(table_service: tuple[Any, int]) -> AsyncIterator[CommandStreams]:
    _, port = table_service
    commands, channel = _connect(port)
    yield commands
    await commands.close()
    await channel.close()


def _play(seat: Seat, view: Any, request_id: str | None = None) -> table_pb2.ExecuteRequest:
    """The seat's first legal move (a play, else a pass) as an ExecuteRequest."""
    command: dict[str, Any]
    request_id = request_id or rid()
    if view.legal_moves:
        move = view.legal_moves[0]
        command = {
            "play_tile": gateway_pb2.PlayTileRequest(
                request_id=request_id, table_id=seat.table_id, tile=move.tile, end=move.end
            )
        }
    else:
        command = {"pass": gateway_pb2.PassRequest(request_id=request_id, table_id=seat.table_id)}
    return table_pb2.ExecuteRequest(seat_token=seat.token, **command)


async def _to_play(client: TableClient, seats: list[Seat]) -> tuple[Seat, Any]:
    """The seat whose turn it is (R11) and its view."""
    seat = seats[(await client.view(seats[0])).turn_seat]
    return seat, await client.view(seat)


async def test_a_tables_commands_on_one_stream_get_executes_answers(
    client: TableClient, streams: CommandStreams
) -> None:
    """Twelve moves of a started game on the table's stream: each answered with the seat's
    view after it (as Execute answers), the table one version further each time, all on the
    one stream the first command opened."""
    seats = await client.full_table()
    await client.start(seats[0])
    opened = _opened()
    for _ in range(12):
        seat, view = await _to_play(client, seats)
        reply = await streams(_play(seat, view), timeout=5)
        result = getattr(reply, reply.WhichOneof("result"))
        assert result.view.version == view.version + 1
        assert (await client.view(seat)).version == view.version + 1
    assert _opened() - opened == 1
    assert streams.open_streams == 1


async def test_a_refusal_on_a_stream_is_executes_error_and_the_stream_goes_on(
    client: TableClient, streams: CommandStreams
) -> None:
    """R-rules refusals travel as outcomes: a move out of turn is FAILED_PRECONDITION /
    NOT_YOUR_TURN with its ErrorInfo, exactly as the unary call's, nothing changes, and the
    next command on the same stream is applied."""
    seats = await client.full_table()
    await client.start(seats[0])
    seat, view = await _to_play(client, seats)
    other = next(s for s in seats if s.seat != seat.seat)
    wrong = _play(other, await client.view(other))
    with pytest.raises(grpc.aio.AioRpcError) as streamed:
        await streams(wrong, timeout=5)
    with pytest.raises(grpc.aio.AioRpcError) as unary:
        await client.stub.Execute(wrong)
    assert streamed.value.code() == unary.value.code()
    assert reason_of(streamed.value) == reason_of(unary.value) is not None
    assert streamed.value.details() == unary.value.details()
    assert (await client.view(seat)).version == view.version
    reply = await streams(_play(seat, view), timeout=5)
    assert getattr(reply, reply.WhichOneof("result")).view.version == view.version + 1
    assert streams.open_streams == 1


async def test_a_retried_request_id_on_a_stream_is_applied_once(
    client: TableClient, streams: CommandStreams
) -> None:
    """The same move sent twice with one request id (a retry after a broken stream) is
    applied once and answered with the same version twice."""
    seats = await client.full_table()
    await client.start(seats[0])
    seat, view = await _to_play(client, seats)
    while not view.legal_moves:  # a play, whose answer names the version it made
        await streams(_play(seat, view), timeout=5)
        seat, view = await _to_play(client, seats)
    request = _play(seat, view, request_id=rid())
    first = await streams(request, timeout=5)
    again = await streams(request, timeout=5)
    assert first.play_tile.view.version == again.play_tile.view.version == view.version + 1
    assert (await client.view(seat)).version == view.version + 1


@pytest.mark.parametrize(
    ("credential", "code"),
    [
        ("", grpc.StatusCode.UNAUTHENTICATED),
        ("gateway.wrong-secret-0123456789", grpc.StatusCode.UNAUTHENTICATED),
        (SESSION_SECRETS.bots_credential, grpc.StatusCode.PERMISSION_DENIED),
    ],
)
async def test_a_stream_without_the_gateways_credential_applies_nothing(
    redis_server: Any, nats_server: Any, redis_client: Any, credential: str, code: grpc.StatusCode
) -> None:
    """The caller's credential and grant are checked when the stream opens (issue 14, 20):
    without one, or with the bots service's (RobotService only), every command on it fails
    with the stream's status and no ErrorInfo, and the table does not change."""
    settings = table_settings(
        redis_server.url_for("table"),
        nats_server.url_for("table"),
        table_callers=f"{SESSION_SECRETS.gateway_credential},{SESSION_SECRETS.bots_credential}",
    )
    server, port = await create_server(settings)
    client = TableClient(f"127.0.0.1:{port}")
    stranger, channel = _connect(port, credential, wanted=lambda _: True)
    try:
        seats = await client.full_table()
        await client.start(seats[0])
        seat, view = await _to_play(client, seats)
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await stranger(_play(seat, view), timeout=5)
        assert refused.value.code() == code
        assert reason_of(refused.value) is None
        assert (await client.view(seat)).version == view.version
    finally:
        await stranger.close()
        await channel.close()
        await client.close()
        await server.stop()


async def test_tables_not_wanted_and_beyond_the_cap_go_unary(
    client: TableClient, table_service: tuple[Any, int]
) -> None:
    """A stream is opened only for a table ``wanted`` accepts (the gateway: one its clients
    watch) and while fewer than ``max_streams`` are open; other commands are unary
    Executes, applied all the same."""
    _, port = table_service
    tables = [await client.full_table() for _ in range(3)]
    for seats in tables:
        await client.start(seats[0])
    unwanted = tables[2][0].table_id
    commands, channel = _connect(port, wanted=lambda table_id: table_id != unwanted, max_streams=1)
    opened = _opened()
    try:
        for seats in tables:
            seat, view = await _to_play(client, seats)
            await commands(_play(seat, view), timeout=5)
            assert (await client.view(seat)).version == view.version + 1
        assert commands.open_streams == 1
        assert _opened() - opened == 1
    finally:
        await commands.close()
        await channel.close()


async def test_an_idle_stream_is_half_closed_and_the_next_command_opens_another(
    client: TableClient, table_service: tuple[Any, int]
) -> None:
    """After ``idle_s`` without a command the stream is half-closed (the server ends it OK);
    the table's next command opens a new one."""
    _, port = table_service
    commands, channel = _connect(port, idle_s=0.2)
    seats = await client.full_table()
    await client.start(seats[0])
    ended_ok, opened = _ended("OK"), _opened()
    try:
        seat, view = await _to_play(client, seats)
        await commands(_play(seat, view), timeout=5)
        await wait_for(lambda: _ended("OK") > ended_ok, message="the idle stream ended OK")
        assert commands.open_streams == 0
        seat, view = await _to_play(client, seats)
        await commands(_play(seat, view), timeout=5)
        assert (await client.view(seat)).version == view.version + 1
        assert _opened() - opened == 2
    finally:
        await commands.close()
        await channel.close()


async def test_a_draining_service_ends_its_streams_and_commands_move_on(
    redis_server: Any, nats_server: Any, redis_client: Any, nats_client: Any
) -> None:
    """S-shutdown: a replica that starts draining ends its idle command streams at once, so
    the caller's next command for the table opens a stream elsewhere (here: a second
    replica on the same Redis), which applies it: nothing lost, nothing doubled."""
    settings = table_settings(
        redis_server.url_for("table"), nats_server.url_for("table"), round_break_seconds=0
    )
    first, first_port = await create_server(settings.replace(shutdown_drain_seconds=2))
    second, second_port = await create_server(settings)
    client = TableClient(f"127.0.0.1:{second_port}")
    commands, channel = _connect(first_port)
    try:
        seats = await client.full_table()
        await client.start(seats[0])
        seat, view = await _to_play(client, seats)
        await commands(_play(seat, view), timeout=5)
        assert commands.open_streams == 1
        stopping = asyncio.ensure_future(first.runtime.shutdown("test"))
        await wait_for(lambda: commands.open_streams == 0, message="the stream ended")
        seat, view = await _to_play(client, seats)
        # The first replica drains: the caller's retry goes to another replica.
        moved, other = _connect(second_port)
        request = _play(seat, view)
        await moved(request, timeout=5)
        await moved(request, timeout=5)  # the same request id again: applied once
        assert (await client.view(seat)).version == view.version + 1
        await moved.close()
        await other.close()
        await stopping
    finally:
        await commands.close()
        await channel.close()
        await client.close()
        await first.stop()
        await second.stop()


async def test_a_command_on_a_stream_that_broke_fails_unavailable_and_its_retry_applies_once(
    client: TableClient, streams: CommandStreams
) -> None:
    """A command whose stream is cut before it is written fails UNAVAILABLE (which the
    gateway retries); its retry with the same request id opens a new stream and is applied
    exactly once."""
    seats = await client.full_table()
    await client.start(seats[0])
    seat, view = await _to_play(client, seats)
    await streams(_play(seat, view), timeout=5)
    (cut,) = list(streams._streams.values())
    seat, view = await _to_play(client, seats)
    request = _play(seat, view)
    async with cut.writing:  # the command waits to be written...
        sent = asyncio.create_task(streams(request, timeout=5))
        await wait_for(lambda: cut.pending, message="the command is waiting")
        cut.call.cancel()  # ...while its stream is cut
    with pytest.raises(grpc.aio.AioRpcError) as failed:
        await sent
    assert failed.value.code() == grpc.StatusCode.UNAVAILABLE
    assert (await client.view(seat)).version == view.version
    reply = await streams(request, timeout=5)
    assert getattr(reply, reply.WhichOneof("result")).view.version == view.version + 1
    await streams(request, timeout=5)
    assert (await client.view(seat)).version == view.version + 1
    assert streams.open_streams == 1


async def test_a_tables_stream_reaches_the_replica_of_its_unary_calls(
    redis_server: Any, nats_server: Any, redis_client: Any
) -> None:
    """Table-affine routing holds for streams: over a channel to two replicas, a table's
    stream (opened with its ``dominos-table`` header) reaches the replica its unary calls
    reach, whose record cache then follows every command; the other never sees them."""
    settings = table_settings(redis_server.url_for("table"), nats_server.url_for("table"))
    replicas = [await create_server(settings) for _ in range(2)]
    target = "ipv4:" + ",".join(f"127.0.0.1:{port}" for _, port in replicas)
    channel = table_channel(
        Settings(table_service_addr=target, caller_credential=SESSION_SECRETS.gateway_credential)
    )
    stub: Any = table_pb2_grpc.TableServiceStub(channel)
    commands = CommandStreams(
        channel.channel, stub.Execute, credential=SESSION_SECRETS.gateway_credential
    )
    apps = [server.app for server, _ in replicas]

    def target_of(table_id: str, token: str, points: int) -> table_pb2.ExecuteRequest:
        change = gateway_pb2.SetTargetRequest(request_id=rid(), table_id=table_id, target=points)
        return table_pb2.ExecuteRequest(seat_token=token, set_target=change)

    try:
        owners = set()
        for _ in range(8):
            reply = await stub.Execute(
                table_pb2.ExecuteRequest(
                    create_table=gateway_pb2.CreateTableRequest(request_id=rid(), host_name="A")
                )
            )
            table_id, token = reply.create_table.table_id, reply.create_table.seat_token
            unary = await stub.Execute(target_of(table_id, token, 150))
            (owner,) = [
                app
                for app in apps
                if (r := app.cache.get(table_id)) and r.version == unary.set_target.view.version
            ]
            for points in (200, 250):
                streamed = await commands(target_of(table_id, token, points), timeout=5)
                version = streamed.set_target.view.version
                cached = owner.cache.get(table_id)
                assert cached is not None and cached.version == version
                others = [app.cache.get(table_id) for app in apps if app is not owner]
                assert all(r is None or r.version < unary.set_target.view.version for r in others)
            owners.add(apps.index(owner))
        assert owners == {0, 1}  # 8 tables over 2 replicas: both own some
        assert commands.open_streams == 8
    finally:
        await commands.close()
        await channel.close()
        for server, _ in replicas:
            await server.stop()


async def test_commands_go_unary_to_a_table_service_without_streams(
    client: TableClient, table_service: tuple[Any, int]
) -> None:
    """During a rolling upgrade a gateway may reach a replica of an earlier release, which
    serves Execute and no ExecuteStream: the command the stream refused UNIMPLEMENTED is sent
    unary (it was never applied) and so is the next one, without a stream attempt."""
    server, _ = table_service
    servicer = TableServicer(server.app, callers_authenticated=False)
    served: list[str] = []

    async def execute(request: table_pb2.ExecuteRequest, context: Any) -> bytes:
        served.append(request.WhichOneof("command") or "")
        return await servicer.Execute(request, context)

    older = grpc.aio.server()
    older.add_generic_rpc_handlers(
        (
            grpc.method_handlers_generic_handler(
                "dominos.v1.TableService",
                {
                    "Execute": grpc.unary_unary_rpc_method_handler(
                        execute,
                        request_deserializer=table_pb2.ExecuteRequest.FromString,
                        response_serializer=lambda answer: answer,
                    )
                },
            ),
        )
    )
    port = older.add_insecure_port("127.0.0.1:0")
    await older.start()
    commands, channel = _connect(port)
    try:
        seats = await client.full_table()
        await client.start(seats[0])
        for _ in range(2):
            seat, view = await _to_play(client, seats)
            reply = await commands(_play(seat, view), timeout=5)
            assert getattr(reply, reply.WhichOneof("result")).view.version == view.version + 1
        assert len(served) == 2
        assert commands.open_streams == 0
    finally:
        await commands.close()
        await channel.close()
        await older.stop(None)
