"""The Prometheus alert rules: promtool checks and unit tests, labels, annotations, runbooks."""

from __future__ import annotations

import re
from collections import defaultdict

import pytest
import yaml

from .conftest import ALERTS, ALERTS_TEST, DEPLOY_README, load_alert_rules, require_tool, run

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
    assert set(annotations) == {"summary", "description", "runbook"}
    assert annotations["runbook"] == f"deploy/README.md#{name.lower()}"
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
