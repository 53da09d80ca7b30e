"""RED metrics of every gRPC server: requests, errors and duration per method and status code.

:class:`MetricsInterceptor` is installed by :class:`~services.common.grpc_server.ServiceRuntime`
on every server. Labels are the gRPC service, the method and the status code name: never a
table id or a player. Streams are timed from their start to their end.

- ``dominos_grpc_server_started_total{grpc_service, grpc_method}``
- ``dominos_grpc_server_handled_total{grpc_service, grpc_method, grpc_code}``
- ``dominos_grpc_server_handling_seconds{grpc_service, grpc_method}`` (histogram)
"""

from __future__ import annotations

import inspect
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import grpc
from prometheus_client import Counter, Histogram

STARTED = Counter(
    "dominos_grpc_server_started_total",
    "RPCs started on the server.",
    ["grpc_service", "grpc_method"],
)
HANDLED = Counter(
    "dominos_grpc_server_handled_total",
    "RPCs completed on the server, by status code.",
    ["grpc_service", "grpc_method", "grpc_code"],
)
HANDLING = Histogram(
    "dominos_grpc_server_handling_seconds",
    "Time from the start to the end of an RPC on the server (whole stream for streams).",
    ["grpc_service", "grpc_method"],
    buckets=(0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 60),
)


def _split(full_method: str) -> tuple[str, str]:
    _, _, rest = full_method.partition("/")
    service, _, method = rest.partition("/")
    return service or "unknown", method or "unknown"


def _code_of(context: Any, error: BaseException | None) -> str:
    if error is None:
        return "OK"
    code = None
    try:
        code = context.code()
    except Exception:
        code = None
    if isinstance(code, grpc.StatusCode):
        return str(code.name)
    if isinstance(error, TimeoutError):
        return "DEADLINE_EXCEEDED"
    return "CANCELLED" if "Cancel" in type(error).__name__ else "UNKNOWN"


class MetricsInterceptor(grpc.aio.ServerInterceptor):  # type: ignore[misc]
    """Counts and times every RPC (unary and streaming) of an aio server."""

    async def intercept_service(
        self,
        continuation: Callable[[Any], Awaitable[Any]],
        handler_call_details: Any,
    ) -> Any:
        handler = await continuation(handler_call_details)
        if handler is None:
            return None
        service, method = _split(handler_call_details.method)
        if handler.unary_unary is not None:
            return grpc.unary_unary_rpc_method_handler(
                timed(handler.unary_unary, service, method),
                request_deserializer=handler.request_deserializer,
                response_serializer=handler.response_serializer,
            )
        if handler.unary_stream is not None:
            return grpc.unary_stream_rpc_method_handler(
                timed(handler.unary_stream, service, method),
                request_deserializer=handler.request_deserializer,
                response_serializer=handler.response_serializer,
            )
        return handler  # client and bidirectional streams: none in our contract


def timed(behavior: Any, service: str, method: str) -> Any:
    """``behavior`` (an aio servicer method, or an async generator of replies) counted and
    timed as ``service``/``method``; its context's ``code()`` names the status of a failure
    (the gateway's web edge wraps its calls with it too)."""
    labels = (service, method)

    def finish(context: Any, started: float, error: BaseException | None) -> None:
        HANDLING.labels(*labels).observe(time.perf_counter() - started)
        HANDLED.labels(service, method, _code_of(context, error)).inc()

    if inspect.isasyncgenfunction(behavior):

        async def stream(request: Any, context: Any) -> AsyncIterator[Any]:
            STARTED.labels(*labels).inc()
            started = time.perf_counter()
            error: BaseException | None = None
            try:
                async for item in behavior(request, context):
                    yield item
            except BaseException as exc:
                error = exc
                raise
            finally:
                finish(context, started, error)

        return stream

    async def call(request: Any, context: Any) -> Any:
        STARTED.labels(*labels).inc()
        started = time.perf_counter()
        error: BaseException | None = None
        try:
            return await behavior(request, context)
        except BaseException as exc:
            error = exc
            raise
        finally:
            finish(context, started, error)

    return call
