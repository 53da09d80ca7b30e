"""Concurrent conflicting commands: exactly the legal ones take effect, nothing is lost,
with one table service and with two processes sharing Redis and NATS (issue 3)."""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator
from typing import Any

import grpc
import pytest
from dominos.v1 import events_pb2, game_pb2, gateway_pb2, table_pb2

from services.common.bus import TABLE_STREAM, table_subject
from services.rules import replay
from services.table.application import MAX_ATTEMPTS
from services.table.command_log import decode_log
from services.table.store import TableStore
from testing.services import ServiceProcess

from .client import Seat, TableClient, rid


async def stream_versions(js: Any, table_id: str, expected: int, wait_s: float = 2.0) -> list[int]:
    """The versions stored in the JetStream stream for a table, in stream order."""
    sub = await js.pull_subscribe(table_subject(table_id), stream=TABLE_STREAM)
    versions: list[int] = []
    while len(versions) < expected:
        try:
            batch = await sub.fetch(batch=256, timeout=wait_s)
        except TimeoutError:
            break
        for msg in batch:
            versions.append(events_pb2.TableEvent.FromString(msg.data).version)
            await msg.ack()
    await sub.unsubscribe()
    return versions


async def storm(
    clients: list[TableClient], seats: list[Seat], rng: random.Random
) -> dict[str, Any]:
    """Fire 50 concurrent commands at a started table: plays and passes of every seat, legal
    or not, and repeats of some request ids. Returns outcome per call."""
    views = [await clients[0].view(seat) for seat in seats]
    calls: list[tuple[str, Any]] = []
    for seat, view in zip(seats, views, strict=True):
        for tile in view.hand:
            for end in (game_pb2.END_LEFT, game_pb2.END_RIGHT):
                calls.append((rid(), ("play", seat, game_pb2.Move(tile=tile, end=end))))
        calls.append((rid(), ("pass", seat, None)))
    rng.shuffle(calls)
    to_play = seats[views[0].turn_seat]
    moves = (await clients[0].view(to_play)).legal_moves
    legal: list[tuple[str, Any]] = [(rid(), ("play", to_play, move)) for move in moves]
    if not moves:
        legal = [(rid(), ("pass", to_play, None))]
    calls = [*legal, *calls][:40]  # the seat to play's legal moves always compete
    calls += [rng.choice(calls) for _ in range(10)]  # duplicates: same request id and payload
    assert len(calls) == 50

    async def one(i: int, request_id: str, spec: Any) -> Any:
        kind, seat, move = spec
        client = clients[i % len(clients)]
        try:
            if kind == "play":
                return (await client.play(seat, move, request_id=request_id)).view.version
            return (await client.pass_(seat, request_id=request_id)).view.version
        except grpc.aio.AioRpcError as error:
            return error.code()

    results = await asyncio.gather(*(one(i, r, s) for i, (r, s) in enumerate(calls)))
    return {"calls": calls, "results": results, "start_version": views[0].version}


def check_storm(outcome: dict[str, Any], final_version: int) -> None:
    by_request: dict[str, set[Any]] = {}
    for (request_id, _), result in zip(outcome["calls"], outcome["results"], strict=True):
        by_request.setdefault(request_id, set()).add(result)
    accepted = {}
    for request_id, results in by_request.items():
        versions = {r for r in results if isinstance(r, int)}
        assert len(versions) <= 1, "a repeated request id got two different answers"
        if versions:
            accepted[request_id] = versions.pop()
    for results in outcome["results"]:
        assert isinstance(results, int) or results in (
            grpc.StatusCode.FAILED_PRECONDITION,
            grpc.StatusCode.INVALID_ARGUMENT,
        ), results
    start = outcome["start_version"]
    # Every acting request made exactly one version; the versions have no gap or double.
    assert sorted(accepted.values()) == list(range(start + 1, final_version + 1))
    assert len(accepted) >= 1


