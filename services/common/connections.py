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
        allow_reconnect=True,
        disconnected_cb=on_disconnected,
        reconnected_cb=on_reconnected,
        error_cb=on_error,
    )


#: Connections a process may open to Redis; beyond, a command waits for a free one.
REDIS_POOL_SIZE = 64
#: How long a command waits for a free connection before failing (seconds).
REDIS_POOL_WAIT_S = 5.0


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
    )
    client: Any = Redis(connection_pool=pool)
    return client  # type: ignore[no-any-return]
