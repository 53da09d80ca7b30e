"""Load benchmark of the whole cluster, open loop, with the floor it stands on measured beside it.

The cluster: ``redis-server``, ``nats-server -js``, the table service, the timer service and
ONE gateway, each its own process on free ports (``bench.gateway_bench.Cluster``: log level
warning, the default turn time of 45 s, the join rate limit raised because every join comes
from 127.0.0.1). The players: ``--generators`` (2) load-generator processes
(``python -m bench.load --generator``, asyncio on uvloop), each owning its share of the
tables; every seat is a ``DominosClient`` (``services.client.api``) with its own TCP
connection to the gateway, as every player's device has (``--channels C``: C shared
connections per generator instead), and its own ``WatchTable`` stream read by its own task
(``bench.gateway_bench.SeatStream``). This process starts everything, drives the generators
over their stdin/stdout (JSON lines), samples the floor, listens to the timer, reads the
processes' CPU and memory, and prints ONE table.

Seating (not measured): every table is created (target 500: no game ends during a run), its
three other seats join, its four streams open and show every seat connected; only when all
are seated are the games started, so no turn clock runs out while others are still being
seated. Beside the ``--tables`` played tables, ``--away`` (2 %, at least one) tables are
seated whose players never connect: the table plays for them (S3, a 5 s turn), so the timer
fires all through the run, as it does for the players who drop in real life; they are not
in the latency figures (a 60 s run at one action per 5 s ends few rounds, and the breaks
between rounds are the only other thing the timer fires).

Open loop. Every played table has a schedule: one action every ``--pace`` seconds (5), from
a random phase. At each slot the seat to play (``turn_seat`` of the table's newest view)
sends ``PlayTile`` (a random move of its own latest view's ``legal_moves``) or ``Pass``,
whether or not the previous action has been answered: a slow cluster does not slow the
offered load, so no latency is hidden (no coordinated omission). If that action was still in
flight, the slot acts on a stale view and is most likely refused (``FAILED_PRECONDITION``):
it counts as an error, as it would for a player. Slots that fall while the table has no
turn (the 10 s break after a round, D1) are skipped and counted. A seat acts every 4 x pace
seconds, under the 45 s turn time, so no connected seat is auto-played.

Latency of an action: from its scheduled instant to the arrival of the view of the new
version (the version of the RPC's answer) on ALL FOUR streams of the table. The event loop's
timers have a 1 ms granularity, so a slot's command leaves up to 0.5 ms before or after its
instant: latency counts from the later of the scheduled instant and the send, so a command
sent late is charged its lateness and one sent early is never credited. Also recorded:
scheduled → RPC answer, send → four views, the send's lateness, and each generator's event
loop lag (a 10 ms sleep's overshoot: when it grows, the generator itself is short of CPU).
Histograms are log-bucketed (``bench.histogram``, within 0.8 %), merged over the generators.
The first ``--warmup`` seconds (one pace) are played but not recorded; then ``--seconds``
(60) are. ``commands/s``: answered commands of recorded slots over the recorded time.
Errors: by gRPC status and message (views that never came within 10 s: ``VIEW_TIMEOUT``; a
stream that failed: ``STREAM_ENDED``), warm-up apart.

Timer: a core NATS subscription on ``dominos.v1.timer.expired`` receives every
``TimerExpired``; of the first firings (``attempt`` 1) during the run, ``fired_at_ms -
deadline_ms`` (the timer's lateness, as its ``dominos_timer_lateness_seconds`` histogram
observes it, to the millisecond) and receive time - deadline. Firings again (the table had
not moved on after the retry interval) are counted.

The floor, sampled ``--floor-hz`` (50) times a second in this process during the recorded
time, against the same servers under the same load: a Redis ``EVALSHA`` of ``return 1``, a
core NATS publish → subscribe hop of 400 bytes between two connections
(``bench.table_bench.Floor``), a gRPC unary call to an empty handler, and a server-stream
message of 300 bytes (one-way: the handler stamps ``perf_counter_ns``, a system-wide
monotonic clock, into each message it sends every 20 ms; the receiver subtracts), both served
by a bare ``grpc.aio`` server in its own process (``--floor-server``). Their p50s are summed;
the figure of merit is our p50 over that sum. An action needs more than one of each: two
unary hops (client → gateway → table), two Redis round trips, a JetStream publish (a round
trip), a NATS hop and four stream messages.

Resources: CPU seconds (user + system, and the system share, ``/proc/<pid>/stat``) of every
process over the recorded time, per 1,000 commands (answered + fired by the timer: each
firing makes the table service act); what the rest of the machine used meanwhile
(``/proc/stat`` minus ours: on a shared machine, the other processes' load shows up as
latency); peak RSS (``VmHWM``). Memory: the gateway's ``VmRSS`` and Redis's ``used_memory``
before any table, after seating (quiet: every stream has its start view) and at the end;
``delta / streams`` and ``delta / live tables`` (played + absent); ``MEMORY USAGE`` of a
sample of tables (``TableStore.memory_usage``) and of every key by kind; and, after the
last step, the floor of a stream: the RSS per stream of a bare ``grpc.aio`` server holding
as many idle streams over as many connections (``bench.gateway_bench.measure_floor``).

Scenarios: ``--tables N`` (100 by default; 2500 = ten thousand streams), ``--idle`` (one
table, one action every 0.1 s, 60 s: the latency of a quiet cluster against its floor),
``--ramp`` (steps ``--steps`` of tables, 20 s each unless ``--seconds``, on the same cluster,
tables added between steps; stops at the first step whose p99 >= ``--p99-limit`` ms (15) or
that had errors, unless ``--keep-going``; reports the largest N before the first bad step)
and ``--smoke`` (20 tables, one action every 0.25 s, 15 s: for the test suite). Results go
to ``bench/results/load-<scenario>-<time>.json`` (or ``--json PATH``); ``python -m
bench.compare A.json B.json`` compares two.

Targets (reported, not enforced): 2,500 tables at one action per 5 s: p99 <= 15 ms, no
errors, timer lateness p99 <= 10 ms; idle p50 <= 1.5 ms and <= 2x the floor; <= 1.5 KB of
Redis per live table; <= 10 KB of gateway memory per open stream.

Usage: ``python -m bench.load [--tables N | --idle | --ramp [--steps LIST] | --smoke] [--pace S]
[--seconds S] [--warmup S] [--generators G] [--channels C] [--away F] [--seed N]
[--keep-going] [--json PATH] [--keep-logs] [--no-stream-floor]``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import json
import math
import os
import platform
import random
import re
import resource
import sys
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import grpc
import nats
import uvloop
from dominos.v1 import events_pb2, game_pb2
from redis.asyncio import Redis

from bench.common import PERCENTILES
from bench.gateway_bench import (
    FLOOR_VIEW_BYTES,
    TARGET,
    Cluster,
    SeatStream,
    StreamEnded,
    all_connected,
    bounded,
    connect,
    measure_floor,
    open_stream,
    process_memory_kb,
)
from bench.gateway_bench import Table as SeatedTable
from bench.histogram import Histogram
from bench.table_bench import FLOOR_MESSAGE_BYTES, Floor
from services.client.api import CHANNEL_OPTIONS, DominosClient, SeatCredentials
from services.common.bus import TIMER_SUBJECT
from services.common.entrypoint import GC_THRESHOLDS
from services.table.store import TableStore

_perf_ns = time.perf_counter_ns
_CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
PLAYING = game_pb2.PHASE_PLAYING
ROOT = Path(__file__).resolve().parent.parent
RESULTS_DIR = ROOT / "bench" / "results"

TARGET_P99_MS = 15.0
TARGET_TIMER_P99_MS = 10.0
TARGET_IDLE_P50_MS = 1.5
TARGET_IDLE_FLOOR_RATIO = 2.0
TARGET_REDIS_BYTES_PER_TABLE = 1536
TARGET_GATEWAY_BYTES_PER_STREAM = 10240
RAMP_STEPS = (100, 250, 500, 1000, 1500, 2000, 2500)

EARLY_NS = 500_000  # a slot's timer is set this much before its instant (1 ms granularity)
LAG_PERIOD_S = 0.010
FLOOR_TICK_S = 0.020
MEMORY_SAMPLE = 50  # tables whose MEMORY USAGE is read
MEMORY_MIN_TABLES = 500  # below, fixed costs swamp the per-table and per-stream deltas
SEAT_TIMEOUT_S = 1800.0
RESULT_TIMEOUT_S = 120.0
PIPE_LIMIT = 64 * 1024 * 1024
PROCESSES = ("table", "timer", "gateway", "redis", "nats")


# --- the generator process -------------------------------------------------------------------


@dataclass
class RunStats:
    """What one generator saw during one run."""

    views: Histogram = field(default_factory=Histogram)  # from schedule to the 4 views
    rpc: Histogram = field(default_factory=Histogram)  # from schedule to the answer
    from_send: Histogram = field(default_factory=Histogram)  # from the send to the 4 views
    send_late: Histogram = field(default_factory=Histogram)  # send - scheduled instant (>= 0)
    lag: Histogram = field(default_factory=Histogram)  # event-loop lag
    slots: int = 0
    sent: int = 0
    answered: int = 0
    skipped: Counter[str] = field(default_factory=Counter)
    errors: Counter[str] = field(default_factory=Counter)
    warmup_sent: int = 0
    warmup_errors: Counter[str] = field(default_factory=Counter)

    def to_json(self) -> dict[str, Any]:
        """The JSON line sent to the parent."""
        return {
            "histograms": {
                name: getattr(self, name).to_json()
                for name in ("views", "rpc", "from_send", "send_late", "lag")
            },
            "slots": self.slots,
            "sent": self.sent,
            "answered": self.answered,
            "skipped": dict(self.skipped),
            "errors": dict(self.errors),
            "warmup_sent": self.warmup_sent,
            "warmup_errors": dict(self.warmup_errors),
        }


def _error_key(error: grpc.aio.AioRpcError) -> str:
    return f"{error.code().name}: {(error.details() or '')[:70]}"


async def seat_lobby(
    clients: list[DominosClient], number: int, failures: list[str] | None
) -> tuple[SeatCredentials, list[SeatStream]]:
    """Create a table (target 500), join the three other seats; unless ``failures`` is None
    (a table of absent players), open the four streams (one per client) and wait until every
    seat shows connected. The game is not started (``bench.gateway_bench.seat_table`` minus
    its start: the turn clocks start when every table is seated)."""
    host, code, _ = await clients[0].create_table(f"Host{number}", TARGET)
    seats = [host]
    for k, client in enumerate(clients[1:], start=1):
        seats.append((await client.join_table(code, f"P{number}-{k}"))[0])
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


class Generator:
    """The tables of one generator process and their players."""

    def __init__(self, index: int, address: str, channels: int) -> None:
        self.index = index
        self.address = address
        self.channels = channels
        self.tables: list[SeatedTable] = []
        self.clients: list[DominosClient] = []
        self.failures: list[str] = []  # streams failed before their first view, reopened
        self.away: list[str] = []  # tables of absent players (no stream)
        self._away_clients: list[DominosClient] = []
        self._numbers = 0
        self._rng = random.Random(index)

    async def _clients_for_table(self) -> list[DominosClient]:
        if not self.channels:
            made = [await connect(self.address) for _ in range(4)]
            self.clients += made
            return made
        while len(self.clients) < self.channels:
            self.clients.append(await connect(self.address))
        start = 4 * self._numbers
        return [self.clients[(start + k) % self.channels] for k in range(4)]

    async def seat(self, count: int, away: int, concurrency: int) -> dict[str, Any]:
        """Seat ``count`` more tables and ``away`` more tables of absent players,
        ``concurrency`` at a time, then start them all (see ``seat_lobby``)."""
        started = _perf_ns()
        before, failed_before = len(self.tables), len(self.failures)
        errors: Counter[str] = Counter()
        lobbies: list[tuple[SeatCredentials, list[SeatStream]]] = []
        absent: list[SeatCredentials] = []

        def lobby(clients: list[DominosClient], number: int) -> Callable[[], Awaitable[None]]:
            async def job() -> None:
                try:
                    lobbies.append(await seat_lobby(clients, number, self.failures))
                except Exception as error:  # counted; the run goes on with the others
                    errors[f"{type(error).__name__}: {str(error)[:80]}"] += 1

            return job

        def lobby_away(clients: list[DominosClient], number: int) -> Callable[[], Awaitable[None]]:
            async def job() -> None:
                try:
                    absent.append((await seat_lobby(clients, number, None))[0])
                except Exception as error:
                    errors[f"{type(error).__name__}: {str(error)[:80]}"] += 1

            return job

        if away and not self._away_clients:
            self._away_clients = [await connect(self.address) for _ in range(4)]
        jobs = []
        for k in range(count + away):
            number = 1_000_000 * self.index + self._numbers
            if k < count:
                jobs.append(lobby(await self._clients_for_table(), number))
            else:
                jobs.append(lobby_away(self._away_clients, number))
            self._numbers += 1
        await bounded(concurrency, jobs)
        lobbies_s = (_perf_ns() - started) / 1e9

        def start(
            host: SeatCredentials, streams: list[SeatStream]
        ) -> Callable[[], Awaitable[None]]:
            async def job() -> None:
                try:
                    client = streams[0].client if streams else self._away_clients[0]
                    view = await client.start(host)
                    if streams:
                        await asyncio.gather(*(s.reached(view.version) for s in streams))
                        self.tables.append(
                            SeatedTable(host.table_id, streams, view.version, view.phase)
                        )
                    else:
                        self.away.append(host.table_id)
                except Exception as error:
                    errors[f"start: {type(error).__name__}: {str(error)[:80]}"] += 1

            return job

        await bounded(
            4 * concurrency,
            [start(host, streams) for host, streams in lobbies]
            + [start(host, []) for host in absent],
        )
        gc.collect()
        gc.freeze()  # what is seated stays: keep the collector from walking it during runs
        gc.set_threshold(*GC_THRESHOLDS)  # as the services: fewer, cheaper collections
        return {
            "index": self.index,
            "tables": len(self.tables),
            "away_tables": len(self.away),
            "seated": len(self.tables) - before,
            "streams": 4 * len(self.tables),
            "connections": self.channels or len(self.clients),
            "seconds": (_perf_ns() - started) / 1e9,
            "lobbies_s": lobbies_s,
            "reopened": dict(Counter(self.failures[failed_before:])),
            "seat_errors": dict(errors),
            "sample": [t.table_id for t in self.tables[: MEMORY_SAMPLE // 2 + 1]],
        }

    async def run(
        self, go_ns: int, warmup_s: float, seconds: float, pace_s: float, seed: int
    ) -> dict[str, Any]:
        """Play every table on its schedule; returns the figures of the recorded slots."""
        rng = random.Random(seed * 1009 + self.index)
        stats = RunStats()
        pace_ns = round(pace_s * 1e9)
        measure_from = go_ns + round(warmup_s * 1e9)
        measure_to = measure_from + round(seconds * 1e9)
        in_flight: set[asyncio.Task[None]] = set()
        ended_before = sum(1 for t in self.tables for s in t.streams if s._ended is not None)
        views_before = sum(s.messages for t in self.tables for s in t.streams)

        async def schedule(table: SeatedTable, at_ns: int) -> None:
            while at_ns < measure_to:
                delay_ns = at_ns - EARLY_NS - _perf_ns()
                if delay_ns > 0:
                    await asyncio.sleep(delay_ns / 1e9)
                task = asyncio.create_task(
                    self._slot(table, at_ns, at_ns >= measure_from, stats, rng)
                )
                in_flight.add(task)
                task.add_done_callback(in_flight.discard)
                at_ns += pace_ns

        async def watch_lag() -> None:
            while _perf_ns() < measure_to:
                t0 = _perf_ns()
                await asyncio.sleep(LAG_PERIOD_S)
                if t0 >= measure_from:
                    stats.lag.record(_perf_ns() - t0 - round(LAG_PERIOD_S * 1e9))

        loops = [
            asyncio.create_task(schedule(table, go_ns + int(rng.random() * pace_ns)))
            for table in self.tables
        ]
        lag = asyncio.create_task(watch_lag())
        await asyncio.gather(*loops, lag)
        while in_flight:  # every slot ends: answered, refused or timed out
            await asyncio.gather(*list(in_flight), return_exceptions=True)
        figures = stats.to_json()
        ended = sum(1 for t in self.tables for s in t.streams if s._ended is not None)
        if ended > ended_before:
            figures["errors"]["STREAM_ENDED (streams)"] = ended - ended_before
        figures["views_received"] = sum(s.messages for t in self.tables for s in t.streams) - (
            views_before
        )
        return figures

    async def _slot(
        self,
        table: SeatedTable,
        scheduled_ns: int,
        recorded: bool,
        stats: RunStats,
        rng: random.Random,
    ) -> None:
        """One scheduled action of the table's seat to play (see the module docstring)."""
        latest = max(
            (s.view for s in table.streams if s.view is not None), key=lambda view: view.version
        )
        if recorded:
            stats.slots += 1
        if latest.phase != PLAYING:
            if recorded:
                stats.skipped[game_pb2.Phase.Name(latest.phase)] += 1
            return
        stream = table.streams[latest.turn_seat]
        view = stream.view
        assert view is not None
        moves = view.legal_moves
        errors = stats.errors if recorded else stats.warmup_errors
        sent = _perf_ns()
        if recorded:
            stats.sent += 1
        else:
            stats.warmup_sent += 1
        try:
            if moves:
                reply = await stream.client.play(
                    stream.credentials, moves[rng.randrange(len(moves))]
                )
            else:
                reply = await stream.client.pass_turn(stream.credentials)
        except grpc.aio.AioRpcError as error:
            errors[_error_key(error)] += 1
            return
        answered = _perf_ns()
        try:
            arrivals = await asyncio.gather(*(s.reached(reply.version) for s in table.streams))
        except TimeoutError:
            errors["VIEW_TIMEOUT"] += 1
            return
        except StreamEnded:
            errors["STREAM_ENDED"] += 1
            return
        if recorded:
            start = max(sent, scheduled_ns)
            stats.answered += 1
            stats.views.record(max(arrivals) - start)
            stats.rpc.record(answered - start)
            stats.from_send.record(max(arrivals) - sent)
            stats.send_late.record(sent - scheduled_ns)

    async def close(self) -> None:
        """Close every stream, then every channel."""
        streams = [s for t in self.tables for s in t.streams]
        await asyncio.gather(*(s.close() for s in streams), return_exceptions=True)
        clients = self.clients + self._away_clients
        await asyncio.gather(*(c.close() for c in clients), return_exceptions=True)


