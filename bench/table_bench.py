"""Benchmark of the table service end to end, with the floor it stands on measured alongside.

One process starts a real ``redis-server`` and ``nats-server`` (JetStream on, file store) on
free ports, the table service in-process (``create_server``, gRPC port 0) and a real
``grpc.aio`` client channel to it. A core NATS subscriber (its own connection) listens on
``dominos.v1.table.>``.

Latency: tables of four seats (target 500) play random legal moves, one command in flight at a
time, round-robin over ``--tables`` tables. For each ``Execute(play_tile | pass)``:

- ``t_rpc``: send → response received;
- ``t_event``: send → the ``TableEvent`` of the new version (matched on table id + version)
  received by the subscriber. This is what a player at another gateway waits for. The
  service publishes before it answers, so ``t_event`` is usually below ``t_rpc``.

The next move is chosen from the state carried by that event (``legal_moves``, the engine
behind ``TableView.legal_moves``), so no untimed RPC runs between two measured commands. A
table whose round ends (``PHASE_ROUND_OVER``: it would wait for the break timer) is replaced
by a new one; seating a table (create, three joins, start) is not measured. The first
``--warmup`` commands are not recorded.

Memory: ``--memory-tables`` other tables are played to ``--memory-after`` commands (the timer
service's job, the next deal after a round, is done by calling ``TableApp.expire`` in-process;
the bench runs the service with a zero round break so that deal is due at once) and then
``TableStore.memory_usage`` (``MEMORY USAGE`` of the table's keys and its invitation code),
the command log's length and the state's size are read.

The floor, in the same process and event loop, one sample of each after every command (so
both see the same machine): a Redis ``EVALSHA`` of ``return 1`` (redis.asyncio), a core NATS
publish → subscribe hop of a 400-byte message between two connections (nats-py), and a gRPC
unary call to an empty handler (``grpc.aio``, bytes in and out). Their p50s are summed and
compared with the p50 of ``t_event``. A command needs more than that sum: two Redis round
trips (load, commit) before its event leaves, and only the request half of the gRPC call.

Usage: ``python -m bench.table_bench [--plays N] [--tables T] [--json PATH] [--smoke]
[--profile]`` (``--profile``: cProfile the measured loop, top functions on stderr).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import cProfile
import io
import os
import platform
import pstats
import random
import statistics
import sys
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
import nats
from dominos.v1 import events_pb2, game_pb2, gateway_pb2, table_pb2, table_pb2_grpc
from redis.asyncio import Redis

from bench.common import write_json
from services.common.bus import TABLE_SUBJECT_PREFIX
from services.common.caller_auth import CallerCredentials
from services.common.connections import flushed
from services.common.logging import configure_logging
from services.common.settings import Settings
from services.rules import End, Phase, TableState, decode_state, encode_state, legal_moves
from services.rules.tiles import HIGH, LOW
from services.table.command_log import decode_log
from services.table.server import TableServer, create_server
from services.table.store import TableStore
from testing import limits
from testing.secrets import SESSION_SECRETS
from testing.servers import NatsServer, RedisServer, nats_binary
from testing.stats import PERCENTILES, summary_ms

_perf_ns = time.perf_counter_ns
EVENT_TIMEOUT_S = 10.0
TARGET = 500
FLOOR_MESSAGE_BYTES = 400
_ENDS: dict[int, game_pb2.End] = {End.LEFT: game_pb2.END_LEFT, End.RIGHT: game_pb2.END_RIGHT}


# --- table events ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Received:
    """A table event as the subscriber got it: when (perf_counter ns), what, and its size."""

    at_ns: int
    event: events_pb2.TableEvent
    size: int


class EventWatch:
    """Core NATS subscriber callback: resolves the future waiting for ``(table_id, version)``.

    The receive instant is taken first thing in the callback. Events nobody waits for yet
    (e.g. a create's, whose table id is only known from the response) are kept until asked.
    """

    def __init__(self) -> None:
        self._waiting: dict[tuple[str, int], asyncio.Future[Received]] = {}
        self._early: dict[tuple[str, int], Received] = {}

    async def on_message(self, msg: Any) -> None:
        at_ns = _perf_ns()
        event = events_pb2.TableEvent.FromString(msg.data)
        received = Received(at_ns, event, len(msg.data))
        key = (event.table_id, event.version)
        future = self._waiting.pop(key, None)
        if future is not None and not future.done():
            future.set_result(received)
        else:
            self._early[key] = received

    def expect(self, table_id: str, version: int) -> asyncio.Future[Received]:
        """A future resolved when the event of ``table_id`` at ``version`` arrives."""
        key = (table_id, version)
        future: asyncio.Future[Received] = asyncio.get_running_loop().create_future()
        early = self._early.pop(key, None)
        if early is not None:
            future.set_result(early)
        else:
            self._waiting[key] = future
        return future

    async def wait(self, future: asyncio.Future[Received], what: str) -> Received:
        """The event ``future`` stands for, or ``TimeoutError`` naming ``what``."""
        try:
            async with asyncio.timeout(EVENT_TIMEOUT_S):
                return await future
        except TimeoutError:
            raise TimeoutError(f"no table event for {what} within {EVENT_TIMEOUT_S} s") from None


# --- the driver ------------------------------------------------------------------------------


def _rid() -> str:
    return uuid.uuid4().hex


@dataclass
class Table:
    """A seated table as the bench knows it: the seat tokens and the last state seen."""

    table_id: str
    tokens: list[str]
    state: TableState
    commands: int = 0


@dataclass(frozen=True, slots=True)
class Step:
    """One executed command: its response, its event, and the two latencies (ns)."""

    response: Any
    received: Received
    rpc_ns: int
    event_ns: int


@dataclass
class Driver:
    """Sends commands over the real channel and waits for their table events."""

    stub: Any
    watch: EventWatch
    rng: random.Random
    event_sizes: list[int] = field(default_factory=list)

    async def execute(
        self, token: str, table_id: str | None, version: int, peer: str = "", **command: Any
    ) -> Step:
        """``Execute`` one command; ``table_id``/``version`` name the event it must produce
        (``table_id`` None: a create, the id comes from the response)."""
        future = self.watch.expect(table_id, version) if table_id is not None else None
        request = table_pb2.ExecuteRequest(seat_token=token, peer=peer, **command)
        sent = _perf_ns()
        response = await self.stub.Execute(request)
        answered = _perf_ns()
        if future is None:
            table_id = response.create_table.table_id
            future = self.watch.expect(table_id, version)
        received = await self.watch.wait(future, f"{table_id} v{version}")
        return Step(response, received, answered - sent, received.at_ns - sent)

    async def seat_table(self) -> Table:
        """Create a table (target 500), fill the three other seats, start the game."""
        step = await self.execute(
            "",
            None,
            1,
            create_table=gateway_pb2.CreateTableRequest(
                request_id=_rid(), host_name="Ann", target=TARGET
            ),
        )
        created = step.response.create_table
        table_id, version = created.table_id, step.received.event.version
        tokens = [created.seat_token]
        for name in ("Bo", "Cy", "Di"):
            version += 1
            step = await self.execute(
                "",
                table_id,
                version,
                peer="ipv4:127.0.0.1",
                join_table=gateway_pb2.JoinTableRequest(
                    request_id=_rid(), invitation_code=created.invitation_code, player_name=name
                ),
            )
            tokens.append(step.response.join_table.seat_token)
        step = await self.execute(
            tokens[0],
            table_id,
            version + 1,
            start_game=gateway_pb2.StartGameRequest(request_id=_rid(), table_id=table_id),
        )
        return Table(table_id, tokens, decode_state(step.received.event.state))

    async def act(self, table: Table) -> Step:
        """A random legal move (or a pass) for the seat to play; the table's state follows."""
        state = table.state
        assert state.round is not None and state.phase is Phase.PLAYING
        seat = state.round.turn
        moves = legal_moves(state, seat)
        command: dict[str, Any]
        if moves:
            move = moves[int(self.rng.random() * len(moves))]
            command = {
                "play_tile": gateway_pb2.PlayTileRequest(
                    request_id=_rid(),
                    table_id=table.table_id,
                    tile=game_pb2.Tile(low=LOW[move.tile], high=HIGH[move.tile]),
                    end=_ENDS[move.end],
                )
            }
        else:
            command = {"pass": gateway_pb2.PassRequest(request_id=_rid(), table_id=table.table_id)}
        step = await self.execute(table.tokens[seat], table.table_id, state.version + 1, **command)
        self.event_sizes.append(step.received.size)
        table.state = decode_state(step.received.event.state)
        table.commands += 1
        return step


# --- measurements ----------------------------------------------------------------------------


@dataclass
class Latencies:
    """The recorded commands of the measured loop."""

    rpc_ns: list[int] = field(default_factory=list)
    event_ns: list[int] = field(default_factory=list)
    passes: int = 0
    wall_ns: int = 0
    aside_ns: int = 0  # floor samples and seating new tables, inside the measured loop
    tables_seated: int = 0


async def measure_commands(
    driver: Driver,
    floor: Floor,
    tables: int,
    warmup: int,
    plays: int,
    profile: cProfile.Profile | None,
) -> Latencies:
    """Round-robin over ``tables`` tables, ``warmup`` + ``plays`` commands, one in flight,
    with one floor sample after each (its time is not part of the commands' wall time)."""
    seated = [await driver.seat_table() for _ in range(tables)]
    result = Latencies(tables_seated=tables)
    started = 0
    for k in range(warmup + plays):
        if k == warmup:
            if profile is not None:
                profile.enable()
            started = _perf_ns()
        table = seated[k % tables]
        step = await driver.act(table)
        if k >= warmup:
            result.rpc_ns.append(step.rpc_ns)
            result.event_ns.append(step.event_ns)
            result.passes += step.response.WhichOneof("result") == "pass"
        t0 = _perf_ns()
        await floor.sample(record=k >= warmup)
        if table.state.phase is not Phase.PLAYING:
            seated[k % tables] = await driver.seat_table()
            result.tables_seated += 1
        if k >= warmup:
            result.aside_ns += _perf_ns() - t0
    result.wall_ns = _perf_ns() - started
    if profile is not None:
        profile.disable()
    return result


async def measure_memory(
    driver: Driver, server: TableServer, tables: int, after: int, store: TableStore
) -> dict[str, Any]:
    """Redis footprint of tables ``after`` commands into a game, read through ``store``."""
    usage: list[int] = []
    log_bytes: list[int] = []
    log_entries: list[int] = []
    state_bytes: list[int] = []
    rounds: list[int] = []
    for _ in range(tables):
        table = await driver.seat_table()
        while table.commands < after and table.state.phase is not Phase.FINISHED:
            if table.state.phase is Phase.ROUND_OVER:  # the timer service's part (D1)
                future = driver.watch.expect(table.table_id, table.state.version + 1)
                dealt = await server.app.expire(table.table_id, table.state.turn_number)
                if dealt is None:
                    raise RuntimeError("the next deal was refused (round break not zero?)")
                received = await driver.watch.wait(future, "the next deal")
                table.state = decode_state(received.event.state)
            else:
                await driver.act(table)
        usage.append(await store.memory_usage(table.table_id))
        log_bytes.append(len(await store.read_log(table.table_id)))
        log_entries.append(len(decode_log(await store.read_log(table.table_id))))
        loaded = await store.load(table.table_id)
        state_bytes.append(len(encode_state(loaded.state)) if loaded is not None else 0)
        rounds.append(table.state.round.number if table.state.round is not None else 0)

    def spread(values: list[int]) -> dict[str, float]:
        return {"min": min(values), "median": statistics.median(values), "max": max(values)}

    return {
        "tables": tables,
        "commands_each": after,
        "memory_usage_bytes": spread(usage),
        "log_bytes": spread(log_bytes),
        "log_entries": spread(log_entries),
        "state_bytes": spread(state_bytes),
        "round_reached": spread(rounds),
    }


class Floor:
    """The three raw round trips the service stands on, sampled between measured commands.

    One sample of each after every command (warm-up included, unrecorded), so the floor and
    the service are measured under the same conditions, even if the machine's load drifts.
    """

    NAMES = ("redis_evalsha", "nats_pub_sub", "grpc_unary")

    def __init__(self) -> None:
        self.samples: dict[str, list[int]] = {name: [] for name in self.NAMES}
        self._payload = os.urandom(FLOOR_MESSAGE_BYTES)
        self._waiting: list[asyncio.Future[int]] = []
        self._redis: Redis | None = None
        self._script: Any = None
        self._publisher: Any = None
        self._subscriber: Any = None
        self._server: Any = None
        self._channel: Any = None
        self._call: Any = None

    async def connect_clients(self, redis_url: str, nats_url: str) -> None:
        """The Redis script and the two NATS connections (publisher, subscriber) sampled."""
        self._redis = Redis.from_url(redis_url, decode_responses=False)
        self._script = self._redis.register_script("return 1")
        self._publisher = await nats.connect(nats_url, name="bench-floor-pub")
        self._subscriber = await nats.connect(nats_url, name="bench-floor-sub")
        await self._subscriber.subscribe("bench.floor", cb=self._on_message)
        await flushed(self._subscriber)

    async def open(self, redis_url: str, nats_url: str) -> None:
        """Connect the clients and start the empty gRPC server (port 0)."""
        await self.connect_clients(redis_url, nats_url)

        async def empty(request: bytes, context: Any) -> bytes:
            return b""

        self._server = grpc.aio.server()
        self._server.add_generic_rpc_handlers(
            (
                grpc.method_handlers_generic_handler(
                    "bench.Floor", {"Empty": grpc.unary_unary_rpc_method_handler(empty)}
                ),
            )
        )
        port = self._server.add_insecure_port("127.0.0.1:0")
        await self._server.start()
        self._channel = grpc.aio.insecure_channel(f"127.0.0.1:{port}")
        self._call = self._channel.unary_unary("/bench.Floor/Empty")  # bytes in, bytes out

    async def _on_message(self, msg: Any) -> None:
        at_ns = _perf_ns()
        if self._waiting and not self._waiting[0].done():
            self._waiting.pop(0).set_result(at_ns)

    async def sample(self, record: bool) -> None:
        """One EVALSHA, one NATS hop, one empty gRPC call; kept when ``record``."""
        t0 = _perf_ns()
        await self._script(keys=[], args=[])
        t1 = _perf_ns()
        future: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        self._waiting.append(future)
        t2 = _perf_ns()
        await self._publisher.publish("bench.floor", self._payload)
        async with asyncio.timeout(EVENT_TIMEOUT_S):
            t3 = await future
        t4 = _perf_ns()
        await self._call(b"")
        t5 = _perf_ns()
        if record:
            self.samples["redis_evalsha"].append(t1 - t0)
            self.samples["nats_pub_sub"].append(t3 - t2)
            self.samples["grpc_unary"].append(t5 - t4)

    async def close(self) -> None:
        """Close whatever :meth:`open` got to."""
        if self._channel is not None:
            await self._channel.close()
        if self._server is not None:
            await self._server.stop(None)
        for client in (self._publisher, self._subscriber):
            if client is not None:
                with contextlib.suppress(Exception):
                    await client.close()
        if self._redis is not None:
            await self._redis.aclose()


# --- the run ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Config:
    """What one run does."""

    plays: int
    warmup: int
    tables: int
    memory_tables: int
    memory_after: int
    seed: int
    profile: bool


async def run(
    config: Config,
    redis_url: str,
    nats_url: str,
    observer_nats_url: str | None = None,
    observer_redis_url: str | None = None,
    *,
    tls_ca_file: str = "",
) -> dict[str, Any]:
    """Everything but the servers' processes: service, client, subscriber, measurements.

    The table service connects with ``redis_url`` and ``nats_url``; the event subscriber and
    the floor's pub/sub with ``observer_nats_url``, the floor's script and the memory
    measures (``MEMORY USAGE``) with ``observer_redis_url`` (default: the same; ``admin``
    URLs when the servers have users: the table service's users may publish only table
    events and run only its own commands). ``tls_ca_file``: the CA the table service trusts
    for ``rediss://`` and ``tls://`` servers (``DOMINOS_REDIS_CA_FILE``,
    ``DOMINOS_NATS_CA_FILE``); the bench's own clients then need it in ``SSL_CERT_FILE``.
    The raw samples (ns) are in ``results["samples"]`` (not written to JSON)."""
    observer_url = observer_nats_url or nats_url
    observer_redis = observer_redis_url or redis_url
    settings = Settings(
        grpc_host="127.0.0.1",
        grpc_port=0,
        metrics_port=-1,
        redis_url=redis_url,
        nats_url=nats_url,
        token_secret=SESSION_SECRETS.token_secret,
        # The bench calls as the gateway does: with its credential (so the peer it passes on
        # for joins is trusted).
        table_callers=SESSION_SECRETS.gateway_credential,
        redis_ca_file=tls_ca_file if redis_url.startswith("rediss://") else "",
        nats_ca_file=tls_ca_file if nats_url.startswith("tls://") else "",
        shutdown_grace_seconds=1,
        round_break_seconds=0,  # only the memory phase deals a next round (see the docstring)
        log_level="warning",
    )
    # Every client of the bench is 127.0.0.1: per-address budgets off.
    settings = limits.without_budgets(settings, "table")
    profile = cProfile.Profile() if config.profile else None
    floor = Floor()
    server, port = await create_server(settings)
    channel = grpc.aio.insecure_channel(
        f"127.0.0.1:{port}", interceptors=[CallerCredentials(SESSION_SECRETS.gateway_credential)]
    )
    subscriber: Any = None
    try:
        watch = EventWatch()
        subscriber = await nats.connect(observer_url, name="bench-events")
        await subscriber.subscribe(TABLE_SUBJECT_PREFIX + ">", cb=watch.on_message)
        await flushed(subscriber)
        await floor.open(observer_redis, observer_url)
        stub = table_pb2_grpc.TableServiceStub(channel)
        driver = Driver(stub, watch, random.Random(config.seed))
        await channel.channel_ready()
        latencies = await measure_commands(
            driver, floor, config.tables, config.warmup, config.plays, profile
        )
        observer = Redis.from_url(observer_redis, decode_responses=False)
        try:
            memory = await measure_memory(
                driver, server, config.memory_tables, config.memory_after, TableStore(observer)
            )
        finally:
            await observer.aclose()
    finally:
        await floor.close()
        await channel.close()
        if subscriber is not None:
            with contextlib.suppress(Exception):
                await subscriber.close()
        await server.stop()

    if profile is not None:
        out = io.StringIO()
        stats = pstats.Stats(profile, stream=out).strip_dirs()
        stats.sort_stats("tottime").print_stats(25)
        stats.sort_stats("cumulative").print_stats(25)
        print(out.getvalue(), file=sys.stderr)

    floor_ms = {name: summary_ms(samples) for name, samples in floor.samples.items()}
    floor_sum = {key: sum(figures[key] for figures in floor_ms.values()) for key in ("p50", "p99")}
    rpc, event = summary_ms(latencies.rpc_ns), summary_ms(latencies.event_ns)
    busy_s = (latencies.wall_ns - latencies.aside_ns) / 1e9
    return {
        "config": {
            "plays": config.plays,
            "warmup": config.warmup,
            "tables": config.tables,
            "target": TARGET,
            "seed": config.seed,
            "python": platform.python_version(),
            "cpus": os.cpu_count(),
            "grpc": grpc.__version__,
        },
        "commands": {
            "recorded": len(latencies.rpc_ns),
            "passes": latencies.passes,
            "tables_seated": latencies.tables_seated,
            "t_rpc_ms": rpc,
            "t_event_ms": event,
            "commands_per_s": len(latencies.rpc_ns) / busy_s,
            "event_bytes_median": statistics.median(driver.event_sizes),
        },
        "memory": memory,
        "floor_ms": floor_ms,
        "floor_sum_ms": floor_sum,
        "t_event_p50_over_floor_p50": event["p50"] / floor_sum["p50"],
        "samples": {"rpc_ns": latencies.rpc_ns, "event_ns": latencies.event_ns},
    }


def print_report(results: dict[str, Any]) -> None:
    """The aligned tables quoted in notes."""
    cmd, cfg, mem = results["commands"], results["config"], results["memory"]
    print(
        f"table service: {cmd['recorded']} commands ({cmd['passes']} passes) over"
        f" {cfg['tables']} tables, 1 in flight, after {cfg['warmup']} warm-up"
    )
    head = "".join(f"{name:>9}" for name, _ in PERCENTILES)
    print(f"{'latency (ms)':24}{head}")
    for label, key in (("t_rpc   send→response", "t_rpc_ms"), ("t_event send→event", "t_event_ms")):
        row = "".join(f"{cmd[key][name]:9.3f}" for name, _ in PERCENTILES)
        print(f"{label:24}{row}")
    print(
        f"{'commands/s':24}{cmd['commands_per_s']:9.0f}   (1 in flight, floor samples and"
        f" seating excluded; event {cmd['event_bytes_median']:.0f} B median)"
    )
    print()
    print(f"{'floor (ms)':40}{'p50':>9}{'p99':>9}")
    labels = {
        "redis_evalsha": "redis EVALSHA `return 1`",
        "nats_pub_sub": f"nats core pub→sub, {FLOOR_MESSAGE_BYTES} B",
        "grpc_unary": "grpc unary, empty handler",
    }
    for name, figures in results["floor_ms"].items():
        print(f"{labels[name]:40}{figures['p50']:9.3f}{figures['p99']:9.3f}")
    total = results["floor_sum_ms"]
    print(f"{'sum':40}{total['p50']:9.3f}{total['p99']:9.3f}")
    print(f"{'t_event p50 / floor p50 sum':40}{results['t_event_p50_over_floor_p50']:8.1f}x")
    print()
    print(
        f"redis, one live table after {mem['commands_each']} commands"
        f" ({mem['tables']} tables, round {mem['round_reached']['median']:.0f})"
    )
    print(f"{'':24}{'min':>9}{'median':>9}{'max':>9}")
    for label, key in (
        ("MEMORY USAGE (bytes)", "memory_usage_bytes"),
        ("log (bytes)", "log_bytes"),
        ("log (entries)", "log_entries"),
        ("state (bytes)", "state_bytes"),
    ):
        spread = mem[key]
        print(f"{label:24}{spread['min']:9.0f}{spread['median']:9.0f}{spread['max']:9.0f}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--plays", type=int, default=3000, help="recorded commands (3000)")
    parser.add_argument("--warmup", type=int, default=200, help="unrecorded first commands")
    parser.add_argument("--tables", type=int, default=10, help="tables played round-robin")
    parser.add_argument("--memory-tables", type=int, default=8, help="tables measured in Redis")
    parser.add_argument("--memory-after", type=int, default=60, help="commands before measuring")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", type=Path, help="also write the figures here")
    parser.add_argument("--profile", action="store_true", help="cProfile the measured loop")
    parser.add_argument("--smoke", action="store_true", help="~150 plays, quick (CI)")
    args = parser.parse_args(argv)
    if args.smoke:
        config = Config(150, 20, 4, 2, args.memory_after, args.seed, args.profile)
    else:
        config = Config(
            args.plays,
            args.warmup,
            args.tables,
            args.memory_tables,
            args.memory_after,
            args.seed,
            args.profile,
        )
    if min(config.plays, config.tables, config.memory_tables) < 1:
        parser.error("--plays, --tables and --memory-tables must be positive")
    configure_logging("warning", "table-bench", stream=sys.stderr)
    redis_server: RedisServer | None = None
    nats_server: NatsServer | None = None
    try:
        redis_server = RedisServer(secrets=SESSION_SECRETS)
        nats_server = NatsServer(binary=nats_binary(), secrets=SESSION_SECRETS)
        redis_server.start()
        nats_server.start()
        results = asyncio.run(
            run(
                config,
                redis_server.url_for("table"),
                nats_server.url_for("table"),
                nats_server.url_for("admin"),
                redis_server.url_for("admin"),
            )
        )
    finally:  # stop the processes and remove their data directories, whatever happened
        for managed in (nats_server, redis_server):
            if managed is not None:
                managed.cleanup()
    print_report(results)
    write_json(args.json, {key: value for key, value in results.items() if key != "samples"})
    return 0


if __name__ == "__main__":
    sys.exit(main())
