"""The services' Redis Cluster client (``services.common.connections``): a pipeline is
timed as one command, as on a single Redis (redis-py's cluster pipeline holds a reference
cycle of its own, with its execution strategy: it is left to the collector)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from redis.exceptions import RedisClusterException

from tests.integration.common.test_connections import _pipeline_freed_by_reference_count


async def test_a_cluster_pipeline_is_timed_as_one_command(
    cluster_connect: Callable[[str], Any],
) -> None:
    await _pipeline_freed_by_reference_count(cluster_connect("table"), freed=False)


async def test_a_cluster_pipeline_refuses_a_shard_hint(
    cluster_connect: Callable[[str], Any],
) -> None:
    with pytest.raises(RedisClusterException):
        cluster_connect("table").pipeline(shard_hint="a")