async def generator_main() -> None:
    """The loop of a generator process: one JSON command a line on stdin, one answer a line
    on the protocol channel (the original stdout; stray prints go to stderr)."""
    out = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=PIPE_LIMIT)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)

    def answer(message: dict[str, Any]) -> None:
        out.write(json.dumps(message) + "\n")
        out.flush()

    generator: Generator | None = None
    try:
        while line := await reader.readline():
            command = json.loads(line)
            op = command["op"]
            if op == "hello":
                generator = Generator(command["index"], command["address"], command["channels"])
                answer({"op": "hello", "pid": os.getpid()})
            elif op == "seat":
                assert generator is not None
                answer(
                    await generator.seat(command["count"], command["away"], command["concurrency"])
                )
            elif op == "run":
                assert generator is not None
                answer(
                    await generator.run(
                        command["go_ns"],
                        command["warmup_s"],
                        command["seconds"],
                        command["pace_s"],
                        command["seed"],
                    )
                )
            elif op == "close":
                if generator is not None:
                    await generator.close()
                answer({"op": "closed"})
                return
    finally:
        if generator is not None:
            await generator.close()


class GeneratorProcess:
    """The parent's handle on one generator process."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.pid = process.pid

    @classmethod
    async def start(cls, index: int, address: str, channels: int) -> GeneratorProcess:
        """Launch ``python -m bench.load --generator`` and say hello."""
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "bench.load",
            "--generator",
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            limit=PIPE_LIMIT,
            cwd=ROOT,
        )
        handle = cls(process)
        await handle.ask({"op": "hello", "index": index, "address": address, "channels": channels})
        return handle

    async def ask(self, command: dict[str, Any], limit_s: float = 60.0) -> dict[str, Any]:
        """Send one command, wait for its answer."""
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write((json.dumps(command) + "\n").encode())
        await self.process.stdin.drain()
        async with asyncio.timeout(limit_s):
            line = await self.process.stdout.readline()
        if not line:
            raise RuntimeError(f"generator {self.pid} exited (code {await self.process.wait()})")
        answer: dict[str, Any] = json.loads(line)
        return answer

    async def close(self) -> None:
        """Ask it to close its streams and exit; kill it if it does not."""
        if self.process.returncode is None:
            with contextlib.suppress(Exception):
                await self.ask({"op": "close"}, limit_s=60.0)
            try:
                async with asyncio.timeout(10):
                    await self.process.wait()
            except TimeoutError:
                self.process.kill()
                await self.process.wait()


# --- the floor -------------------------------------------------------------------------------


async def floor_server_main() -> None:
    """A bare ``grpc.aio`` server: ``Empty`` (unary, empty handler) and ``Ticks`` (server
    stream: a stamped message every ``FLOOR_TICK_S``). Prints its port, serves until killed."""

    async def empty(request: bytes, context: Any) -> bytes:
        return b""

    async def ticks(request: bytes, context: Any) -> Any:
        pad = bytes(FLOOR_VIEW_BYTES - 8)
        while True:
            await asyncio.sleep(FLOOR_TICK_S)
            yield _perf_ns().to_bytes(8, "big") + pad

    server = grpc.aio.server()
    server.add_generic_rpc_handlers(
        (
            grpc.method_handlers_generic_handler(
                "bench.Floor",
                {
                    "Empty": grpc.unary_unary_rpc_method_handler(empty),
                    "Ticks": grpc.unary_stream_rpc_method_handler(ticks),
                },
            ),
        )
    )
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    print(port, flush=True)
    await server.wait_for_termination()


class LoadFloor(Floor):
    """``bench.table_bench.Floor`` (Redis EVALSHA, NATS hop, gRPC unary), with the unary call
    going to the floor server process, plus that server's stream messages."""

    def __init__(self) -> None:
        super().__init__()
        self.samples["grpc_stream"] = []
        self._process: asyncio.subprocess.Process | None = None
        self._ticks: asyncio.Task[None] | None = None
        self.recording = False

    @property
    def pid(self) -> int | None:
        """The floor server's process id."""
        return self._process.pid if self._process is not None else None

    async def open(self, redis_url: str, nats_url: str) -> None:
        """Connect the clients; start the floor server process and read its ticks."""
        await self.connect_clients(redis_url, nats_url)
        self._process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "bench.load",
            "--floor-server",
            stdout=asyncio.subprocess.PIPE,
            cwd=ROOT,
        )
        assert self._process.stdout is not None
        async with asyncio.timeout(30):
            port = int(await self._process.stdout.readline())
        self._channel = grpc.aio.insecure_channel(f"127.0.0.1:{port}", options=CHANNEL_OPTIONS)
        self._call = self._channel.unary_unary("/bench.Floor/Empty")
        await self._call(b"")
        self._ticks = asyncio.create_task(self._read_ticks(), name="floor-ticks")

    async def _read_ticks(self) -> None:
        call = self._channel.unary_stream("/bench.Floor/Ticks")(b"")
        try:
            async for message in call:
                at_ns = _perf_ns()
                if self.recording:
                    self.samples["grpc_stream"].append(at_ns - int.from_bytes(message[:8], "big"))
        finally:
            call.cancel()

    async def sample_for(self, until_ns: int, hz: float) -> None:
        """Sample at ``hz`` until ``until_ns`` (and the stream's messages meanwhile)."""
        self.recording = True
        try:
            while _perf_ns() < until_ns:
                await self.sample(record=True)
                await asyncio.sleep(1 / hz)
        finally:
            self.recording = False

    async def close(self) -> None:
        """Stop the reader and the server process, close the clients."""
        if self._ticks is not None:
            self._ticks.cancel()
            with contextlib.suppress(asyncio.CancelledError, grpc.aio.AioRpcError):
                await self._ticks
        await super().close()
        if self._process is not None and self._process.returncode is None:
            self._process.kill()
            await self._process.wait()

    def figures(self) -> dict[str, dict[str, float]]:
        """p50/p99 (ms) and the count of each floor, then cleared for the next step."""
        result = {}
        for name, samples in self.samples.items():
            histogram = Histogram()
            for value in samples:
                histogram.record(value)
            result[name] = histogram.summary(PERCENTILES, 1e6)
            samples.clear()
        return result


