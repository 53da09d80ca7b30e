"""Fixtures: a table service and a timer service with shortened clocks (D8)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import pytest

from services.common.settings import Settings
from services.table.server import TableServer
from services.table.server import create_server as create_table_server
from services.timer.server import TimerServer
from services.timer.server import create_server as create_timer_server
from tests.integration.table.client import TableClient
from tests.integration.table.conftest import table_settings

SHORT = {
    "turn_seconds": 0.4,
    "away_turn_seconds": 0.1,
    "round_break_seconds": 0.2,
    "timer_retry_seconds": 0.3,
    "timer_sweep_seconds": 0.2,
}


def short_settings(
    redis_server: Any, nats_server: Any, *, identity: str = "table", **overrides: Any
) -> Settings:
    """Settings with 400 ms turns, 100 ms away turns, 200 ms breaks, 300 ms retries, for the
    service ``identity`` (its NATS and Redis user)."""
    nats_url = nats_server.url_for(identity)
    return table_settings(redis_server.url_for(identity), nats_url, **{**SHORT, **overrides})


def short_env(redis_server: Any, nats_server: Any, *, identity: str = "timer") -> dict[str, str]:
    """The same settings as environment variables, for service processes (``identity``:
    the service's NATS and Redis user)."""
    return {
        "DOMINOS_REDIS_URL": redis_server.url_for(identity),
        "DOMINOS_NATS_URL": nats_server.url_for(identity),
        "DOMINOS_TURN_SECONDS": "0.4",
        "DOMINOS_AWAY_TURN_SECONDS": "0.1",
        "DOMINOS_ROUND_BREAK_SECONDS": "0.2",
        "DOMINOS_TIMER_RETRY_SECONDS": "0.3",
        "DOMINOS_TIMER_SWEEP_SECONDS": "0.2",
    }


@dataclass
class Cluster:
    """A table service, optionally a timer service, and a client of the table service."""

    #: The table service's settings.
    settings: Settings
    #: The timer service's: the same but its own NATS user.
    timer_settings: Settings
    table: TableServer
    timer: TimerServer | None
    client: TableClient

    async def start_timer(self) -> TimerServer:
        self.timer, _ = await create_timer_server(self.timer_settings)
        return self.timer

    async def stop_timer(self) -> None:
        if self.timer is not None:
            await self.timer.stop()
            self.timer = None


async def _cluster(
    redis_server: Any,
    nats_server: Any,
    *,
    with_timer: bool,
    redis_cluster: bool = False,
    **overrides: Any,
) -> AsyncIterator[Cluster]:
    """The services on ``redis_server`` (a Redis Cluster's nodes with ``redis_cluster``),
    with the settings ``overrides`` on top of the short clocks."""
    settings = short_settings(redis_server, nats_server, redis_cluster=redis_cluster, **overrides)
    timer_settings = short_settings(
        redis_server, nats_server, identity="timer", redis_cluster=redis_cluster, **overrides
    )
    table, port = await create_table_server(settings)
    timer = (await create_timer_server(timer_settings))[0] if with_timer else None
    client = TableClient(f"127.0.0.1:{port}")
    cluster = Cluster(settings, timer_settings, table, timer, client)
    try:
        yield cluster
    finally:
        await client.close()
        await cluster.stop_timer()
        await table.stop()


@pytest.fixture
async def cluster(
    redis_server: Any, nats_server: Any, redis_client: Any, nats_client: Any
) -> AsyncIterator[Cluster]:
    async for c in _cluster(redis_server, nats_server, with_timer=True):
        yield c


@pytest.fixture
async def table_only(
    redis_server: Any, nats_server: Any, redis_client: Any, nats_client: Any
) -> AsyncIterator[Cluster]:
    async for c in _cluster(redis_server, nats_server, with_timer=False):
        yield c
