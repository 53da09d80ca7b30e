"""Render deploy/k8s/base/prometheusrule.yaml (a Prometheus Operator PrometheusRule) from
deploy/prometheus/alerts.yml, the one source of the alert rules.

    python deploy/prometheus/render_prometheusrule.py [--runbook-base URL] \
        > deploy/k8s/base/prometheusrule.yaml

(``make prometheus-rule [RUNBOOK_BASE=...]``). The rule's ``spec`` is alerts.yml's content;
``--runbook-base`` replaces the base of every ``runbook_url`` (the part before ``#``) with
where your copy of deploy/README.md is browsable. tests/deploy/test_alerts.py checks that the
committed manifest is what this script renders.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import yaml

ALERTS = Path(__file__).resolve().with_name("alerts.yml")

HEADER = """\
# GENERATED from deploy/prometheus/alerts.yml by deploy/prometheus/render_prometheusrule.py
# (`make prometheus-rule`): edit alerts.yml, then regenerate. The Prometheus Operator loads
# it when its ruleSelector selects these labels (kube-prometheus-stack selects
# `release: <its release name>`: patch the label in an overlay if yours differs, or set
# prometheus.prometheusSpec.ruleSelectorNilUsesHelmValues=false).
"""


class _Dumper(yaml.SafeDumper):
    pass


def _str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _str)


def rebase(groups: list[dict[str, Any]], base: str) -> list[dict[str, Any]]:
    """``groups`` with every ``runbook_url``'s base (before ``#``) replaced by ``base``."""
    for group in groups:
        for rule in group["rules"]:
            annotations = rule.get("annotations", {})
            if "runbook_url" in annotations:
                anchor = annotations["runbook_url"].partition("#")[2]
                annotations["runbook_url"] = f"{base.rstrip('#')}#{anchor}"
    return groups


def render(runbook_base: str | None = None) -> str:
    groups = yaml.safe_load(ALERTS.read_text())["groups"]
    if runbook_base:
        groups = rebase(groups, runbook_base)
    manifest = {
        "apiVersion": "monitoring.coreos.com/v1",
        "kind": "PrometheusRule",
        "metadata": {
            "name": "dominos-alerts",
            "labels": {
                "app.kubernetes.io/name": "dominos-alerts",
                "release": "kube-prometheus-stack",
            },
        },
        "spec": {"groups": groups},
    }
    body = yaml.dump(manifest, Dumper=_Dumper, sort_keys=False, width=4096, allow_unicode=True)
    return HEADER + body


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runbook-base", help="base URL of the runbooks (deploy/README.md)")
    args = parser.parse_args(argv)
    sys.stdout.write(render(args.runbook_base))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
