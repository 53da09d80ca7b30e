"""The load-generator processes: their tables and players, and the protocol that drives them.

A generator (``python -m bench.load --generator``, asyncio on uvloop) owns its share of the
tables: every seat is a ``DominosClient`` with its own connection (or one of ``channels``
shared ones) and its own ``WatchTable`` stream (``bench.gateway_bench.SeatStream``). The
parent sends one JSON command a line on the generator's stdin and reads one JSON answer a
line on its stdout: ``hello`` (index, gateway address, channels), ``seat`` (more tables),
``run`` (play every table on its schedule; the recorded figures), ``close``.
:class:`GeneratorProcess` is the parent's side of it.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import json
import os
import random
import sys
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass, field
from typing import Any

import grpc
from dominos.v1 import game_pb2

from bench.gateway_bench import SeatStream, StreamEnded, bounded, connect, seat_lobby
from bench.gateway_bench import Table as SeatedTable
from bench.histogram import Histogram
from bench.load.config import MEMORY_SAMPLE, ROOT
from services.client.api import DominosClient, SeatCredentials
from services.common.entrypoint import GC_THRESHOLDS

_perf_ns = time.perf_counter_ns
PLAYING = game_pb2.PHASE_PLAYING

EARLY_NS = 500_000  # a slot's timer is set this much before its instant (1 ms granularity)
LAG_PERIOD_S = 0.010
SEAT_TIMEOUT_S = 1800.0
RESULT_TIMEOUT_S = 120.0
PIPE_LIMIT = 64 * 1024 * 1024
HISTOGRAMS = ("views", "rpc", "from_send", "send_late", "lag")

#: A seated lobby: the host's credentials and its four streams (none: absent players).
Seating = tuple[SeatCredentials, list[SeatStream]]


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
    #: Commands at least this slow (ms; 0: none) are listed with their wall-clock start
    #: (``bench.load --stalls``: what they overlapped).
    slow_ms: float = 0.0
    slow: list[tuple[float, float]] = field(default_factory=list)
    _wall_offset_ns: int = field(default_factory=lambda: time.time_ns() - _perf_ns())

    def record(self, scheduled_ns: int, sent_ns: int, answered_ns: int, viewed_ns: int) -> None:
        """An answered action whose view reached the four streams at ``viewed_ns``; latency
        counts from the later of the scheduled instant and the send."""
        start = max(sent_ns, scheduled_ns)
        self.answered += 1
        latency = viewed_ns - start
        self.views.record(latency)
        if self.slow_ms and latency >= self.slow_ms * 1e6:
            self.slow.append(((start + self._wall_offset_ns) / 1e9, latency / 1e6))
        self.rpc.record(answered_ns - start)
        self.from_send.record(viewed_ns - sent_ns)
        self.send_late.record(sent_ns - scheduled_ns)

    def to_json(self) -> dict[str, Any]:
        """The JSON line sent to the parent."""
        return {
            "histograms": {name: getattr(self, name).to_json() for name in HISTOGRAMS},
            "slots": self.slots,
            "sent": self.sent,
            "answered": self.answered,
            "skipped": dict(self.skipped),
            "errors": dict(self.errors),
            "warmup_sent": self.warmup_sent,
            "warmup_errors": dict(self.warmup_errors),
            "slow": self.slow,
        }


@dataclass(frozen=True, slots=True)
class RunOrder:
    """What the parent asks a generator to play: from ``go_ns`` (``perf_counter_ns``, one
    clock for the machine's processes), ``warmup_s`` unrecorded then ``seconds`` recorded,
    one action per table every ``pace_s``; with ``slow_ms``, the recorded commands at least
    that slow are listed (``--stalls``)."""

    go_ns: int
    warmup_s: float
    seconds: float
    pace_s: float
    seed: int
    slow_ms: float = 0.0


@dataclass(frozen=True, slots=True)
class Window:
    """The instants (``perf_counter_ns``) of a run: the first slot, and the recorded part."""

    go_ns: int
    measure_from: int
    measure_to: int
    pace_ns: int

    @classmethod
    def of(cls, go_ns: int, warmup_s: float, seconds: float, pace_s: float) -> Window:
        measure_from = go_ns + round(warmup_s * 1e9)
        return cls(go_ns, measure_from, measure_from + round(seconds * 1e9), round(pace_s * 1e9))


def _error_key(error: grpc.aio.AioRpcError) -> str:
    return f"{error.code().name}: {(error.details() or '')[:70]}"


def _failure(error: Exception, prefix: str = "") -> str:
    return f"{prefix}{type(error).__name__}: {str(error)[:80]}"


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

    # -- seating ----------------------------------------------------------------------------

    async def _clients_for_table(self) -> list[DominosClient]:
        if not self.channels:
            made = [await connect(self.address) for _ in range(4)]
            self.clients += made
            return made
        while len(self.clients) < self.channels:
            self.clients.append(await connect(self.address))
        start = 4 * self._numbers
        return [self.clients[(start + k) % self.channels] for k in range(4)]

    def _lobby(
        self,
        clients: list[DominosClient],
        number: int,
        played: bool,
        lobbies: list[Seating],
        errors: Counter[str],
    ) -> Callable[[], Awaitable[None]]:
        """A job seating one lobby (``seat_lobby``: streams only at a ``played`` table)."""

        async def job() -> None:
            try:
                lobbies.append(await seat_lobby(clients, number, self.failures if played else None))
            except Exception as error:  # counted; the run goes on with the others
                errors[_failure(error)] += 1

        return job

    def _start(
        self, host: SeatCredentials, streams: list[SeatStream], errors: Counter[str]
    ) -> Callable[[], Awaitable[None]]:
        """A job starting one seated table (a played one once its four streams show it)."""

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
                errors[_failure(error, "start: ")] += 1

        return job

    async def seat(self, count: int, away: int, concurrency: int) -> dict[str, Any]:
        """Seat ``count`` more tables and ``away`` more tables of absent players,
        ``concurrency`` at a time, then start them all (see ``seat_lobby``)."""
        started = _perf_ns()
        before, failed_before = len(self.tables), len(self.failures)
        errors: Counter[str] = Counter()
        lobbies: list[Seating] = []
        absent: list[Seating] = []
        if away and not self._away_clients:
            self._away_clients = [await connect(self.address) for _ in range(4)]
        jobs = []
        for k in range(count + away):
            number = 1_000_000 * self.index + self._numbers
            if k < count:
                clients = await self._clients_for_table()
                jobs.append(self._lobby(clients, number, True, lobbies, errors))
            else:
                jobs.append(self._lobby(self._away_clients, number, False, absent, errors))
            self._numbers += 1
        await bounded(concurrency, jobs)
        lobbies_s = (_perf_ns() - started) / 1e9
        await bounded(4 * concurrency, [self._start(h, s, errors) for h, s in lobbies + absent])
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

    # -- playing ----------------------------------------------------------------------------

    def _streams_ended(self) -> int:
        return sum(1 for t in self.tables for s in t.streams if s._ended is not None)

    def _views_received(self) -> int:
        return sum(s.messages for t in self.tables for s in t.streams)

    async def run(self, order: RunOrder) -> dict[str, Any]:
        """Play every table on its schedule; returns the figures of the recorded slots (and
        the commands of ``order.slow_ms`` or more)."""
        go_ns = order.go_ns
        rng = random.Random(order.seed * 1009 + self.index)
        stats = RunStats(slow_ms=order.slow_ms)
        window = Window.of(go_ns, order.warmup_s, order.seconds, order.pace_s)
        in_flight: set[asyncio.Task[None]] = set()
        ended_before, views_before = self._streams_ended(), self._views_received()
        loops = [
            asyncio.create_task(
                self._schedule(
                    table, go_ns + int(rng.random() * window.pace_ns), window, stats, rng, in_flight
                )
            )
            for table in self.tables
        ]
        lag = asyncio.create_task(_watch_lag(window, stats))
        await asyncio.gather(*loops, lag)
        while in_flight:  # every slot ends: answered, refused or timed out
            await asyncio.gather(*list(in_flight), return_exceptions=True)
        figures = stats.to_json()
        ended = self._streams_ended()
        if ended > ended_before:
            figures["errors"]["STREAM_ENDED (streams)"] = ended - ended_before
        figures["views_received"] = self._views_received() - views_before
        return figures

    async def _schedule(
        self,
        table: SeatedTable,
        at_ns: int,
        window: Window,
        stats: RunStats,
        rng: random.Random,
        in_flight: set[asyncio.Task[None]],
    ) -> None:
        """The table's slots, one every pace from ``at_ns``, until the recorded time ends."""
        while at_ns < window.measure_to:
            delay_ns = at_ns - EARLY_NS - _perf_ns()
            if delay_ns > 0:
                await asyncio.sleep(delay_ns / 1e9)
            task = asyncio.create_task(
                self._slot(table, at_ns, at_ns >= window.measure_from, stats, rng)
            )
            in_flight.add(task)
            task.add_done_callback(in_flight.discard)
            at_ns += window.pace_ns

    @staticmethod
    def _to_play(table: SeatedTable, recorded: bool, stats: RunStats) -> SeatStream | None:
        """The stream of the seat to play (from the table's newest view); None (a skipped
        slot) when the table has no turn."""
        latest = max(
            (s.view for s in table.streams if s.view is not None), key=lambda view: view.version
        )
        if recorded:
            stats.slots += 1
        if latest.phase != PLAYING:
            if recorded:
                stats.skipped[game_pb2.Phase.Name(latest.phase)] += 1
            return None
        return table.streams[latest.turn_seat]

    async def _slot(
        self,
        table: SeatedTable,
        scheduled_ns: int,
        recorded: bool,
        stats: RunStats,
        rng: random.Random,
    ) -> None:
        """One scheduled action of the table's seat to play (see the module docstring)."""
        stream = self._to_play(table, recorded, stats)
        if stream is None:
            return
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
            stats.record(scheduled_ns, sent, answered, max(arrivals))

    async def close(self) -> None:
        """Close every stream, then every channel."""
        streams = [s for t in self.tables for s in t.streams]
        await asyncio.gather(*(s.close() for s in streams), return_exceptions=True)
        clients = self.clients + self._away_clients
        await asyncio.gather(*(c.close() for c in clients), return_exceptions=True)


async def _watch_lag(window: Window, stats: RunStats) -> None:
    """The event loop's lag (a short sleep's overshoot) over the recorded time."""
    while _perf_ns() < window.measure_to:
        t0 = _perf_ns()
        await asyncio.sleep(LAG_PERIOD_S)
        if t0 >= window.measure_from:
            stats.lag.record(_perf_ns() - t0 - round(LAG_PERIOD_S * 1e9))


# --- the protocol ----------------------------------------------------------------------------


async def _serve(generator: Generator, command: dict[str, Any]) -> dict[str, Any]:
    """The answer to a ``seat`` or ``run`` command."""
    if command["op"] == "seat":
        return await generator.seat(command["count"], command["away"], command["concurrency"])
    return await generator.run(RunOrder(**command["order"]))


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
            elif op in ("seat", "run"):
                assert generator is not None
                answer(await _serve(generator, command))
            elif op == "close":
                if generator is not None:
                    await generator.close()
                answer({"op": "closed"})
                return
    finally:
        if generator is not None:
            await generator.close()


async def spawn_child(*args: str, stdin: bool = True) -> asyncio.subprocess.Process:
    """A child ``python -m bench.load <args>`` (a generator, a floor-pipeline process) with
    its standard output (and input, with ``stdin``) piped, lines up to :data:`PIPE_LIMIT`."""
    return await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "bench.load",
        *args,
        stdin=asyncio.subprocess.PIPE if stdin else None,
        stdout=asyncio.subprocess.PIPE,
        limit=PIPE_LIMIT,
        cwd=ROOT,
    )


class GeneratorProcess:
    """The parent's handle on one generator process."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.pid = process.pid

    @classmethod
    async def start(cls, index: int, address: str, channels: int) -> GeneratorProcess:
        """Launch ``python -m bench.load --generator`` and say hello."""
        process = await spawn_child("--generator")
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

    async def seat(self, count: int, away: int, concurrency: int) -> dict[str, Any]:
        """Seat ``count`` more played tables and ``away`` more of absent players."""
        return await self.ask(
            {"op": "seat", "count": count, "away": away, "concurrency": concurrency},
            limit_s=SEAT_TIMEOUT_S,
        )

    async def run(self, order: RunOrder) -> dict[str, Any]:
        """Play from ``order.go_ns`` for its warm-up and recorded seconds; the recorded
        figures (with ``order.slow_ms``, the commands at least that slow)."""
        return await self.ask(
            {"op": "run", "order": asdict(order)},
            limit_s=order.warmup_s + order.seconds + RESULT_TIMEOUT_S,
        )

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
