"""The one way every service process starts: settings from the environment (parsed once),
JSON logs, the metrics endpoint, the gRPC server, and a graceful stop on SIGTERM/SIGINT."""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

import uvloop

from services.common.grpc_server import serve_until_signal
from services.common.logging import configure_logging, get_logger
from services.common.metrics import set_build_info, start_metrics_server
from services.common.settings import Settings

#: Garbage-collector thresholds of the services. Fewer young collections than the default
#: (700) save CPU, but a young generation of 50,000 objects took 10-20 ms to scan, a stall of
#: every stream of a gateway (load bench, 1,000 tables: p99.9 39.6 ms); at 5,000 the p99.9 is
#: 18.9 ms for the same CPU per command.
GC_THRESHOLDS = (5_000, 50, 1_000)

ServerFactory = Callable[[Settings], Awaitable[tuple[Any, int]]]


def run_service(service: str, create_server: ServerFactory) -> None:
    """Run ``create_server(settings)`` until a signal, as the process of ``service``.

    The server object must expose the ``runtime`` (a ``ServiceRuntime``) it serves with.
    """
    settings = Settings.from_env()
    configure_logging(settings.log_level, service)
    log = get_logger(__name__)
    for name in Settings.unknown_variables():
        log.warning("settings.unknown_variable", variable=name)
    set_build_info(service)
    metrics_port = start_metrics_server(settings.metrics_port, addr=settings.metrics_host)
    log.info("service.starting", metrics_port=metrics_port, settings=settings.public_dict())

    async def serve() -> None:
        server, port = await create_server(settings)
        # Long-lived objects (modules, servers, connections) leave the collector's scans,
        # and collections run less often: a service holds many long-lived coroutines.
        gc.freeze()
        gc.set_threshold(*GC_THRESHOLDS)
        log.info("service.serving", port=port)
        await serve_until_signal(server.runtime)

    run_loop(settings.event_loop, serve())


def run_loop(event_loop: str, main: Coroutine[Any, Any, None]) -> None:
    """Run ``main`` to completion on the event loop named by ``DOMINOS_EVENT_LOOP``."""
    if event_loop == "uvloop":
        uvloop.run(main)
    else:
        asyncio.run(main)
