"""A cluster of real processes: Redis, NATS (JetStream) and any number of table-service,
timer-service, gateway and bots-service replicas, each its own process on free ports. The
end-to-end tests, the chaos suite and the benchmarks all run on it.

``ProcessCluster.start(env=..., tables=1, timers=1, gateways=1)`` starts Redis (unless given
one) and NATS, then every replica in parallel, and returns once every one answers its health
check (whatever got started is stopped again when something fails). Redis and NATS enforce
the production users and permissions and each replica connects as its own identity
(``SESSION_SECRETS``). ``env`` goes to every replica (:func:`clock_env` sets the game's
clocks, :data:`FAST_ENV` is the chaos suite's), ``role_env`` adds variables per role, and a
gateway or a bots replica reaches the cluster's table replicas.

A replica is a :class:`~testing.services.ServiceProcess`: it can be killed, restarted on the
same port (``restart``), frozen and thawed (``pause``/``resume``); :meth:`ProcessCluster.replace`
starts a new process of the same service on the same port in its place instead.
:meth:`ProcessCluster.stop` stops every process ever started (gateways first, frozen ones
thawed) and removes the servers' data.

Every blocking method here blocks the calling thread; async tests call them through
``asyncio.to_thread`` so that their players keep running meanwhile.
"""

from __future__ import annotations

import contextlib
import json
import signal
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from testing.secrets import SESSION_SECRETS
from testing.servers import NatsServer, RedisServer
from testing.services import ServiceProcess

Role = Literal["table", "timer", "gateway", "bots"]

#: Seconds a replica has to answer its health check once launched.
START_TIMEOUT_S = 30.0
#: Log levels :meth:`ProcessCluster.log_problems` counts.
PROBLEM_LEVELS = ("warning", "error", "critical")


def clock_env(turn_s: float, away_s: float, break_s: float) -> dict[str, str]:
    """The turn, away-turn and round-break clocks (seconds), and a timer service that retries
    and sweeps often enough for them."""
    return {
        "DOMINOS_TURN_SECONDS": str(turn_s),
        "DOMINOS_AWAY_TURN_SECONDS": str(away_s),
        "DOMINOS_ROUND_BREAK_SECONDS": str(break_s),
        "DOMINOS_TIMER_RETRY_SECONDS": "0.5",
        "DOMINOS_TIMER_SWEEP_SECONDS": "0.25",
    }


#: Clocks short enough for many whole games in a test, long enough for real play.
FAST_ENV: dict[str, str] = {
    **clock_env(2, 0.3, 0.2),
    "DOMINOS_PRESENCE_LEASE_SECONDS": "1.5",
    "DOMINOS_LOG_LEVEL": "info",
}


@dataclass(frozen=True, slots=True)
class Pids:
    """The process ids of a cluster of one replica per role."""

    gateway: int
    table: int
    timer: int
    redis: int
    nats: int

    def by_name(self) -> dict[str, int]:
        """``{"gateway": pid, ...}``."""
        return {name: getattr(self, name) for name in self.__slots__}


