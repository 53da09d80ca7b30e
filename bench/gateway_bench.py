"""Benchmark of the gateway: action → view on every stream of the table, and memory per stream.

Every part of the cluster is its own process: ``redis-server``, ``nats-server -js``, the table
service, the timer service and ONE gateway (``python -m services.<name>``, as the end-to-end
tests start them), all on free ports, with ``DOMINOS_LOG_LEVEL=warning`` and the default turn
time (45 s), so no auto-play interferes. The join rate limit is raised to its maximum
(``DOMINOS_JOIN_RATE_LIMIT=100000``): every join of the bench comes from 127.0.0.1. This
process is the clients: ``DominosClient`` (``services.client.api``) over the public API.

Every client here has its own TCP connection to the gateway. gRPC shares one connection
among all channels of a process that have the same target and arguments (its global
subchannel pool), so each ``DominosClient``'s channel is replaced by an identical one that
also sets ``grpc.use_local_subchannel_pool`` (see ``connect``).

Latency: ``--tables`` tables (10) of four seats (target 500), each seat with its own client and
an open ``WatchTable`` stream, read by its own task that records the version and the
``perf_counter`` instant of every message. One action in flight, round-robin over the tables:
the seat to play (from its latest view) sends ``PlayTile`` (a random legal move) or ``Pass``;

- ``t_rpc``: send → the RPC's response returned;
- ``t_views``: send → the view of the new version arrived on ALL FOUR streams of the table
  (``t_first``: on the first of them).

A table whose round ends (``PHASE_ROUND_OVER``, or a finished game) is replaced by a new one
on the same four clients; seating it (create, three joins, four streams until every seat shows
connected, start, the start's view on the four streams) is not timed. The old table's streams
stay open until the end (closing them would mark its seats away, and away seats are
auto-played every 5 s); what they still receive while measured is counted ("background").
The first ``--warmup`` actions (200) are not recorded. ``actions/s`` is the recorded actions
over the time they took (seating excluded). ``CPU ms/action``: user + system CPU of every
process (``/proc/<pid>/stat``; this one's from ``getrusage``) over the recorded actions,
seating excluded: with one action in flight, the cluster's CPU per action against the wall
time per action shows how much of the latency is work and how much is waiting.

Memory: ``--streams`` / 4 (1,000) more tables are created and joined through the gateway (not
started: nobody plays) from ``--channels`` (16) clients. Then the memory of the gateway
process is read (``VmRSS`` of ``/proc/<pid>/status``, ``Pss`` of ``/proc/<pid>/smaps_rollup``),
4 streams per table are opened (``WatchTable`` calls spread over the channels, at most
``--open-concurrency`` tables opening at once), and once every stream received its first view
and then the view in which all four seats are connected (the table is quiet: no presence
update in flight), the memory is read again. ``(after - before) / streams`` is the gateway's
cost of an idle stream (its share of the table's NATS subscription and state included). The
same deltas of the table service and Redis (plus Redis ``used_memory``) are given for
information. The streams of the latency part are still open: what they hold is in the
baseline, and no memory they freed can be reused by the new streams. The floor is measured
the same way on a bare ``grpc.aio`` server in its own process (a server-streaming handler
that sends one message and waits): what any Python gRPC stream costs before the gateway adds
anything.

The gateway's Redis client has redis-py's default pool (at most 100 connections, and it fails
instead of waiting when they are all taken); every stream takes a presence lease when it
opens and renews it every 5 s. Opening more than a few tables' streams at once runs the pool
out and the gateway fails streams (``UNKNOWN``, ``MaxConnectionsError``), hence the default
``--open-concurrency`` of 4 tables. A stream failed before its first view is opened again (at
most ``OPEN_ATTEMPTS`` times) and reported. The warnings and errors of the services' logs are
counted and printed, those while measuring apart from those of the teardown (closing every
stream at once).

Targets (from the issue), reported, not enforced: ``t_views`` p50 <= 1.5 ms and p99 <= 10 ms;
gateway RSS <= 10 KB per stream.

Usage: ``python -m bench.gateway_bench [--plays N] [--tables T] [--streams S] [--channels C]
[--open-concurrency K] [--json PATH] [--smoke]`` (``--smoke``: 100 actions, 200 streams).
"""

