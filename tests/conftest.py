"""Shared fixtures: real Redis and NATS servers, started lazily once per test session.

- ``redis_server`` / ``nats_server`` (session): a :class:`RedisServer` (no persistence) and a
  :class:`NatsServer` (JetStream, file store) on free ports. They start the first time a test
  asks for them, so tests that don't use them never start a server, and stop at session end.
- ``redis_client`` (function): a ``redis.asyncio.Redis`` on ``redis_server`` whose server was
  flushed (``FLUSHALL``) just before the test; closed after it.
- ``nats_client`` (function): a connected ``nats.aio.client.Client`` on ``nats_server`` with
  every JetStream stream (and so every KV bucket) deleted before the test; closed after it.

The function-scoped clients first undo chaos a previous test may have left on the shared
servers (resume a paused server, start a killed one). Tests that kill, pause or restart a
server on purpose should rather create their own :class:`RedisServer` / :class:`NatsServer`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import nats
import pytest
import redis.asyncio as aioredis
from nats.aio.client import Client as NatsClient

from tests.support.servers import NatsServer, RedisServer


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    """A real redis-server for the whole session (see the module docstring)."""
    server = RedisServer(data_dir=tmp_path_factory.mktemp("redis"))
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def nats_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[NatsServer]:
    """A real nats-server with JetStream for the whole session."""
    server = NatsServer(data_dir=tmp_path_factory.mktemp("nats"))
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
async def redis_client(redis_server: RedisServer) -> AsyncIterator[aioredis.Redis]:
    """An asyncio Redis client on an empty ``redis_server``."""
    redis_server.ensure_running()
    client = aioredis.Redis.from_url(redis_server.url)
    try:
        await client.flushall()
        yield client
    finally:
        await client.aclose()


@pytest.fixture
async def nats_client(nats_server: NatsServer) -> AsyncIterator[NatsClient]:
    """A connected NATS client on ``nats_server`` with no JetStream streams left over."""
    nats_server.ensure_running()
    client = await nats.connect(
        nats_server.url,
        connect_timeout=2,
        reconnect_time_wait=0.1,
        name="pytest",
    )
    try:
        js = client.jetstream()
        for info in await js.streams_info():
            if info.config.name:
                await js.delete_stream(info.config.name)
        yield client
    finally:
        await client.close()