@pytest.fixture
async def second_process(
    redis_server: Any, nats_server: Any, table_service: Any
) -> AsyncIterator[ServiceProcess]:
    process = ServiceProcess(
        "services.table",
        {
            "DOMINOS_REDIS_URL": redis_server.url_for("table"),
            "DOMINOS_NATS_URL": nats_server.url_for("table"),
            "DOMINOS_ROUND_BREAK_SECONDS": "0",
        },
    )
    await asyncio.to_thread(process.start)
    yield process
    assert await asyncio.to_thread(process.stop) == 0, process.log_tail()


@pytest.mark.parametrize("seed", [1, 2, 3])
async def test_fifty_concurrent_conflicting_commands_apply_exactly_the_legal_ones(
    client: TableClient, redis_client: Any, nats_client: Any, seed: int
) -> None:
    seats = await client.full_table()
    await client.start(seats[0])
    outcome = await storm([client], seats, random.Random(seed))
    store = TableStore(redis_client)
    loaded = await store.load(seats[0].table_id)
    assert loaded is not None
    check_storm(outcome, loaded.version)
    assert replay(decode_log(await store.read_log(seats[0].table_id))) == loaded.state
    versions = await stream_versions(nats_client.jetstream(), seats[0].table_id, loaded.version)
    assert versions == list(range(1, loaded.version + 1))


async def test_two_table_service_processes_share_a_table_without_losing_an_update(
    client: TableClient, second_process: ServiceProcess, redis_client: Any, nats_client: Any
) -> None:
    other = TableClient(second_process.address)
    try:
        seats = await client.full_table()
        await other.start(seats[0])
        rng = random.Random(9)
        for _ in range(3):
            outcome = await storm([client, other], seats, rng)
            store = TableStore(redis_client)
            loaded = await store.load(seats[0].table_id)
            assert loaded is not None
            check_storm(outcome, loaded.version)
            if loaded.state.phase.name != "PLAYING":
                break
        assert loaded is not None
        assert replay(decode_log(await store.read_log(seats[0].table_id))) == loaded.state
        versions = await stream_versions(nats_client.jetstream(), seats[0].table_id, loaded.version)
        assert versions == list(range(1, loaded.version + 1))
    finally:
        await other.close()


async def test_many_commands_of_one_table_at_once_all_succeed_in_one_process(
    client: TableClient, redis_client: Any, nats_client: Any
) -> None:
    """More commands of one table at once than a command has compare-and-set attempts
    (three seats connecting and dropping while the host changes the target, as many streams
    opening at once do): one process runs them one at a time, so none is refused
    VERSION_CONFLICT, and each change is one version of the log and the bus."""
    seats = await client.full_table()
    table_id = seats[0].table_id

    async def presence(seat: Seat, connected: bool) -> Any:
        return await client.stub.SetPresence(
            table_pb2.SetPresenceRequest(
                table_id=table_id, seat_token=seat.token, connected=connected
            )
        )

    async def target(value: int) -> Any:
        return await client.execute(
            seats[0].token,
            set_target=gateway_pb2.SetTargetRequest(
                request_id=rid(), table_id=table_id, target=value
            ),
        )

    calls = [presence(seat, i % 2 == 0) for i in range(8) for seat in seats[1:]]
    calls += [target(50 * (1 + i % 10)) for i in range(40)]
    assert len(calls) > 4 * MAX_ATTEMPTS
    outcomes = await asyncio.gather(*calls, return_exceptions=True)
    refused = [o for o in outcomes if isinstance(o, grpc.aio.AioRpcError)]
    assert not refused, [(e.code(), e.details()) for e in refused]
    store = TableStore(redis_client)
    loaded = await store.load(table_id)
    assert loaded is not None
    assert replay(decode_log(await store.read_log(table_id))) == loaded.state
    versions = await stream_versions(nats_client.jetstream(), table_id, loaded.version)
    assert versions == list(range(1, loaded.version + 1))
