"""The floor the cluster stands on, sampled in the bench process while a step is recorded.

``bench.table_bench.Floor`` (a Redis ``EVALSHA`` of ``return 1``, a core NATS publish →
subscribe hop, a gRPC unary call to an empty handler), the unary call going to a bare
``grpc.aio`` server in its own process (``python -m bench.load --floor-server``), plus that
server's stream messages (one-way: the handler stamps ``perf_counter_ns`` into each). The
Redis and NATS hops go to a ``redis-server`` and a ``nats-server`` of their own (started by
``bench.load.main``, same binaries and users as the cluster's, pinned with the generators),
so that the CPU they cost is never counted as the cluster's.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import time
from typing import Any

import grpc

from bench.gateway_bench import FLOOR_VIEW_BYTES
from bench.histogram import Histogram
from bench.load.config import ROOT
from bench.table_bench import Floor
from services.client.api import CHANNEL_OPTIONS
from testing.stats import PERCENTILES

_perf_ns = time.perf_counter_ns
FLOOR_TICK_S = 0.020


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

    await serve_generic(
        "bench.Floor",
        {
            "Empty": grpc.unary_unary_rpc_method_handler(empty),
            "Ticks": grpc.unary_stream_rpc_method_handler(ticks),
        },
    )


async def serve_generic(service: str, methods: dict[str, Any]) -> None:
    """A bare ``grpc.aio`` server of ``service``'s generic (bytes in, bytes out) ``methods``
    on a free local port: prints the port, serves until killed."""
    server = grpc.aio.server()
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(service, methods),))
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
