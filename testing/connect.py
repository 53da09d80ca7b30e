"""Redis clients built as the services build theirs, for tests that act as a service."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable
from typing import Any

from services.common.connections import connect_redis
from services.common.settings import Settings

__all__ = ["service_clients"]


@contextlib.asynccontextmanager
async def service_clients(
    url_for: Callable[[str], str], *, cluster: bool = False
) -> AsyncIterator[Callable[[str], Any]]:
    """``connect(identity)`` gives a client as that identity (``connect_redis``; a Redis
    Cluster client with ``cluster``); every one is closed on exit."""
    clients: list[Any] = []

    def connect(identity: str) -> Any:
        client = connect_redis(Settings(redis_url=url_for(identity), redis_cluster=cluster))
        clients.append(client)
        return client

    try:
        yield connect
    finally:
        for client in clients:
            await client.aclose()
