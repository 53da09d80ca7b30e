"""A real Prometheus against a running cluster (issue 21, ``make test-ops``).

Debian's Prometheus scrapes a cluster of processes (two table, two timer, two gateway
replicas and one bots replica), the Redis exporter of its Redis primary and of a replica,
and the blackbox exporter's probes of a gateway, all labelled as the Kubernetes
ServiceMonitors label them (namespace ``ops``), and evaluates the shipped
``deploy/prometheus/alerts.yml`` every second. With games, practice tables (robots) and
refused requests running the whole time, the tests prove in order:

1. the shipped alerts load and every target is up;
2. a healthy cluster with traffic raises no alert at all;
3. every query of the Grafana dashboard returns data on that live traffic, except the ones
   whose source does not run here (cAdvisor, kube-state-metrics, the NATS exporter,
   Sentinel: :data:`OUTSIDE`), which must return nothing;
4. a killed gateway, a killed table replica and a stopped NATS each make their alert go
   pending, and the alert goes away once the replica or NATS is back.

Every alert's ``for`` is the shipped one: the tests wait for ``pending`` (the expression is
true), and the report gives when it would fire (pending + ``for``). The report (the alert
timelines, every panel query's result) is printed, and written as JSON to
``$DOMINOS_OPS_REPORT`` when set.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import shutil
import time
import urllib.parse
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
import pytest
import yaml
from dominos.v1 import game_pb2, gateway_pb2

from services.client.api import DominosClient, SeatCredentials, request_id
from testing.cluster import ProcessCluster, clock_env
from testing.players import play_game
from testing.prometheus import BlackboxExporter, Prometheus, RedisExporter, ScrapeJob, Target
from testing.secrets import SESSION_SECRETS
from testing.servers import RedisServer
from testing.waiting import wait_for

ROOT = Path(__file__).resolve().parents[2]
ALERTS = ROOT / "deploy/prometheus/alerts.yml"
BLACKBOX = ROOT / "deploy/prometheus/blackbox.yml"
DASHBOARD = ROOT / "deploy/grafana/dominos.json"
NAMESPACE = "ops"
REDIS_PODS = ("redis-node-0", "redis-node-1")
#: Scrape targets: 7 replicas, 2 Redis exporters, 2 probes.
TARGETS = 11
BINARIES = ("prometheus", "prometheus-redis-exporter", "prometheus-blackbox-exporter")
#: What the dashboard's variables become here ($__rate_interval: four scrapes at least).
VARIABLES = {
    "$__rate_interval": "15s",
    "$namespace": NAMESPACE,
    "$job": ".+",
    "$pod": ".+",
}
#: Series from sources that run only in Kubernetes or not in this test: cAdvisor,
#: kube-state-metrics, the NATS chart's exporter (no Debian package), Sentinel.
OUTSIDE = re.compile(r"\b(container_|kube_pod_|nats_varz_|nats_consumer_|redis_sentinel_)")

pytestmark = pytest.mark.skipif(
    any(shutil.which(binary) is None for binary in BINARIES),
    reason="make test-ops installs Debian's prometheus and exporters",
)


def _admin_password() -> str:
    url = urllib.parse.urlsplit(SESSION_SECRETS.redis_url("admin", "127.0.0.1:1"))
    return urllib.parse.unquote(url.password or "")


@dataclass
class Live:
    """The cluster, the exporters, Prometheus, and what the tests measured."""

    cluster: ProcessCluster
    prometheus: Prometheus
    servers: list[Any]
    report: dict[str, Any] = field(default_factory=dict)
    traffic_errors: list[str] = field(default_factory=list)


def _jobs(
    cluster: ProcessCluster, redis_exporters: list[RedisExporter], blackbox: str
) -> list[ScrapeJob]:
    jobs = []
    for role in ("table", "timer", "gateway", "bots"):
        targets = [
            Target(
                f"127.0.0.1:{replica.metrics_port}",
                {"namespace": NAMESPACE, "pod": f"dominos-{role}-{i}"},
            )
            for i, replica in enumerate(cluster.of(role))
        ]
        jobs.append(ScrapeJob(f"dominos-{role}", targets))
    jobs.append(
        ScrapeJob(
            "redis-metrics",
            [
                Target(exporter.address, {"namespace": NAMESPACE, "pod": pod})
                for exporter, pod in zip(
                    redis_exporters, ("redis-node-0", "redis-node-1"), strict=True
                )
            ],
        )
    )
    gateway = cluster.gateways[0]
    jobs.append(
        ScrapeJob.probe("dominos-probe-grpc", blackbox, "dominos_grpc", gateway.address, NAMESPACE)
    )
    jobs.append(
        ScrapeJob.probe(
            "dominos-probe-web", blackbox, "dominos_web", f"{gateway.web_url}/healthz", NAMESPACE
        )
    )
    return jobs


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Live]:
    cluster = ProcessCluster.start(
        env={
            **clock_env(2.0, 0.3, 0.2),
            "DOMINOS_PRESENCE_LEASE_SECONDS": "1.5",
            "DOMINOS_ROBOT_THINK_MIN_SECONDS": "0.05",
            "DOMINOS_ROBOT_THINK_MAX_SECONDS": "0.1",
            "DOMINOS_LOG_LEVEL": "warning",
        },
        # Production's memory policy (deploy/helm/redis-values.yaml), so that the memory
        # panel and DominosRedisMemoryHigh have a maxmemory to compare with.
        redis=RedisServer(
            secrets=SESSION_SECRETS,
            extra_args=("--maxmemory", "1536mb", "--maxmemory-policy", "noeviction"),
        ),
        tables=2,
        timers=2,
        gateways=2,
        bots=1,
        metrics=True,
    )
    servers: list[Any] = []
    try:
        password = _admin_password()
        replica = RedisServer(
            secrets=SESSION_SECRETS,
            extra_args=(
                "--replicaof",
                "127.0.0.1",
                str(cluster.redis.port),
                "--masteruser",
                "admin",
                "--masterauth",
                password,
            ),
        ).start()
        servers.append(replica)
        exporters = [
            RedisExporter(server.address, "admin", password).start()
            for server in (cluster.redis, replica)
        ]
        servers += exporters
        blackbox = BlackboxExporter(BLACKBOX).start()
        servers.append(blackbox)
        rules = tmp_path_factory.mktemp("rules") / "alerts.yml"
        shutil.copy(ALERTS, rules)
        prometheus = Prometheus(_jobs(cluster, exporters, blackbox.address), [rules]).start(
            timeout=30
        )
        servers.append(prometheus)
        yield Live(cluster, prometheus, servers)
    finally:
        for server in reversed(servers):
            with contextlib.suppress(Exception):
                server.cleanup()
        cluster.stop()


@pytest.fixture(scope="module")
async def traffic(live: Live) -> AsyncIterator[Live]:
    """Games on both gateways, a practice table with a robot, refused joins: all the time."""
    stop = asyncio.Event()

    async def games() -> None:
        seed = 0
        while not stop.is_set():
            seed += 1
            try:
                await play_game(live.cluster.gateway_addresses(), seed=4000 + seed)
            except Exception as error:  # a fault test killed what the game used
                live.traffic_errors.append(repr(error)[:200])

    async def practice() -> None:
        while not stop.is_set():
            try:
                await _practice_game(live.cluster.gateway_addresses()[-1])
            except Exception as error:
                live.traffic_errors.append(repr(error)[:200])

    async def refusals() -> None:
        while not stop.is_set():
            client = DominosClient(live.cluster.gateway_addresses()[-1])
            with contextlib.suppress(grpc.aio.AioRpcError):
                await client.stub.JoinTable(
                    gateway_pb2.JoinTableRequest(
                        request_id=request_id(), invitation_code="ZZZZZZ", player_name="Eve"
                    ),
                    timeout=5,
                )
            await client.close()
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(stop.wait(), timeout=2)

    tasks = [
        asyncio.create_task(games()),
        asyncio.create_task(games()),
        asyncio.create_task(practice()),
        asyncio.create_task(refusals()),
    ]
    try:
        yield live
    finally:
        stop.set()
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        _print_report(live)


async def _practice_game(address: str) -> None:
    """A host alone with a robot: the host never watches (away), so its turns are played
    by the clock and the robot's by the bots service."""
    client = DominosClient(address)
    try:
        created = await client.stub.CreateTable(
            gateway_pb2.CreateTableRequest(
                request_id=request_id(),
                host_name="Solo",
                rules=game_pb2.RuleChoice(preset=game_pb2.PRESET_WEB_FIVES, seats=2),
                options=game_pb2.TableOptions(practice=[game_pb2.ROBOT_LEVEL_SOLID]),
            ),
            timeout=10,
        )
        host = SeatCredentials(created.table_id, 0, created.seat_token)
        await client.start(host)

        async def over() -> bool:
            view = await client.view(host)
            return view.phase in (game_pb2.PHASE_FINISHED, game_pb2.PHASE_CLOSED)

        await wait_for(over, timeout=120, interval=0.5)
    finally:
        await client.close()


