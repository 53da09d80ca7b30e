"""A cluster of real processes for chaos tests: Redis, NATS, and any number of table-service,
timer-service and gateway replicas, each a separate process that can be SIGKILLed,
restarted on the same port, or frozen (SIGSTOP) and thawed (SIGCONT).

Every blocking method here (starting, killing, restarting) blocks the calling thread; async
tests call them through ``asyncio.to_thread`` so their players keep running meanwhile.
"""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from tests.support.secrets import SESSION_SECRETS
from tests.support.servers import NatsServer, RedisServer
from tests.support.services import ServiceProcess
from tests.support.waiting import wait_until

#: Clocks short enough for many whole games in a test, long enough for real play.
FAST_ENV: dict[str, str] = {
    "DOMINOS_TURN_SECONDS": "2",
    "DOMINOS_AWAY_TURN_SECONDS": "0.3",
    "DOMINOS_ROUND_BREAK_SECONDS": "0.2",
    "DOMINOS_TIMER_RETRY_SECONDS": "0.5",
    "DOMINOS_TIMER_SWEEP_SECONDS": "0.25",
    "DOMINOS_PRESENCE_LEASE_SECONDS": "1.5",
    "DOMINOS_LOG_LEVEL": "info",
}


def rss_mb(pid: int) -> float:
    """Resident memory of a process in MB (Linux ``/proc``); 0 when it is gone."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def _thread_states(pid: int) -> list[str]:
    states = []
    for stat in Path(f"/proc/{pid}/task").glob("*/stat"):
        try:
            text = stat.read_text()
        except OSError:
            continue
        states.append(text[text.rindex(")") + 2])
    return states


Role = Literal["table", "timer", "gateway"]


@dataclass
class Replica:
    """One service process of the cluster and what the chaos did to it."""

    role: Role
    process: ServiceProcess
    kills: int = 0
    pauses: int = 0

    @property
    def address(self) -> str:
        """``127.0.0.1:<port>`` (the same across restarts)."""
        return self.process.address

    @property
    def pid(self) -> int:
        """The current process id."""
        assert self.process.process is not None
        return self.process.process.pid

    @property
    def alive(self) -> bool:
        """Whether the process runs (frozen included)."""
        return self.process.process is not None and self.process.process.poll() is None

    def kill(self) -> None:
        """SIGKILL (no clean-up at all) and reap."""
        self.kills += 1
        if self.process.process is not None and self.process.process.poll() is None:
            # A frozen process dies of SIGKILL too.
            self.process.kill()

    def restart(self, timeout: float = 20.0) -> None:
        """Start again on the same port with the same environment; waits for SERVING."""
        self.process.start(timeout)

    def pause(self) -> None:
        """SIGSTOP; returns once every thread stopped."""
        self.pauses += 1
        pid = self.pid
        self.process.process.send_signal(signal.SIGSTOP)  # type: ignore[union-attr]
        wait_until(lambda: all(s in "tT" for s in _thread_states(pid)), timeout=5)

    def resume(self) -> None:
        """SIGCONT; returns once no thread is stopped."""
        pid = self.pid
        self.process.process.send_signal(signal.SIGCONT)  # type: ignore[union-attr]
        wait_until(lambda: not any(s in "tT" for s in _thread_states(pid)), timeout=5)

    def rss_mb(self) -> float:
        """Resident memory in MB."""
        return rss_mb(self.pid) if self.alive else 0.0


@dataclass
class ChaosCluster:
    """Redis, NATS and the service replicas; see the module docstring."""

    redis: RedisServer
    nats: NatsServer
    env: dict[str, str]
    replicas: list[Replica] = field(default_factory=list)

    @classmethod
    def start(
        cls,
        *,
        tables: int = 1,
        timers: int = 1,
        gateways: int = 1,
        env: dict[str, str] | None = None,
        redis: RedisServer | None = None,
        redis_url: str | None = None,
        nats_url: str | None = None,
        role_env: dict[str, dict[str, str]] | None = None,
    ) -> ChaosCluster:
        """Start Redis and NATS (unless given), then every replica in parallel.

        ``redis_url``/``nats_url`` override what the services connect to (the same URL, with
        its credentials, for every role; by default each role connects as its own Redis and
        NATS user, see ``RedisServer.url_for`` and :meth:`nats_url_for`), ``role_env`` adds
        variables per role (e.g. a fault proxy in front of Redis for the timer service only).
        """
        # Redis with the production ACL users (the session secrets, as the processes get):
        # each role connects as its own user (``RedisServer.url_for``).
        redis_server = redis or RedisServer(secrets=SESSION_SECRETS)
        if not redis_server.running:
            redis_server.start()
        # Authenticated, with the production permissions (the services' processes get the
        # same session secrets).
        nats = NatsServer(secrets=SESSION_SECRETS)
        nats.start()
        base = {
            **({"DOMINOS_REDIS_URL": redis_url} if redis_url else {}),
            **({"DOMINOS_NATS_URL": nats_url} if nats_url else {}),
            **FAST_ENV,
            **(env or {}),
        }
        cluster = cls(redis_server, nats, base)
        extra = role_env or {}
        table_specs = [
            cluster._spec("table", "services.table", extra.get("table", {})) for _ in range(tables)
        ]
        target = cluster.table_target(table_specs)
        others = [
            cluster._spec("timer", "services.timer", extra.get("timer", {})) for _ in range(timers)
        ]
        others += [
            cluster._spec(
                "gateway",
                "services.gateway",
                {"DOMINOS_TABLE_SERVICE_ADDR": target, **extra.get("gateway", {})},
            )
            for _ in range(gateways)
        ]
        cluster._start_all([*table_specs, *others])
        return cluster

    def nats_url_for(self, role: str, address: str | None = None) -> str:
        """The NATS URL of ``role`` (its own user), at the server or at ``address``
        (``host:port``, e.g. a fault proxy in front of the server)."""
        if address is None:
            return self.nats.url_for(role)
        return SESSION_SECRETS.nats_url(role, address)

    def _spec(
        self, role: Literal["table", "timer", "gateway"], module: str, extra: dict[str, str]
    ) -> Replica:
        env = {
            "DOMINOS_REDIS_URL": self.redis.url_for(role),
            "DOMINOS_NATS_URL": self.nats_url_for(role),
            **self.env,
            **extra,
        }
        return Replica(role, ServiceProcess(module, env))

    def _start_all(self, replicas: Sequence[Replica]) -> None:
        with ThreadPoolExecutor(max_workers=max(len(replicas), 1)) as pool:
            for future in [pool.submit(r.process.start, 30.0) for r in replicas]:
                future.result()
        self.replicas.extend(replicas)

    @staticmethod
    def table_target(replicas: Sequence[Replica]) -> str:
        """The gRPC target gateways use to reach the table-service replicas."""
        if len(replicas) == 1:
            return replicas[0].address
        return "ipv4:" + ",".join(r.address for r in replicas)

    def add(
        self,
        role: Role,
        extra_env: dict[str, str] | None = None,
    ) -> Replica:
        """Start one more replica (a gateway reaches the table replicas of the cluster)."""
        module = f"services.{role}"
        extra = dict(extra_env or {})
        if role == "gateway" and "DOMINOS_TABLE_SERVICE_ADDR" not in extra:
            extra["DOMINOS_TABLE_SERVICE_ADDR"] = self.table_target(self.of("table"))
        replica = self._spec(role, module, extra)
        self._start_all([replica])
        return replica

    def of(self, role: str) -> list[Replica]:
        """The replicas of a role, in start order."""
        return [r for r in self.replicas if r.role == role]

    @property
    def tables(self) -> list[Replica]:
        """Table-service replicas."""
        return self.of("table")

    @property
    def timers(self) -> list[Replica]:
        """Timer-service replicas."""
        return self.of("timer")

    @property
    def gateways(self) -> list[Replica]:
        """Gateway replicas."""
        return self.of("gateway")

    def gateway_addresses(self) -> list[str]:
        """Addresses of the gateways that run now."""
        return [g.address for g in self.gateways if g.alive]

    def dead(self) -> list[str]:
        """Replicas whose process is not running (crashed, or killed and not restarted)."""
        return [
            f"{r.role}@{r.address} exit={r.process.process and r.process.process.returncode}"
            for r in self.replicas
            if not r.alive
        ]

    def max_rss_mb(self, role: str) -> float:
        """The largest resident memory among the running replicas of a role."""
        return max((r.rss_mb() for r in self.of(role)), default=0.0)

    def logs(self, role: str, lines: int = 30) -> str:
        """The log tails of a role's replicas (for failure messages)."""
        return "\n".join(
            f"--- {r.role}@{r.address}\n{r.process.log_tail(lines)}" for r in self.of(role)
        )

    def stop(self) -> None:
        """Stop everything (thawing frozen processes first) and remove the data."""
        for replica in self.replicas:
            with contextlib.suppress(Exception):
                if replica.alive:
                    replica.process.process.send_signal(signal.SIGCONT)  # type: ignore[union-attr]
        with ThreadPoolExecutor(max_workers=max(len(self.replicas), 1)) as pool:
            list(pool.map(lambda r: r.process.stop(10), self.replicas))
        for server in (self.nats, self.redis):
            with contextlib.suppress(Exception):
                server.cleanup()


def each(replicas: Sequence[Replica], action: Callable[[Replica], None]) -> None:
    """Apply ``action`` to every replica in parallel threads."""
    with ThreadPoolExecutor(max_workers=max(len(replicas), 1)) as pool:
        list(pool.map(action, replicas))