# --- the timer -------------------------------------------------------------------------------


@dataclass
class TimerWatch:
    """Every ``TimerExpired`` received: (receive instant, attempt, kind, fired late ms,
    received late ms)."""

    firings: list[tuple[int, int, int, int, int]] = field(default_factory=list)

    async def on_message(self, msg: Any) -> None:
        at_ns = _perf_ns()
        now_ms = int(time.time() * 1000)
        expired = events_pb2.TimerExpired.FromString(msg.data)
        self.firings.append(
            (
                at_ns,
                expired.attempt,
                int(expired.deadline_kind),
                expired.fired_at_ms - expired.deadline_ms,
                now_ms - expired.deadline_ms,
            )
        )

    def first_firings(self, since_ns: int, until_ns: int) -> int:
        """First firings received in the window (each makes the table service act)."""
        return sum(1 for f in self.firings if since_ns <= f[0] < until_ns and f[1] == 1)

    def figures(self, since_ns: int, until_ns: int) -> dict[str, Any]:
        """Lateness of the first firings received in the window; refirings counted."""
        fired, received = Histogram(), Histogram()
        kinds: Counter[str] = Counter()
        refired = 0
        for at_ns, attempt, kind, fired_ms, received_ms in self.firings:
            if not since_ns <= at_ns < until_ns:
                continue
            if attempt > 1:
                refired += 1
                continue
            fired.record(fired_ms * 1_000_000)
            received.record(received_ms * 1_000_000)
            kinds[events_pb2.DeadlineKind.Name(kind).removeprefix("DEADLINE_KIND_").lower()] += 1
        return {
            "fired_late_ms": fired.summary(PERCENTILES, 1e6),
            "received_late_ms": received.summary(PERCENTILES, 1e6),
            "first_firings": fired.count,
            "by_kind": dict(kinds),
            "refired": refired,
        }