# -- helpers ------------------------------------------------------------------------------


def _alerts(prometheus: Prometheus) -> list[dict[str, Any]]:
    return [a for a in prometheus.alerts() if a["labels"].get("namespace") == NAMESPACE]


def _for_of(alert: str) -> str:
    for group in yaml.safe_load(ALERTS.read_text())["groups"]:
        for rule in group["rules"]:
            if rule.get("alert") == alert:
                return str(rule.get("for", "0s"))
    raise KeyError(alert)


def _active(live: Live, alert: str, labels: dict[str, str]) -> bool:
    """Whether ``alert`` with ``labels`` is pending or firing now."""
    return any(
        a["labels"]["alertname"] == alert
        and all(a["labels"].get(k) == v for k, v in labels.items())
        for a in _alerts(live.prometheus)
    )


async def _until_alert(live: Live, alert: str, *, active: bool = True, **labels: str) -> float:
    """Seconds until ``alert`` with ``labels`` is pending or firing (``active``), or until
    it is neither any more."""
    started = time.monotonic()
    await wait_for(
        lambda: asyncio.to_thread(lambda: _active(live, alert, labels) == active),
        timeout=60 if active else 90,
        interval=0.25,
        message=f"{alert} {'active' if active else 'gone'}",
    )
    return time.monotonic() - started