from __future__ import annotations

import argparse
import asyncio
import bisect
import contextlib
import os
import platform
import random
import resource
import sys
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Coroutine, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import grpc
from dominos.v1 import game_pb2, gateway_pb2_grpc
from redis.asyncio import Redis

from bench.common import write_json
from services.client.api import CHANNEL_OPTIONS, DominosClient, SeatCredentials
from testing.cluster import Pids, ProcessCluster
from testing.players import seat_four
from testing.procfs import cpu_times, process_memory_kb
from testing.servers import nats_binary
from testing.stats import PERCENTILES, summary_ms

_perf_ns = time.perf_counter_ns
_T = TypeVar("_T")

VIEW_TIMEOUT_S = 10.0
OPEN_ATTEMPTS = 3
SETUP_TIMEOUT_S = 120.0
TARGET = 500
PLAYING = game_pb2.PHASE_PLAYING
TARGET_P50_MS = 1.5
TARGET_P99_MS = 10.0
TARGET_KB_PER_STREAM = 10.0
#: The services' settings in every benchmark cluster (every join of the bench comes from
#: 127.0.0.1: the join rate limit at its maximum).
CLUSTER_ENV = {"DOMINOS_LOG_LEVEL": "warning", "DOMINOS_JOIN_RATE_LIMIT": "100000"}


# --- clients and streams ---------------------------------------------------------------------


async def connect(address: str) -> DominosClient:
    """A ``DominosClient`` whose channel has a TCP connection of its own."""
    client = DominosClient(address)
    await client.channel.close()  # never used: nothing was connected yet
    client.channel = grpc.aio.insecure_channel(
        address, options=(*CHANNEL_OPTIONS, ("grpc.use_local_subchannel_pool", 1))
    )
    client.stub = gateway_pb2_grpc.DominosServiceStub(client.channel)
    return client


class StreamEnded(RuntimeError):
    """A view stream ended while something waited for a view on it."""


def all_connected(view: game_pb2.TableView) -> bool:
    """Every seat of the view is occupied and shows a connected client."""
    return all(seat.occupied and seat.connected for seat in view.seats)


class SeatStream:
    """One ``WatchTable`` call, read by its own task: every message's version and receive
    instant (``perf_counter_ns``, taken first thing), and the latest view."""

    def __init__(self, client: DominosClient, credentials: SeatCredentials) -> None:
        self.client = client
        self.credentials = credentials
        self.view: game_pb2.TableView | None = None
        self.versions: list[int] = []
        self.times_ns: list[int] = []
        self._waiters: list[tuple[Callable[[game_pb2.TableView], bool], asyncio.Future[None]]] = []
        self._ended: str | None = None
        self._call = client.watch(credentials)
        self._task = asyncio.create_task(self._read(), name=f"watch-{credentials.table_id}")

    @property
    def messages(self) -> int:
        """Views received so far."""
        return len(self.versions)

    async def _read(self) -> None:
        reason = "the stream ended"
        try:
            async for message in self._call:
                at_ns = _perf_ns()
                view = message.view
                self.versions.append(view.version)
                self.times_ns.append(at_ns)
                self.view = view
                if self._waiters:
                    self._wake(view)
        except grpc.aio.AioRpcError as error:
            reason = f"the stream failed: {error.code().name} {error.details()}"
        finally:
            self._ended = reason
            for _, future in self._waiters:
                if not future.done():
                    future.set_exception(StreamEnded(f"{self.credentials.table_id}: {reason}"))
            self._waiters.clear()

    def _wake(self, view: game_pb2.TableView) -> None:
        still = []
        for predicate, future in self._waiters:
            if future.done():
                continue
            if predicate(view):
                future.set_result(None)
            else:
                still.append((predicate, future))
        self._waiters = still

    async def wait_view(
        self, predicate: Callable[[game_pb2.TableView], bool], what: str
    ) -> game_pb2.TableView:
        """The first view (the latest one included) for which ``predicate`` holds."""
        if self.view is None or not predicate(self.view):
            if self._ended is not None:
                raise StreamEnded(f"{self.credentials.table_id}: {self._ended}")
            future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._waiters.append((predicate, future))
            try:
                async with asyncio.timeout(VIEW_TIMEOUT_S):
                    await future
            except TimeoutError:
                raise TimeoutError(
                    f"seat {self.credentials.seat} of {self.credentials.table_id}: no view"
                    f" {what} within {VIEW_TIMEOUT_S} s"
                ) from None
        assert self.view is not None
        return self.view

    async def reached(self, version: int) -> int:
        """When (``perf_counter_ns``) the first view of ``version`` or newer arrived."""
        if not self.versions or self.versions[-1] < version:
            await self.wait_view(lambda view: view.version >= version, f"of version {version}")
        return self.times_ns[bisect.bisect_left(self.versions, version)]

    async def close(self) -> None:
        """Cancel the call and its reader."""
        self._call.cancel()
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError, grpc.aio.AioRpcError):
            await self._task


