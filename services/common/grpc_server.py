"""Shared ``grpc.aio`` server bootstrap: options, health, reflection, graceful shutdown.

Every service builds its server the same way::

    runtime = ServiceRuntime.from_settings(
        settings,
        service_names=["dominos.v1.TableService"],
        registrars=[lambda server: add_TableServiceServicer_to_server(servicer, server)],
    )
    runtime.add_shutdown_hook(nats_client.drain, name="nats.drain")
    runtime.add_shutdown_hook(redis_client.aclose, name="redis.close")
    await serve_until_signal(runtime)

:class:`ServiceRuntime` creates a ``grpc.aio`` server with :data:`SERVER_OPTIONS`, registers
the caller's servicers, the ``grpc.health.v1.Health`` servicer (overall status ``""`` and one
status per service name) and server reflection (``grpc.reflection.v1`` and ``v1alpha``,
:mod:`services.common.reflection`) listing the given services plus health and reflection and
describing only their files, binds ``host:port`` (port 0 picks a free port) and starts, with
the event-loop lag watch (:mod:`services.common.loop_lag`) running until the shutdown ends.

Shutdown, whether triggered by SIGTERM/SIGINT (:func:`serve_until_signal`) or
programmatically (:meth:`ServiceRuntime.request_shutdown` / :meth:`ServiceRuntime.shutdown`),
always runs the same steps, once:

1. every health status (overall and per service) becomes ``NOT_SERVING``, so Watch-ing load
   balancers and probes stop sending traffic, and the drain callbacks run (e.g. the gateway
   ends its view streams with a documented status, so clients reconnect elsewhere at once);
   the server keeps serving for ``drain_seconds`` so they can see it;
2. ``await server.stop(grace)``: new calls are refused at once, in-flight calls get ``grace``
   seconds to finish and are cancelled after that;
3. the shutdown hooks run in registration order (e.g. drain NATS, then close Redis), each
   bounded by a timeout; a failing or hanging hook is logged and the next one still runs.

Log events: ``grpc.server_started``, ``grpc.shutdown_requested``, ``grpc.health_not_serving``,
``grpc.server_stopped``, ``grpc.shutdown_hook_done``, ``grpc.shutdown_hook_failed``,
``grpc.shutdown_complete``.
"""

from __future__ import annotations

import asyncio
import signal
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from services.common import reflection as served_reflection
from services.common.grpc_metrics import count_and_time, precreate_server
from services.common.handler_wrapping import HandlerWrapper, WrappingRegistrar
from services.common.logging import get_logger
from services.common.loop_lag import watch_loop_lag
from services.common.tasks import stop_task

if TYPE_CHECKING:
    from services.common.settings import Settings

__all__ = [
    "HEALTH_SERVICE_NAME",
    "INTERNAL_ENVELOPE_BYTES",
    "INTERNAL_SERVER_OPTIONS",
    "MAX_RECEIVE_MESSAGE_BYTES",
    "MAX_SEND_MESSAGE_BYTES",
    "MIN_CLIENT_PING_INTERVAL_MS",
    "REFLECTION_SERVICE_NAME",
    "SERVER_OPTIONS",
    "ServiceRuntime",
    "ServicerRegistrar",
    "ShutdownHook",
    "serve_until_signal",
]

ServicerRegistrar = Callable[[Any], None]
"""Callback adding servicers to the server it is given (a
:class:`~services.common.handler_wrapping.WrappingRegistrar` standing for the
``grpc.aio.Server``: ``add_*Servicer_to_server(servicer, server)`` works with it)."""

ShutdownHook = Callable[[], Awaitable[object]]
"""Async callable run after the server has stopped (drain NATS, close Redis, ...)."""

HEALTH_SERVICE_NAME: Final[str] = health.SERVICE_NAME
REFLECTION_SERVICE_NAME: Final[str] = reflection.SERVICE_NAME

#: The shortest keepalive interval the contract lets a client use (gateway.proto): twice what
#: the server accepts, so jitter never makes a compliant client look abusive.
MIN_CLIENT_PING_INTERVAL_MS: Final = 10_000

MAX_RECEIVE_MESSAGE_BYTES: Final = 64 * 1024
MAX_SEND_MESSAGE_BYTES: Final = 1024 * 1024

