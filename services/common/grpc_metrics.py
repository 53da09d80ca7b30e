"""RED metrics of every gRPC server: requests, errors and duration per method and status code.

:func:`count_and_time` wraps every method handler of every server, once, when
:class:`~services.common.grpc_server.ServiceRuntime` registers it (no interceptor runs per
call: :mod:`services.common.handler_wrapping`). Labels are the gRPC service, the method, its
type (``unary`` or ``server_stream``: a latency quantile over unary calls must not mix in
streams, which last as long as a client watches, health ``Watch`` included) and the status
code name: never a table id or a player. Streams are timed from their start to their end.

- ``dominos_grpc_server_started_total{grpc_service, grpc_method, grpc_type}``
- ``dominos_grpc_server_handled_total{grpc_service, grpc_method, grpc_type, grpc_code}``
- ``dominos_grpc_server_handling_seconds{grpc_service, grpc_method, grpc_type}`` (histogram)

:class:`~services.common.table_channel.TableCall` times the calls a service makes to another
(the gateway's and the bots service's calls to the table service), one observation per attempt:

- ``dominos_grpc_client_handling_seconds{grpc_service, grpc_method, grpc_code}`` (histogram)
"""

from __future__ import annotations

import inspect
import time
from collections.abc import AsyncIterator, Sequence
from typing import Any

import grpc
from google.protobuf import descriptor_pool
from prometheus_client import Counter, Histogram

_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 60)
UNARY = "unary"
SERVER_STREAM = "server_stream"
BIDI_STREAM = "bidi_stream"

STARTED = Counter(
    "dominos_grpc_server_started_total",
    "RPCs started on the server.",
    ["grpc_service", "grpc_method", "grpc_type"],
)
HANDLED = Counter(
    "dominos_grpc_server_handled_total",
    "RPCs completed on the server, by status code.",
    ["grpc_service", "grpc_method", "grpc_type", "grpc_code"],
)
HANDLING = Histogram(
    "dominos_grpc_server_handling_seconds",
    "Time from the start to the end of an RPC on the server (whole stream for streams).",
    ["grpc_service", "grpc_method", "grpc_type"],
    buckets=_BUCKETS,
)
CLIENT_HANDLING = Histogram(
    "dominos_grpc_client_handling_seconds",
    "Time of one call (one attempt) to another service, by method and status code.",
    ["grpc_service", "grpc_method", "grpc_code"],
    buckets=_BUCKETS,
)


def _methods(service: str) -> list[tuple[str, str]]:
    """``(method, type)`` of each method of a service known to the protobuf descriptor pool
    (none for a name it does not know)."""
    try:
        descriptor = descriptor_pool.Default().FindServiceByName(service)
    except KeyError:
        return []
    return [(m.name, _kind(m.client_streaming, m.server_streaming)) for m in descriptor.methods]


def _kind(client_streaming: bool, server_streaming: bool) -> str:
    """The ``grpc_type`` label of a method (no client-streaming-only method in our APIs)."""
    if client_streaming:
        return BIDI_STREAM
    return SERVER_STREAM if server_streaming else UNARY


def precreate_server(services: Sequence[str]) -> None:
    """Create the series of every method of ``services`` at 0 (status OK), so a method's
    first calls show in ``rate()`` and a panel of a healthy quiet method shows 0, not "No
    data". Other status codes appear with their first call."""
    for service in services:
        for method, kind in _methods(service):
            STARTED.labels(service, method, kind)
            HANDLING.labels(service, method, kind)
            HANDLED.labels(service, method, kind, "OK")


def precreate_client(service: str) -> None:
    """Create the client-side series of every unary and bidirectional method of ``service``
    at 0 (status OK): a command sent on a stream is timed as one call of the stream's method
    (:mod:`services.common.command_streams`)."""
    for method, kind in _methods(service):
        if kind != SERVER_STREAM:
            CLIENT_HANDLING.labels(service, method, "OK")


class ClientTimer:
    """Times calls of one method to another service in
    ``dominos_grpc_client_handling_seconds`` by status code, each code's histogram child
    looked up once."""

    __slots__ = ("_method", "_observers", "_service")

    def __init__(self, service: str, method: str) -> None:
        self._service = service
        self._method = method
        self._observers: dict[str, Any] = {}

    def observe(self, code: str, seconds: float) -> None:
        """Record one call that ended with ``code`` after ``seconds``."""
        observe = self._observers.get(code)
        if observe is None:
            observe = CLIENT_HANDLING.labels(self._service, self._method, code).observe
            self._observers[code] = observe
        observe(seconds)


def count_refused(service: str, method: str, kind: str, code: str) -> None:
    """Count a call refused before its handler ran (the web edge's unreadable or oversized
    requests) as started and handled with ``code``, in no time."""
    STARTED.labels(service, method, kind).inc()
    HANDLING.labels(service, method, kind).observe(0.0)
    HANDLED.labels(service, method, kind, code).inc()


def split_method(full_method: str) -> tuple[str, str]:
    """``(service, method)`` of ``/package.Service/Method`` (``unknown`` for a missing part)."""
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


def count_and_time(full_method: str, handler: Any) -> Any:
    """``handler`` counted and timed as ``full_method`` (``/package.Service/Method``): the
    :data:`~services.common.handler_wrapping.HandlerWrapper` every server registers its
    handlers through (:class:`~services.common.grpc_server.ServiceRuntime`)."""
    return _wrap(handler, *split_method(full_method))


def _wrap(handler: Any, service: str, method: str) -> Any:
    """``handler`` counted and timed as ``service``/``method``."""
    if handler.unary_unary is not None:
        return grpc.unary_unary_rpc_method_handler(
            timed(handler.unary_unary, service, method, streaming=False),
            request_deserializer=handler.request_deserializer,
            response_serializer=handler.response_serializer,
        )
    if handler.unary_stream is not None:
        return grpc.unary_stream_rpc_method_handler(
            timed(handler.unary_stream, service, method, streaming=True),
            request_deserializer=handler.request_deserializer,
            response_serializer=handler.response_serializer,
        )
    if handler.stream_stream is not None:
        return grpc.stream_stream_rpc_method_handler(
            timed(handler.stream_stream, service, method, streaming=True, kind=BIDI_STREAM),
            request_deserializer=handler.request_deserializer,
            response_serializer=handler.response_serializer,
        )
    return handler  # client streams: none in our APIs


def timed(
    behavior: Any, service: str, method: str, *, streaming: bool, kind: str | None = None
) -> Any:
    """``behavior`` (an aio servicer method, or an async generator of replies) counted and
    timed as ``service``/``method`` of type ``server_stream`` when ``streaming`` (a stream
    written with ``context.write`` is a coroutine, so the type is the method's, not the
    function's), else ``unary``, unless ``kind`` names it (``bidi_stream``: timed as one
    call from open to end); its context's ``code()`` names the status of a failure (the
    gateway's web edge wraps its calls with it too)."""
    kind = kind or (SERVER_STREAM if streaming else UNARY)
    started_total = STARTED.labels(service, method, kind)
    handling = HANDLING.labels(service, method, kind)
    handled: dict[str, Any] = {}

    def finish(context: Any, started: float, error: BaseException | None) -> None:
        handling.observe(time.perf_counter() - started)
        code = _code_of(context, error)
        counter = handled.get(code)
        if counter is None:
            counter = handled[code] = HANDLED.labels(service, method, kind, code)
        counter.inc()

    if inspect.isasyncgenfunction(behavior):

        async def stream(request: Any, context: Any) -> AsyncIterator[Any]:
            started_total.inc()
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
        started_total.inc()
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
