"""gRPC's socket I/O on the poller thread (``services.common.grpc_io``), proven on real
processes: the setting takes effect with the installed grpcio, and every service entry point
applies it before gRPC loads (issue 22)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from services.common.grpc_io import POLLER_IO_EXPERIMENTS

ROOT = Path(__file__).resolve().parents[3]
CALLS = 300

#: A health server on a free port that prints the port, then serves until killed.
SERVER = """
import asyncio
from services.common.grpc_io import use_poller_io
use_poller_io()
import grpc
from grpc_health.v1 import health, health_pb2_grpc

async def main():
    server = grpc.aio.server()
    health_pb2_grpc.add_HealthServicer_to_server(health.aio.HealthServicer(), server)
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    print(port, flush=True)
    await server.wait_for_termination()

asyncio.run(main())
"""


def _event_engine_ns(pid: int) -> int:
    """CPU time (ns) the process's ``event_engine`` worker threads have run."""
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            if (task / "comm").read_text().strip().startswith("event_engine"):
                total += int((task / "schedstat").read_text().split()[0])
        except (FileNotFoundError, ProcessLookupError):
            continue  # a thread that ended meanwhile
    return total


@contextmanager
def _server(env: dict[str, str]) -> Iterator[tuple[int, int]]:
    """A health server process with ``env``: ``(pid, port)``."""
    process = subprocess.Popen(
        [sys.executable, "-c", SERVER], cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True
    )
    try:
        assert process.stdout is not None
        port = int(process.stdout.readline())
        yield process.pid, port
    finally:
        process.kill()
        process.wait(timeout=10)


def _worker_cpu_for_calls(env: dict[str, str]) -> int:
    """The server's event_engine threads' CPU (ns) over ``CALLS`` unary calls."""
    with _server(env) as (pid, port), grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        stub.Check(health_pb2.HealthCheckRequest(), timeout=10)
        before = _event_engine_ns(pid)
        for _ in range(CALLS):
            stub.Check(health_pb2.HealthCheckRequest(), timeout=10)
        return _event_engine_ns(pid) - before


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="needs Linux /proc")
def test_poller_io_leaves_event_engine_workers_idle_on_the_installed_grpcio() -> None:
    """With the experiments off, the server's EventEngine workers do (almost) none of the
    I/O they do by default; a grpcio that no longer knows the experiments fails here."""
    base = {k: v for k, v in os.environ.items() if k != "GRPC_EXPERIMENTS"}
    default = _worker_cpu_for_calls({**base, "GRPC_EXPERIMENTS": ""})
    poller = _worker_cpu_for_calls(base)  # the server sets POLLER_IO_EXPERIMENTS itself
    assert default > 0, "the default I/O path no longer runs on event_engine threads"
    assert poller < default / 5, (poller, default)


@pytest.mark.parametrize("service", ["table", "timer", "gateway", "bots"])
def test_every_service_entry_point_sets_poller_io_before_grpc_loads(service: str) -> None:
    """Importing ``services.<service>.__main__`` (what ``python -m`` and the console scripts
    run) sets ``GRPC_EXPERIMENTS`` while ``grpc`` is not yet imported."""
    env = {k: v for k, v in os.environ.items() if k != "GRPC_EXPERIMENTS"}
    code = (
        "import os, sys\n"
        "from services.common import grpc_io\n"
        "calls = []\n"
        "original = grpc_io.use_poller_io\n"
        "grpc_io.use_poller_io = lambda: calls.append('grpc' in sys.modules) or original()\n"
        f"import services.{service}.__main__\n"
        "print(calls, os.environ['GRPC_EXPERIMENTS'])\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        check=False,
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["[False]", POLLER_IO_EXPERIMENTS]
