"""The client tests' cluster: one real cluster of separate processes (Redis, NATS, table,
timer, gateway) for every test of tests/client that talks to one, with long turns (30 s) so
nothing is auto-played while a test looks."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest

from testing.cluster import ProcessCluster, clock_env
from tests.client.pilots import AWAY_S, BREAK_S, TURN_S, Bots


@pytest.fixture(scope="package")
def cluster() -> Iterator[ProcessCluster]:
    cluster = ProcessCluster.start(
        env={**clock_env(TURN_S, AWAY_S, BREAK_S), "DOMINOS_LOG_LEVEL": "warning"}
    )
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture
async def bots(cluster: ProcessCluster) -> AsyncIterator[Bots]:
    bots = Bots.connect(cluster.gateways[0].address)
    try:
        yield bots
    finally:
        await bots.close()
