"""SIGTERM under load: health turns NOT_SERVING first, in-flight calls finish, the process exits
cleanly, and no acknowledged command is lost (issue 7)."""

from __future__ import annotations

import asyncio
import random
import signal
import threading
import time
from dataclasses import dataclass, field
from typing import Any

import grpc
import pytest
from dominos.v1 import game_pb2
from grpc_health.v1 import health_pb2, health_pb2_grpc
from redis.asyncio import Redis

from services.client.api import DominosClient, SeatCredentials, request_id
from services.client.stream import error_reason
from services.rules import Play, replay
from services.rules.tiles import tile_index
from services.table.command_log import decode_log
from services.table.store import TableStore
from testing.players import seat_four
from testing.services import ServiceProcess
from testing.waiting import wait_for

from .conftest import E2ECluster

RETRYABLE = (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED)


@dataclass
class Driver:
    """Plays one table as fast as possible, retrying a command with the same request id
    until it is answered; records every acknowledged play."""

    client: DominosClient
    seats: list[SeatCredentials]
    acked: list[tuple[int, int, int, int]] = field(default_factory=list)  # version, seat, tile, end
    stop: bool = False

    async def run(self) -> None:
        rng = random.Random(self.seats[0].table_id)
        while not self.stop:
            try:
                view = await self.client.view(self.seats[0])
                if view.phase != game_pb2.PHASE_PLAYING:
                    await asyncio.sleep(0.05)  # a break between rounds (D1)
                    continue
                seat = self.seats[view.turn_seat]
                mine = await self.client.view(seat)
                await self._act(seat, mine, rng)
            except grpc.aio.AioRpcError as error:
                if error.code() not in (*RETRYABLE, grpc.StatusCode.FAILED_PRECONDITION):
                    raise
                await asyncio.sleep(0.05)  # backoff while the service restarts

    async def _act(self, seat: SeatCredentials, view: Any, rng: random.Random) -> None:
        rid = request_id()
        move = rng.choice(list(view.legal_moves)) if view.legal_moves else None
        while not self.stop:
            try:
                if move is None:
                    await self.client.pass_turn(seat, rid)
                    return
                answer = await self.client.play(seat, move, rid)
                index = tile_index(move.tile.low, move.tile.high)
                self.acked.append((answer.version, seat.seat, index, move.end))
                return
            except grpc.aio.AioRpcError as error:
                if error.code() not in RETRYABLE:
                    raise
                await asyncio.sleep(0.05)


async def _progress(drivers: list[Driver], tasks: list[asyncio.Task[None]], plays: int) -> None:
    """Until every driver acknowledged ``plays`` more plays (a driver that failed fails it)."""
    before = [len(d.acked) for d in drivers]

    def moved() -> bool:
        for task in tasks:
            if task.done() and task.exception() is not None:
                raise AssertionError(f"a driver failed: {task.exception()!r}")
        return all(len(d.acked) >= n + plays for d, n in zip(drivers, before, strict=True))

    await wait_for(moved, timeout=30, message=f"progress {[len(d.acked) for d in drivers]}")


async def _tables(address: str, count: int) -> list[Driver]:
    drivers = []
    for _ in range(count):
        client = DominosClient(address)
        lobby = await seat_four([client], ["Host", "B", "C", "D"], 500)
        await client.start(lobby.host)
        drivers.append(Driver(client, lobby.seats))
    return drivers


def _watch_health(
    process: ServiceProcess, seen: list[tuple[float, str]], done: threading.Event
) -> None:
    """Record the health status (or the connection's refusal) until ``done``."""
    with grpc.insecure_channel(process.address) as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        while not done.is_set():
            try:
                status = stub.Check(health_pb2.HealthCheckRequest(), timeout=0.2).status
                seen.append(
                    (time.monotonic(), health_pb2.HealthCheckResponse.ServingStatus.Name(status))
                )
            except grpc.RpcError as error:
                seen.append((time.monotonic(), error.code().name))
            time.sleep(0.005)  # sampling period of the probe, not synchronisation


async def _sigterm(process: ServiceProcess) -> tuple[int, list[tuple[float, str]]]:
    seen: list[tuple[float, str]] = []
    done = threading.Event()
    watcher = threading.Thread(target=_watch_health, args=(process, seen, done), daemon=True)
    watcher.start()
    await wait_for(lambda: any(s == "SERVING" for _, s in seen), timeout=5)
    assert process.process is not None
    process.process.send_signal(signal.SIGTERM)
    code = await asyncio.to_thread(process.process.wait, 30)
    done.set()
    await asyncio.to_thread(watcher.join, 5)
    return code, seen