def _state(live: Live, alert: str) -> str:
    states = {a["state"] for a in _alerts(live.prometheus) if a["labels"]["alertname"] == alert}
    return "firing" if "firing" in states else "pending" if states else "inactive"


def _queries() -> list[tuple[str, str, str]]:
    """(panel, refId, expr with the variables filled in) of every dashboard query."""
    out = []
    for panel in json.loads(DASHBOARD.read_text())["panels"]:
        for target in panel.get("targets", []):
            expr = target["expr"]
            for variable, value in sorted(VARIABLES.items(), key=lambda kv: -len(kv[0])):
                expr = expr.replace(variable, value)
            out.append((panel["title"], target["refId"], expr))
    return out


def _classify(result: list[dict[str, Any]]) -> str:
    """``values`` (at least one number), ``NaN`` (series, no number yet) or ``empty``."""
    if not result:
        return "empty"
    numbers = [float(r["value"][1]) for r in result]
    return "values" if any(n == n for n in numbers) else "NaN"


def _print_report(live: Live) -> None:
    text = json.dumps(live.report, indent=2, sort_keys=True)
    print("\n--- live Prometheus report ---\n" + text)
    path = os.environ.get("DOMINOS_OPS_REPORT")
    if path:
        Path(path).write_text(text + "\n")


