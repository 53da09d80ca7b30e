"""A cluster of real processes for end-to-end tests: Redis, NATS (JetStream), the table
service, the timer service and gateways, each its own process on free ports.

``ProcessCluster.start(turn_s=..., away_s=..., break_s=...)`` starts everything and waits
until every service answers its health check. Redis and NATS enforce the production users
and permissions, and each service connects as its own identity (``SESSION_SECRETS``).
``stop()`` stops the cluster's *current* processes (a test may have replaced one by a
restarted one) and removes the servers' data.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tests.support.secrets import SESSION_SECRETS
from tests.support.servers import NatsServer, RedisServer
from tests.support.services import ServiceProcess


@dataclass
class ProcessCluster:
    """The processes of one cluster; tests may replace ``table``/``timer`` by restarted ones."""

    redis: RedisServer
    nats: NatsServer
    env: dict[str, str]
    table: ServiceProcess
    timer: ServiceProcess
    metrics: bool = False
    gateways: list[ServiceProcess] = field(default_factory=list)
    #: Every service process started, replaced ones included (all are stopped at the end).
    started: list[ServiceProcess] = field(default_factory=list)

    @classmethod
    def start(
        cls,
        *,
        turn_s: float,
        away_s: float,
        break_s: float,
        gateways: int = 1,
        metrics: bool = False,
        extra_env: dict[str, str] | None = None,
    ) -> ProcessCluster:
        """Start Redis, NATS, the table and timer services and ``gateways`` gateways."""
        redis, nats = RedisServer(secrets=SESSION_SECRETS), NatsServer(secrets=SESSION_SECRETS)
        redis.start()
        nats.start()
        env = {
            "DOMINOS_TURN_SECONDS": str(turn_s),
            "DOMINOS_AWAY_TURN_SECONDS": str(away_s),
            "DOMINOS_ROUND_BREAK_SECONDS": str(break_s),
            "DOMINOS_TIMER_RETRY_SECONDS": "0.5",
            "DOMINOS_TIMER_SWEEP_SECONDS": "0.25",
            **(extra_env or {}),
        }
        table = ServiceProcess("services.table", _as(redis, nats, "table", env), metrics=metrics)
        timer = ServiceProcess("services.timer", _as(redis, nats, "timer", env), metrics=metrics)
        table.start()
        timer.start()
        cluster = cls(redis, nats, env, table, timer, metrics, started=[table, timer])
        for _ in range(gateways):
            cluster.start_gateway()
        return cluster

    def start_gateway(self, extra_env: dict[str, str] | None = None) -> ServiceProcess:
        """Start one more gateway in front of the table service (``extra_env``: its own
        settings on top of the cluster's)."""
        gateway = ServiceProcess(
            "services.gateway",
            {
                **_as(self.redis, self.nats, "gateway", self.env),
                "DOMINOS_TABLE_SERVICE_ADDR": self.table.address,
                **(extra_env or {}),
            },
            metrics=self.metrics,
        ).start()
        self.gateways.append(gateway)
        self.started.append(gateway)
        return gateway

    def restart(self, process: ServiceProcess) -> ServiceProcess:
        """A new process of the same service on the same port (the old one has stopped)."""
        service = process.module.rpartition(".")[2]
        env = _as(self.redis, self.nats, service, self.env)
        restarted = ServiceProcess(
            process.module, env, port=process.port, metrics=self.metrics
        ).start()
        self.started.append(restarted)
        return restarted

    def stop(self) -> None:
        """Stop every service process (gateways first), then the servers; remove their data."""
        for process in [*self.gateways, self.timer, self.table, *reversed(self.started)]:
            process.stop()
        self.nats.stop()
        self.redis.stop()
        self.nats.cleanup()
        self.redis.cleanup()


def _as(redis: RedisServer, nats: NatsServer, service: str, env: dict[str, str]) -> dict[str, str]:
    """``env`` plus the Redis and NATS URLs of ``service``'s own identity."""
    return {
        **env,
        "DOMINOS_REDIS_URL": redis.url_for(service),
        "DOMINOS_NATS_URL": nats.url_for(service),
    }