def _not_serving_before_refusal(seen: list[tuple[float, str]]) -> bool:
    statuses = [s for _, s in seen]
    first_gone = next((i for i, s in enumerate(statuses) if s != "SERVING"), len(statuses))
    return first_gone < len(statuses) and statuses[first_gone] == "NOT_SERVING"


async def _check_nothing_lost(e2e: E2ECluster, drivers: list[Driver]) -> None:
    redis = Redis.from_url(e2e.redis.url_for("admin"))
    try:
        store = TableStore(redis)
        for driver in drivers:
            entries = decode_log(await store.read_log(driver.seats[0].table_id))
            state = replay(entries)
            for version, seat, tile, end in driver.acked:
                assert version <= state.version
                command, _ = entries[version - 1]  # the entry that made this version
                assert command == Play(seat, tile, end)
    finally:
        await redis.aclose()


async def test_sigterm_to_the_table_service_under_load_loses_no_acknowledged_command(
    e2e: E2ECluster,
) -> None:
    drivers = await _tables(e2e.gateways[0].address, 4)
    tasks = [asyncio.create_task(d.run()) for d in drivers]
    try:
        await _progress(drivers, tasks, 5)
        code, seen = await _sigterm(e2e.table)
        assert code == 0
        assert _not_serving_before_refusal(seen), seen[-5:]
        # Back up; the drivers' retried commands (same request ids) act once.
        await asyncio.to_thread(e2e.replace, e2e.table)
        await _progress(drivers, tasks, 3)
    finally:
        for driver in drivers:
            driver.stop = True
        await asyncio.gather(*tasks, return_exceptions=True)
        for driver in drivers:
            await driver.client.close()
    for task in tasks:
        assert task.exception() is None
    await _check_nothing_lost(e2e, drivers)


async def test_sigterm_to_a_gateway_and_the_timer_under_load_exits_cleanly(
    e2e: E2ECluster,
) -> None:
    spare = e2e.add("gateway")
    drivers = await _tables(spare.address, 2)
    tasks = [asyncio.create_task(d.run()) for d in drivers]
    try:
        await _progress(drivers, tasks, 3)
        code, seen = await _sigterm(spare)
        e2e.replicas.remove(spare)
        assert code == 0
        assert _not_serving_before_refusal(seen), seen[-5:]
        code, seen = await _sigterm(e2e.timer)
        assert code == 0
        assert _not_serving_before_refusal(seen), seen[-5:]
        await asyncio.to_thread(e2e.replace, e2e.timer)
    finally:
        for driver in drivers:
            driver.stop = True
        await asyncio.gather(*tasks, return_exceptions=True)
        for driver in drivers:
            await driver.client.close()
    await _check_nothing_lost(e2e, drivers)


async def test_a_stopping_gateway_ends_its_streams_at_once_with_a_documented_status(
    e2e: E2ECluster,
) -> None:
    """Issue 17: at SIGTERM a gateway ends its view streams with UNAVAILABLE and an ErrorInfo
    (reason UNAVAILABLE) when its drain starts, not when the grace period ends; it opens no
    new stream meanwhile, and the client reconnects through another gateway."""
    gateway = e2e.add(
        "gateway", {"DOMINOS_SHUTDOWN_DRAIN_SECONDS": "3", "DOMINOS_SHUTDOWN_GRACE_SECONDS": "5"}
    )
    client, other = DominosClient(gateway.address), DominosClient(e2e.gateways[0].address)
    try:
        host, _, _ = await other.create_table("Host")
        call = client.watch(host)
        await asyncio.wait_for(call.read(), timeout=10)
        stopping = threading.Thread(target=gateway.stop, daemon=True)
        sent = time.monotonic()
        stopping.start()
        with pytest.raises(grpc.aio.AioRpcError) as raised:
            async with asyncio.timeout(10):
                while await call.read() is not grpc.aio.EOF:
                    pass
        ended_after = time.monotonic() - sent
        assert raised.value.code() == grpc.StatusCode.UNAVAILABLE
        assert error_reason(raised.value) == "UNAVAILABLE"
        assert ended_after < 2.5, ended_after  # drain 3 s + grace 5 s: at the drain's start
        # While it drains, a new stream on it is refused the same way.
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await asyncio.wait_for(client.watch(host).read(), timeout=5)
        assert error_reason(refused.value) == "UNAVAILABLE"
        # Another gateway serves the reopened stream.
        again = other.watch(host)
        assert (await asyncio.wait_for(again.read(), timeout=10)).view.your_seat == 0
        again.cancel()
        await asyncio.to_thread(stopping.join, 20)
    finally:
        await client.close()
        await other.close()
