"""The web edge's HTTP server: uvicorn (HTTP/1.1, httptools) in the gateway's event loop, its
connections bounded by :class:`~services.gateway.web.protocol.EdgeProtocol`.

:meth:`WebEdge.start` binds ``DOMINOS_WEB_HOST``:``DOMINOS_WEB_PORT`` (0: a free port) and
returns the port; :meth:`WebEdge.drain` turns ``/healthz`` to 503 when the gateway starts
draining; :meth:`WebEdge.stop` stops accepting, asks open connections to close and gives the
calls in flight the shutdown grace. The gateway's signal handling stays the gateway's: uvicorn
installs none.

The client address the caps and budgets count is the connection's, or, when the connection
comes from one of ``DOMINOS_WEB_TRUSTED_PROXIES`` (the Ingress), the last address its
``X-Forwarded-For`` adds (:mod:`~services.gateway.web.guard`); a header from anyone else is
ignored, so a browser cannot pose as another address.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import Generator
from typing import Any

import uvicorn

from services.common.logging import get_logger
from services.common.settings import Settings
from services.gateway import metrics
from services.gateway.web.app import web_app
from services.gateway.web.protocol import EdgeLimits, OpenConnections, edge_protocol, networks

__all__ = ["WebEdge"]

log = get_logger(__name__)


class _Server(uvicorn.Server):
    """A uvicorn server that leaves signals to its host process."""

    @contextlib.contextmanager
    def capture_signals(self) -> Generator[None, None, None]:
        yield


def _listen(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(1024)
    sock.setblocking(False)
    return sock


class WebEdge:
    """The web edge of one gateway process."""

    def __init__(self, settings: Settings, servicer: Any) -> None:
        self._settings = settings
        self._draining = False
        proxies = networks(settings.web_trusted_proxies)
        app = web_app(
            servicer,
            root=settings.web_root,
            allowed_origins=tuple(o for o in settings.web_allowed_origins.split(",") if o),
            serving=lambda: not self._draining,
            max_requests=settings.web_max_requests,
            trusted_proxies=proxies,
        )
        #: The open connections of each client address (the per-address cap).
        self.connections = OpenConnections(settings.connections_per_address)
        metrics.WEB_CONNECTIONS.set_function(self.connections.total)
        limits = EdgeLimits(
            max_head_bytes=settings.web_max_head_bytes,
            head_timeout_s=settings.web_head_timeout_seconds,
            body_timeout_s=settings.web_body_timeout_seconds,
            idle_s=settings.max_connection_idle_seconds,
            trusted_proxies=proxies,
        )
        self._config = uvicorn.Config(
            app,
            loop="none",
            http=edge_protocol(limits, self.connections),
            lifespan="off",
            log_config=None,
            access_log=False,
            server_header=False,
            # X-Forwarded-For is read by the request guard, from trusted proxies only.
            proxy_headers=False,
            timeout_keep_alive=max(1, int(settings.max_connection_idle_seconds)),
            timeout_graceful_shutdown=max(1, int(settings.shutdown_grace_seconds)),
        )
        self._server = _Server(self._config)
        self._socket: socket.socket | None = None
        self._loop_task: asyncio.Task[None] | None = None

    async def start(self) -> int:
        """Listen and serve; the bound port."""
        self._socket = _listen(self._settings.web_host, self._settings.web_port)
        if not self._config.loaded:
            self._config.load()
        self._server.lifespan = self._config.lifespan_class(self._config)
        await self._server.startup(sockets=[self._socket])
        self._loop_task = asyncio.create_task(self._server.main_loop(), name="web-edge")
        port = int(self._socket.getsockname()[1])
        log.info("gateway.web_started", port=port)
        return port

    def drain(self) -> None:
        """The gateway drains: ``/healthz`` answers 503 from now on."""
        self._draining = True

    async def stop(self) -> None:
        """Stop serving (idempotent)."""
        if self._loop_task is None:
            return
        self._server.should_exit = True
        task, self._loop_task = self._loop_task, None
        await task
        await self._server.shutdown(sockets=[self._socket] if self._socket else None)
        log.info("gateway.web_stopped")
