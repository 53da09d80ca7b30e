"""Every metric a dashboard panel or an alert queries is one the services export.

The exported names come from ``prometheus_client.REGISTRY`` after importing the services'
metric modules (counters with ``_total``, histograms with ``_bucket``/``_sum``/``_count``,
never ``_created``; the default ``process_*``/``python_*`` collectors, and Prometheus' own
``up``).
"""

from __future__ import annotations

import importlib
import json
import re
import urllib.request

import pytest

from .conftest import DASHBOARD, METRIC_MODULES, ROOT, load_alert_rules, registry_families
from .promql import metric_names


def dashboard_queries() -> list[tuple[str, str]]:
    """``(where, expression)`` of every query of the dashboard, variables included."""
    dashboard = json.loads(DASHBOARD.read_text())
    queries = []
    for panel in dashboard["panels"]:
        for target in panel.get("targets", []):
            queries.append((f"panel {panel['title']!r}", target["expr"]))
    for variable in dashboard["templating"]["list"]:
        if variable["type"] == "query":
            query = variable["query"]
            text = query["query"] if isinstance(query, dict) else query
            queries.append((f"variable {variable['name']!r}", text))
    return queries


def test_the_extractor_finds_metric_names_and_nothing_else() -> None:
    expr = (
        'sum by (job, le) (rate(dominos_a_bucket{grpc_method!="WatchTable",le=~"0.5"}[5m]))'
        " / ignoring (grpc_code) group_left sum(dominos_b_total offset 5m) > 0.05"
        ' and on () (sum(increase(dominos_c_total[10m])) or vector(0)) == 0 or up{job="x"}'
        " unless histogram_quantile(0.99, dominos_d_bucket) > bool 1e3"
    )
    assert metric_names(expr) == {
        "dominos_a_bucket",
        "dominos_b_total",
        "dominos_c_total",
        "dominos_d_bucket",
        "up",
    }
    assert metric_names("label_values(dominos_build_info, namespace)") == {"dominos_build_info"}


def test_the_registry_holds_every_metric_named_in_the_services_source(
    exported_metrics: set[str],
) -> None:
    """A metric module missing from METRIC_MODULES would make the other checks too lax."""
    in_source = set()
    # The first argument of a metric constructor (`Counter(\n    "dominos_..."`); other
    # strings that merely start with dominos_ (a context variable's name) are not metrics.
    constructor = re.compile(
        r'\b(?:Counter|Gauge|Histogram|Summary|Info|Enum)\(\s*"(dominos_[a-z0-9_]+)"'
    )
    for path in (ROOT / "services").rglob("*.py"):
        in_source.update(constructor.findall(path.read_text()))
    assert len(in_source) >= 20, f"too few metrics found in services/: {sorted(in_source)}"
    known = exported_metrics | set(registry_families())
    missing = sorted(name for name in in_source if name not in known)
    assert not missing, f"defined in services/ but not imported by {METRIC_MODULES}: {missing}"


def test_default_collectors_are_part_of_the_exported_names(exported_metrics: set[str]) -> None:
    assert "process_cpu_seconds_total" in exported_metrics
    assert "python_info" in exported_metrics
    assert "dominos_grpc_server_handling_seconds_bucket" in exported_metrics
    assert "dominos_table_cas_conflicts_total" in exported_metrics


@pytest.mark.parametrize(
    ("alert", "expr"), [(rule["alert"], rule["expr"]) for rule in load_alert_rules()]
)
def test_alert_expressions_query_exported_metrics(
    alert: str, expr: str, exported_metrics: set[str]
) -> None:
    used = metric_names(expr)
    assert used, f"{alert}: no metric found in {expr!r}"
    unknown = sorted(used - exported_metrics - EXPORTER_METRICS)
    assert not unknown, f"{alert} queries metrics no service exports: {unknown}"


