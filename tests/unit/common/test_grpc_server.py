"""gRPC bootstrap: health, reflection and graceful shutdown, against real servers and channels."""

from __future__ import annotations

import asyncio
import json
import signal
import sys
import textwrap
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from services.common.grpc_server import (
    HEALTH_SERVICE_NAME,
    INTERNAL_ENVELOPE_BYTES,
    INTERNAL_SERVER_OPTIONS,
    REFLECTION_SERVICE_NAME,
    SERVER_OPTIONS,
    ServiceRuntime,
)
from testing.waiting import wait_for

SERVING = health_pb2.HealthCheckResponse.SERVING
NOT_SERVING = health_pb2.HealthCheckResponse.NOT_SERVING
SLOW_SERVICE = "test.Slow"
SLOW_METHOD = f"/{SLOW_SERVICE}/Call"
REPO_ROOT = Path(__file__).resolve().parents[3]


class SlowService:
    """A unary method that blocks until the test releases it (bytes in, bytes out)."""

    def __init__(self) -> None:
        self.started = asyncio.Event()
        self.release = asyncio.Event()
        self.finished = 0

    async def call(self, request: bytes, context: Any) -> bytes:
        self.started.set()
        await self.release.wait()
        self.finished += 1
        return b"done:" + request

    def register(self, server: Any) -> None:
        handler = grpc.method_handlers_generic_handler(
            SLOW_SERVICE, {"Call": grpc.unary_unary_rpc_method_handler(self.call)}
        )
        server.add_generic_rpc_handlers((handler,))


async def check(channel: grpc.aio.Channel, service: str = "") -> int:
    stub = health_pb2_grpc.HealthStub(channel)
    response = await stub.Check(health_pb2.HealthCheckRequest(service=service), timeout=5)
    return int(response.status)


async def list_services(channel: grpc.aio.Channel) -> set[str]:
    stub = reflection_pb2_grpc.ServerReflectionStub(channel)
    call = stub.ServerReflectionInfo(
        iter([reflection_pb2.ServerReflectionRequest(list_services="")]), timeout=5
    )
    names: set[str] = set()
    async for response in call:
        names.update(s.name for s in response.list_services_response.service)
    return names


@pytest.fixture
async def make_runtime() -> AsyncIterator[Callable[..., ServiceRuntime]]:
    """Runtimes on 127.0.0.1:0 that are shut down after the test, whatever happened."""
    runtimes: list[ServiceRuntime] = []

    def make(**kwargs: Any) -> ServiceRuntime:
        kwargs.setdefault("host", "127.0.0.1")
        kwargs.setdefault("port", 0)
        runtime = ServiceRuntime(**kwargs)
        runtimes.append(runtime)
        return runtime

    yield make
    for runtime in runtimes:
        await asyncio.wait_for(runtime.shutdown(), 30)


@pytest.fixture
async def channel_to() -> AsyncIterator[Callable[[int], grpc.aio.Channel]]:
    channels: list[grpc.aio.Channel] = []

    def make(port: int) -> grpc.aio.Channel:
        channel = grpc.aio.insecure_channel(f"127.0.0.1:{port}")
        channels.append(channel)
        return channel

    yield make
    for channel in channels:
        await channel.close()


async def test_health_only_runtime_serves_health_and_reflection(
    make_runtime: Callable[..., ServiceRuntime],
    channel_to: Callable[[int], grpc.aio.Channel],
) -> None:
    runtime = make_runtime(grace_seconds=1)
    port = await runtime.start()
    try:
        assert port > 0
        assert runtime.port == port
        channel = channel_to(port)
        assert await check(channel) == SERVING
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await check(channel, "no.such.Service")
        assert caught.value.code() == grpc.StatusCode.NOT_FOUND
        assert await list_services(channel) == {
            HEALTH_SERVICE_NAME,
            REFLECTION_SERVICE_NAME,
            "grpc.reflection.v1.ServerReflection",
        }
    finally:
        await runtime.shutdown()


