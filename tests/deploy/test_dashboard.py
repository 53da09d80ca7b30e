"""The Grafana dashboard: datasource variable, layout, rows, and PromQL that promtool parses."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from .conftest import DASHBOARD, require_tool, run, substitute_grafana_variables

DATASOURCE = {"type": "prometheus", "uid": "${datasource}"}
ROWS = (
    "Overview",
    "Traffic",
    "Errors",
    "Latency (unary methods)",
    "Tables and players",
    "Timers",
    "Game outcomes",
    "Computer players",
    "Bus and store health",
    "Processes",
    "Latency inside the cluster",
    "Backlogs",
    "Redis and NATS servers",
)
#: Series of the Redis and NATS exporters: their pods are not the services' (no job or pod
#: variable applies), only the namespace does.
EXPORTER_SERIES = re.compile(r"\b(redis|nats)_[a-z_]+\{")


@pytest.fixture(scope="module")
def dashboard() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(DASHBOARD.read_text())
    return loaded


def graph_panels(dashboard: dict[str, Any]) -> list[dict[str, Any]]:
    return [panel for panel in dashboard["panels"] if panel["type"] != "row"]


def test_identity_and_datasource_variable(dashboard: dict[str, Any]) -> None:
    assert dashboard["uid"] == "dominos-cluster"
    assert dashboard["title"] == "Dominos cluster"
    assert isinstance(dashboard["schemaVersion"], int)
    variables = {v["name"]: v for v in dashboard["templating"]["list"]}
    assert variables["datasource"]["type"] == "datasource"
    assert variables["datasource"]["query"] == "prometheus"
    assert variables["namespace"]["datasource"] == DATASOURCE
    # Nothing points at a concrete datasource: the dashboard imports into any Grafana.
    assert "__inputs" not in dashboard


def test_rows_in_order(dashboard: dict[str, Any]) -> None:
    rows = [panel["title"] for panel in dashboard["panels"] if panel["type"] == "row"]
    assert tuple(rows) == ROWS


def test_every_panel_queries_the_datasource_variable(dashboard: dict[str, Any]) -> None:
    for panel in graph_panels(dashboard):
        assert panel["datasource"] == DATASOURCE, panel["title"]
        assert panel["targets"], panel["title"]
        assert panel.get("description"), f"{panel['title']}: say what the panel shows"
        ref_ids = [target["refId"] for target in panel["targets"]]
        assert len(ref_ids) == len(set(ref_ids)), panel["title"]
        for target in panel["targets"]:
            assert target["datasource"] == DATASOURCE, panel["title"]
            assert 'namespace=~"$namespace"' in target["expr"], panel["title"]
            if EXPORTER_SERIES.search(target["expr"]):
                assert "$job" not in target["expr"] and "$pod" not in target["expr"]
                continue
            assert 'pod=~"$pod"' in target["expr"], f"{panel['title']}: filter by $pod"


def test_ids_unique_and_layout_without_overlap(dashboard: dict[str, Any]) -> None:
    ids = [panel["id"] for panel in dashboard["panels"]]
    assert len(ids) == len(set(ids))
    taken: set[tuple[int, int]] = set()
    for panel in dashboard["panels"]:
        pos = panel["gridPos"]
        assert pos["x"] >= 0 and pos["w"] > 0 and pos["x"] + pos["w"] <= 24, panel["title"]
        cells = {
            (x, y)
            for x in range(pos["x"], pos["x"] + pos["w"])
            for y in range(pos["y"], pos["y"] + pos["h"])
        }
        assert not cells & taken, f"{panel['title']} overlaps another panel"
        taken |= cells


def test_latency_quantiles_cover_unary_methods_only(dashboard: dict[str, Any]) -> None:
    exprs = [t["expr"] for p in graph_panels(dashboard) for t in p["targets"]]
    handling = [e for e in exprs if "dominos_grpc_server_handling_seconds" in e]
    assert any("histogram_quantile(0.5," in e for e in handling)
    assert any("histogram_quantile(0.99," in e for e in handling)
    for expr in handling:
        # By type, not by name: health Watch streams are streams too.
        assert 'grpc_type="unary"' in expr, expr
        assert "WatchTable" not in expr, expr


def test_every_query_is_valid_promql(dashboard: dict[str, Any], tmp_path: Path) -> None:
    """promtool parses each expression (as a recording rule) with the variables filled in."""
    promtool = require_tool(
        "promtool",
        "dashboard queries are parsed by `promtool check rules`; install it with "
        "`apt-get install prometheus`",
    )
    rules = [
        {"record": f"dashboard:panel_{panel['id']}_{target['refId']}:check", "expr": expr}
        for panel in graph_panels(dashboard)
        for target in panel["targets"]
        for expr in [substitute_grafana_variables(target["expr"])]
    ]
    path = tmp_path / "dashboard_rules.yml"
    path.write_text(yaml.safe_dump({"groups": [{"name": "dashboard", "rules": rules}]}))
    out = run([promtool, "check", "rules", str(path)])
    assert f"SUCCESS: {len(rules)} rules found" in out


def _panel(dashboard: dict[str, Any], title: str) -> dict[str, Any]:
    (panel,) = [p for p in graph_panels(dashboard) if p["title"] == title]
    return panel


def _exprs(dashboard: dict[str, Any]) -> list[str]:
    return [t["expr"] for p in graph_panels(dashboard) for t in p["targets"]]


def test_replicas_up_is_red_at_zero(dashboard: dict[str, Any]) -> None:
    panel = _panel(dashboard, "Replicas up")
    defaults = panel["fieldConfig"]["defaults"]
    steps = defaults["thresholds"]["steps"]
    assert steps[0] == {"color": "red", "value": None}, "0 replicas (the base step) is red"
    assert all(step["value"] is not None and step["value"] >= 1 for step in steps[1:])
    assert steps[-1]["color"] == "green"
    assert defaults["color"]["mode"] == "thresholds"
    assert panel["options"]["colorMode"] in ("background", "value")
    # One stat per namespace and service: several namespaces selected are never summed.
    (target,) = panel["targets"]
    assert target["expr"].startswith("sum by (namespace, job) (up{")


def test_job_and_pod_variables_filter_every_query(dashboard: dict[str, Any]) -> None:
    variables = {v["name"]: v for v in dashboard["templating"]["list"]}
    names = [v["name"] for v in dashboard["templating"]["list"]]
    assert names.index("namespace") < names.index("job") < names.index("pod")
    for name in ("job", "pod"):
        variable = variables[name]
        assert variable["type"] == "query" and variable["datasource"] == DATASOURCE
        assert variable["multi"] is True and variable["includeAll"] is True
        # All = the values the query found, so "All pods" still follows the chosen job.
        assert "allValue" not in variable
    assert '$namespace"' in variables["job"]["query"]["query"]
    pod_query = variables["pod"]["query"]["query"]
    assert 'job=~"$job"' in pod_query and 'namespace=~"$namespace"' in pod_query
    for expr in _exprs(dashboard):
        if EXPORTER_SERIES.search(expr):
            continue  # the exporters' pods: see test_every_panel_queries_the_datasource_variable
        assert 'pod=~"$pod"' in expr, expr
        assert 'job=~"$job"' in expr or "container_" in expr or "kube_pod_" in expr, expr


def test_counts_use_a_fixed_window_not_the_zoom(dashboard: dict[str, Any]) -> None:
    """increase() over $__rate_interval changes with the zoom: counts over a fixed window."""
    for expr in _exprs(dashboard):
        assert not re.search(r"increase\([^\[]*\[\$__rate_interval\]", expr), expr
    rounds = _panel(dashboard, "Rounds ended per hour by outcome")
    (target,) = rounds["targets"]
    assert "increase(dominos_rounds_ended_total{" in target["expr"]
    assert target["expr"].endswith("[1h]))")


def test_cpu_against_requests_limits_and_throttling(dashboard: dict[str, Any]) -> None:
    exprs = _exprs(dashboard)
    container = 'container=~"table|timer|gateway|bots"'

    def one(*parts: str) -> str:
        found = [e for e in exprs if all(part in e for part in parts)]
        assert len(found) == 1, parts
        return found[0]

    requests = one("container_cpu_usage_seconds_total", "kube_pod_container_resource_requests")
    limits = one("container_cpu_usage_seconds_total", "kube_pod_container_resource_limits")
    throttled = one("container_cpu_cfs_throttled_periods_total", "container_cpu_cfs_periods_total")
    for expr in (requests, limits):
        assert 'resource="cpu"' in expr and container in expr
        assert " / sum by (pod) (kube_pod_container_resource_" in expr
    assert container in throttled and " / " in throttled
    for title in ("CPU used / requested", "CPU used / limit", "CPU throttled"):
        assert _panel(dashboard, title)["fieldConfig"]["defaults"]["unit"] == "percentunit"


def _row_panels(dashboard: dict[str, Any], row: str) -> list[dict[str, Any]]:
    """The panels below the row ``row`` up to the next row (the dashboard's order)."""
    panels: list[dict[str, Any]] = []
    inside = False
    for panel in dashboard["panels"]:
        if panel["type"] == "row":
            inside = panel["title"] == row
        elif inside:
            panels.append(panel)
    return panels


def test_computer_players_row(dashboard: dict[str, Any]) -> None:
    """The bots service's row: turns by outcome, moves by level, decision time p50/p99 by
    level, turn time p50/p99, turns in progress, its replicas (red at zero), and the table
    service's side (turns published, robots' moves applied)."""
    panels = _row_panels(dashboard, "Computer players")
    exprs = [t["expr"] for p in panels for t in p["targets"]]

    def one(*parts: str) -> str:
        found = [e for e in exprs if all(part in e for part in parts)]
        assert len(found) == 1, parts
        return found[0]

    assert one("sum by (outcome) (rate(dominos_bots_turns_total{", "[$__rate_interval]")
    assert one("sum by (level, move) (rate(dominos_bots_moves_total{")
    for quantile in ("0.5", "0.99"):
        one(
            f"histogram_quantile({quantile}, sum by (level, le)",
            "dominos_bots_decision_seconds_bucket",
        )
        one(f"histogram_quantile({quantile}, sum by (le)", "dominos_bots_turn_seconds_bucket")
    assert one("dominos_bots_turns_in_progress{")
    assert one("dominos_table_robot_turns_published_total{")
    assert one("sum by (move) (rate(dominos_table_robot_moves_total{")
    replicas = one('up{job="dominos-bots",')
    assert replicas.startswith("sum by (namespace, job) (up{")
    stat = _panel(dashboard, "Bots replicas up")
    assert stat["type"] == "stat"
    steps = stat["fieldConfig"]["defaults"]["thresholds"]["steps"]
    assert steps[0] == {"color": "red", "value": None}
    assert steps[-1]["color"] == "green"


def test_service_lists_cover_every_service(dashboard: dict[str, Any]) -> None:
    """Where a query names the services (the job variable, Replicas up, the process and
    CPU panels), it names all four: a new service is never silently left out."""
    jobs = re.compile(r'job=~"dominos-\(([a-z|]+)\)"')
    containers = re.compile(r'container=~"([a-z|]+)"')
    queries = [t["expr"] for p in graph_panels(dashboard) for t in p["targets"]]
    queries += [
        v["query"]["query"] for v in dashboard["templating"]["list"] if v["type"] == "query"
    ]
    lists = [m for q in queries for m in (*jobs.findall(q), *containers.findall(q))]
    assert len(lists) >= 8
    for found in lists:
        assert set(found.split("|")) == {"table", "timer", "gateway", "bots"}, found