SERVER_OPTIONS: Final[tuple[tuple[str, int], ...]] = (
    # Keepalive for long-lived view streams: ping idle connections every 20 s, drop a peer
    # that does not answer within 10 s, keep pinging even while no data flows.
    # (ping_timeout too: gRPC core otherwise waits up to 60 s for the ack, so a dead peer
    # was only dropped after ~80 s). Bound: a dead client is detected within 30 s.
    ("grpc.keepalive_time_ms", 20_000),
    ("grpc.keepalive_timeout_ms", 10_000),
    ("grpc.http2.ping_timeout_ms", 10_000),
    ("grpc.keepalive_permit_without_calls", 1),
    ("grpc.http2.max_pings_without_data", 0),
    # Accept peer keepalive pings as often as every 5 s, also on a connection or stream where
    # nothing flows (gRPC core's name for it: the minimum *received* ping interval without
    # data). A peer pinging faster gets strikes and, after two, a GOAWAY (ENHANCE_YOUR_CALM,
    # "too_many_pings"). The contract documents 10 s (MIN_CLIENT_PING_INTERVAL_MS) for
    # margin; the gateway pings the table service every 10 s, clients every 20 s.
    ("grpc.http2.min_ping_interval_without_data_ms", 5_000),
    ("grpc.http2.max_ping_strikes", 2),
    # Commands are small; views are bounded.
    ("grpc.max_receive_message_length", MAX_RECEIVE_MESSAGE_BYTES),
    ("grpc.max_send_message_length", MAX_SEND_MESSAGE_BYTES),
    # A port already in use must fail loudly instead of being silently shared.
    ("grpc.so_reuseport", 0),
)
"""Channel arguments of every server built by :class:`ServiceRuntime`."""

INTERNAL_ENVELOPE_BYTES: Final = 8 * 1024
"""Room an internal service gives, above :data:`MAX_RECEIVE_MESSAGE_BYTES`, for the envelope a
gateway wraps around a public request (seat token, peer address), so that any request the
gateway accepted reaches the table service."""

INTERNAL_SERVER_OPTIONS: Final[tuple[tuple[str, int], ...]] = (
    *(option for option in SERVER_OPTIONS if option[0] != "grpc.max_receive_message_length"),
    ("grpc.max_receive_message_length", MAX_RECEIVE_MESSAGE_BYTES + INTERNAL_ENVELOPE_BYTES),
    # Callers reconnect at least every 5 minutes (30 s for calls in flight to end), and so
    # resolve the service's name again: a replica added since starts receiving its tables.
    ("grpc.max_connection_age_ms", 300_000),
    ("grpc.max_connection_age_grace_ms", 30_000),
)
"""Server options of a service that only gateways and the bots service call (the table
service)."""

_SERVING = health_pb2.HealthCheckResponse.SERVING
_NOT_SERVING = health_pb2.HealthCheckResponse.NOT_SERVING


@dataclass(frozen=True, slots=True)
class _Hook:
    name: str
    hook: ShutdownHook
    timeout: float


