"""An isolated cluster of real processes for end-to-end tests: Redis, NATS (JetStream), the
table service, the timer service and two gateways, all separate processes, with metrics."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from testing.cluster import ProcessCluster, clock_env

TURN_S = 2.0
AWAY_S = 0.2
BREAK_S = 0.2

#: The end-to-end tests' cluster (see ``testing.cluster``).
E2ECluster = ProcessCluster


@pytest.fixture(scope="module")
def e2e() -> Iterator[ProcessCluster]:
    cluster = ProcessCluster.start(
        env={
            **clock_env(TURN_S, AWAY_S, BREAK_S),
            "DOMINOS_PRESENCE_LEASE_SECONDS": "1.5",
            "DOMINOS_LOG_LEVEL": "info",
        },
        gateways=2,
        metrics=True,
    )
    try:
        yield cluster
    finally:
        cluster.stop()
