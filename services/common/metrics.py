"""Prometheus exposition: the ``/metrics`` HTTP endpoint of a service and its build info.

Domain metrics (``dominos_..._total`` counters, ``_seconds`` histograms) live next to the code
they measure; this module only starts the endpoint and publishes ``dominos_build_info``, a
gauge fixed at 1 whose ``service`` and ``version`` labels identify what is running (the usual
Prometheus "info" pattern, joinable onto any other series). Importing it turns off the
``*_created`` series of every metric (see :func:`prometheus_client.disable_created_metrics`).
"""

from __future__ import annotations

import threading
from importlib import metadata
from typing import Final
from wsgiref.simple_server import WSGIServer

from prometheus_client import (
    REGISTRY,
    CollectorRegistry,
    Gauge,
    disable_created_metrics,
    start_http_server,
)

# No `<counter>_created` / `<histogram>_created` series: Prometheus does not use them (it
# detects counter resets by itself) and they doubled the table service's series. The flag is
# read at every scrape, so metrics defined before or after this import alike lose them.
disable_created_metrics()  # type: ignore[no-untyped-call]

__all__ = [
    "BUILD_INFO",
    "DISABLED",
    "package_version",
    "set_build_info",
    "start_metrics_server",
    "stop_metrics_servers",
]

DISABLED: Final = -1
"""Port value meaning "no metrics endpoint" (``DOMINOS_METRICS_PORT=-1``)."""

BUILD_INFO: Final = Gauge(
    "dominos_build_info",
    "Always 1; the labels identify the running service and its version.",
    ["service", "version"],
)

_servers: list[tuple[WSGIServer, threading.Thread]] = []
_servers_lock = threading.Lock()


def package_version() -> str:
    """Installed version of the ``dominos-cluster`` distribution, or ``"unknown"``."""
    try:
        return metadata.version("dominos-cluster")
    except metadata.PackageNotFoundError:
        return "unknown"


def set_build_info(service: str, version: str | None = None) -> None:
    """Publish ``dominos_build_info{service=..., version=...} 1`` (version: the package's)."""
    BUILD_INFO.labels(service=service, version=version or package_version()).set(1)


def start_metrics_server(
    port: int, *, addr: str = "0.0.0.0", registry: CollectorRegistry = REGISTRY
) -> int:
    """Serve ``registry`` at ``http://addr:port/metrics`` from a daemon thread.

    ``port`` 0 binds a free port; -1 (:data:`DISABLED`) starts nothing. Returns the bound port,
    or -1 when disabled. Raises ``OSError`` when the port cannot be bound and ``ValueError``
    for a port below -1.
    """
    if port == DISABLED:
        return DISABLED
    if port < 0:
        raise ValueError(f"metrics port must be -1, 0 or a port number, got {port}")
    server, thread = start_http_server(port, addr=addr, registry=registry)
    with _servers_lock:
        _servers.append((server, thread))
    return int(server.server_port)


def stop_metrics_servers() -> None:
    """Shut down every endpoint started by :func:`start_metrics_server` (for tests)."""
    with _servers_lock:
        servers = list(_servers)
        _servers.clear()
    for server, thread in servers:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
