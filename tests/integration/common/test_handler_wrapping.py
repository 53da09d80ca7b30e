"""Handlers wrapped once when registered, in place of interceptors run on every call (issue 22):
a real ``grpc.aio`` server built by ``ServiceRuntime``, called over a real channel."""

from __future__ import annotations

from typing import Any

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from services.common.grpc_metrics import HANDLED
from services.common.grpc_server import ServiceRuntime
from services.common.settings import Settings

SERVICE = "test.Wrapped"


class Recorder:
    """A wrapper that notes each handler it wraps and, per call, that it ran."""

    def __init__(self, name: str, trace: list[str]) -> None:
        self.name = name
        self.trace = trace
        self.wrapped: list[str] = []

    def __call__(self, method: str, handler: Any) -> Any:
        self.wrapped.append(method)
        if handler.unary_unary is None:
            return handler
        behavior = handler.unary_unary

        async def noted(request: Any, context: Any) -> Any:
            self.trace.append(self.name)
            return await behavior(request, context)

        return grpc.unary_unary_rpc_method_handler(
            noted,
            request_deserializer=handler.request_deserializer,
            response_serializer=handler.response_serializer,
        )


def _register(trace: list[str]) -> Any:
    async def echo(request: bytes, context: Any) -> bytes:
        trace.append("behavior")
        return request

    def register(server: Any) -> None:
        handler = grpc.unary_unary_rpc_method_handler(echo)
        server.add_registered_method_handlers(SERVICE, {"Echo": handler})
        server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(SERVICE, {}),))

    return register


async def test_each_method_is_wrapped_once_and_every_call_runs_the_wrappers_first_outermost() -> (
    None
):
    trace: list[str] = []
    outer, inner = Recorder("outer", trace), Recorder("inner", trace)
    runtime = ServiceRuntime(
        service_names=[SERVICE], registrars=[_register(trace)], wrappers=(outer, inner)
    )
    port = await runtime.start()
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            echo = channel.unary_unary(f"/{SERVICE}/Echo")
            for i in range(5):
                assert await echo(b"%d" % i) == b"%d" % i
            health: Any = health_pb2_grpc.HealthStub(channel)
            for _ in range(3):
                reply = await health.Check(health_pb2.HealthCheckRequest(service=SERVICE))
                assert reply.status == health_pb2.HealthCheckResponse.SERVING
            reflection: Any = reflection_pb2_grpc.ServerReflectionStub(channel)
            for _ in range(3):
                answers = reflection.ServerReflectionInfo(
                    iter([reflection_pb2.ServerReflectionRequest(list_services="")])
                )
                assert [a async for a in answers]
    finally:
        await runtime.shutdown("test")
    # Every call ran both wrappers, the first given outermost, then the behavior.
    assert trace == ["outer", "inner", "behavior"] * 5 + ["outer", "inner"] * 3
    # Each handler was wrapped when registered, or at its first call (reflection's generic
    # handler): never once per call.
    for recorder in (outer, inner):
        assert recorder.wrapped.count(f"/{SERVICE}/Echo") == 1
        assert recorder.wrapped.count("/grpc.health.v1.Health/Check") == 1
        assert (
            recorder.wrapped.count("/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo")
            == 1
        )


async def test_the_runtime_of_a_service_counts_every_call_without_an_interceptor() -> None:
    trace: list[str] = []
    runtime = ServiceRuntime.from_settings(
        Settings.from_env({"DOMINOS_GRPC_PORT": "0", "DOMINOS_GRPC_HOST": "127.0.0.1"}),
        service_names=[SERVICE],
        registrars=[_register(trace)],
    )
    counted = HANDLED.labels(SERVICE, "Echo", "unary", "OK")
    before = counted._value.get()
    port = await runtime.start()
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            echo = channel.unary_unary(f"/{SERVICE}/Echo")
            for _ in range(4):
                await echo(b"x")
    finally:
        await runtime.shutdown("test")
    assert counted._value.get() == before + 4
    assert trace == ["behavior"] * 4
