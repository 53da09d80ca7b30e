"""Connections to Redis and NATS, the same for every service, with their health metrics.

NATS reconnects forever (the bus must come back by itself after a restart); every
disconnection, reconnection and asynchronous error is counted. Redis errors are counted by
the code that meets them (:data:`DEPENDENCY_ERRORS`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import nats
from nats.aio.client import Client as NatsClient
from prometheus_client import Counter
from redis.asyncio import BlockingConnectionPool, Redis

from services.common.logging import get_logger
from services.common.settings import Settings

DEPENDENCY_ERRORS = Counter(
    "dominos_dependency_errors_total",
    "Errors talking to Redis or NATS, by dependency.",
    ["dependency"],
)
NATS_RECONNECTS = Counter("dominos_nats_reconnects_total", "Reconnections to NATS.")
NATS_DISCONNECTS = Counter("dominos_nats_disconnects_total", "Disconnections from NATS.")

log = get_logger(__name__)


#: Client pings to the NATS server (seconds between pings, unanswered pings before the
#: connection counts as dead).
NATS_PING_INTERVAL_S = 5
NATS_MAX_OUTSTANDING_PINGS = 2


async def connect_nats(
    settings: Settings, name: str, *, reconnected: Callable[[], Awaitable[None]] | None = None
) -> NatsClient:
    """A NATS connection that reconnects forever; ``reconnected`` runs after each reconnection."""

    async def on_disconnected() -> None:
        NATS_DISCONNECTS.inc()
        log.warning("nats.disconnected")

    async def on_reconnected() -> None:
        NATS_RECONNECTS.inc()
        log.info("nats.reconnected")
        if reconnected is not None:
            await reconnected()

    async def on_error(error: Exception) -> None:
        DEPENDENCY_ERRORS.labels("nats").inc()
        log.warning("nats.error", error=repr(error))

    return await nats.connect(
        servers=settings.nats_servers,
        name=name,
        max_reconnect_attempts=-1,
        reconnect_time_wait=0.5,
        # A silently dead connection (peer vanished, no RST) is noticed after two unanswered
        # pings, 10-15 s, then replaced; nats-py's default (120 s pings) took 4-6 minutes.
        ping_interval=NATS_PING_INTERVAL_S,
        max_outstanding_pings=NATS_MAX_OUTSTANDING_PINGS,
        allow_reconnect=True,
        disconnected_cb=on_disconnected,
        reconnected_cb=on_reconnected,
        error_cb=on_error,
    )


#: Connections a process may open to Redis; beyond, a command waits for a free one.
REDIS_POOL_SIZE = 64
#: How long a command waits for a free connection before failing (seconds).
REDIS_POOL_WAIT_S = 5.0
#: How long one Redis command may wait for its answer, and a connection for its handshake,
#: before the connection is dropped (our commands are short scripts: a longer wait means a
#: dead or frozen server, and the command fails as a dependency error instead of hanging).
REDIS_SOCKET_TIMEOUT_S = 5.0
REDIS_CONNECT_TIMEOUT_S = 2.0


def connect_redis(settings: Settings) -> Redis:
    """A Redis client (bytes responses, keepalive, periodic health checks) whose pool waits
    for a free connection instead of failing when all are busy."""
    pool = BlockingConnectionPool.from_url(
        settings.redis_url,
        max_connections=REDIS_POOL_SIZE,
        timeout=REDIS_POOL_WAIT_S,
        decode_responses=False,
        health_check_interval=10,
        socket_keepalive=True,
        socket_timeout=REDIS_SOCKET_TIMEOUT_S,
        socket_connect_timeout=REDIS_CONNECT_TIMEOUT_S,
    )
    client: Any = Redis(connection_pool=pool)
    return client  # type: ignore[no-any-return]
