"""The Prometheus alert rules: promtool checks and unit tests, labels, annotations, runbooks,
per-namespace aggregation, the Alertmanager inhibitions and the PrometheusRule manifest."""

from __future__ import annotations

import importlib.util
import re
import shutil
from collections import defaultdict
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import yaml

from .conftest import (
    ALERTS,
    ALERTS_TEST,
    DEPLOY,
    DEPLOY_README,
    K8S,
    load_alert_rules,
    require_tool,
    run,
)

#: The one base of every runbook_url: a placeholder for where deploy/README.md is browsable
#: (deploy/README.md "Alerts and runbooks"; `make prometheus-rule RUNBOOK_BASE=...`).
RUNBOOK_BASE = "https://github.com/dominos-cluster/dominos/blob/main/deploy/README.md"
INHIBIT = DEPLOY / "prometheus" / "alertmanager-inhibit.yml"
PROMETHEUS_RULE = K8S / "base" / "prometheusrule.yaml"
RENDERER = DEPLOY / "prometheus" / "render_prometheusrule.py"
PROD, DEV = "dominos", "dominos-dev"

PROMTOOL_MISSING = (
    "alert rules are checked with `promtool check rules` / `promtool test rules`; install it "
    "with `apt-get install prometheus` (Debian ships promtool in that package)"
)
SEVERITIES = ("critical", "warning")


def test_promtool_check_rules() -> None:
    promtool = require_tool("promtool", PROMTOOL_MISSING)
    out = run([promtool, "check", "rules", str(ALERTS)])
    assert f"SUCCESS: {len(load_alert_rules())} rules found" in out


def test_promtool_unit_tests_pass() -> None:
    promtool = require_tool("promtool", PROMTOOL_MISSING)
    out = run([promtool, "test", "rules", str(ALERTS_TEST)], timeout=300)
    assert "SUCCESS" in out


def test_every_alert_is_unit_tested_firing_and_silent() -> None:
    """alerts_test.yml has, for every alert, a case where it fires and one where it does not."""
    cases: dict[str, set[bool]] = defaultdict(set)
    suite = yaml.safe_load(ALERTS_TEST.read_text())
    assert suite["rule_files"] == [ALERTS.name]
    for group in suite["tests"]:
        for case in group.get("alert_rule_test", []):
            cases[case["alertname"]].add(bool(case.get("exp_alerts")))
    for rule in load_alert_rules():
        assert cases.get(rule["alert"]) == {True, False}, (
            f"{rule['alert']}: alerts_test.yml needs a firing and a silent case"
        )


@pytest.mark.parametrize("rule", load_alert_rules(), ids=lambda rule: rule["alert"])
def test_alert_has_severity_annotations_and_runbook(rule: dict[str, object]) -> None:
    name = str(rule["alert"])
    assert re.fullmatch(r"Dominos[A-Z][A-Za-z]+", name)
    labels = rule.get("labels")
    assert isinstance(labels, dict) and labels.get("severity") in SEVERITIES
    annotations = rule.get("annotations")
    assert isinstance(annotations, dict)
    assert set(annotations) == {"summary", "description", "runbook_url"}
    assert annotations["runbook_url"] == f"{RUNBOOK_BASE}#{name.lower()}"
    assert "for" in rule, f"{name}: an alert without `for` pages on a single bad evaluation"


def test_every_alert_has_a_runbook_section_and_every_section_an_alert() -> None:
    """deploy/README.md has a `### <AlertName>` heading (anchor: the name in lower case)."""
    headings = set(re.findall(r"^### (Dominos\w+)\s*$", DEPLOY_README.read_text(), re.M))
    alerts = {str(rule["alert"]) for rule in load_alert_rules()}
    assert alerts <= headings, f"alerts without a runbook section: {sorted(alerts - headings)}"
    assert headings <= alerts, f"runbook sections without an alert: {sorted(headings - alerts)}"


def test_alert_names_are_unique() -> None:
    names = [rule["alert"] for rule in load_alert_rules()]
    assert len(names) == len(set(names))


def test_error_ratio_alert_pages_on_server_codes_only() -> None:
    (rule,) = [r for r in load_alert_rules() if r["alert"] == "DominosHighErrorRatio"]
    (codes,) = re.findall(r'grpc_code=~"([^"]+)"', rule["expr"])
    paged = set(codes.split("|"))
    assert {"UNAVAILABLE", "INTERNAL", "UNKNOWN", "DEADLINE_EXCEEDED"} <= paged
    client_errors = {
        "INVALID_ARGUMENT",
        "FAILED_PRECONDITION",
        "NOT_FOUND",
        "PERMISSION_DENIED",
        "UNAUTHENTICATED",
        "ALREADY_EXISTS",
        "ABORTED",
        "RESOURCE_EXHAUSTED",
        "CANCELLED",
        "OK",
    }
    assert not paged & client_errors