# -- the tests ------------------------------------------------------------------------------


async def test_the_shipped_alerts_load_and_every_target_is_up(traffic: Live) -> None:
    prometheus = traffic.prometheus
    groups = await asyncio.to_thread(prometheus.rule_groups)
    loaded = {rule["name"] for group in groups for rule in group["rules"]}
    shipped = {
        rule["alert"]
        for group in yaml.safe_load(ALERTS.read_text())["groups"]
        for rule in group["rules"]
    }
    assert loaded == shipped
    assert all(rule["health"] in ("ok", "unknown") for g in groups for rule in g["rules"])

    def all_up() -> bool:
        targets = prometheus.targets()
        return len(targets) == TARGETS and all(t["health"] == "up" for t in targets)

    await wait_for(lambda: asyncio.to_thread(all_up), timeout=30, interval=0.5)
    probes = await asyncio.to_thread(prometheus.query, 'probe_success{job=~"dominos-probe-.+"}')
    assert {r["metric"]["job"] for r in probes if r["value"][1] == "1"} == {
        "dominos-probe-grpc",
        "dominos-probe-web",
    }
    traffic.report["rules_loaded"] = len(loaded)


async def test_a_healthy_cluster_with_traffic_raises_no_alert(traffic: Live) -> None:
    prometheus = traffic.prometheus

    def games_done() -> bool:
        finished = prometheus.query('sum(dominos_games_finished_total{namespace="ops"})')
        robots = prometheus.query('sum(dominos_bots_turns_total{namespace="ops"})')
        return bool(finished and robots) and (
            float(finished[0]["value"][1]) >= 2 and float(robots[0]["value"][1]) >= 5
        )

    def scraped_enough() -> bool:
        # Every target scraped 10 times at least: in its first second Prometheus evaluates
        # rules over targets not scraped yet (a service looks absent, a counter has one
        # sample): such an alert is pending for an evaluation or two, which `for` absorbs.
        counts = prometheus.query(f'count_over_time(up{{namespace="{NAMESPACE}"}}[1m])')
        return len(counts) == TARGETS and all(float(c["value"][1]) >= 10 for c in counts)

    await wait_for(lambda: asyncio.to_thread(games_done), timeout=240, interval=1)
    await wait_for(lambda: asyncio.to_thread(scraped_enough), timeout=60, interval=1)
    alerts = await asyncio.to_thread(_alerts, prometheus)
    assert alerts == [], [(a["labels"], a["state"], a["activeAt"]) for a in alerts]


async def test_every_dashboard_query_returns_data_on_live_traffic(traffic: Live) -> None:
    prometheus = traffic.prometheus
    results: dict[str, str] = {}

    def evaluate() -> list[tuple[str, str, str]]:
        found = []
        for panel, ref, expr in _queries():
            found.append((f"{panel} [{ref}]", expr, _classify(prometheus.query(expr))))
        return found

    def all_have_data() -> bool:
        results.clear()
        for where, expr, kind in evaluate():
            results[where] = kind if not OUTSIDE.search(expr) else f"{kind} (outside)"
        return all(kind != "empty" for kind in results.values() if not kind.endswith("(outside)"))

    try:
        await wait_for(lambda: asyncio.to_thread(all_have_data), timeout=120, interval=2)
    finally:
        traffic.report["dashboard"] = dict(results)
    outside = {where: kind for where, kind in results.items() if kind.endswith("(outside)")}
    # What cannot run here returns nothing; everything else returns data.
    assert outside and all(kind.startswith("empty") for kind in outside.values()), outside
    counts: dict[str, int] = {}
    for kind in results.values():
        counts[kind] = counts.get(kind, 0) + 1
    traffic.report["dashboard_counts"] = counts