class ServiceRuntime:
    """One ``grpc.aio`` server with health, reflection and a one-shot graceful shutdown.

    Lifecycle: construct → :meth:`start` (returns the bound port) → :meth:`shutdown` (or
    :meth:`request_shutdown` + :meth:`run_until_shutdown`, or :func:`serve_until_signal`).
    Also an async context manager (start on enter, shutdown on exit). All methods must be
    called from the event loop the server runs on.
    """

    def __init__(
        self,
        *,
        service_names: Sequence[str] = (),
        registrars: Sequence[ServicerRegistrar] = (),
        host: str = "0.0.0.0",
        port: int = 0,
        grace_seconds: float = 10.0,
        drain_seconds: float = 0.0,
        hook_timeout_seconds: float = 10.0,
        options: Sequence[tuple[str, Any]] = SERVER_OPTIONS,
        wrappers: Sequence[HandlerWrapper] = (),
    ) -> None:
        """Describe the server; nothing is bound until :meth:`start`.

        ``service_names`` are fully-qualified gRPC service names (``dominos.v1.TableService``)
        reported by health and reflection; ``registrars`` add their servicers. ``wrappers``
        wrap every method handler (the servicers', health's, reflection's) once, when it is
        registered, the first outermost (:mod:`services.common.handler_wrapping`): they take
        the place of server interceptors, which would run on every call. ``grace_seconds``
        bounds how long in-flight calls may run during shutdown; ``hook_timeout_seconds`` is
        the default bound of each shutdown hook.
        """
        if not 0 <= port <= 65535:
            raise ValueError(f"port must be within 0-65535, got {port}")
        if grace_seconds < 0 or hook_timeout_seconds <= 0:
            raise ValueError("grace_seconds must be >= 0 and hook_timeout_seconds > 0")
        self._service_names = tuple(dict.fromkeys(service_names))
        self._registrars = tuple(registrars)
        self._host = host
        self._requested_port = port
        self._grace = grace_seconds
        self._drain = drain_seconds
        self._drain_callbacks: list[Callable[[], object]] = []
        self._hook_timeout = hook_timeout_seconds
        self._options = tuple(options)
        self._wrappers = tuple(wrappers)
        self._hooks: list[_Hook] = []
        self._server: Any = None
        self._health = health.aio.HealthServicer()
        self._port: int | None = None
        self._shutdown_requested = asyncio.Event()
        self._shutdown_reason: str | None = None
        self._shutdown_task: asyncio.Task[None] | None = None
        self._loop_lag: asyncio.Task[None] | None = None
        self._log = get_logger(__name__)

    @classmethod
    def from_settings(
        cls,
        settings: Settings,
        *,
        service_names: Sequence[str] = (),
        registrars: Sequence[ServicerRegistrar] = (),
        wrappers: Sequence[HandlerWrapper] = (),
        options: Sequence[tuple[str, Any]] = SERVER_OPTIONS,
    ) -> ServiceRuntime:
        """A runtime listening on ``settings.grpc_host:grpc_port`` with the configured grace,
        counting and timing every RPC (:func:`~services.common.grpc_metrics.count_and_time`,
        the outermost wrapper, then ``wrappers``)."""
        return cls(
            service_names=service_names,
            registrars=registrars,
            host=settings.grpc_host,
            port=settings.grpc_port,
            grace_seconds=settings.shutdown_grace_seconds,
            drain_seconds=settings.shutdown_drain_seconds,
            options=options,
            wrappers=(count_and_time, *wrappers),
        )

    # -- introspection ------------------------------------------------------------------

    @property
    def service_names(self) -> tuple[str, ...]:
        """The application services (without health and reflection)."""
        return self._service_names

    @property
    def health_servicer(self) -> health.aio.HealthServicer:
        """The health servicer, e.g. to report a service NOT_SERVING while a dependency is down."""
        return self._health

    @property
    def server(self) -> Any:
        """The running ``grpc.aio.Server``; raises ``RuntimeError`` before :meth:`start`."""
        if self._server is None:
            raise RuntimeError("server not started")
        return self._server

    @property
    def port(self) -> int:
        """The bound port; raises ``RuntimeError`` before :meth:`start`."""
        if self._port is None:
            raise RuntimeError("server not started")
        return self._port

    @property
    def started(self) -> bool:
        """True once :meth:`start` has bound and started the server."""
        return self._port is not None

    @property
    def shutdown_requested(self) -> bool:
        """True once a shutdown was requested (signal, request_shutdown or shutdown)."""
        return self._shutdown_requested.is_set()

    # -- lifecycle ----------------------------------------------------------------------

    def add_drain_callback(self, callback: Callable[[], object]) -> None:
        """Call ``callback()`` when the shutdown starts, as health turns NOT_SERVING and before
        the drain delay (ending long-lived streams cleanly is its use)."""
        self._drain_callbacks.append(callback)

    def add_shutdown_hook(
        self, hook: ShutdownHook, *, name: str | None = None, timeout: float | None = None
    ) -> None:
        """Run ``await hook()`` during shutdown, after the server stopped, in registration order.

        ``timeout`` (default: the runtime's ``hook_timeout_seconds``) bounds the hook; when it
        expires the hook is cancelled and logged as failed.
        """
        label = name or str(getattr(hook, "__qualname__", None) or repr(hook))
        self._hooks.append(_Hook(label, hook, self._hook_timeout if timeout is None else timeout))

    async def start(self) -> int:
        """Build, register, bind and start the server; mark everything SERVING; return the port.

        Raises ``RuntimeError`` when called twice or when the address cannot be bound.
        """
        if self._server is not None:
            raise RuntimeError("server already started")
        server = grpc.aio.server(options=self._options)
        registrar = WrappingRegistrar(server, self._wrappers)
        for register in self._registrars:
            register(registrar)
        health_pb2_grpc.add_HealthServicer_to_server(self._health, registrar)
        served_reflection.enable(registrar, (*self._service_names, HEALTH_SERVICE_NAME))
        address = _join_host_port(self._host, self._requested_port)
        try:
            port = server.add_insecure_port(address)
        except RuntimeError as exc:
            raise RuntimeError(f"cannot bind gRPC server to {address}: {exc}") from exc
        if not port:
            raise RuntimeError(f"cannot bind gRPC server to {address}")
        await server.start()
        precreate_server((*self._service_names, HEALTH_SERVICE_NAME))
        self._server = server
        self._port = int(port)
        self._loop_lag = asyncio.create_task(watch_loop_lag(), name="loop-lag")
        await self.set_serving(True)
        self._log.info(
            "grpc.server_started",
            address=_join_host_port(self._host, self._port),
            services=list(self._service_names),
        )
        return self._port

    async def set_serving(self, serving: bool, service: str | None = None) -> None:
        """Set the health of ``service`` (default: overall and every service) to
        SERVING/NOT_SERVING. Ignored once shutdown has begun (health stays NOT_SERVING)."""
        status = _SERVING if serving else _NOT_SERVING
        names = ("", *self._service_names) if service is None else (service,)
        for name in names:
            await self._health.set(name, status)

    def request_shutdown(self, reason: str = "requested") -> None:
        """Ask :meth:`run_until_shutdown` to shut down; returns at once. Safe from a signal
        handler installed with ``loop.add_signal_handler``; repeated requests are ignored."""
        if self._shutdown_requested.is_set():
            self._log.info("grpc.shutdown_request_ignored", reason=reason)
            return
        self._shutdown_reason = reason
        self._shutdown_requested.set()
        self._log.info("grpc.shutdown_requested", reason=reason)

    async def wait_for_shutdown_request(self) -> str:
        """Wait until a shutdown is requested; return its reason."""
        await self._shutdown_requested.wait()
        return self._shutdown_reason or "requested"

    async def run_until_shutdown(self) -> None:
        """Start if needed, wait for a shutdown request, then :meth:`shutdown`."""
        if not self.started:
            await self.start()
        await self.wait_for_shutdown_request()
        await self.shutdown()

    async def shutdown(self, reason: str = "requested") -> None:
        """Run the shutdown sequence (health NOT_SERVING → ``server.stop(grace)`` → hooks).

        Idempotent: concurrent and later calls wait for the same single run. Cancelling the
        caller does not interrupt the sequence. Works before :meth:`start` too (hooks only).
        """
        if not self._shutdown_requested.is_set():
            self.request_shutdown(reason)
        if self._shutdown_task is None:
            self._shutdown_task = asyncio.create_task(
                self._shutdown_sequence(), name="grpc-shutdown"
            )
        await asyncio.shield(self._shutdown_task)

    async def _shutdown_sequence(self) -> None:
        started = time.monotonic()
        await self._health.enter_graceful_shutdown()
        self._log.info("grpc.health_not_serving", drain_seconds=self._drain)
        for callback in self._drain_callbacks:
            try:
                callback()
            except Exception as exc:
                self._log.error("grpc.drain_callback_failed", error=repr(exc), exc_info=True)
        if self._drain > 0:
            # Still serving while NOT_SERVING: probes and load balancers see it and move
            # traffic away before new calls are refused.
            await asyncio.sleep(self._drain)
        if self._server is not None:
            await self._server.stop(self._grace)
            self._log.info(
                "grpc.server_stopped",
                grace_seconds=self._grace,
                elapsed_seconds=round(time.monotonic() - started, 3),
            )
        for hook in self._hooks:
            try:
                await asyncio.wait_for(hook.hook(), timeout=hook.timeout)
            except TimeoutError:
                self._log.error(
                    "grpc.shutdown_hook_failed",
                    hook=hook.name,
                    error=f"timed out after {hook.timeout} s",
                )
            except Exception as exc:
                self._log.error(
                    "grpc.shutdown_hook_failed", hook=hook.name, error=repr(exc), exc_info=True
                )
            else:
                self._log.info("grpc.shutdown_hook_done", hook=hook.name)
        await stop_task(self._loop_lag)
        self._log.info(
            "grpc.shutdown_complete",
            reason=self._shutdown_reason,
            elapsed_seconds=round(time.monotonic() - started, 3),
        )

    async def __aenter__(self) -> ServiceRuntime:
        await self.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.shutdown("context exit")