def test_runbook_urls_are_absolute_and_share_one_base() -> None:
    """Clickable from Alertmanager: absolute https URLs, all built from one base."""
    bases = {
        str(rule["annotations"]["runbook_url"]).partition("#")[0] for rule in load_alert_rules()
    }
    assert len(bases) == 1, f"runbook_url bases differ: {sorted(bases)}"
    (base,) = bases
    assert re.fullmatch(r"https://[^\s#]+/deploy/README\.md", base), base
    assert RUNBOOK_BASE in DEPLOY_README.read_text(), "document the base to be replaced"


# -- never across namespaces ----------------------------------------------------------------

_AGGREGATORS = "sum|min|max|avg|count|group|stddev|stdvar|topk|bottomk|quantile|count_values|limitk"
_AGGREGATION = re.compile(
    rf"\b(?P<op>{_AGGREGATORS})\s*(?P<clause>by|without)?\s*(?:\((?P<labels>[^()]*)\))?\s*\("
)
_JOIN = re.compile(r"\b(?P<kind>on|ignoring)\s*\((?P<labels>[^()]*)\)")


def namespace_problems(expr: str) -> list[str]:
    """Why ``expr`` could merge series of different namespaces (empty: it cannot)."""
    problems = []
    for match in _AGGREGATION.finditer(expr):
        labels = {label.strip() for label in (match["labels"] or "").split(",")}
        if match["clause"] != "by" or "namespace" not in labels:
            problems.append(f"{match.group(0)!r} aggregates without `by (namespace, ...)`")
    for match in _JOIN.finditer(expr):
        labels = {label.strip() for label in match["labels"].split(",")}
        if match["kind"] != "on" or "namespace" not in labels:
            problems.append(f"{match.group(0)!r} joins without `on (namespace, ...)`")
    for function in ("absent(", "absent_over_time(", "vector("):
        if function in expr:
            problems.append(f"{function} has no namespace label")
    if re.search(r"\)\s*(by|without)\s*\(", expr):
        problems.append("postfix `by`/`without`: write `sum by (namespace, ...) (...)`")
    return problems


def test_the_namespace_checker_can_fail() -> None:
    """Negative control: the shapes of the old, cluster-wide rules are caught."""
    assert namespace_problems('sum by (job) (up{job=~"dominos-.*"}) == 0')
    assert namespace_problems('absent(up{job="dominos-timer"})')
    assert namespace_problems(
        'max(dominos_tables{phase="playing"}) > 0 and on () '
        "(sum(increase(dominos_timer_fired_total[5m])) or vector(0)) == 0"
    )
    assert namespace_problems("sum(rate(x[5m])) by (namespace)")
    assert namespace_problems("max without (instance) (x)")
    assert namespace_problems("a / ignoring (grpc_code) b")
    assert not namespace_problems(
        "max by (namespace) (x) > 0 and on (namespace) "
        "(sum by (namespace, job) (increase(y[5m])) or on (namespace) 0 * max by (namespace) (x))"
    )
    # Range functions are not aggregations.
    assert not namespace_problems("max_over_time(up[1d]) == 0")


@pytest.mark.parametrize("rule", load_alert_rules(), ids=lambda rule: rule["alert"])
def test_alerts_never_aggregate_across_namespaces(rule: dict[str, Any]) -> None:
    """With dev and prod in one Prometheus, a dead prod service must not be hidden by a live
    dev one: every aggregation keeps `namespace`, every join matches on it."""
    problems = namespace_problems(str(rule["expr"]))
    assert not problems, f"{rule['alert']}: " + "; ".join(problems)


def _suite() -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load(ALERTS_TEST.read_text())
    return loaded


def _namespaces(case: dict[str, Any]) -> set[str]:
    return {
        match
        for series in case["input_series"]
        for match in re.findall(r'namespace="([^"]+)"', series["series"])
    }


