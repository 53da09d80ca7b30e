"""The floor pipeline: exactly the I/O one move needs, with no game logic (issue 22).

Two processes stand in for the cluster, on the same event loop (uvloop) and the same
libraries (grpc.aio, redis-py, nats-py) as the services, against their own ``redis-server``
and ``nats-server -js`` (same users and passwords as the cluster's):

- a table-like process (``python -m bench.load --pipeline-table``): one unary method,
  ``Act``: one Redis script call (``HSET`` of a state-sized value and ``HINCRBY`` of the
  version, the shape of the commit), one JetStream publication of an event-sized message
  with a ``Nats-Msg-Id`` (awaiting the acknowledgement, as the outbox does), and a
  view-sized answer;
- a gateway-like process (``--pipeline-gateway``): ``Act`` calls the table-like process's
  ``Act`` (unary), ``Watch`` is a server stream per seat; one core NATS subscription per
  table (as the hub's) writes a view-sized message to each of the table's four streams.

The driver processes (``--pipeline-driver``, as many as the cluster's generators) play the
cluster's scenario against it: the same tables, four streams each on their own
connections, one action every ``pace`` seconds per table from a random phase, open loop,
warm-up then recorded seconds; latency from the slot's instant (or the send, if later) to
the version's message on all four streams. The bench reads the CPU of the four processes
(gateway-like, table-like, Redis, NATS) over the recorded time: CPU per move of the bare I/O,
the cluster's is reported as a multiple of it (``bench.load.figures``).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import grpc
import nats
import uvloop
from redis.asyncio import Redis

from bench.gateway_bench import FLOOR_VIEW_BYTES
from bench.histogram import Histogram
from bench.load.config import Config
from bench.load.floor import serve_generic
from bench.load.generator import spawn_child

__all__ = ["PipelineRun", "child_main", "measure_pipeline"]
from services.client.api import CHANNEL_OPTIONS
from services.common.bus import table_stream_config
from testing.pinning import pin
from testing.procfs import cpu_times
from testing.secrets import SESSION_SECRETS
from testing.servers import NatsServer, RedisServer
from testing.stats import PERCENTILES

_perf_ns = time.perf_counter_ns

#: Sizes of what a move carries: the table's encoded state (Redis), its event (JetStream),
#: the command's answer and each view (gRPC), about as large as the cluster's.
STATE_BYTES = 320
EVENT_BYTES = 420
REPLY_BYTES = FLOOR_VIEW_BYTES
VIEW_BYTES = FLOOR_VIEW_BYTES
SEATS = 4
STREAM = "BENCH_FLOOR"
SUBJECT = "bench.floor"
SERVICE = "bench.FloorPipeline"
_COMMIT = "redis.call('HSET', KEYS[1], 's', ARGV[1]); return redis.call('HINCRBY', KEYS[1], 'v', 1)"


def _version_of(data: bytes) -> int:
    return int.from_bytes(data[:8], "big")


def _stamped(version: int, size: int) -> bytes:
    return version.to_bytes(8, "big") + bytes(size - 8)


# -- the table-like process ------------------------------------------------------------------


async def table_main(redis_url: str, nats_url: str) -> None:
    """``Act(table id)``: one script call, one acknowledged JetStream publication, a
    view-sized answer. Prints its port, serves until killed."""
    redis = Redis.from_url(redis_url)
    commit = redis.register_script(_COMMIT)
    nc = await nats.connect(nats_url, name="floor-table")
    js = nc.jetstream()
    with contextlib.suppress(Exception):
        await js.add_stream(table_stream_config(name=STREAM, subjects=(f"{SUBJECT}.>",)))
    state = bytes(STATE_BYTES)
    pad = bytes(EVENT_BYTES - 8)

    async def act(request: bytes, context: Any) -> bytes:
        table = request.decode()
        version = int(await commit(keys=[f"floor:{table}"], args=[state]))
        await js.publish(
            f"{SUBJECT}.{table}",
            version.to_bytes(8, "big") + pad,
            headers={"Nats-Msg-Id": f"{table}:{version}"},
        )
        return _stamped(version, REPLY_BYTES)

    await serve_generic(SERVICE, {"Act": grpc.unary_unary_rpc_method_handler(act)})


# -- the gateway-like process ----------------------------------------------------------------


async def gateway_main(table_address: str, nats_url: str) -> None:
    """``Act`` forwarded to the table-like process; ``Watch(table id)`` a stream of the
    table's versions, one core NATS subscription per table. Prints its port."""
    nc = await nats.connect(nats_url, name="floor-gateway")
    channel = grpc.aio.insecure_channel(table_address)
    forward = channel.unary_unary(f"/{SERVICE}/Act")
    watchers: dict[str, set[asyncio.Queue[int]]] = {}
    subscriptions: dict[str, Any] = {}

    async def act(request: bytes, context: Any) -> bytes:
        reply: bytes = await forward(request, timeout=5)
        return reply

    def deliver(table: str) -> Any:
        async def on_message(msg: Any) -> None:
            version = _version_of(msg.data)
            for queue in watchers.get(table, ()):
                queue.put_nowait(version)

        return on_message

    async def watch(request: bytes, context: Any) -> Any:
        table = request.decode()
        queue: asyncio.Queue[int] = asyncio.Queue()
        watchers.setdefault(table, set()).add(queue)
        if table not in subscriptions:
            subscriptions[table] = await nc.subscribe(f"{SUBJECT}.{table}", cb=deliver(table))
            await nc.flush()
        try:
            yield _stamped(0, VIEW_BYTES)  # subscribed: the driver may act
            while True:
                yield _stamped(await queue.get(), VIEW_BYTES)
        finally:
            watchers[table].discard(queue)

    await serve_generic(
        SERVICE,
        {
            "Act": grpc.unary_unary_rpc_method_handler(act),
            "Watch": grpc.unary_stream_rpc_method_handler(watch),
        },
    )


