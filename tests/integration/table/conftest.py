"""Fixtures: a real table service (in this process, port 0) on the session's Redis and NATS."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from services.common.settings import Settings
from services.table.server import create_server
from testing import limits
from testing.secrets import SESSION_SECRETS

from .client import TableClient


def table_settings(redis_url: str, nats_url: str, **overrides: Any) -> Settings:
    """Settings of a test table service: free port, no metrics endpoint."""
    base = Settings(
        grpc_host="127.0.0.1",
        grpc_port=0,
        metrics_port=-1,
        redis_url=redis_url,
        nats_url=nats_url,
        shutdown_grace_seconds=1,
        shutdown_drain_seconds=0,
        # The secrets of production: a random token secret, callers authenticated.
        token_secret=SESSION_SECRETS.token_secret,
        table_callers=SESSION_SECRETS.gateway_credential,
    )
    # Every test client is 127.0.0.1: per-address budgets off (test_limits.py sets them).
    base = limits.without_budgets(base, "table")
    return base.replace(**overrides) if overrides else base


@pytest.fixture
async def table_service(
    redis_server: Any, nats_server: Any, redis_client: Any, nats_client: Any
) -> AsyncIterator[tuple[Any, int]]:
    # No timer service here: breaks last 0 s so a test can deal the next round at once.
    settings = table_settings(
        redis_server.url_for("table"), nats_server.url_for("table"), round_break_seconds=0
    )
    server, port = await create_server(settings)
    yield server, port
    await server.stop()


@pytest.fixture
async def client(table_service: tuple[Any, int]) -> AsyncIterator[TableClient]:
    _, port = table_service
    c = TableClient(f"127.0.0.1:{port}")
    yield c
    await c.close()
