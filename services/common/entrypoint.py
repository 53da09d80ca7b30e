"""The one way every service process starts: settings from the environment (parsed once),
JSON logs, the metrics endpoint, the gRPC server, and a graceful stop on SIGTERM/SIGINT."""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

import uvloop

from services.common.gc_pauses import watch_gc_pauses
from services.common.grpc_server import serve_until_signal
from services.common.logging import configure_logging, get_logger
from services.common.metrics import set_build_info, start_metrics_server
from services.common.settings import Settings

#: Garbage-collector thresholds of the services. A young collection walks every object
#: allocated since the last one and still alive, however many were freed meanwhile, and the
#: count that triggers it only grows by what is not freed (cycles: gRPC leaves one per call):
#: at 5,000 a gateway holding 2,400 streams walked ~25,000 objects per young collection
#: (10-20 ms) and its middle generation grew to a 100 ms walk (load bench, 600 tables, the
#: cluster on one core). At 1,000 young collections take 1-4 ms and the middle generation,
#: collected every 20 of them, 5-30 ms, for ~20 % more collector CPU (a few ms a second).
#: ``dominos_gc_pause_seconds`` shows them (:mod:`services.common.gc_pauses`).
GC_THRESHOLDS = (1_000, 20, 1_000)

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
        watch_gc_pauses()  # dominos_gc_pause_seconds: every collection's stall, by generation
        log.info("service.serving", port=port)
        await serve_until_signal(server.runtime)

    run_loop(settings.event_loop, serve())


def run_loop(event_loop: str, main: Coroutine[Any, Any, None]) -> None:
    """Run ``main`` to completion on the event loop named by ``DOMINOS_EVENT_LOOP``."""
    if event_loop == "uvloop":
        uvloop.run(main)
    else:
        asyncio.run(main)