@dataclass
class ProcessCluster:
    """Redis, NATS and the service replicas; see the module docstring."""

    redis: RedisServer
    nats: NatsServer
    #: Every replica's environment (on top of its own Redis and NATS URLs).
    env: dict[str, str]
    metrics: bool = False
    role_env: dict[str, dict[str, str]] = field(default_factory=dict)
    #: The replicas that make up the cluster now, in start order.
    replicas: list[ServiceProcess] = field(default_factory=list)
    #: Every service process started, replaced and removed ones included (all are stopped).
    started: list[ServiceProcess] = field(default_factory=list)
    _marks: dict[Path, int] = field(default_factory=dict)

    @classmethod
    def start(
        cls,
        *,
        env: Mapping[str, str] | None = None,
        tables: int = 1,
        timers: int = 1,
        gateways: int = 1,
        bots: int = 0,
        metrics: bool = False,
        redis: RedisServer | None = None,
        nats_binary: str | None = None,
        redis_url: str | None = None,
        nats_url: str | None = None,
        role_env: Mapping[str, Mapping[str, str]] | None = None,
    ) -> ProcessCluster:
        """Start Redis (unless ``redis`` runs already) and NATS, then every replica.

        ``metrics``: every replica serves its Prometheus page (``ServiceProcess.scrape``).
        ``redis_url``/``nats_url`` override what the replicas connect to (the same URL, with
        its credentials, for every role; by default each role connects as its own Redis and
        NATS user, see ``RedisServer.url_for`` and :meth:`nats_url_for`); ``role_env`` adds
        variables per role (e.g. a fault proxy in front of Redis for the timer service only).
        """
        base = {
            **({"DOMINOS_REDIS_URL": redis_url} if redis_url else {}),
            **({"DOMINOS_NATS_URL": nats_url} if nats_url else {}),
            **(env or {}),
        }
        cluster = cls(
            redis or RedisServer(secrets=SESSION_SECRETS),
            NatsServer(binary=nats_binary, secrets=SESSION_SECRETS),
            base,
            metrics,
            {role: dict(extra) for role, extra in (role_env or {}).items()},
        )
        try:
            if not cluster.redis.running:
                cluster.redis.start()
            cluster.nats.start()
            table_replicas = [cluster._replica("table") for _ in range(tables)]
            target = cls.table_target(table_replicas)
            cluster._start_all(
                [
                    *table_replicas,
                    *(cluster._replica("timer") for _ in range(timers)),
                    *(cluster._replica("gateway", table_target=target) for _ in range(gateways)),
                    *(cluster._replica("bots", table_target=target) for _ in range(bots)),
                ]
            )
        except BaseException:
            cluster.stop()
            raise
        return cluster

    # -- replicas --------------------------------------------------------------------------

    def _env(self, role: str, table_target: str | None = None) -> dict[str, str]:
        """What a replica of ``role`` gets: its own URLs, the cluster's environment, (for a
        gateway) the table replicas' target, the role's own variables."""
        calls_tables = role in ("gateway", "bots")
        if calls_tables:
            table_target = table_target or self.table_target(self.tables)
        return {
            "DOMINOS_REDIS_URL": self.redis.url_for(role),
            "DOMINOS_NATS_URL": self.nats_url_for(role),
            **self.env,
            **({"DOMINOS_TABLE_SERVICE_ADDR": table_target} if calls_tables else {}),
            **self.role_env.get(role, {}),
        }

    def _replica(
        self, role: str, extra: Mapping[str, str] | None = None, *, table_target: str | None = None
    ) -> ServiceProcess:
        env = {**self._env(role, table_target), **(extra or {})}
        return ServiceProcess(f"services.{role}", env, metrics=self.metrics)

    def _start_all(self, replicas: Sequence[ServiceProcess]) -> None:
        self.replicas.extend(replicas)
        self.started.extend(replicas)
        each(replicas, lambda replica: replica.start(START_TIMEOUT_S))

    def add(self, role: Role, extra_env: Mapping[str, str] | None = None) -> ServiceProcess:
        """Start one more replica (``extra_env``: its own variables on top of the cluster's;
        a gateway reaches the table replicas unless ``DOMINOS_TABLE_SERVICE_ADDR`` is set)."""
        replica = self._replica(role, extra_env)
        self._start_all([replica])
        return replica

    def replace(self, process: ServiceProcess) -> ServiceProcess:
        """A new process of the same service on the same port (the old one has ended) takes
        the place of ``process`` in the cluster; returns it once it is SERVING."""
        replacement = ServiceProcess(
            process.module,
            self._env(process.role),
            port=process.port,
            metrics=self.metrics,
            web_port=process.web_port if process.web_port > 0 else None,
        )
        self.started.append(replacement)
        replacement.start()
        self.replicas[self.replicas.index(process)] = replacement
        return replacement

    @staticmethod
    def table_target(replicas: Sequence[ServiceProcess]) -> str:
        """The gRPC target gateways use to reach the table-service replicas."""
        if len(replicas) == 1:
            return replicas[0].address
        return "ipv4:" + ",".join(r.address for r in replicas)

    def of(self, role: str) -> list[ServiceProcess]:
        """The replicas of a role, in start order."""
        return [r for r in self.replicas if r.role == role]

    @property
    def tables(self) -> list[ServiceProcess]:
        """Table-service replicas."""
        return self.of("table")

    @property
    def timers(self) -> list[ServiceProcess]:
        """Timer-service replicas."""
        return self.of("timer")

    @property
    def gateways(self) -> list[ServiceProcess]:
        """Gateway replicas."""
        return self.of("gateway")

    @property
    def bots(self) -> list[ServiceProcess]:
        """Bots-service replicas (none unless asked for: ``start(bots=N)``)."""
        return self.of("bots")

    @property
    def table(self) -> ServiceProcess:
        """The first table-service replica."""
        return self.tables[0]

    @property
    def timer(self) -> ServiceProcess:
        """The first timer-service replica."""
        return self.timers[0]

    @property
    def gateway_address(self) -> str:
        """Where clients connect: the first gateway."""
        return self.gateways[0].address

    @property
    def web_url(self) -> str:
        """Where browsers connect: the first gateway's web edge (``http://127.0.0.1:port``)."""
        return self.gateways[0].web_url

    def gateway_addresses(self) -> list[str]:
        """Addresses of the gateways that run now."""
        return [g.address for g in self.gateways if g.alive]

    def nats_url_for(self, role: str, address: str | None = None) -> str:
        """The NATS URL of ``role`` (its own user), at the server or at ``address``
        (``host:port``, e.g. a fault proxy in front of the server)."""
        if address is None:
            return self.nats.url_for(role)
        return SESSION_SECRETS.nats_url(role, address)

    # -- what the processes do ----------------------------------------------------------------

    def pids(self) -> Pids:
        """The process ids of the first replica of each role and of the servers."""
        assert self.redis.pid is not None and self.nats.pid is not None
        return Pids(
            self.gateways[0].pid, self.table.pid, self.timer.pid, self.redis.pid, self.nats.pid
        )

    def dead(self) -> list[str]:
        """Replicas whose process is not running (crashed, or killed and not restarted)."""
        return [
            f"{r.role}@{r.address} exit={r.process and r.process.returncode}"
            for r in self.replicas
            if not r.alive
        ]

    def max_rss_mb(self, role: str) -> float:
        """The largest resident memory among the running replicas of a role."""
        return max((r.rss_mb() for r in self.of(role)), default=0.0)

    def logs(self, role: str, lines: int = 30) -> str:
        """The log tails of a role's replicas (for failure messages)."""
        return "\n".join(f"--- {r.role}@{r.address}\n{r.log_tail(lines)}" for r in self.of(role))

    def mark_logs(self) -> None:
        """Remember where the logs end now: what follows is the teardown's."""
        self._marks = {p.log_path: p.log_path.stat().st_size for p in self.started}

    def log_problems(self) -> dict[str, dict[str, dict[str, int]]]:
        """Per role, before the mark (``run``) and after it (``teardown``): how many times each
        warning or error event was logged (lines that are not JSON log records, such as a
        traceback, count as ``<raw output>``)."""
        problems: dict[str, dict[str, dict[str, int]]] = {}
        for process in self.started:
            try:
                text = process.log_path.read_bytes()
            except OSError:
                continue
            mark = self._marks.get(process.log_path, len(text))
            parts = problems.setdefault(process.role, {"run": {}, "teardown": {}})
            for part, chunk in (("run", text[:mark]), ("teardown", text[mark:])):
                counts = Counter(parts[part])
                counts.update(_problem_counts(chunk))
                parts[part] = dict(counts)
        return problems

    def remove_logs(self) -> None:
        """Delete the services' log files."""
        for process in self.started:
            process.log_path.unlink(missing_ok=True)

    def stop(self) -> None:
        """Stop every process (thawing frozen ones first; gateways and bots, then timers, then
        tables, then replaced ones), then the servers; remove the servers' data."""
        for process in self.started:
            with contextlib.suppress(Exception):
                if process.alive and process.process is not None:
                    process.process.send_signal(signal.SIGCONT)
        rest = [p for p in self.started if p not in self.replicas]
        for group in ([*self.gateways, *self.bots], self.timers, self.tables, rest):
            each(group, lambda process: process.stop(10))
        for server in (self.nats, self.redis):
            with contextlib.suppress(Exception):
                server.cleanup()


def each(replicas: Sequence[ServiceProcess], action: Callable[[ServiceProcess], object]) -> None:
    """Apply ``action`` to every replica in parallel threads (the first error is raised once
    every one is done)."""
    with ThreadPoolExecutor(max_workers=max(len(replicas), 1)) as pool:
        list(pool.map(action, replicas))


def _problem_counts(log: bytes) -> dict[str, int]:
    counts: Counter[str] = Counter()
    for line in log.decode(errors="replace").splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            counts["<raw output>"] += 1
            continue
        if isinstance(record, dict) and record.get("level") in PROBLEM_LEVELS:
            counts[f"{record['level']}: {str(record.get('event'))[:90]}"] += 1
    return dict(counts)