# --- processes -------------------------------------------------------------------------------


def peak_rss_kb(pid: int) -> int | None:
    """``VmHWM`` of ``/proc/<pid>/status`` (KB), None if unknown."""
    with contextlib.suppress(OSError):
        found = re.search(r"^VmHWM:\s+(\d+) kB", Path(f"/proc/{pid}/status").read_text(), re.M)
        return int(found.group(1)) if found else None
    return None


def cpu_now(pids: dict[str, int]) -> dict[str, tuple[float, float]]:
    """(user, system) CPU seconds so far of each process (``/proc/<pid>/stat``, all threads;
    this one's from ``getrusage``)."""
    now = {}
    for name, pid in pids.items():
        stat = Path(f"/proc/{pid}/stat").read_text()
        fields = stat[stat.rindex(")") + 2 :].split()
        now[name] = (int(fields[11]) / _CLOCK_TICKS, int(fields[12]) / _CLOCK_TICKS)
    usage = resource.getrusage(resource.RUSAGE_SELF)
    now["bench"] = (usage.ru_utime, usage.ru_stime)
    return now


def machine_busy_s() -> float:
    """CPU seconds the whole machine has been busy (``/proc/stat``: all but idle and iowait)."""
    fields = Path("/proc/stat").read_text().splitlines()[0].split()[1:]
    ticks = [int(v) for v in fields[:8]]  # user nice system idle iowait irq softirq steal
    return (sum(ticks) - ticks[3] - ticks[4]) / _CLOCK_TICKS


async def redis_memory(redis: Redis) -> dict[str, int]:
    """Redis ``used_memory``, the part of it that is client buffers (``mem_clients_normal``)
    and the number of keys."""
    info = await redis.info("memory")
    return {
        "used": int(info["used_memory"]),
        "clients": int(info.get("mem_clients_normal", 0)),
        "keys": int(await redis.dbsize()),
    }


_KEY_PARTS = (
    (re.compile(r"\{[^}]*\}"), "{T}"),
    (re.compile(r"^(dominos:(?:code|create|joinfail)):.*$"), r"\1:*"),
)


async def redis_breakdown(redis: Redis, live: int) -> dict[str, dict[str, float]]:
    """Every key by kind (table ids and codes folded): how many, and ``MEMORY USAGE`` bytes
    (all elements sampled) per live table, largest first."""
    keys: Counter[str] = Counter()
    size: Counter[str] = Counter()
    batch: list[bytes] = []

    async def flush() -> None:
        pipe = redis.pipeline(transaction=False)
        for key in batch:
            pipe.memory_usage(key, samples=0)
        for key, used in zip(batch, await pipe.execute(), strict=True):
            kind = key.decode(errors="replace")
            for pattern, replacement in _KEY_PARTS:
                kind = pattern.sub(replacement, kind)
            keys[kind] += 1
            size[kind] += int(used or 0)
        batch.clear()

    async for key in redis.scan_iter(count=1000):
        batch.append(key)
        if len(batch) >= 1000:
            await flush()
    if batch:
        await flush()
    return {
        kind: {"keys": keys[kind], "bytes_per_table": size[kind] / max(live, 1)}
        for kind, _ in size.most_common()
    }


# --- one step --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Config:
    """What one invocation does."""

    scenario: str
    steps: tuple[int, ...]
    pace_s: float
    seconds: float
    warmup_s: float
    generators: int
    channels: int
    seat_concurrency: int
    floor_hz: float
    p99_limit_ms: float
    away_fraction: float
    stream_floor: bool
    keep_going: bool
    seed: int


@dataclass
class Baseline:
    """Memory before any table was seated."""

    gateway_rss_kb: int
    redis: dict[str, int]


def away_tables(config: Config, tables: int) -> int:
    """Tables of absent players beside ``tables`` played ones (at least one)."""
    return math.ceil(tables * config.away_fraction) if config.away_fraction > 0 else 0


def _per(now: dict[str, int], then: dict[str, int], key: str, count: int) -> float:
    return (now[key] - then[key]) / max(count, 1)


def _merge(answers: list[dict[str, Any]]) -> dict[str, Any]:
    histograms = {name: Histogram() for name in ("views", "rpc", "from_send", "send_late", "lag")}
    counts: Counter[str] = Counter()
    skipped: Counter[str] = Counter()
    errors: Counter[str] = Counter()
    warmup_errors: Counter[str] = Counter()
    for answer in answers:
        for name, data in answer["histograms"].items():
            histograms[name].merge(Histogram.from_json(data))
        for key in ("slots", "sent", "answered", "warmup_sent", "views_received"):
            counts[key] += answer[key]
        skipped.update(answer["skipped"])
        errors.update(answer["errors"])
        warmup_errors.update(answer["warmup_errors"])
    return {
        "histograms": histograms,
        "counts": dict(counts),
        "skipped": dict(skipped),
        "errors": dict(errors),
        "warmup_errors": dict(warmup_errors),
    }