async def open_stream(
    client: DominosClient, credentials: SeatCredentials, failures: list[str]
) -> SeatStream:
    """A ``WatchTable`` stream that received its first view (this seat's, of this table).

    A stream the gateway fails before its first view is opened again (up to
    ``OPEN_ATTEMPTS`` times); each failure is appended to ``failures``, to be reported.
    """
    for _ in range(OPEN_ATTEMPTS):
        stream = SeatStream(client, credentials)
        try:
            view = await stream.wait_view(lambda view: True, "at all")
        except StreamEnded as error:
            failures.append(str(error).partition(": ")[2])
            await stream.close()
            continue
        if (view.table_id, view.your_seat) != (credentials.table_id, credentials.seat):
            raise RuntimeError(f"the stream of {credentials} got a foreign view")
        return stream
    raise RuntimeError(f"no stream for {credentials} in {OPEN_ATTEMPTS} attempts: {failures[-1]}")


async def bounded(limit: int, jobs: Iterable[Callable[[], Awaitable[_T]]]) -> list[_T]:
    """Run the jobs with at most ``limit`` at once; their results, in order."""
    semaphore = asyncio.Semaphore(limit)

    async def one(job: Callable[[], Awaitable[_T]]) -> _T:
        async with semaphore:
            return await job()

    return list(await asyncio.gather(*(one(job) for job in jobs)))


# --- latency ---------------------------------------------------------------------------------


@dataclass
class Table:
    """A started table: its four streams by seat, and the version all four have reached."""

    table_id: str
    streams: list[SeatStream]
    version: int
    phase: int
    retired_at_messages: int = 0


@dataclass(frozen=True, slots=True)
class Step:
    """One timed action (ns from just before the RPC was sent)."""

    rpc_ns: int
    first_ns: int
    views_ns: int
    passed: bool
    phase: int


async def seat_lobby(
    clients: list[DominosClient], number: int, failures: list[str] | None
) -> tuple[SeatCredentials, list[SeatStream]]:
    """Create a table (target 500), join the three other seats (one per client); unless
    ``failures`` is None (a table of absent players), open the four streams (one per client)
    and wait until every seat shows connected. The game is not started."""
    names = [f"Host{number}", *(f"P{number}-{k}" for k in (1, 2, 3))]
    lobby = await seat_four(clients, names, TARGET)
    host, seats = lobby.host, lobby.seats
    if failures is None:
        return host, []
    opened = await asyncio.gather(
        *(
            open_stream(client, credentials, failures)
            for client, credentials in zip(clients, seats, strict=True)
        )
    )
    streams = sorted(opened, key=lambda stream: stream.credentials.seat)
    if [s.credentials.seat for s in streams] != [0, 1, 2, 3]:
        raise RuntimeError(f"table {host.table_id}: seats {[s.seat for s in seats]}")
    await asyncio.gather(
        *(s.wait_view(all_connected, "with every seat connected") for s in streams)
    )
    return host, streams


