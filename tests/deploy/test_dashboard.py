"""The Grafana dashboard: datasource variable, layout, rows, and PromQL that promtool parses."""

from __future__ import annotations

import json
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
    "Bus and store health",
    "Processes",
)


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
        assert 'grpc_method!="WatchTable"' in expr, expr


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