async def serve_until_signal(
    runtime: ServiceRuntime,
    *,
    signals: Sequence[signal.Signals] = (signal.SIGTERM, signal.SIGINT),
    on_ready: Callable[[int], object] | None = None,
) -> None:
    """Serve until one of ``signals`` arrives, then shut down gracefully and return.

    Installs the handlers first (so a signal during start-up is not lost), starts the runtime
    unless already started, calls ``on_ready(port)`` once the server is serving with the
    handlers in place, waits for a signal or :meth:`ServiceRuntime.request_shutdown`, runs
    :meth:`ServiceRuntime.shutdown` and restores the previous signal handling. Must run in the
    main thread (``loop.add_signal_handler``).
    """
    loop = asyncio.get_running_loop()
    installed: list[signal.Signals] = []
    try:
        for sig in signals:
            loop.add_signal_handler(sig, runtime.request_shutdown, f"signal {sig.name}")
            installed.append(sig)
        if not runtime.started:
            await runtime.start()
        if on_ready is not None:
            on_ready(runtime.port)
        await runtime.run_until_shutdown()
    finally:
        for sig in installed:
            loop.remove_signal_handler(sig)


def _join_host_port(host: str, port: int) -> str:
    if ":" in host and not host.startswith("["):
        host = f"[{host}]"
    return f"{host}:{port}"
