"""An isolated cluster of real processes for end-to-end tests: Redis, NATS (JetStream), the
table service, the timer service and two gateways, all separate processes, with metrics."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.cluster import ProcessCluster

TURN_S = 2.0
AWAY_S = 0.2
BREAK_S = 0.2

#: The end-to-end tests' cluster (see ``tests.support.cluster``).
E2ECluster = ProcessCluster


@pytest.fixture(scope="module")
def e2e() -> Iterator[ProcessCluster]:
    cluster = ProcessCluster.start(
        turn_s=TURN_S,
        away_s=AWAY_S,
        break_s=BREAK_S,
        gateways=2,
        metrics=True,
        extra_env={"DOMINOS_PRESENCE_LEASE_SECONDS": "1.5", "DOMINOS_LOG_LEVEL": "info"},
    )
    try:
        yield cluster
    finally:
        cluster.stop()
