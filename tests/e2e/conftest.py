"""An isolated cluster of real processes for end-to-end tests: Redis, NATS (JetStream), the
table service, the timer service and two gateways, all separate processes."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

import pytest

from tests.support.servers import NatsServer, RedisServer
from tests.support.services import ServiceProcess

TURN_S = 2.0
AWAY_S = 0.2
BREAK_S = 0.2


@dataclass
class E2ECluster:
    """The processes of one end-to-end cluster."""

    redis: RedisServer
    nats: NatsServer
    env: dict[str, str]
    table: ServiceProcess
    timer: ServiceProcess
    gateways: list[ServiceProcess] = field(default_factory=list)

    def start_gateway(self) -> ServiceProcess:
        gateway = ServiceProcess(
            "services.gateway",
            {**self.env, "DOMINOS_TABLE_SERVICE_ADDR": self.table.address},
            metrics=True,
        ).start()
        self.gateways.append(gateway)
        return gateway


@pytest.fixture(scope="module")
def e2e() -> Iterator[E2ECluster]:
    redis = RedisServer()
    nats = NatsServer()
    redis.start()
    nats.start()
    env = {
        "DOMINOS_REDIS_URL": redis.url,
        "DOMINOS_NATS_URL": nats.url,
        "DOMINOS_TURN_SECONDS": str(TURN_S),
        "DOMINOS_AWAY_TURN_SECONDS": str(AWAY_S),
        "DOMINOS_ROUND_BREAK_SECONDS": str(BREAK_S),
        "DOMINOS_TIMER_RETRY_SECONDS": "0.5",
        "DOMINOS_TIMER_SWEEP_SECONDS": "0.25",
        "DOMINOS_PRESENCE_LEASE_SECONDS": "1.5",
        "DOMINOS_LOG_LEVEL": "info",
    }
    table = ServiceProcess("services.table", env, metrics=True).start()
    timer = ServiceProcess("services.timer", env, metrics=True).start()
    cluster = E2ECluster(redis, nats, env, table, timer)
    cluster.start_gateway()
    cluster.start_gateway()
    try:
        yield cluster
    finally:
        # The cluster's current processes: a test may have replaced the table or timer
        # service by a restarted one (the first ones are stopped too, if still running).
        for process in [*cluster.gateways, cluster.timer, cluster.table, timer, table]:
            process.stop()
        nats.stop()
        redis.stop()
        nats.cleanup()
        redis.cleanup()