# -- the driver process ----------------------------------------------------------------------


@dataclass
class _Table:
    """A driven table: its seats' connections, and when each version reached all four."""

    name: str
    channels: list[grpc.aio.Channel]
    acts: list[Any]
    counts: dict[int, int]
    done_at: dict[int, int]
    waiters: dict[int, asyncio.Future[int]]

    def arrived(self, version: int) -> None:
        """A seat's stream delivered ``version``."""
        count = self.counts.get(version, 0) + 1
        if count < SEATS:
            self.counts[version] = count
            return
        self.counts.pop(version, None)
        now = _perf_ns()
        future = self.waiters.pop(version, None)
        if future is None:
            self.done_at[version] = now  # before the command's answer
        elif not future.done():
            future.set_result(now)

    def viewed(self, version: int) -> asyncio.Future[int]:
        """When ``version`` reached all four streams (resolved at once if it did)."""
        future = asyncio.get_running_loop().create_future()
        at = self.done_at.pop(version, None)
        if at is not None:
            future.set_result(at)
        else:
            self.waiters[version] = future
        return future


async def _open_table(address: str, name: str) -> tuple[_Table, list[asyncio.Task[None]]]:
    channels = [grpc.aio.insecure_channel(address, options=CHANNEL_OPTIONS) for _ in range(SEATS)]
    table = _Table(
        name,
        channels,
        [c.unary_unary(f"/{SERVICE}/Act") for c in channels],
        {},
        {},
        {},
    )
    ready = [asyncio.get_running_loop().create_future() for _ in range(SEATS)]

    async def read(seat: int) -> None:
        call = channels[seat].unary_stream(f"/{SERVICE}/Watch")(name.encode())
        async for message in call:
            version = _version_of(message)
            if not ready[seat].done():
                ready[seat].set_result(None)
            if version:
                table.arrived(version)

    tasks = [asyncio.create_task(read(seat)) for seat in range(SEATS)]
    await asyncio.wait_for(asyncio.gather(*ready), timeout=60)
    return table, tasks