#: Series of the cluster, not of the services, that the dashboard's CPU panels compare the
#: services with: the kubelet's cAdvisor (container usage, CFS throttling) and
#: kube-state-metrics (requests and limits). Nothing else from outside is allowed.
CLUSTER_METRICS = frozenset(
    {
        "container_cpu_usage_seconds_total",
        "container_cpu_cfs_periods_total",
        "container_cpu_cfs_throttled_periods_total",
        "kube_pod_container_resource_requests",
        "kube_pod_container_resource_limits",
    }
)
#: Series of the Redis chart's redis_exporter and the NATS chart's prometheus-nats-exporter
#: (their ServiceMonitors are on: deploy/helm), for the "Redis and NATS servers" row and the
#: Redis alerts, and of the blackbox exporter.
EXPORTER_METRICS = frozenset(
    {
        "redis_memory_used_bytes",
        "redis_memory_max_bytes",
        "redis_connected_slaves",
        "redis_instance_info",
        "redis_master_link_up",
        "redis_sentinel_master_ok_slaves",
        "redis_sentinel_master_ok_sentinels",
        "redis_commands_processed_total",
        "redis_connected_clients",
        "nats_varz_connections",
        "nats_varz_in_msgs",
        "nats_varz_out_msgs",
        "nats_varz_mem",
        "nats_varz_jetstream_stats_storage",
        "nats_varz_jetstream_config_max_storage",
        "nats_consumer_num_pending",
        "nats_consumer_num_ack_pending",
        # The blackbox exporter's probes of the public endpoint (deploy/prometheus).
        "probe_success",
    }
)


def test_dashboard_queries_use_exported_metrics(exported_metrics: set[str]) -> None:
    queries = dashboard_queries()
    assert len(queries) > 20
    problems = []
    for where, expr in queries:
        used = metric_names(expr)
        if not used:
            problems.append(f"{where}: no metric in {expr!r}")
        unknown = sorted(used - exported_metrics - CLUSTER_METRICS - EXPORTER_METRICS)
        if unknown:
            problems.append(f"{where}: unknown metrics {unknown}")
    assert not problems, "\n".join(problems)


def test_dashboard_shows_every_dominos_metric(exported_metrics: set[str]) -> None:
    """A new domain metric needs a panel (or this test says which one lacks it)."""
    used = set()
    for _, expr in dashboard_queries():
        used |= metric_names(expr)
    families = {
        re.sub(r"_(total|created|bucket|sum|count)$", "", name)
        for name in exported_metrics
        if name.startswith("dominos_")
    }
    shown = {re.sub(r"_(total|created|bucket|sum|count)$", "", name) for name in used}
    missing = sorted(families - shown)
    assert not missing, f"metrics without a dashboard panel: {missing}"


def _scrape() -> str:
    """One real scrape of a services' metrics endpoint (services.common.metrics)."""
    metrics = importlib.import_module("services.common.metrics")
    registry_families()  # every metric module imported: their collectors registered
    port = metrics.start_metrics_server(0, addr="127.0.0.1")
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as resp:
            return str(resp.read().decode())
    finally:
        metrics.stop_metrics_servers()


def test_a_scrape_has_no_created_series() -> None:
    """`*_created` series doubled the table service's series: they are turned off."""
    timer = importlib.import_module("services.timer.metrics")
    timer.FIRED.labels("turn").inc(0)
    body = _scrape()
    assert "dominos_timer_fired_total{" in body, "the scrape must hold the counters"
    assert "dominos_timer_lateness_seconds_bucket{" in body
    created = [line for line in body.splitlines() if "_created" in line]
    assert not created, f"_created series in a scrape: {created[:5]}"


@pytest.mark.parametrize(
    "series",
    [
        'dominos_timer_fired_total{kind="break"} 0.0',
        'dominos_timer_fired_total{kind="presence"} 0.0',
        'dominos_timer_refired_total{kind="turn"} 0.0',
        'dominos_timer_errors_total{dependency="nats"} 0.0',
        'dominos_rounds_ended_total{outcome="blocked_tie"} 0.0',
        'dominos_auto_plays_total{action="pass",cause="away"} 0.0',
        'dominos_table_timer_expiries_total{result="stale"} 0.0',
        'dominos_bots_turns_total{outcome="refused"} 0.0',
        'dominos_bots_turns_total{outcome="failed"} 0.0',
        'dominos_bots_moves_total{level="strong",move="pass"} 0.0',
    ],
)
def test_known_label_sets_exist_at_zero_before_their_first_event(series: str) -> None:
    """A labelled counter created on first use is born at 1 and rate() misses that first
    event: the label sets known in advance are created at 0 when the module loads."""
    name, _, rest = series.partition("{")
    wanted = set(rest.partition("}")[0].split(","))
    lines = [line for line in _scrape().splitlines() if line.startswith(name + "{")]
    matching = [
        line for line in lines if wanted <= set(line[len(name) + 1 :].split("}")[0].split(","))
    ]
    assert matching, f"{series}: not in the scrape ({lines})"