async def test_per_service_health_and_registration(
    make_runtime: Callable[..., ServiceRuntime],
    channel_to: Callable[[int], grpc.aio.Channel],
) -> None:
    slow = SlowService()
    slow.release.set()
    runtime = make_runtime(service_names=[SLOW_SERVICE], registrars=[slow.register])
    async with runtime:
        channel = channel_to(runtime.port)
        assert await check(channel, "") == SERVING
        assert await check(channel, SLOW_SERVICE) == SERVING
        assert SLOW_SERVICE in await list_services(channel)
        assert await channel.unary_unary(SLOW_METHOD)(b"hi", timeout=5) == b"done:hi"

        await runtime.set_serving(False, SLOW_SERVICE)
        assert await check(channel, SLOW_SERVICE) == NOT_SERVING
        assert await check(channel, "") == SERVING
    assert runtime.shutdown_requested


async def test_shutdown_reports_not_serving_then_lets_in_flight_calls_finish(
    make_runtime: Callable[..., ServiceRuntime],
    channel_to: Callable[[int], grpc.aio.Channel],
) -> None:
    slow = SlowService()
    runtime = make_runtime(
        service_names=[SLOW_SERVICE],
        registrars=[slow.register],
        grace_seconds=10,
    )
    hook_log: list[str] = []

    async def first_hook() -> None:
        # Hooks run only after the server stopped, i.e. after in-flight calls completed.
        hook_log.append(f"first finished={slow.finished}")

    async def failing_hook() -> None:
        hook_log.append("failing")
        raise RuntimeError("hook failure must not stop the others")

    async def last_hook() -> None:
        hook_log.append("last")

    runtime.add_shutdown_hook(first_hook, name="first")
    runtime.add_shutdown_hook(failing_hook, name="failing")
    runtime.add_shutdown_hook(last_hook, name="last")
    port = await runtime.start()
    channel = channel_to(port)

    watch = health_pb2_grpc.HealthStub(channel).Watch(
        health_pb2.HealthCheckRequest(service=SLOW_SERVICE)
    )
    assert (await asyncio.wait_for(watch.read(), 5)).status == SERVING
    in_flight = asyncio.ensure_future(channel.unary_unary(SLOW_METHOD)(b"x", timeout=20))
    await asyncio.wait_for(slow.started.wait(), 5)

    shutting_down = asyncio.create_task(runtime.shutdown("test"))
    assert (await asyncio.wait_for(watch.read(), 5)).status == NOT_SERVING
    assert runtime.shutdown_requested
    assert not in_flight.done()
    assert not shutting_down.done()
    assert hook_log == []
    watch.cancel()

    # The server refuses new calls while the in-flight one is still running.
    async def new_calls_refused() -> bool:
        try:
            await check(channel_to(port))
        except grpc.aio.AioRpcError as exc:
            return bool(exc.code() == grpc.StatusCode.UNAVAILABLE)
        return False

    await wait_for(new_calls_refused, timeout=5, message="new calls refused during shutdown")
    assert not in_flight.done()

    slow.release.set()
    assert await asyncio.wait_for(in_flight, 5) == b"done:x"
    await asyncio.wait_for(shutting_down, 5)
    assert hook_log == ["first finished=1", "failing", "last"]

    # Idempotent: a second shutdown returns at once and runs nothing again.
    await asyncio.wait_for(runtime.shutdown(), 1)
    assert hook_log == ["first finished=1", "failing", "last"]