async def run_step(
    config: Config,
    tables: int,
    generators: list[GeneratorProcess],
    cluster: Cluster,
    redis: Redis,
    floor: LoadFloor,
    timer: TimerWatch,
    baseline: Baseline,
    seated_so_far: int,
    seat_log: dict[str, Any],
) -> dict[str, Any]:
    """Seat up to ``tables`` tables, play them for warm-up + seconds; the step's figures."""
    pids = cluster.pids().by_name()
    more = tables - seated_so_far
    more_away = away_tables(config, tables) - away_tables(config, seated_so_far)
    t0 = _perf_ns()
    if more > 0:
        count = len(generators)
        shares = [more // count + (i < more % count) for i in range(count)]
        away = [more_away // count + (i < more_away % count) for i in range(count)]
        seated = await asyncio.gather(
            *(
                g.ask(
                    {
                        "op": "seat",
                        "count": share,
                        "away": away_share,
                        "concurrency": config.seat_concurrency,
                    },
                    limit_s=SEAT_TIMEOUT_S,
                )
                for g, share, away_share in zip(generators, shares, away, strict=True)
                if share or away_share
            )
        )
        for answer in seated:
            for key in ("reopened", "seat_errors"):
                for reason, n in answer[key].items():
                    seat_log[key][reason] = seat_log[key].get(reason, 0) + n
            seat_log["sample"] = (seat_log["sample"] + answer["sample"])[:MEMORY_SAMPLE]
            seat_log["tables"][answer["index"]] = answer["tables"]
            seat_log["away"][answer["index"]] = answer["away_tables"]
            seat_log["connections"][answer["index"]] = answer["connections"]
    seat_s = (_perf_ns() - t0) / 1e9
    played = sum(seat_log["tables"].values())  # tables actually seated (failures excluded)
    absent = sum(seat_log["away"].values())
    live = played + absent
    streams = 4 * played
    print(
        f"[load]   {played} tables (+ {absent} of absent players) seated in {seat_s:.1f} s;"
        f" playing {config.warmup_s:g} + {config.seconds:g} s",
        file=sys.stderr,
        flush=True,
    )
    gateway_seated_kb = process_memory_kb(pids["gateway"])["rss_kb"] or 0
    redis_seated = await redis_memory(redis)

    every = {**pids, **{f"generator{i}": g.pid for i, g in enumerate(generators)}}
    if floor.pid is not None:
        every["floor_server"] = floor.pid
    go_ns = _perf_ns() + 1_000_000_000
    measure_from = go_ns + round(config.warmup_s * 1e9)
    measure_to = measure_from + round(config.seconds * 1e9)
    loadavg_before = os.getloadavg()
    answers_future = asyncio.gather(
        *(
            g.ask(
                {
                    "op": "run",
                    "go_ns": go_ns,
                    "warmup_s": config.warmup_s,
                    "seconds": config.seconds,
                    "pace_s": config.pace_s,
                    "seed": config.seed + tables,
                },
                limit_s=config.warmup_s + config.seconds + RESULT_TIMEOUT_S,
            )
            for g in generators
        )
    )
    await asyncio.sleep(max(0.0, (measure_from - _perf_ns()) / 1e9))
    cpu_start, busy_start = cpu_now(every), machine_busy_s()
    await floor.sample_for(measure_to, config.floor_hz)
    await asyncio.sleep(max(0.0, (measure_to - _perf_ns()) / 1e9))
    cpu_end, busy_end = cpu_now(every), machine_busy_s()
    loadavg_after = os.getloadavg()
    answers = await answers_future
    merged = _merge(answers)

    redis_end = await redis_memory(redis)
    gateway_end_kb = process_memory_kb(pids["gateway"])["rss_kb"] or 0
    store = TableStore(redis)
    usage = [await store.memory_usage(table_id) for table_id in seat_log["sample"]]
    usage = [u for u in usage if u]
    breakdown = await redis_breakdown(redis, live)
    cpu = {name: sum(cpu_end[name]) - sum(cpu_start[name]) for name in cpu_end}
    cpu_sys = {name: cpu_end[name][1] - cpu_start[name][1] for name in cpu_end}
    timer_commands = timer.first_firings(measure_from, measure_to)
    answered = merged["counts"]["answered"]
    commands = answered + timer_commands
    others_s = busy_end - busy_start - sum(cpu.values())
    peaks = {name: peak_rss_kb(pid) for name, pid in every.items()}
    peaks["bench"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    histograms: dict[str, Histogram] = merged["histograms"]
    return {
        "tables": played,
        "away_tables": absent,
        "live_tables": live,
        "streams": streams,
        "connections": sum(seat_log["connections"].values()),
        "seat_s": seat_s,
        "offered_per_s": played / config.pace_s,
        "timer_commands": timer_commands,
        "latency_ms": {
            "views_from_schedule": histograms["views"].summary(PERCENTILES, 1e6),
            "rpc_from_schedule": histograms["rpc"].summary(PERCENTILES, 1e6),
            "views_from_send": histograms["from_send"].summary(PERCENTILES, 1e6),
            "send_lateness": histograms["send_late"].summary(PERCENTILES, 1e6),
            "generator_loop_lag": histograms["lag"].summary(PERCENTILES, 1e6),
        },
        "histograms": {name: h.to_json() for name, h in histograms.items()},
        "counts": merged["counts"],
        "commands_per_s": answered / config.seconds,
        "views_per_s": merged["counts"]["views_received"] / (config.warmup_s + config.seconds),
        "skipped": merged["skipped"],
        "errors": merged["errors"],
        "error_count": sum(merged["errors"].values()),
        "warmup_errors": merged["warmup_errors"],
        "timer": timer.figures(go_ns, measure_to),
        "floor_ms": floor.figures(),
        "cpu_s": cpu,
        "cpu_s_system": cpu_sys,
        "cpu_s_other_processes": others_s,
        "cpu_s_per_1k_commands": {
            name: seconds * 1000 / commands if commands else math.nan
            for name, seconds in cpu.items()
        },
        "peak_rss_kb": peaks,
        "memory": {
            "gateway_rss_kb": {
                "baseline": baseline.gateway_rss_kb,
                "seated": gateway_seated_kb,
                "end": gateway_end_kb,
            },
            "redis": {
                "baseline": baseline.redis,
                "seated": redis_seated,
                "end": redis_end,
            },
            "gateway_bytes_per_stream": (gateway_seated_kb - baseline.gateway_rss_kb)
            * 1024
            / max(streams, 1),
            "gateway_bytes_per_stream_end": (gateway_end_kb - baseline.gateway_rss_kb)
            * 1024
            / max(streams, 1),
            "redis_bytes_per_table_seated": _per(redis_seated, baseline.redis, "used", live),
            "redis_bytes_per_table_end": _per(redis_end, baseline.redis, "used", live),
            "redis_client_buffer_bytes_per_table_end": _per(
                redis_end, baseline.redis, "clients", live
            ),
            "redis_keys_per_table_end": _per(redis_end, baseline.redis, "keys", live),
            "redis_breakdown": breakdown,
            "memory_usage_bytes": {
                "n": len(usage),
                "median": sorted(usage)[len(usage) // 2] if usage else math.nan,
                "max": max(usage) if usage else math.nan,
            },
        },
        "loadavg": {"before": loadavg_before, "after": loadavg_after},
    }


# --- figures, verdicts, report ---------------------------------------------------------------


def _ms(figures: dict[str, float], key: str) -> float:
    return figures.get(key, math.nan)


def step_figures(step: dict[str, Any]) -> dict[str, float]:
    """The headline numbers of a step, flat (what ``bench.compare`` compares)."""
    lat, floor, timer, mem = step["latency_ms"], step["floor_ms"], step["timer"], step["memory"]
    figures: dict[str, float] = {
        "tables": step["tables"],
        "away_tables": step["away_tables"],
        "streams": step["streams"],
    }
    for key, label in (
        ("views_from_schedule", "views"),
        ("rpc_from_schedule", "rpc"),
        ("views_from_send", "views_from_send"),
    ):
        for name, _ in PERCENTILES:
            figures[f"{label}_{name}_ms"] = _ms(lat[key], name)
    figures["send_lateness_p99_ms"] = _ms(lat["send_lateness"], "p99")
    figures["generator_lag_p99_ms"] = _ms(lat["generator_loop_lag"], "p99")
    figures["offered_per_s"] = step["offered_per_s"]
    figures["commands_per_s"] = step["commands_per_s"]
    figures["views_per_s"] = step["views_per_s"]
    figures["errors"] = step["error_count"]
    figures["skipped_slots"] = sum(step["skipped"].values())
    for name in ("p50", "p99", "max"):
        figures[f"timer_fired_late_{name}_ms"] = _ms(timer["fired_late_ms"], name)
    figures["timer_received_late_p99_ms"] = _ms(timer["received_late_ms"], "p99")
    figures["timer_first_firings"] = timer["first_firings"]
    figures["timer_refired"] = timer["refired"]
    floor_sum = 0.0
    for name, values in floor.items():
        figures[f"floor_{name}_p50_ms"] = values["p50"]
        floor_sum += values["p50"]
    figures["floor_sum_p50_ms"] = floor_sum
    figures["p50_over_floor"] = figures["views_p50_ms"] / floor_sum if floor_sum else math.nan
    cluster_cpu = sum(step["cpu_s"][name] for name in PROCESSES)
    for name, seconds in step["cpu_s"].items():
        figures[f"cpu_s_{name}"] = seconds
        figures[f"cpu_s_system_{name}"] = step["cpu_s_system"][name]
        figures[f"cpu_s_per_1k_{name}"] = step["cpu_s_per_1k_commands"][name]
    figures["cpu_s_cluster"] = cluster_cpu
    figures["cpu_s_other_processes"] = step["cpu_s_other_processes"]
    commands = step["counts"]["answered"] + step["timer_commands"]
    figures["cpu_s_per_1k_cluster"] = cluster_cpu * 1000 / commands if commands else math.nan
    for name, kb in step["peak_rss_kb"].items():
        figures[f"peak_rss_mb_{name}"] = kb / 1024 if kb is not None else math.nan
    figures["gateway_bytes_per_stream"] = mem["gateway_bytes_per_stream"]
    figures["gateway_bytes_per_stream_end"] = mem["gateway_bytes_per_stream_end"]
    figures["redis_bytes_per_table_seated"] = mem["redis_bytes_per_table_seated"]
    figures["redis_bytes_per_table_end"] = mem["redis_bytes_per_table_end"]
    figures["redis_client_buffer_bytes_per_table_end"] = mem[
        "redis_client_buffer_bytes_per_table_end"
    ]
    figures["redis_keys_per_table_end"] = mem["redis_keys_per_table_end"]
    figures["redis_memory_usage_median_bytes"] = mem["memory_usage_bytes"]["median"]
    return figures


def verdicts(figures: dict[str, float], idle: bool) -> dict[str, bool | None]:
    """Each target: True met, False missed, None not applicable (no sample, not idle, too
    few tables for a per-table or per-stream memory figure: ``MEMORY_MIN_TABLES``)."""
    few = figures["tables"] < MEMORY_MIN_TABLES

    def check(value: float, ok: Callable[[float], bool]) -> bool | None:
        return None if math.isnan(value) else ok(value)

    return {
        "p99": check(figures["views_p99_ms"], lambda v: v <= TARGET_P99_MS),
        "errors": figures["errors"] == 0,
        "timer_p99": check(figures["timer_fired_late_p99_ms"], lambda v: v <= TARGET_TIMER_P99_MS),
        "idle_p50": check(figures["views_p50_ms"], lambda v: v <= TARGET_IDLE_P50_MS)
        if idle
        else None,
        "idle_floor_ratio": check(figures["p50_over_floor"], lambda v: v <= TARGET_IDLE_FLOOR_RATIO)
        if idle
        else None,
        "redis_per_table": None
        if few
        else check(
            figures["redis_bytes_per_table_end"], lambda v: v <= TARGET_REDIS_BYTES_PER_TABLE
        ),
        "gateway_per_stream": None
        if few
        else check(
            figures["gateway_bytes_per_stream"], lambda v: v <= TARGET_GATEWAY_BYTES_PER_STREAM
        ),
    }


def _verdict(ok: bool | None) -> str:
    return "-" if ok is None else "met" if ok else "MISSED"


def _dist(figures: dict[str, float], digits: int = 2) -> str:
    if not figures.get("count"):
        return "no sample"
    parts = "  ".join(f"{name} {figures[name]:.{digits}f}" for name, _ in PERCENTILES)
    return f"{parts}  (n {figures['count']:.0f})"


def _process_label(name: str) -> str:
    return {
        "table": "table service",
        "timer": "timer service",
        "gateway": "gateway",
        "redis": "redis-server",
        "nats": "nats-server",
        "floor_server": "floor grpc server",
        "bench": "bench (floor, timer sub)",
    }.get(name, name)


def print_step(results: dict[str, Any], step: dict[str, Any]) -> None:
    """The table of one run."""
    cfg, figures, ok = results["config"], step["figures"], step["verdicts"]
    lat, timer, mem = step["latency_ms"], step["timer"], step["memory"]
    print(
        f"load [{cfg['scenario']}]: {step['tables']} tables x 4 seats = {step['streams']} streams"
        f" over {step['connections']} connections, {cfg['generators']} generator processes;"
        f" + {step['away_tables']} tables of absent players (auto-played every 5 s);"
        f" 1 action per table every {cfg['pace_s']:g} s ({step['offered_per_s']:.1f}/s offered),"
        f" {cfg['seconds']:g} s recorded after {cfg['warmup_s']:g} s warm-up"
    )
    load = step["loadavg"]
    print(
        f"machine: {results['machine']['cpus']} CPUs, Python {results['machine']['python']},"
        f" grpc {results['machine']['grpc']}; load average {load['before'][0]:.2f} before,"
        f" {load['after'][0]:.2f} after; tables seated in {step['seat_s']:.1f} s"
    )
    rows: list[tuple[str, str, str, str]] = []

    def row(label: str, value: str, target: str = "", verdict: str = "") -> None:
        rows.append((label, value, target, verdict))

    row(
        "action → 4 views, from schedule (ms)",
        _dist(lat["views_from_schedule"]),
        f"p99 <= {TARGET_P99_MS:g}",
        _verdict(ok["p99"]),
    )
    row("action → answer, from schedule (ms)", _dist(lat["rpc_from_schedule"]))
    row("action → 4 views, from send (ms)", _dist(lat["views_from_send"]))
    row("send lateness vs schedule (ms)", _dist(lat["send_lateness"]))
    row("generator event-loop lag (ms)", _dist(lat["generator_loop_lag"]))
    skipped = ", ".join(
        f"{n} {k.removeprefix('PHASE_').lower()}" for k, n in step["skipped"].items()
    )
    row(
        "commands/s sustained",
        f"{step['commands_per_s']:.1f}  (offered {step['offered_per_s']:.1f};"
        f" slots skipped: {skipped or 'none'}; {step['views_per_s']:.0f} views/s received)",
    )
    errors = "; ".join(f"{n} x {k}" for k, n in sorted(step["errors"].items(), key=lambda i: -i[1]))
    warm = sum(step["warmup_errors"].values())
    row(
        "errors (by gRPC status)",
        f"{step['error_count']}{'  ' + errors if errors else ''}"
        f"{f'  (+{warm} in warm-up)' if warm else ''}",
        "0",
        _verdict(ok["errors"]),
    )
    row(
        "timer lateness fired - deadline (ms)",
        _dist(timer["fired_late_ms"], 0)
        + f"  {', '.join(f'{n} {k}' for k, n in timer['by_kind'].items())};"
        f" {timer['refired']} refired",
        f"p99 <= {TARGET_TIMER_P99_MS:g}",
        _verdict(ok["timer_p99"]),
    )
    row("timer lateness received - deadline (ms)", _dist(timer["received_late_ms"], 0))
    labels = {
        "redis_evalsha": "floor: redis EVALSHA `return 1` (ms)",
        "nats_pub_sub": f"floor: nats pub→sub {FLOOR_MESSAGE_BYTES} B (ms)",
        "grpc_unary": "floor: grpc unary, empty (ms)",
        "grpc_stream": f"floor: grpc stream msg {FLOOR_VIEW_BYTES} B (ms)",
    }
    for name, values in step["floor_ms"].items():
        row(labels[name], _dist(values, 3))
    row("floor: sum of p50s (ms)", f"{figures['floor_sum_p50_ms']:.3f}")
    row(
        "idle: p50 (ms), p50 / floor",
        f"{figures['views_p50_ms']:.3f} ms, {figures['p50_over_floor']:.1f}x the floor",
        f"<= {TARGET_IDLE_P50_MS:g} ms, <= {TARGET_IDLE_FLOOR_RATIO:g}x",
        " ".join(_verdict(ok[k]) for k in ("idle_p50", "idle_floor_ratio")),
    )
    seconds = cfg["seconds"]
    for name in (
        *PROCESSES,
        *sorted(n for n in step["cpu_s"] if n.startswith("generator")),
        "floor_server",
        "bench",
    ):
        if name not in step["cpu_s"]:
            continue
        cpu = step["cpu_s"][name]
        peak = step["peak_rss_kb"].get(name)
        row(
            f"CPU, peak RSS: {_process_label(name)}",
            f"{cpu:6.1f} s ({100 * cpu / seconds:5.1f} % of a CPU,"
            f" {100 * step['cpu_s_system'][name] / cpu if cpu else 0:3.0f} % in the kernel),"
            f" {step['cpu_s_per_1k_commands'][name]:6.2f} s per 1k commands†,"
            f" peak {peak / 1024 if peak else math.nan:6.0f} MB",
        )
    row(
        "CPU, cluster (5 processes above)",
        f"{figures['cpu_s_cluster']:6.1f} s ({100 * figures['cpu_s_cluster'] / seconds:5.1f} %"
        f" of a CPU), {figures['cpu_s_per_1k_cluster']:6.2f} s per 1k commands†"
        f" († {step['counts']['answered']} answered + {step['timer_commands']} fired by the timer)",
    )
    other = step["cpu_s_other_processes"]
    row(
        "CPU, rest of the machine (not this bench)",
        f"{other:6.1f} s ({100 * other / seconds:5.1f} % of a CPU): other processes' load",
    )
    usage = mem["memory_usage_bytes"]
    few = "; too few tables, fixed costs dominate" if step["tables"] < MEMORY_MIN_TABLES else ""
    row(
        "redis bytes per live table",
        f"{figures['redis_bytes_per_table_end']:.0f} (used_memory delta at the end, of which"
        f" {figures['redis_client_buffer_bytes_per_table_end']:.0f} client buffers;"
        f" {figures['redis_bytes_per_table_seated']:.0f} after seating;"
        f" {figures['redis_keys_per_table_end']:.1f} keys);"
        f" MEMORY USAGE median {usage['median']:.0f}, max {usage['max']:.0f} (n {usage['n']})"
        + few,
        f"<= {TARGET_REDIS_BYTES_PER_TABLE}",
        _verdict(ok["redis_per_table"]),
    )
    kinds = mem["redis_breakdown"]
    row(
        "redis MEMORY USAGE per live table, by key",
        ", ".join(
            f"{kind} {v['bytes_per_table']:.0f}"
            for kind, v in kinds.items()
            if v["bytes_per_table"] >= 1
        )
        + f" (sum {sum(v['bytes_per_table'] for v in kinds.values()):.0f})",
    )
    gateway = mem["gateway_rss_kb"]
    row(
        "gateway bytes per open stream",
        f"{figures['gateway_bytes_per_stream']:.0f} (VmRSS {gateway['baseline'] / 1024:.0f} →"
        f" {gateway['seated'] / 1024:.0f} MB after seating;"
        f" {figures['gateway_bytes_per_stream_end']:.0f} at the end;"
        f" a bare grpc.aio stream, same connections:"
        f" {mem.get('grpc_stream_floor_bytes', math.nan):.0f}{few})",
        f"<= {TARGET_GATEWAY_BYTES_PER_STREAM}",
        _verdict(ok["gateway_per_stream"]),
    )
    seating = results["seating"]
    if seating["reopened"] or seating["seat_errors"]:
        problems = [
            f"{n} x {k}" for k, n in {**seating["reopened"], **seating["seat_errors"]}.items()
        ]
        row("seating: streams reopened, tables failed", "; ".join(problems))
    found = [f"{n} x {event}" for event, n in log_summary(results.get("log_problems", {})).items()]
    row("service warnings/errors while running", "; ".join(found) or "none")
    _print_rows(("figure", "value", "target", "verdict"), rows)


def log_summary(problems: dict[str, dict[str, dict[str, int]]]) -> dict[str, int]:
    """The services' warnings and errors while running, one line per kind (task numbers and
    other digits folded, tracebacks cut to their first line)."""
    counts: Counter[str] = Counter()
    for service, parts in problems.items():
        for event, n in parts["run"].items():
            first = " ".join(event.split())
            counts[f"{service}: {re.sub(r'[0-9]+', 'N', first)[:100]}"] += n
    return dict(counts.most_common())


def _print_rows(head: tuple[str, ...], rows: Sequence[tuple[str, ...]]) -> None:
    widths = [max(len(r[i]) for r in (head, *rows)) for i in range(len(head))]
    widths[1] = min(widths[1], 110)
    for r in (head, *rows):
        print("  ".join(cell.ljust(widths[i]) for i, cell in enumerate(r)).rstrip())


def print_ramp(results: dict[str, Any]) -> None:
    """The table of a ramp: one row per step."""
    cfg = results["config"]
    print(
        f"load [ramp]: steps of {cfg['seconds']:g} s (after {cfg['warmup_s']:g} s warm-up) at one"
        f" action per table every {cfg['pace_s']:g} s, {cfg['generators']} generator processes;"
        f" {results['machine']['cpus']} CPUs; a step is good when p99 < {cfg['p99_limit_ms']:g} ms"
        " and no errors"
    )
    head = (
        "tables", "streams", "offered/s", "cmds/s", "p50", "p90", "p99", "p99.9", "max",
        "errors", "timer p99", "floor p50", "p50/floor", "cluster CPU", "CPU s/1k",
        "gw B/stream", "redis B/table", "others' CPU", "step",
    )  # fmt: skip
    rows = []
    for step in results["steps"]:
        f = step["figures"]
        rows.append(
            (
                f"{f['tables']:.0f}",
                f"{f['streams']:.0f}",
                f"{f['offered_per_s']:.1f}",
                f"{f['commands_per_s']:.1f}",
                *(f"{f[f'views_{n}_ms']:.2f}" for n in ("p50", "p90", "p99", "p99.9", "max")),
                f"{f['errors']:.0f}",
                f"{f['timer_fired_late_p99_ms']:.0f}",
                f"{f['floor_sum_p50_ms']:.3f}",
                f"{f['p50_over_floor']:.1f}x",
                f"{100 * f['cpu_s_cluster'] / cfg['seconds']:.0f} %",
                f"{f['cpu_s_per_1k_cluster']:.2f}",
                f"{f['gateway_bytes_per_stream']:.0f}",
                f"{f['redis_bytes_per_table_end']:.0f}",
                f"{100 * f['cpu_s_other_processes'] / cfg['seconds']:.0f} %",
                "good" if step["good"] else "BAD",
            )
        )
    widths = [max(len(r[i]) for r in (head, *rows)) for i in range(len(head))]
    for r in (head, *rows):
        print("  ".join(cell.rjust(widths[i]) for i, cell in enumerate(r)))
    best = results["largest_good_tables"]
    print(
        f"largest N with p99 < {cfg['p99_limit_ms']:g} ms and no errors: {best if best else 'none'}"
        f" ({best * 4 if best else 0} streams, {best / cfg['pace_s'] if best else 0:.0f} actions/s)"
    )


def print_report(results: dict[str, Any]) -> None:
    """One table: the run's figures, or a ramp's steps."""
    if results["config"]["scenario"] == "ramp":
        print_ramp(results)
    else:
        print_step(results, results["steps"][-1])


# --- the run ---------------------------------------------------------------------------------


def _json_safe(value: Any) -> Any:
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, dict):
        return {str(k): _json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_json_safe(v) for v in value]
    return value


async def drive(config: Config, cluster: Cluster) -> dict[str, Any]:
    """Every step of the scenario against a started cluster."""
    assert cluster.redis is not None and cluster.nats is not None
    redis = Redis.from_url(cluster.redis.url_for("admin"))
    nc = await nats.connect(cluster.nats.url_for("admin"), name="bench-timer-watch")
    timer = TimerWatch()
    await nc.subscribe(TIMER_SUBJECT, cb=timer.on_message)
    floor = LoadFloor()
    generators: list[GeneratorProcess] = []
    steps: list[dict[str, Any]] = []
    seat_log: dict[str, Any] = {
        "reopened": {},
        "seat_errors": {},
        "sample": [],
        "tables": {},
        "away": {},
        "connections": {},
    }
    largest_good, broken = 0, False  # the largest N before the first bad step
    try:
        await floor.open(cluster.redis.url_for("admin"), cluster.nats.url_for("admin"))
        pids = cluster.pids()
        baseline = Baseline(
            process_memory_kb(pids.gateway)["rss_kb"] or 0, await redis_memory(redis)
        )
        generators = list(
            await asyncio.gather(
                *(
                    GeneratorProcess.start(i, cluster.gateway_address, config.channels)
                    for i in range(config.generators)
                )
            )
        )
        seated = 0
        for tables in config.steps:
            print(f"[load] step: {tables} tables ...", file=sys.stderr, flush=True)
            step = await run_step(
                config, tables, generators, cluster, redis, floor, timer, baseline, seated, seat_log
            )
            seated = tables
            step["figures"] = step_figures(step)
            step["verdicts"] = verdicts(step["figures"], config.scenario == "idle")
            step["good"] = (
                step["figures"]["views_p99_ms"] < config.p99_limit_ms
                and step["figures"]["errors"] == 0
            )
            steps.append(step)
            f = step["figures"]
            print(
                f"[load]   p50 {f['views_p50_ms']:.2f} p99 {f['views_p99_ms']:.2f} ms,"
                f" {f['commands_per_s']:.0f} cmds/s, {f['errors']:.0f} errors",
                file=sys.stderr,
                flush=True,
            )
            if step["good"] and not broken:
                largest_good = step["tables"]
            elif not step["good"]:
                broken = True
                if config.scenario == "ramp" and not config.keep_going:
                    break
        cluster.mark_logs()
    finally:
        await asyncio.gather(*(g.close() for g in generators), return_exceptions=True)
        await floor.close()
        with contextlib.suppress(Exception):
            await nc.close()
        await redis.aclose()
    if steps and config.stream_floor:
        last = steps[-1]
        print("[load] memory floor: a bare grpc.aio stream ...", file=sys.stderr, flush=True)
        kb = await measure_floor(last["streams"], max(1, last["connections"]), 64)
        last["memory"]["grpc_stream_floor_bytes"] = kb * 1024
        last["figures"]["grpc_stream_floor_bytes"] = kb * 1024
    return {
        "scenario": config.scenario,
        "config": {
            "scenario": config.scenario,
            "steps": list(config.steps),
            "pace_s": config.pace_s,
            "seconds": config.seconds,
            "warmup_s": config.warmup_s,
            "generators": config.generators,
            "channels": config.channels,
            "seat_concurrency": config.seat_concurrency,
            "keep_going": config.keep_going,
            "floor_hz": config.floor_hz,
            "p99_limit_ms": config.p99_limit_ms,
            "away_fraction": config.away_fraction,
            "seed": config.seed,
        },
        "machine": {
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "grpc": grpc.__version__,
            "platform": platform.platform(),
        },
        "seating": {k: seat_log[k] for k in ("reopened", "seat_errors")},
        "steps": steps,
        "largest_good_tables": largest_good,
        "figures": steps[-1]["figures"] if steps else {},
    }


def _raise_file_limit() -> None:
    """Ten thousand connections need as many descriptors (in the gateway and the generators,
    which inherit the limit)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or soft < hard:
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def build_config(args: argparse.Namespace, parser: argparse.ArgumentParser) -> Config:
    """The scenario the arguments name."""
    pace, seconds, warmup = args.pace, args.seconds, args.warmup
    steps: tuple[int, ...]
    if args.smoke:
        scenario, steps = "smoke", (20,)
        pace, seconds, warmup = pace or 0.25, seconds or 15.0, 2.0 if warmup is None else warmup
    elif args.idle:
        scenario, steps = "idle", (1,)
        pace, seconds = pace or 0.1, seconds or 60.0
    elif args.ramp:
        scenario = "ramp"
        steps = tuple(int(s) for s in args.steps.split(",")) if args.steps else RAMP_STEPS
        seconds = seconds or 20.0
    else:
        scenario, steps = f"tables{args.tables}", (args.tables,)
    pace = pace or 5.0
    seconds = seconds or 60.0
    warmup = pace if warmup is None else warmup
    if min(steps) < 1 or list(steps) != sorted(steps):
        parser.error("--tables / --steps: positive, ascending")
    if pace <= 0 or seconds <= 0 or warmup < 0 or args.generators < 1:
        parser.error("--pace, --seconds, --generators must be positive")
    return Config(
        scenario=scenario,
        steps=steps,
        pace_s=pace,
        seconds=seconds,
        warmup_s=warmup,
        generators=min(args.generators, steps[-1]),
        channels=args.channels,
        seat_concurrency=args.seat_concurrency,
        floor_hz=args.floor_hz,
        p99_limit_ms=args.p99_limit,
        away_fraction=args.away,
        stream_floor=not args.no_stream_floor,
        keep_going=args.keep_going,
        seed=args.seed,
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    scenario = parser.add_mutually_exclusive_group()
    scenario.add_argument("--tables", type=int, default=100, help="tables of four seats (100)")
    scenario.add_argument("--ramp", action="store_true", help="step ramp: largest good N")
    scenario.add_argument("--idle", action="store_true", help="one table, 0.1 s pace, 60 s")
    scenario.add_argument("--smoke", action="store_true", help="20 tables, 0.25 s pace, 15 s")
    parser.add_argument("--steps", help="ramp steps, e.g. 100,250,500 (default 100..2500)")
    parser.add_argument(
        "--keep-going", action="store_true", help="ramp: run every step, even after a bad one"
    )
    parser.add_argument("--pace", type=float, help="seconds between two actions of a table (5)")
    parser.add_argument("--seconds", type=float, help="recorded seconds (60; ramp: 20 a step)")
    parser.add_argument("--warmup", type=float, help="unrecorded seconds first (one pace)")
    parser.add_argument("--generators", type=int, default=2, help="generator processes (2)")
    parser.add_argument(
        "--channels", type=int, default=0, help="connections per generator (0: one per seat)"
    )
    parser.add_argument(
        "--seat-concurrency", type=int, default=8, help="tables seated at once per generator"
    )
    parser.add_argument("--floor-hz", type=float, default=50.0, help="floor samples a second")
    parser.add_argument("--p99-limit", type=float, default=TARGET_P99_MS, help="ramp: ms (15)")
    parser.add_argument(
        "--away",
        type=float,
        default=0.02,
        help="tables of absent players, auto-played by the timer, per played table (0.02)",
    )
    parser.add_argument(
        "--no-stream-floor", action="store_true", help="skip the bare grpc.aio stream memory"
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", type=Path, help="where to write the results")
    parser.add_argument("--keep-logs", action="store_true", help="keep the services' logs")
    parser.add_argument("--generator", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--floor-server", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.generator:
        uvloop.run(generator_main())  # the players' devices: as light as we can make them
        return 0
    if args.floor_server:
        asyncio.run(floor_server_main())
        return 0
    config = build_config(args, parser)
    _raise_file_limit()
    results = Cluster().measure(lambda cluster: drive(config, cluster), keep_logs=args.keep_logs)
    print_report(results)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    path = args.json or RESULTS_DIR / f"load-{config.scenario}-{stamp}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(_json_safe(results), indent=1) + "\n")
    print(f"results: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