async def test_a_killed_gateway_replica_is_seen_as_a_target_down_and_a_failing_probe(
    traffic: Live,
) -> None:
    gateway = traffic.cluster.gateways[0]
    address = gateway.address
    killed = time.monotonic()
    await asyncio.to_thread(gateway.kill)
    target_down = await _until_alert(traffic, "DominosTargetDown", job="dominos-gateway")
    probe = await _until_alert(traffic, "DominosProbeFailing", job="dominos-probe-grpc")
    await asyncio.to_thread(gateway.restart)
    back = time.monotonic()
    cleared = await _until_alert(traffic, "DominosTargetDown", active=False)
    cleared_probe = await _until_alert(traffic, "DominosProbeFailing", active=False)
    assert gateway.address == address
    traffic.report["timeline_killed_gateway"] = {
        "DominosTargetDown pending after s": round(target_down, 1),
        "DominosTargetDown fires after": f"pending + {_for_of('DominosTargetDown')}",
        "DominosProbeFailing pending after s": round(probe + target_down, 1),
        "DominosProbeFailing fires after": f"pending + {_for_of('DominosProbeFailing')}",
        "replica down for s": round(back - killed, 1),
        "TargetDown gone after restart s": round(cleared, 1),
        "ProbeFailing gone after restart s": round(cleared + cleared_probe, 1),
        "DominosServiceDown": _state(traffic, "DominosServiceDown"),
    }


async def test_a_killed_table_replica_is_seen_as_a_target_down_and_games_go_on(
    traffic: Live,
) -> None:
    table = traffic.cluster.tables[1]
    finished_before = await asyncio.to_thread(
        traffic.prometheus.query, 'sum(dominos_games_finished_total{namespace="ops"})'
    )
    killed = time.monotonic()
    await asyncio.to_thread(table.kill)
    pending = await _until_alert(traffic, "DominosTargetDown", job="dominos-table")
    service_down = _state(traffic, "DominosServiceDown")
    await asyncio.to_thread(table.restart)
    back = time.monotonic()
    cleared = await _until_alert(traffic, "DominosTargetDown", active=False, job="dominos-table")
    assert service_down == "inactive"  # the other replica serves
    before = float(finished_before[0]["value"][1]) if finished_before else 0.0

    def more_games() -> bool:
        now = traffic.prometheus.query('sum(dominos_games_finished_total{namespace="ops"})')
        return bool(now) and float(now[0]["value"][1]) > before

    await wait_for(lambda: asyncio.to_thread(more_games), timeout=120, interval=1)
    traffic.report["timeline_killed_table_replica"] = {
        "DominosTargetDown pending after s": round(pending, 1),
        "DominosTargetDown fires after": f"pending + {_for_of('DominosTargetDown')}",
        "DominosServiceDown while one replica serves": service_down,
        "replica down for s": round(back - killed, 1),
        "TargetDown gone after restart s": round(cleared, 1),
    }


async def test_a_stopped_nats_is_seen_as_disconnected_services(traffic: Live) -> None:
    nats = traffic.cluster.nats
    stopped = time.monotonic()
    await asyncio.to_thread(nats.stop)
    disconnected = await _until_alert(traffic, "DominosNatsDisconnected")
    seen = {
        a["labels"]["alertname"]: a["state"]
        for a in await asyncio.to_thread(_alerts, traffic.prometheus)
    }
    await asyncio.to_thread(nats.start)
    back = time.monotonic()
    cleared = await _until_alert(traffic, "DominosNatsDisconnected", active=False)
    jobs = {
        a["labels"]["job"]
        for a in await asyncio.to_thread(_alerts, traffic.prometheus)
        if a["labels"]["alertname"] == "DominosNatsDisconnected"
    }
    assert not jobs
    traffic.report["timeline_stopped_nats"] = {
        "DominosNatsDisconnected pending after s": round(disconnected, 1),
        "DominosNatsDisconnected fires after": f"pending + {_for_of('DominosNatsDisconnected')}",
        "alerts pending or firing at that moment": seen,
        "NATS down for s": round(back - stopped, 1),
        "NatsDisconnected gone after restart s": round(cleared, 1),
    }