def test_unit_tests_run_two_namespaces_in_one_prometheus() -> None:
    """Every input series carries a namespace (as ServiceMonitor targets do), and each alert
    that fires is tested firing for one namespace while the other shares the Prometheus."""
    two_namespace_firing: set[str] = set()
    for case in _suite()["tests"]:
        for series in case["input_series"]:
            assert 'namespace="' in series["series"], f"{case['name']}: {series['series']}"
        if _namespaces(case) != {PROD, DEV}:
            continue
        for check in case["alert_rule_test"]:
            fired = {a["exp_labels"]["namespace"] for a in check.get("exp_alerts") or []}
            if len(fired) == 1:
                two_namespace_firing.add(check["alertname"])
    # The alerts that aggregate: each is proven not to mix namespaces.
    assert {
        "DominosServiceDown",
        "DominosServiceAbsent",
        "DominosTargetDown",
        "DominosHighErrorRatio",
        "DominosHighLatency",
        "DominosTablesStuck",
        "DominosTimersNotFiring",
        "DominosTimerLate",
        "DominosOutboxBacklog",
        "DominosRobotsFailing",
        "DominosProbeFailing",
    } <= two_namespace_firing
    names = {case["name"] for case in _suite()["tests"]}
    assert any("dead prod gateway" in name and "live dev gateway" in name for name in names)


def test_unit_tests_include_a_quiet_healthy_cluster_without_any_alert() -> None:
    """A case where players act in time (no deadline fires) and every probe succeeds: every
    alert is checked silent."""
    quiet = [c for c in _suite()["tests"] if "quiet healthy cluster" in c["name"]]
    assert len(quiet) == 1
    (case,) = quiet
    checked = {c["alertname"] for c in case["alert_rule_test"] if not c.get("exp_alerts")}
    assert checked == {str(rule["alert"]) for rule in load_alert_rules()}
    assert not any(c.get("exp_alerts") for c in case["alert_rule_test"])
    fired = [s for s in case["input_series"] if s["series"].startswith("dominos_timer_fired_total")]
    turns = [s for s in fired if 'kind="turn"' in s["series"]]
    assert turns and all(set(s["values"].split("x")[0]) == {"0"} for s in turns), (
        "the quiet cluster fires no turn deadline"
    )


def test_service_absent_is_per_namespace_without_absent() -> None:
    (rule,) = [r for r in load_alert_rules() if r["alert"] == "DominosServiceAbsent"]
    expr = str(rule["expr"])
    assert "absent(" not in expr
    for job in ("dominos-table", "dominos-timer", "dominos-gateway", "dominos-bots"):
        assert f'"job", "{job}"' in expr, f"{job} is not expected per namespace"
    assert "max_over_time(up" in expr, "a namespace whose targets all vanished must alert"


def test_availability_alerts_cover_every_service_of_the_cluster() -> None:
    """DominosServiceDown, DominosServiceAbsent and DominosTargetDown select exactly the jobs
    of the ServiceMonitors in deploy/k8s (a new service is never left unwatched), and
    DominosServiceAbsent expects each of them per namespace."""
    monitors = {
        doc["metadata"]["name"]
        for doc in yaml.safe_load_all((K8S / "base" / "servicemonitors.yaml").read_text())
        if doc
    }
    assert "dominos-bots" in monitors
    rules = {str(r["alert"]): str(r["expr"]) for r in load_alert_rules()}
    for alert in ("DominosServiceDown", "DominosServiceAbsent", "DominosTargetDown"):
        selectors = re.findall(r'job=~"dominos-\(([a-z|]+)\)"', rules[alert])
        assert selectors, alert
        for selector in selectors:
            assert {f"dominos-{job}" for job in selector.split("|")} == monitors, alert
    expected = set(re.findall(r'"job", "(dominos-[a-z]+)"', rules["DominosServiceAbsent"]))
    assert expected == monitors


def test_robots_failing_counts_failed_and_refused_turns_per_namespace() -> None:
    """Failed (the table service did not answer) and refused (it refused the move) turns,
    as a share of all turns; stale and late turns are harmless; a floor of traffic."""
    (rule,) = [r for r in load_alert_rules() if r["alert"] == "DominosRobotsFailing"]
    expr = str(rule["expr"])
    (outcomes,) = re.findall(r'dominos_bots_turns_total\{outcome=~"([^"]+)"\}', expr)
    assert set(outcomes.split("|")) == {"failed", "refused"}
    assert expr.count("sum by (namespace) (rate(dominos_bots_turns_total[5m]))") == 2
    assert rule["for"] == "10m"


def test_timers_not_firing_is_based_on_overdue_breaks() -> None:
    """Not on `playing` tables: players acting in time fire no deadline."""
    (rule,) = [r for r in load_alert_rules() if r["alert"] == "DominosTimersNotFiring"]
    expr = str(rule["expr"])
    assert 'phase="round_over"' in expr and 'phase="playing"' not in expr
    assert 'kind="break"' in expr


# -- Alertmanager inhibitions ---------------------------------------------------------------