async def seat_table(clients: list[DominosClient], number: int, failures: list[str]) -> Table:
    """:func:`seat_lobby` (four streams, every seat connected), then start; returns once the
    four streams got the start."""
    host, streams = await seat_lobby(clients, number, failures)
    view = await clients[0].start(host)
    await asyncio.gather(*(s.reached(view.version) for s in streams))
    return Table(host.table_id, streams, view.version, view.phase)


async def act(table: Table, rng: random.Random) -> Step:
    """The seat to play plays a random legal move, or passes; timed until all four streams
    have the new version."""
    latest = table.streams[0].view
    assert latest is not None and latest.phase == PLAYING and latest.version == table.version
    stream = table.streams[latest.turn_seat]
    view = stream.view
    assert view is not None and view.version == table.version
    moves = view.legal_moves
    sent = _perf_ns()
    if moves:
        reply = await stream.client.play(stream.credentials, moves[rng.randrange(len(moves))])
    else:
        reply = await stream.client.pass_turn(stream.credentials)
    answered = _perf_ns()
    arrivals = await asyncio.gather(*(s.reached(reply.version) for s in table.streams))
    table.version, table.phase = reply.version, reply.phase
    return Step(answered - sent, min(arrivals) - sent, max(arrivals) - sent, not moves, reply.phase)


@dataclass
class Latencies:
    """The recorded actions of the measured loop."""

    rpc_ns: list[int] = field(default_factory=list)
    first_ns: list[int] = field(default_factory=list)
    views_ns: list[int] = field(default_factory=list)
    passes: int = 0
    wall_ns: int = 0
    aside_ns: int = 0  # seating new tables inside the measured loop
    tables_seated: int = 0
    background_views: int = 0


async def measure_actions(
    address: str,
    tables: int,
    warmup: int,
    plays: int,
    seed: int,
    keep: list[Table],
    cpu: CpuMeter,
    failures: list[str],
) -> tuple[Latencies, list[DominosClient]]:
    """Round-robin over ``tables`` tables, ``warmup`` + ``plays`` actions, one in flight.
    Every table ever seated is appended to ``keep`` (its streams are closed by the caller);
    ``cpu`` counts the recorded actions (seating excluded)."""
    rng = random.Random(seed)
    clients = [await connect(address) for _ in range(4 * tables)]
    slots = [clients[4 * i : 4 * i + 4] for i in range(tables)]
    seated: list[Table] = []
    for i in range(tables):
        seated.append(await seat_table(slots[i], i, failures))
        keep.append(seated[-1])
    result = Latencies(tables_seated=tables)
    retired: list[Table] = []
    started = 0
    for k in range(warmup + plays):
        if k == warmup:
            started = _perf_ns()
            cpu.start()
            retired.clear()  # background counted while measured only
        slot = k % tables
        table = seated[slot]
        step = await act(table, rng)
        if k >= warmup:
            result.rpc_ns.append(step.rpc_ns)
            result.first_ns.append(step.first_ns)
            result.views_ns.append(step.views_ns)
            result.passes += step.passed
        if step.phase != PLAYING:
            t0 = _perf_ns()
            if k >= warmup:
                cpu.stop()
            table.retired_at_messages = sum(s.messages for s in table.streams)
            retired.append(table)
            seated[slot] = await seat_table(slots[slot], result.tables_seated, failures)
            keep.append(seated[slot])
            result.tables_seated += 1
            if k >= warmup:
                result.aside_ns += _perf_ns() - t0
                cpu.start()
    result.wall_ns = _perf_ns() - started
    cpu.stop()
    result.background_views = sum(
        sum(s.messages for s in t.streams) - t.retired_at_messages for t in retired
    )
    return result, clients


# --- memory ----------------------------------------------------------------------------------


