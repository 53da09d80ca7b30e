"""A local Redis Cluster of three primaries (``testing.redis_cluster``) for the session, with
the services' ACL users, and clients of it built as the services build theirs."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import pytest
from redis.asyncio import Redis
from redis.asyncio.cluster import RedisCluster

from services.common.cluster_auth.secrets import ClusterSecrets
from testing.connect import service_clients
from testing.redis_cluster import RedisClusterServers
from tests.integration.timer.conftest import Cluster, _cluster


@pytest.fixture(scope="session")
def redis_cluster(
    tmp_path_factory: pytest.TempPathFactory, cluster_secrets: ClusterSecrets
) -> Iterator[RedisClusterServers]:
    servers = RedisClusterServers(cluster_secrets, tmp_path_factory.mktemp("redis-cluster"))
    servers.start()
    try:
        yield servers
    finally:
        servers.stop()


@pytest.fixture
async def cluster_admin(redis_cluster: RedisClusterServers) -> AsyncIterator[Any]:
    """An ``admin`` client of the cluster, on an empty cluster (every primary flushed)."""
    client = RedisCluster.from_url(redis_cluster.url_for("admin"))
    try:
        await client.flushall(target_nodes=RedisCluster.PRIMARIES)
        yield client
    finally:
        await client.aclose()


@pytest.fixture
async def cluster_connect(
    redis_cluster: RedisClusterServers, cluster_admin: Any
) -> AsyncIterator[Callable[[str], Any]]:
    """``cluster_connect("table")``: a Redis Cluster client as that identity, built by
    ``connect_redis`` with ``DOMINOS_REDIS_CLUSTER``; closed after the test."""
    async with service_clients(redis_cluster.url_for, cluster=True) as connect:
        yield connect


async def keys_per_node(redis_cluster: RedisClusterServers) -> list[int]:
    """How many keys each primary holds."""
    counts = []
    for node in redis_cluster.nodes:
        client = Redis.from_url(node.url_for("admin"))
        try:
            counts.append(int(await client.dbsize()))
        finally:
            await client.aclose()
    return counts


@pytest.fixture
async def timed_cluster(
    redis_cluster: RedisClusterServers, nats_server: Any, cluster_admin: Any, nats_client: Any
) -> AsyncIterator[Cluster]:
    """A table service and a timer service with short clocks, on the Redis Cluster."""
    async for services in _cluster(redis_cluster, nats_server, with_timer=True, redis_cluster=True):
        yield services