_MATCHER = re.compile(r'^\s*(?P<name>[a-zA-Z_]\w*)\s*(?P<op>=~|!~|!=|=)\s*"(?P<value>[^"]*)"\s*$')


def _matches(matchers: list[str], labels: dict[str, str]) -> bool:
    for matcher in matchers:
        m = _MATCHER.match(matcher)
        assert m, f"unsupported matcher {matcher!r}"
        value, wanted, op = labels.get(m["name"], ""), m["value"], m["op"]
        ok = {
            "=": value == wanted,
            "!=": value != wanted,
            "=~": re.fullmatch(wanted, value) is not None,
            "!~": re.fullmatch(wanted, value) is None,
        }[op]
        if not ok:
            return False
    return True


def inhibited(
    rules: list[dict[str, Any]], alert: dict[str, str], firing: list[dict[str, str]]
) -> bool:
    """Alertmanager's semantics: a firing source alert (not the alert itself) matching a
    rule's source matchers, the alert matching its target matchers, `equal` labels equal."""
    for rule in rules:
        if not _matches(rule["target_matchers"], alert):
            continue
        for source in firing:
            if source is alert or not _matches(rule["source_matchers"], source):
                continue
            if all(source.get(label, "") == alert.get(label, "") for label in rule["equal"]):
                return True
    return False


def _inhibit_rules() -> list[dict[str, Any]]:
    rules: list[dict[str, Any]] = yaml.safe_load(INHIBIT.read_text())["inhibit_rules"]
    return rules


def _alert(name: str, **labels: str) -> dict[str, str]:
    return {"alertname": name, **labels}


def test_target_down_is_inhibited_by_service_down_of_the_same_namespace_and_job() -> None:
    rules = _inhibit_rules()
    down = _alert("DominosServiceDown", namespace=PROD, job="dominos-table", severity="critical")
    replica = _alert(
        "DominosTargetDown", namespace=PROD, job="dominos-table", instance="10.1.0.1:9100"
    )
    dev_replica = _alert(
        "DominosTargetDown", namespace=DEV, job="dominos-table", instance="10.2.0.1:9100"
    )
    gateway_replica = _alert(
        "DominosTargetDown", namespace=PROD, job="dominos-gateway", instance="10.1.2.1:9100"
    )
    firing = [down, replica, dev_replica, gateway_replica]
    assert inhibited(rules, replica, firing)
    assert not inhibited(rules, dev_replica, firing), "another namespace is not silenced"
    assert not inhibited(rules, gateway_replica, firing), "another job is not silenced"
    assert not inhibited(rules, replica, [replica]), "without ServiceDown it notifies"
    assert not inhibited(rules, down, firing), "ServiceDown itself always notifies"
    # Consequences of a whole service down, in its namespace only.
    timer_down = _alert("DominosServiceDown", namespace=PROD, job="dominos-timer")
    overdue = _alert("DominosTimersNotFiring", namespace=PROD)
    assert inhibited(rules, overdue, [timer_down, overdue])
    assert not inhibited(rules, _alert("DominosTimersNotFiring", namespace=DEV), [timer_down])
    assert not inhibited(rules, overdue, [down, overdue]), "a table outage does not hide it"
    # Robots' moves cannot reach a table service that is down: no second page for it.
    robots = _alert("DominosRobotsFailing", namespace=PROD, severity="warning")
    assert inhibited(rules, robots, [down, robots])
    assert not inhibited(rules, _alert("DominosRobotsFailing", namespace=DEV), [down])
    bots_down = _alert("DominosServiceDown", namespace=PROD, job="dominos-bots")
    assert not inhibited(rules, robots, [bots_down, robots]), "only the table's outage hides it"


def test_probe_failing_is_inhibited_by_a_dead_gateway_of_its_namespace_only() -> None:
    """No gateway at all (DominosServiceDown, job dominos-gateway) explains failing probes
    of that namespace; any other cause still pages."""
    rules = _inhibit_rules()
    probe = _alert(
        "DominosProbeFailing",
        namespace=PROD,
        job="dominos-probe-grpc",
        instance="dominos-gateway.dominos.svc:50051",
        severity="critical",
    )
    dev_probe = _alert("DominosProbeFailing", namespace=DEV, job="dominos-probe-web")
    gateway_down = _alert("DominosServiceDown", namespace=PROD, job="dominos-gateway")
    assert inhibited(rules, probe, [gateway_down, probe])
    assert not inhibited(rules, dev_probe, [gateway_down, dev_probe]), "another namespace"
    assert not inhibited(rules, probe, [probe]), "a probe failing on its own pages"
    for job in ("dominos-table", "dominos-timer", "dominos-bots"):
        other = _alert("DominosServiceDown", namespace=PROD, job=job)
        assert not inhibited(rules, probe, [other, probe]), job
    replica = _alert("DominosTargetDown", namespace=PROD, job="dominos-gateway")
    assert not inhibited(rules, probe, [replica, probe]), "one gateway replica down is no reason"
    assert not inhibited(rules, gateway_down, [probe, gateway_down]), "never the other way"