class CpuMeter:
    """CPU seconds each process of the cluster, and this one (``client``), used while running
    (between ``start`` and ``stop``, any number of times)."""

    def __init__(self, pids: Pids) -> None:
        self.pids = pids.by_name()
        self.used = dict.fromkeys([*self.pids, "client"], 0.0)
        self._since: dict[str, float] | None = None

    def _read(self) -> dict[str, float]:
        now = {name: sum(cpu_times(pid)) for name, pid in self.pids.items()}
        usage = resource.getrusage(resource.RUSAGE_SELF)
        now["client"] = usage.ru_utime + usage.ru_stime
        return now

    def start(self) -> None:
        """Count from now."""
        self._since = self._read()

    def stop(self) -> None:
        """Stop counting (add what was used since ``start``)."""
        if self._since is not None:
            now = self._read()
            for name, seconds in now.items():
                self.used[name] += seconds - self._since[name]
            self._since = None


async def snapshot_memory(pids: Pids, redis: Redis) -> dict[str, dict[str, int | None]]:
    """Memory of the gateway, the table service and Redis now."""
    info = await redis.info("memory")
    return {
        "gateway": process_memory_kb(pids.gateway),
        "table": process_memory_kb(pids.table),
        "redis": {**process_memory_kb(pids.redis), "used_memory_kb": info["used_memory"] // 1024},
    }


async def measure_memory(
    address: str,
    pids: Pids,
    redis_url: str,
    tables: int,
    channels: int,
    concurrency: int,
    streams_out: list[SeatStream],
    failures: list[str],
) -> tuple[dict[str, Any], list[DominosClient]]:
    """Idle streams: ``tables`` x 4, memory before/after (see the module docstring)."""
    clients = [await connect(address) for _ in range(channels)]
    redis = Redis.from_url(redis_url)
    try:

        def create(i: int) -> Callable[[], Awaitable[list[SeatCredentials]]]:
            async def job() -> list[SeatCredentials]:
                seating = [clients[(i + k) % channels] for k in range(4)]
                names = [f"M{i}", *(f"M{i}-{k}" for k in (1, 2, 3))]
                return (await seat_four(seating, names, TARGET)).seats

            return job

        t0 = _perf_ns()
        seated = await bounded(concurrency, (create(i) for i in range(tables)))
        created_s = (_perf_ns() - t0) / 1e9
        before = await snapshot_memory(pids, redis)

        def open_table(i: int, seats: list[SeatCredentials]) -> Callable[[], Awaitable[float]]:
            async def job() -> float:
                t = _perf_ns()
                opened = await asyncio.gather(
                    *(
                        open_stream(clients[(4 * i + k) % channels], credentials, failures)
                        for k, credentials in enumerate(seats)
                    )
                )
                streams_out.extend(opened)
                return (_perf_ns() - t) / 1e6

            return job

        t0 = _perf_ns()
        async with asyncio.timeout(SETUP_TIMEOUT_S):
            first_view_ms = await bounded(
                concurrency, (open_table(i, seats) for i, seats in enumerate(seated))
            )
            first_views_s = (_perf_ns() - t0) / 1e9
            await asyncio.gather(
                *(s.wait_view(all_connected, "with every seat connected") for s in streams_out)
            )
        quiet_s = (_perf_ns() - t0) / 1e9
        after = await snapshot_memory(pids, redis)
    finally:
        await redis.aclose()
    streams = len(streams_out)
    return {
        "tables": tables,
        "streams": streams,
        "channels": channels,
        "create_s": created_s,
        "first_views_s": first_views_s,
        "quiet_s": quiet_s,
        "open_table_ms": summary_ms([int(ms * 1e6) for ms in first_view_ms]),
        "messages": sum(s.messages for s in streams_out),
        "before": before,
        "after": after,
    }, clients


FLOOR_SERVER = """
import asyncio, grpc

async def main():
    hold = asyncio.Event()

    async def watch(request, context):
        yield bytes(FLOOR_VIEW_BYTES)
        await hold.wait()

    server = grpc.aio.server()
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(
        "bench.Floor", {"Watch": grpc.unary_stream_rpc_method_handler(watch)}),))
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    print(port, flush=True)
    await server.wait_for_termination()

asyncio.run(main())
"""
FLOOR_VIEW_BYTES = 300
FLOOR_WARMUP_STREAMS = 32


async def measure_floor(streams: int, channels: int, concurrency: int) -> float:
    """KB of RSS per idle stream of a bare ``grpc.aio`` server (its own process): a
    server-streaming handler that sends one message, then waits. Same channel count as the
    gateway's measurement; the delta is taken after ``FLOOR_WARMUP_STREAMS`` streams."""
    code = FLOOR_SERVER.replace("FLOOR_VIEW_BYTES", str(FLOOR_VIEW_BYTES))
    server = await asyncio.create_subprocess_exec(
        sys.executable, "-c", code, stdout=asyncio.subprocess.PIPE
    )
    channel_list: list[Any] = []
    calls: list[Any] = []
    try:
        assert server.stdout is not None
        async with asyncio.timeout(SETUP_TIMEOUT_S):
            port = int(await server.stdout.readline())
        channel_list = [
            grpc.aio.insecure_channel(
                f"127.0.0.1:{port}",
                options=(*CHANNEL_OPTIONS, ("grpc.use_local_subchannel_pool", 1)),
            )
            for _ in range(channels)
        ]

        def open_one(i: int) -> Callable[[], Awaitable[None]]:
            async def job() -> None:
                call = channel_list[i % channels].unary_stream("/bench.Floor/Watch")(b"")
                calls.append(call)
                await call.read()

            return job

        async with asyncio.timeout(SETUP_TIMEOUT_S):
            await bounded(concurrency, (open_one(i) for i in range(FLOOR_WARMUP_STREAMS)))
            before = process_memory_kb(server.pid)["rss_kb"]
            await bounded(concurrency, (open_one(i) for i in range(streams)))
            after = process_memory_kb(server.pid)["rss_kb"]
        assert before is not None and after is not None
        return (after - before) / streams
    finally:
        for call in calls:
            call.cancel()
        await asyncio.gather(*(c.close() for c in channel_list), return_exceptions=True)
        if server.returncode is None:
            server.kill()
        await server.wait()


def per_stream_kb(memory: dict[str, Any], process: str, key: str) -> float | None:
    """(after - before) / streams for one figure of one process, or None if unknown."""
    before, after = memory["before"][process].get(key), memory["after"][process].get(key)
    if before is None or after is None:
        return None
    return float(after - before) / memory["streams"]


# --- the run ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Config:
    """What one run does."""

    plays: int
    warmup: int
    tables: int
    memory_tables: int
    channels: int
    open_concurrency: int
    seed: int


def measure(
    main: Callable[[ProcessCluster], Coroutine[Any, Any, dict[str, Any]]],
    *,
    keep_logs: bool = False,
    metrics: bool = False,
) -> dict[str, Any]:
    """Start a cluster of one replica per role (:data:`CLUSTER_ENV`, the venv's nats-server;
    with ``metrics`` each serves its Prometheus page), run ``main(cluster)`` on an event loop,
    stop every process and remove the data directories whatever happened; the results get
    the services' logged problems. The logs are removed unless the run failed or
    ``keep_logs``."""
    cluster = ProcessCluster.start(env=CLUSTER_ENV, nats_binary=nats_binary(), metrics=metrics)
    ok = False
    try:
        results = asyncio.run(main(cluster))
        ok = True
    finally:
        cluster.stop()
        if not ok:
            logs = ", ".join(str(s.log_path) for s in cluster.started)
            print(f"service logs kept: {logs}", file=sys.stderr)
    results["log_problems"] = cluster.log_problems()
    if keep_logs:
        print(f"service logs: {', '.join(str(s.log_path) for s in cluster.started)}")
    else:
        cluster.remove_logs()
    return results


async def run(config: Config, cluster: ProcessCluster) -> dict[str, Any]:
    """Both measurements against a started cluster; closes every client it opened."""
    assert cluster.redis is not None
    pids = cluster.pids()
    cpu = CpuMeter(pids)
    failures: list[str] = []
    tables: list[Table] = []
    memory_streams: list[SeatStream] = []
    clients: list[DominosClient] = []
    try:
        latencies, used = await measure_actions(
            cluster.gateway_address,
            config.tables,
            config.warmup,
            config.plays,
            config.seed,
            tables,
            cpu,
            failures,
        )
        clients += used
        memory, used = await measure_memory(
            cluster.gateway_address,
            pids,
            cluster.redis.url_for("admin"),
            config.memory_tables,
            config.channels,
            config.open_concurrency,
            memory_streams,
            failures,
        )
        clients += used
        floor = await measure_floor(
            len(memory_streams), config.channels, 4 * config.open_concurrency
        )
        cluster.mark_logs()
    finally:
        every = [s for t in tables for s in t.streams] + memory_streams
        await asyncio.gather(*(s.close() for s in every), return_exceptions=True)
        await asyncio.gather(*(c.close() for c in clients), return_exceptions=True)

    busy_s = (latencies.wall_ns - latencies.aside_ns) / 1e9
    return {
        "config": {
            "plays": config.plays,
            "warmup": config.warmup,
            "tables": config.tables,
            "memory_tables": config.memory_tables,
            "channels": config.channels,
            "seed": config.seed,
            "python": platform.python_version(),
            "cpus": os.cpu_count(),
            "grpc": grpc.__version__,
        },
        "actions": {
            "recorded": len(latencies.rpc_ns),
            "passes": latencies.passes,
            "tables_seated": latencies.tables_seated,
            "background_views": latencies.background_views,
            "t_rpc_ms": summary_ms(latencies.rpc_ns),
            "t_first_ms": summary_ms(latencies.first_ns),
            "t_views_ms": summary_ms(latencies.views_ns),
            "actions_per_s": len(latencies.rpc_ns) / busy_s,
            "wall_ms_per_action": busy_s * 1e3 / len(latencies.rpc_ns),
            "cpu_ms_per_action": {
                name: seconds * 1e3 / len(latencies.rpc_ns) for name, seconds in cpu.used.items()
            },
        },
        "memory": memory,
        "floor_kb_per_stream": floor,
        "streams_reopened": dict(Counter(failures)),
        "per_stream_kb": {
            f"{process}_{key}": per_stream_kb(memory, process, key)
            for process, key in (
                ("gateway", "rss_kb"),
                ("gateway", "pss_kb"),
                ("table", "rss_kb"),
                ("redis", "rss_kb"),
                ("redis", "used_memory_kb"),
            )
        },
    }


def _verdict(ok: bool) -> str:
    return "met" if ok else "MISSED"


def print_report(results: dict[str, Any]) -> None:
    """The aligned tables quoted in notes."""
    act, cfg, mem = results["actions"], results["config"], results["memory"]
    print(
        f"gateway: {act['recorded']} actions ({act['passes']} passes) over {cfg['tables']}"
        f" tables x 4 streams, 1 in flight, after {cfg['warmup']} warm-up"
        f" ({act['tables_seated']} tables seated)"
    )
    head = "".join(f"{name:>9}" for name, _ in PERCENTILES)
    print(f"{'latency (ms)':26}{head}")
    for label, key in (
        ("t_rpc   send→response", "t_rpc_ms"),
        ("t_first send→1st view", "t_first_ms"),
        ("t_views send→4 views", "t_views_ms"),
    ):
        row = "".join(f"{act[key][name]:9.3f}" for name, _ in PERCENTILES)
        print(f"{label:26}{row}")
    print(
        f"{'actions/s':26}{act['actions_per_s']:9.0f}   (1 in flight, seating excluded;"
        f" {act['background_views']} views of retired tables meanwhile)"
    )
    cpu = act["cpu_ms_per_action"]
    shares = ", ".join(f"{name} {ms:.2f}" for name, ms in cpu.items())
    print(
        f"{'CPU ms/action':26}{sum(cpu.values()):9.2f}   ({shares}; wall"
        f" {act['wall_ms_per_action']:.2f} ms/action, {cfg['cpus']} CPUs)"
    )
    views = act["t_views_ms"]
    print(
        f"target t_views p50 <= {TARGET_P50_MS} ms: {_verdict(views['p50'] <= TARGET_P50_MS)}"
        f" ({views['p50']:.3f}); p99 <= {TARGET_P99_MS} ms:"
        f" {_verdict(views['p99'] <= TARGET_P99_MS)} ({views['p99']:.3f})"
    )
    print()
    print(
        f"memory: {mem['streams']} idle streams ({mem['tables']} lobby tables x 4) over"
        f" {mem['channels']} channels; tables created in {mem['create_s']:.1f} s, first views"
        f" in {mem['first_views_s']:.1f} s, quiet in {mem['quiet_s']:.1f} s"
    )
    print(f"{'(KB)':26}{'before':>10}{'after':>10}{'delta':>10}{'/stream':>10}")
    for label, process, key in (
        ("gateway VmRSS", "gateway", "rss_kb"),
        ("gateway Pss", "gateway", "pss_kb"),
        ("table service VmRSS", "table", "rss_kb"),
        ("redis VmRSS", "redis", "rss_kb"),
        ("redis used_memory", "redis", "used_memory_kb"),
    ):
        before, after = mem["before"][process].get(key), mem["after"][process].get(key)
        if before is None or after is None:
            print(f"{label:26}{'n/a':>10}")
            continue
        delta = after - before
        print(f"{label:26}{before:10d}{after:10d}{delta:10d}{delta / mem['streams']:10.2f}")
    print(
        f"{'floor: bare grpc.aio':26}{results['floor_kb_per_stream']:40.2f}   (server-streaming"
        f" handler: one {FLOOR_VIEW_BYTES} B message, then idle; same channels)"
    )
    kb = results["per_stream_kb"]["gateway_rss_kb"]
    print(
        f"target gateway <= {TARGET_KB_PER_STREAM:.0f} KB/stream:"
        f" {_verdict(kb <= TARGET_KB_PER_STREAM)} ({kb:.2f} KB)"
    )
    reopened = results["streams_reopened"]
    if reopened:
        print("streams failed by the gateway before their first view, opened again:")
        for reason, count in reopened.items():
            print(f"  {count} x {reason}")
    print()
    for part, title in (("run", "while measuring"), ("teardown", "at teardown (all closed)")):
        logs = {name: parts[part] for name, parts in results["log_problems"].items()}
        quiet = [name for name, counts in logs.items() if not counts]
        print(f"service warnings/errors {title}: none from {', '.join(quiet) or '-'}")
        for name, counts in logs.items():
            for event, count in sorted(counts.items(), key=lambda item: -item[1]):
                print(f"  {name}: {count} x {event}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--plays", type=int, default=3000, help="recorded actions (3000)")
    parser.add_argument("--warmup", type=int, default=200, help="unrecorded first actions")
    parser.add_argument("--tables", type=int, default=10, help="tables played round-robin")
    parser.add_argument("--streams", type=int, default=4000, help="idle streams (4 a table)")
    parser.add_argument("--channels", type=int, default=16, help="channels carrying them")
    parser.add_argument(
        "--open-concurrency",
        type=int,
        default=4,
        help="tables created, and tables whose streams open, at once (4; at 16 the gateway's"
        " Redis pool, 100 connections, runs out and fails streams)",
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", type=Path, help="also write the figures here")
    parser.add_argument("--smoke", action="store_true", help="100 actions, 200 streams (CI)")
    args = parser.parse_args(argv)
    if args.smoke:
        config = Config(100, 20, 4, 50, 8, args.open_concurrency, args.seed)
    else:
        config = Config(
            args.plays,
            args.warmup,
            args.tables,
            args.streams // 4,
            args.channels,
            args.open_concurrency,
            args.seed,
        )
    if min(config.plays, config.tables, config.memory_tables, config.channels) < 1:
        parser.error("--plays, --tables, --channels must be positive and --streams >= 4")
    results = measure(lambda cluster: run(config, cluster))
    print_report(results)
    write_json(args.json, results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