async def driver_main() -> None:
    """Reads one JSON line (address, tables, go_ns, warm-up, seconds, pace, seed), opens the
    tables, prints ``{"ready": true}``, plays from ``go_ns`` and prints the figures."""
    command = json.loads(await asyncio.to_thread(sys.stdin.readline))
    tables: list[_Table] = []
    readers: list[asyncio.Task[None]] = []
    for i in range(command["tables"]):
        table, tasks = await _open_table(command["address"], f"{command['prefix']}{i}")
        tables.append(table)
        readers += tasks
    print(json.dumps({"ready": True}), flush=True)
    go = json.loads(await asyncio.to_thread(sys.stdin.readline))
    views, rpc = Histogram(), Histogram()
    errors: dict[str, int] = {}
    measure_from = go["go_ns"] + int(command["warmup_s"] * 1e9)
    measure_to = measure_from + int(command["seconds"] * 1e9)
    pace_ns = int(command["pace_s"] * 1e9)
    rng = random.Random(command["seed"])
    pending: set[asyncio.Task[None]] = set()

    async def slot(table: _Table, seat: int, scheduled: int) -> None:
        sent = _perf_ns()
        try:
            reply = await table.acts[seat](table.name.encode(), timeout=10)
            answered = _perf_ns()
            viewed = await asyncio.wait_for(table.viewed(_version_of(reply)), timeout=10)
        except Exception as error:
            if measure_from <= scheduled < measure_to:
                key = type(error).__name__
                errors[key] = errors.get(key, 0) + 1
            return
        if measure_from <= scheduled < measure_to:
            start = max(sent, scheduled)
            views.record(viewed - start)
            rpc.record(answered - start)

    async def schedule(table: _Table) -> None:
        at = go["go_ns"] + rng.randrange(pace_ns)
        seat = 0
        while at < measure_to:
            await asyncio.sleep(max(0.0, (at - _perf_ns()) / 1e9))
            task = asyncio.create_task(slot(table, seat, at))
            pending.add(task)
            task.add_done_callback(pending.discard)
            seat = (seat + 1) % SEATS
            at += pace_ns

    await asyncio.gather(*(schedule(t) for t in tables))
    if pending:
        await asyncio.wait(pending, timeout=15)
    print(
        json.dumps(
            {
                "views": views.to_json(),
                "rpc": rpc.to_json(),
                "answered": views.count,
                "errors": errors,
            }
        ),
        flush=True,
    )
    for task in readers:
        task.cancel()
    for table in tables:
        for channel in table.channels:
            await channel.close()


# -- the bench's side ------------------------------------------------------------------------


async def _child(*args: str) -> tuple[asyncio.subprocess.Process, int]:
    """A child ``python -m bench.load`` process that prints its port first."""
    process = await spawn_child(*args, stdin=False)
    assert process.stdout is not None
    line = await asyncio.wait_for(process.stdout.readline(), timeout=60)
    return process, int(line)


async def _driver(
    address: str, tables: int, prefix: str, config: Config, seed: int
) -> asyncio.subprocess.Process:
    process = await spawn_child("--pipeline-driver")
    assert process.stdin is not None
    command = {
        "address": address,
        "tables": tables,
        "prefix": prefix,
        "warmup_s": config.warmup_s,
        "seconds": config.seconds,
        "pace_s": config.pace_s,
        "seed": seed,
    }
    process.stdin.write((json.dumps(command) + "\n").encode())
    await process.stdin.drain()
    return process


async def _read_json(process: asyncio.subprocess.Process, limit_s: float) -> dict[str, Any]:
    assert process.stdout is not None
    line = await asyncio.wait_for(process.stdout.readline(), timeout=limit_s)
    if not line:
        raise RuntimeError("a pipeline driver ended without an answer")
    answer: dict[str, Any] = json.loads(line)
    return answer


def _cpu(pids: dict[str, int]) -> dict[str, float]:
    return {name: sum(cpu_times(pid)) for name, pid in pids.items()}