async def test_grace_bounds_in_flight_calls_and_hook_timeouts(
    make_runtime: Callable[..., ServiceRuntime],
    channel_to: Callable[[int], grpc.aio.Channel],
) -> None:
    slow = SlowService()  # never released
    runtime = make_runtime(
        service_names=[SLOW_SERVICE],
        registrars=[slow.register],
        grace_seconds=0.2,
    )
    ran: list[str] = []

    async def hanging_hook() -> None:
        await asyncio.Event().wait()

    async def after() -> None:
        ran.append("after")

    runtime.add_shutdown_hook(hanging_hook, name="hangs", timeout=0.2)
    runtime.add_shutdown_hook(after, name="after")
    port = await runtime.start()
    in_flight = asyncio.ensure_future(channel_to(port).unary_unary(SLOW_METHOD)(b"x", timeout=20))
    await asyncio.wait_for(slow.started.wait(), 5)

    began = time.monotonic()
    await asyncio.wait_for(runtime.shutdown(), 5)
    assert time.monotonic() - began < 3
    assert ran == ["after"]
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await asyncio.wait_for(in_flight, 5)
    assert caught.value.code() in (grpc.StatusCode.CANCELLED, grpc.StatusCode.UNAVAILABLE)


async def test_request_shutdown_ends_run_until_shutdown(
    make_runtime: Callable[..., ServiceRuntime],
) -> None:
    runtime = make_runtime(grace_seconds=1)
    hooks: list[str] = []

    async def hook() -> None:
        hooks.append("ran")

    runtime.add_shutdown_hook(hook)
    serving = asyncio.create_task(runtime.run_until_shutdown())
    await wait_for(lambda: runtime.started, timeout=5)
    assert not serving.done()
    runtime.request_shutdown("test")
    runtime.request_shutdown("again")  # ignored
    await asyncio.wait_for(serving, 5)
    assert hooks == ["ran"]


async def test_busy_port_fails_loudly(make_runtime: Callable[..., ServiceRuntime]) -> None:
    first = make_runtime()
    port = await first.start()
    try:
        second = make_runtime(port=port)
        with pytest.raises(RuntimeError, match=str(port)):
            await second.start()
    finally:
        await first.shutdown()


def test_server_options_bound_dead_peer_detection_to_30_seconds() -> None:
    options = dict(SERVER_OPTIONS)
    assert options["grpc.keepalive_time_ms"] == 20_000
    assert options["grpc.keepalive_permit_without_calls"] == 1
    # gRPC core waits ping_timeout for a keepalive ping's ack (60 s when unset).
    assert options["grpc.keepalive_time_ms"] + options["grpc.http2.ping_timeout_ms"] <= 30_000
    assert options["grpc.keepalive_timeout_ms"] <= 10_000
    # Peers (the gateway every 10 s) may ping more often than this server pings.
    assert options["grpc.http2.min_ping_interval_without_data_ms"] <= 10_000 / 2
    assert options["grpc.max_receive_message_length"] == 64 * 1024
    assert options["grpc.max_send_message_length"] == 1024 * 1024


def test_internal_servers_take_the_public_limit_plus_the_envelope_and_age_connections() -> None:
    """The table service takes what the gateway accepted plus its envelope, and closes each
    caller's connection after 5 minutes so that callers resolve its replicas again (a
    replica added by a scale-up gets its share of the tables, issue 22)."""
    public, internal = dict(SERVER_OPTIONS), dict(INTERNAL_SERVER_OPTIONS)
    assert len(internal) == len(INTERNAL_SERVER_OPTIONS)  # no option given twice
    assert internal.pop("grpc.max_receive_message_length") == 64 * 1024 + INTERNAL_ENVELOPE_BYTES
    assert internal.pop("grpc.max_connection_age_ms") == 300_000
    assert internal.pop("grpc.max_connection_age_grace_ms") == 30_000
    assert internal == {k: v for k, v in public.items() if k != "grpc.max_receive_message_length"}


async def test_oversized_request_is_rejected(
    make_runtime: Callable[..., ServiceRuntime],
    channel_to: Callable[[int], grpc.aio.Channel],
) -> None:
    slow = SlowService()
    slow.release.set()
    runtime = make_runtime(service_names=[SLOW_SERVICE], registrars=[slow.register])
    async with runtime:
        call = channel_to(runtime.port).unary_unary(SLOW_METHOD)
        assert await call(b"a" * 60_000, timeout=5) == b"done:" + b"a" * 60_000
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await call(b"a" * (64 * 1024 + 1), timeout=5)
        assert caught.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED


SIGTERM_SCRIPT = textwrap.dedent(
    """
    import asyncio
    import sys

    import grpc

    from services.common.grpc_server import ServiceRuntime, serve_until_signal
    from services.common.logging import configure_logging, get_logger

    log = get_logger("script")


    async def slow(request, context):
        log.info("script.slow_started")
        # Blocks until the test writes a line to stdin: the test decides when work ends.
        line = await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)
        return b"done:" + line.strip().encode()


    def register(server):
        handler = grpc.method_handlers_generic_handler(
            "test.Slow", {"Call": grpc.unary_unary_rpc_method_handler(slow)}
        )
        server.add_generic_rpc_handlers((handler,))


    async def hook():
        log.info("script.hook_ran")


    async def main():
        configure_logging("info", "sigterm-test")
        runtime = ServiceRuntime(
            service_names=["test.Slow"],
            registrars=[register],
            host="127.0.0.1",
            port=0,
            grace_seconds=float(sys.argv[1]),
        )
        runtime.add_shutdown_hook(hook, name="script.hook")
        await serve_until_signal(
            runtime, on_ready=lambda port: log.info("script.ready", port=port)
        )
        log.info("script.exiting")


    asyncio.run(main())
    """
)


class EventReader:
    """Reads the JSON log lines of a child process, remembering everything seen."""

    def __init__(self, stream: asyncio.StreamReader) -> None:
        self.stream = stream
        self.events: list[dict[str, Any]] = []
        self.raw: list[str] = []

    async def until(self, event: str, within: float = 10) -> dict[str, Any]:
        async with asyncio.timeout(within):
            while True:
                line = await self.stream.readline()
                if not line:
                    raise AssertionError(f"EOF before {event!r}; output:\n" + "".join(self.raw))
                self.raw.append(line.decode(errors="replace"))
                try:
                    record: dict[str, Any] = json.loads(line)
                except ValueError:
                    continue
                self.events.append(record)
                if record.get("event") == event:
                    return record

    def names(self) -> list[str]:
        return [str(e.get("event")) for e in self.events]


async def test_sigterm_drains_in_flight_call_and_exits_zero_within_grace(
    channel_to: Callable[[int], grpc.aio.Channel],
) -> None:
    grace = 5.0
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        SIGTERM_SCRIPT,
        str(grace),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
        cwd=REPO_ROOT,
    )
    assert proc.stdout is not None and proc.stdin is not None
    reader = EventReader(proc.stdout)
    try:
        port = int((await reader.until("script.ready"))["port"])
        channel = channel_to(port)
        assert await check(channel) == SERVING

        in_flight = asyncio.ensure_future(channel.unary_unary(SLOW_METHOD)(b"", timeout=20))
        await reader.until("script.slow_started")

        proc.send_signal(signal.SIGTERM)
        sent = time.monotonic()
        requested = await reader.until("grpc.shutdown_requested")
        assert requested["reason"] == "signal SIGTERM"
        await reader.until("grpc.health_not_serving")
        assert proc.returncode is None
        assert not in_flight.done()

        proc.stdin.write(b"released\n")
        await proc.stdin.drain()
        assert await asyncio.wait_for(in_flight, 5) == b"done:released"

        code = await asyncio.wait_for(proc.wait(), grace)
        assert time.monotonic() - sent < grace
        await reader.until("script.exiting")
        assert code == 0, "".join(reader.raw)
        names = reader.names()
        order = [
            "grpc.shutdown_requested",
            "grpc.health_not_serving",
            "grpc.server_stopped",
            "script.hook_ran",
            "grpc.shutdown_hook_done",
            "grpc.shutdown_complete",
            "script.exiting",
        ]
        assert [n for n in names if n in order] == order
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
