"""Shared fixtures: real Redis and NATS servers, started lazily once per test session.

- ``cluster_secrets`` (session): the session's :class:`ClusterSecrets` (the same object as
  ``testing.secrets.SESSION_SECRETS``, so service processes agree with the servers).
- ``redis_server`` / ``nats_server`` (session): a :class:`RedisServer` (no persistence; with
  ``cluster_secrets``: the production ACL users, ``default`` off; connect with
  ``redis_server.url_for(identity)``) and a
  :class:`NatsServer` (JetStream, file store; with ``cluster_secrets``: one user per
  identity with its production permissions, no anonymous access; connect with
  ``nats_server.url_for(identity)``) on free ports. They start the first time a test
  asks for them, so tests that don't use them never start a server, and stop at session end.
- ``redis_client`` (function): a ``redis.asyncio.Redis`` on ``redis_server``, as ``admin``
  (every right), whose server was flushed (``FLUSHALL``) just before the test; closed after it.
- ``redis_connect`` (function): ``redis_connect("timer")`` is a client of ``redis_server`` as
  that identity, built like the services' (``connect_redis``); closed after the test.
- ``nats_client`` (function): a connected ``nats.aio.client.Client`` on ``nats_server``, as
  ``admin`` (every right), with every JetStream stream (and so every KV bucket) deleted
  before the test; closed after it.
- ``nats_connect`` (function): ``await nats_connect("gateway", **options)`` connects to
  ``nats_server`` as that identity (its production permissions); closed after the test.

The function-scoped clients first undo chaos a previous test may have left on the shared
servers (resume a paused server, start a killed one). Tests that kill, pause or restart a
server on purpose should rather create their own :class:`RedisServer` / :class:`NatsServer`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import nats
import pytest
import redis.asyncio as aioredis
from nats.aio.client import Client as NatsClient

from services.common.bus import reply_inbox_prefix
from services.common.cluster_auth.secrets import ADMIN, ClusterSecrets
from testing.connect import service_clients
from testing.secrets import SESSION_SECRETS
from testing.servers import NatsServer, RedisServer


@pytest.fixture(scope="session")
def redis_server(
    tmp_path_factory: pytest.TempPathFactory, cluster_secrets: ClusterSecrets
) -> Iterator[RedisServer]:
    """A real redis-server with the cluster's ACL users for the whole session (see the
    module docstring)."""
    server = RedisServer(data_dir=tmp_path_factory.mktemp("redis"), secrets=cluster_secrets)
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def cluster_secrets() -> ClusterSecrets:
    """The secrets of the session's servers and services."""
    return SESSION_SECRETS


@pytest.fixture(scope="session")
def nats_server(
    tmp_path_factory: pytest.TempPathFactory, cluster_secrets: ClusterSecrets
) -> Iterator[NatsServer]:
    """A real nats-server with JetStream and the cluster's users for the whole session."""
    server = NatsServer(data_dir=tmp_path_factory.mktemp("nats"), secrets=cluster_secrets)
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def nats_proc(tmp_path: Path) -> Iterator[NatsServer]:
    """A private nats-server with JetStream, started, for a test that freezes it."""
    server = NatsServer(data_dir=tmp_path / "nats")
    server.start()
    yield server
    server.stop(timeout=5)


@pytest.fixture
async def redis_client(redis_server: RedisServer) -> AsyncIterator[aioredis.Redis]:
    """An asyncio Redis client (``admin``) on an empty ``redis_server``."""
    redis_server.ensure_running()
    client = aioredis.Redis.from_url(redis_server.url_for("admin"))
    try:
        await client.flushall()
        yield client
    finally:
        await client.aclose()


@pytest.fixture
async def redis_connect(
    redis_server: RedisServer, redis_client: aioredis.Redis
) -> AsyncIterator[Callable[[str], aioredis.Redis]]:
    """``redis_connect("gateway")``: a client of ``redis_server`` as that identity, built as
    the services build theirs (``connect_redis``); every one is closed after the test. The
    server was flushed (``redis_client``)."""
    async with service_clients(redis_server.url_for) as connect:
        yield connect


@pytest.fixture
async def nats_client(nats_server: NatsServer) -> AsyncIterator[NatsClient]:
    """A connected NATS client (``admin``) on ``nats_server`` with no JetStream streams left
    over."""
    nats_server.ensure_running()
    client = await nats.connect(
        nats_server.url_for("admin"),
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


@pytest.fixture
async def nats_connect(
    nats_server: NatsServer,
) -> AsyncIterator[Callable[..., Awaitable[NatsClient]]]:
    """Connects to ``nats_server`` as an identity (``table``, ``timer``, ``gateway``,
    ``admin``), with nats-py ``options``; every connection is closed after the test. A
    service identity's inboxes have its prefix, as the services' own connections
    (``connect_nats``)."""
    nats_server.ensure_running()
    clients: list[NatsClient] = []

    async def connect(identity: str, **options: Any) -> NatsClient:
        settings: dict[str, Any] = {
            "connect_timeout": 2,
            "reconnect_time_wait": 0.1,
            "name": f"pytest-{identity}",
            **({"inbox_prefix": reply_inbox_prefix(identity)} if identity != ADMIN else {}),
            **options,
        }
        client = await nats.connect(nats_server.url_for(identity), **settings)
        clients.append(client)
        return client

    try:
        yield connect
    finally:
        for client in clients:
            await client.close()