class PipelineRun:
    """The floor pipeline's processes (its ``redis-server`` and ``nats-server``, the
    gateway-like and table-like processes, the drivers), started and seated: :meth:`go`
    starts the play, :meth:`cpu` reads its four processes' CPU, :meth:`results` waits for
    the drivers' answers; :meth:`close` stops everything."""

    def __init__(self, config: Config, tables: int) -> None:
        self.config = config
        self.tables = tables
        self.redis = RedisServer(secrets=SESSION_SECRETS)
        self.nats = NatsServer(secrets=SESSION_SECRETS)
        self.children: list[asyncio.subprocess.Process] = []
        self.drivers: list[asyncio.subprocess.Process] = []
        self.pids: dict[str, int] = {}

    @classmethod
    async def start(
        cls,
        config: Config,
        tables: int,
        *,
        cluster_cpus: Sequence[int] = (),
        generator_cpus: Sequence[int] = (),
    ) -> PipelineRun:
        """Start the pipeline for ``tables`` tables, ready to play (closed if it fails)."""
        run = cls(config, tables)
        try:
            await run._start(cluster_cpus, generator_cpus)
        except BaseException:
            await run.close()
            raise
        return run

    async def _start(self, cluster_cpus: Sequence[int], generator_cpus: Sequence[int]) -> None:
        config = self.config
        self.redis.start()
        self.nats.start()
        table, table_port = await _child(
            "--pipeline-table", self.redis.url_for("admin"), self.nats.url_for("admin")
        )
        self.children.append(table)
        gateway, gateway_port = await _child(
            "--pipeline-gateway", f"127.0.0.1:{table_port}", self.nats.url_for("admin")
        )
        self.children.append(gateway)
        assert self.redis.pid is not None and self.nats.pid is not None
        self.pids = {
            "gateway": gateway.pid,
            "table": table.pid,
            "redis": self.redis.pid,
            "nats": self.nats.pid,
        }
        if cluster_cpus:
            for pid in self.pids.values():
                pin(pid, cluster_cpus)
        shares = [
            self.tables // config.generators + (i < self.tables % config.generators)
            for i in range(config.generators)
        ]
        for i, share in enumerate(shares):
            if share:
                driver = await _driver(
                    f"127.0.0.1:{gateway_port}", share, f"d{i}t", config, config.seed + i
                )
                self.children.append(driver)
                self.drivers.append(driver)
        if generator_cpus:
            for driver in self.drivers:
                pin(driver.pid, generator_cpus)
        for driver in self.drivers:
            await _read_json(driver, 600)

    async def go(self, go_ns: int) -> None:
        """Every driver plays from ``go_ns`` (``perf_counter_ns``) for warm-up + seconds."""
        for driver in self.drivers:
            assert driver.stdin is not None
            driver.stdin.write((json.dumps({"go_ns": go_ns}) + "\n").encode())
            await driver.stdin.drain()

    def cpu(self) -> dict[str, float]:
        """CPU seconds so far of the gateway-like, table-like, Redis and NATS processes."""
        return _cpu(self.pids)

    async def results(self, start: dict[str, float], end: dict[str, float]) -> dict[str, Any]:
        """The drivers' answers (they end after warm-up + seconds) with the CPU read at the
        start and the end of the recorded time: latency, errors, CPU per move."""
        config = self.config
        limit_s = config.pace_s + config.seconds + config.warmup_s + 60
        answers = [await _read_json(d, limit_s) for d in self.drivers]
        views, rpc = Histogram(), Histogram()
        errors: dict[str, int] = {}
        for answer in answers:
            views.merge(Histogram.from_json(answer["views"]))
            rpc.merge(Histogram.from_json(answer["rpc"]))
            for key, count in answer["errors"].items():
                errors[key] = errors.get(key, 0) + count
        cpu = {name: end[name] - start[name] for name in self.pids}
        moves = views.count
        return {
            "tables": self.tables,
            "moves": moves,
            "moves_per_s": moves / config.seconds,
            "errors": errors,
            "latency_ms": {
                "views_from_schedule": views.summary(PERCENTILES, 1e6),
                "rpc_from_schedule": rpc.summary(PERCENTILES, 1e6),
            },
            "cpu_s": cpu,
            "cpu_s_per_1k_moves": {
                name: seconds * 1000 / moves if moves else float("nan")
                for name, seconds in cpu.items()
            },
        }

    async def close(self) -> None:
        """Stop every process and remove the servers' data directories."""
        for child in self.children:
            with contextlib.suppress(ProcessLookupError):
                child.kill()
            with contextlib.suppress(Exception):
                await child.wait()
        self.nats.cleanup()
        self.redis.cleanup()


async def measure_pipeline(
    config: Config,
    tables: int,
    *,
    cluster_cpus: Sequence[int] = (),
    generator_cpus: Sequence[int] = (),
) -> dict[str, Any]:
    """Run the floor pipeline for ``tables`` tables as the cluster's step ran, on its own:
    its latency and the CPU of its four processes over the recorded time, per move."""
    run = await PipelineRun.start(
        config, tables, cluster_cpus=cluster_cpus, generator_cpus=generator_cpus
    )
    try:
        go_ns = _perf_ns() + 1_000_000_000
        await run.go(go_ns)
        measure_from = go_ns + int(config.warmup_s * 1e9)
        await asyncio.sleep(max(0.0, (measure_from - _perf_ns()) / 1e9))
        start = run.cpu()
        await asyncio.sleep(config.seconds)
        end = run.cpu()
        return await run.results(start, end)
    finally:
        await run.close()


def child_main(args: Any) -> bool:
    """Run a pipeline child process if the arguments name one; whether one ran."""
    if args.pipeline_table:
        uvloop.run(table_main(*args.pipeline_table))
    elif args.pipeline_gateway:
        uvloop.run(gateway_main(*args.pipeline_gateway))
    elif args.pipeline_driver:
        uvloop.run(driver_main())
    else:
        return False
    return True