def test_overdue_deadlines_are_inhibited_by_a_dead_timer_service_of_their_namespace() -> None:
    rules = _inhibit_rules()
    overdue = _alert("DominosDeadlinesOverdue", namespace=PROD, severity="critical")
    timer_down = _alert("DominosServiceDown", namespace=PROD, job="dominos-timer")
    assert inhibited(rules, overdue, [timer_down, overdue])
    dev_timer_down = _alert("DominosServiceDown", namespace=DEV, job="dominos-timer")
    assert not inhibited(rules, overdue, [dev_timer_down, overdue]), "another namespace"
    table_down = _alert("DominosServiceDown", namespace=PROD, job="dominos-table")
    assert not inhibited(rules, overdue, [table_down, overdue]), "the timer still runs"


def test_inhibition_labels_are_carried_by_the_alerts() -> None:
    """`equal` on a label the alerts lack would compare "" with "": inhibit everything."""
    carried: dict[str, list[set[str]]] = defaultdict(list)
    for case in _suite()["tests"]:
        for check in case["alert_rule_test"]:
            for alert in check.get("exp_alerts") or []:
                carried[check["alertname"]].append(set(alert["exp_labels"]))
    for rule in _inhibit_rules():
        names = set()
        for matchers in (rule["source_matchers"], rule["target_matchers"]):
            (alertname,) = [m for m in matchers if m.replace(" ", "").startswith("alertname=")]
            names.add(alertname.split('"')[1])
        for name in names:
            assert carried[name], f"{name}: no firing unit test shows its labels"
            for labels in carried[name]:
                assert set(rule["equal"]) <= labels, f"{name} lacks {rule['equal']}"


def test_amtool_accepts_the_inhibition_rules(tmp_path: Path) -> None:
    amtool = shutil.which("amtool")
    if amtool is None:
        pytest.fail("`amtool` is missing: `make install` installs Debian's prometheus-alertmanager")
    config = {
        "route": {"receiver": "null"},
        "receivers": [{"name": "null"}],
        **yaml.safe_load(INHIBIT.read_text()),
    }
    path = tmp_path / "alertmanager.yml"
    path.write_text(yaml.safe_dump(config))
    out = run([amtool, "check-config", str(path)])
    assert "SUCCESS" in out


# -- the PrometheusRule manifest -------------------------------------------------------------


def _renderer() -> ModuleType:
    spec = importlib.util.spec_from_file_location("render_prometheusrule", RENDERER)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_prometheus_rule_is_generated_from_alerts_yml() -> None:
    """deploy/k8s/base/prometheusrule.yaml is what `make prometheus-rule` renders now."""
    committed = PROMETHEUS_RULE.read_text()
    manifest = yaml.safe_load(committed)
    (base,) = {
        rule["annotations"]["runbook_url"].partition("#")[0]
        for group in manifest["spec"]["groups"]
        for rule in group["rules"]
    }
    assert committed == _renderer().render(base), "run `make prometheus-rule`"


def test_the_renderer_rebases_runbook_urls() -> None:
    rendered = yaml.safe_load(_renderer().render("https://runbooks.example/dominos.md"))
    urls = [r["annotations"]["runbook_url"] for g in rendered["spec"]["groups"] for r in g["rules"]]
    assert urls and all(u.startswith("https://runbooks.example/dominos.md#dominos") for u in urls)


@pytest.mark.parametrize("overlay", ["dev", "prod"])
def test_each_overlay_ships_the_alerts_as_a_prometheus_rule(
    overlay: str, rendered_overlays: dict[str, list[dict[str, Any]]]
) -> None:
    rules = [m for m in rendered_overlays[overlay] if m["kind"] == "PrometheusRule"]
    assert len(rules) == 1
    (rule,) = rules
    assert rule["apiVersion"] == "monitoring.coreos.com/v1"
    assert rule["metadata"]["labels"]["release"] == "kube-prometheus-stack"
    expected = _renderer().rebase(
        yaml.safe_load(ALERTS.read_text())["groups"],
        rule["spec"]["groups"][0]["rules"][0]["annotations"]["runbook_url"].partition("#")[0],
    )
    assert rule["spec"] == {"groups": expected}
