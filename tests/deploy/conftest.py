"""Shared fixtures and helpers of the deployment tests (``deploy/``, ``Dockerfile``).

- ``exported_metrics`` (session): every metric name the services export, read from
  ``prometheus_client.REGISTRY`` after importing the services' metric modules.
- ``rendered_overlays`` (session): ``{"dev": [...], "prod": [...]}``, the manifests of each
  kustomize overlay, rendered as operators render them, by ``make deploy-render``
  (deploy/k8s/render.sh: ``kubectl kustomize``, kustomize built into kubectl; prod with the
  image :data:`PROD_IMAGE`).
- :func:`require_tool`: the path of a command-line tool, or a skip with a clear message.
"""

from __future__ import annotations

import importlib
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from prometheus_client import REGISTRY

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
K8S = DEPLOY / "k8s"
OVERLAYS = ("dev", "prod")
ALERTS = DEPLOY / "prometheus" / "alerts.yml"
ALERTS_TEST = DEPLOY / "prometheus" / "alerts_test.yml"
DASHBOARD = DEPLOY / "grafana" / "dominos.json"
DEPLOY_README = DEPLOY / "README.md"
#: The image the prod overlay is rendered with here (never pulled): a registry host and a
#: digest, as `make deploy-render OVERLAY=prod IMAGE=...` requires.
PROD_IMAGE = "registry.dominos.internal/dominos/dominos-cluster@sha256:" + "7d2c0f4b9a1e6835" * 4

#: Every module that defines metrics (importing one registers its collectors).
METRIC_MODULES = (
    "services.common.metrics",
    "services.common.grpc_metrics",
    "services.common.connections",
    "services.table.metrics",
    "services.timer.metrics",
    "services.gateway.metrics",
    "services.bots.metrics",
    "services.common.loop_lag",
    "services.common.gc_pauses",
    "services.common.dependency_metrics",
)

#: Series Prometheus itself adds for every scrape target.
SCRAPE_SERIES = frozenset({"up", "scrape_duration_seconds", "scrape_samples_scraped"})

#: The series of each metric type (no ``_created``: services/common/metrics.py turns them off).
_SUFFIXES = {
    "counter": ("_total",),
    "histogram": ("_bucket", "_sum", "_count"),
    "summary": ("", "_sum", "_count"),
    "gaugehistogram": ("_bucket", "_gsum", "_gcount"),
    "info": ("_info",),
}


def registry_families() -> dict[str, str]:
    """Name (as the registry knows it: counters without ``_total``) to type of every metric
    family of the services' modules and of the default collectors."""
    for module in METRIC_MODULES:
        importlib.import_module(module)
    return {family.name: family.type for family in REGISTRY.collect()}


def exported_metric_names() -> set[str]:
    """Every series name the services can expose, ``up`` and friends included."""
    registry_families()
    names: set[str] = set(SCRAPE_SERIES)
    for family in REGISTRY.collect():
        names.update(family.name + suffix for suffix in _SUFFIXES.get(family.type, ("",)))
        names.update(sample.name for sample in family.samples)
    return names


@pytest.fixture(scope="session")
def exported_metrics() -> set[str]:
    """See :func:`exported_metric_names`."""
    return exported_metric_names()


def require_tool(name: str, why: str) -> str:
    """The path of ``name`` on PATH, or skip the test saying what is missing and why."""
    path = shutil.which(name)
    if path is None:
        pytest.skip(f"`{name}` is not installed: {why}")
    return path


def run(args: list[str], *, cwd: Path | None = None, timeout: float = 120) -> str:
    """Run a command; return its stdout, or fail the test with its output."""
    proc = subprocess.run(
        args, cwd=cwd, capture_output=True, text=True, timeout=timeout, check=False
    )
    if proc.returncode != 0:
        pytest.fail(
            f"{' '.join(args)} exited {proc.returncode}\n"
            f"stdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
        )
    return proc.stdout


def kubectl_kustomize(path: Path) -> list[dict[str, Any]]:
    """The manifests of the kustomization at ``path`` (``kubectl kustomize``)."""
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        pytest.fail(
            "`kubectl` is not on PATH: the overlays are rendered with `kubectl kustomize` "
            "(kustomize built into kubectl; this machine image ships it as the apt package "
            "`kubectl`)."
        )
    out = run([kubectl, "kustomize", str(path)])
    return [doc for doc in yaml.safe_load_all(out) if doc]


def make_deploy_render(overlay: str, image: str | None) -> subprocess.CompletedProcess[str]:
    """``make deploy-render OVERLAY=<overlay> [IMAGE=<image>]`` as an operator runs it, its
    outcome unchecked. Without the variables of an enclosing make (``make deploy-test``) or of
    the caller's shell, so that only ``image`` is ever the image."""
    if shutil.which("kubectl") is None:
        pytest.fail("`kubectl` is not on PATH: make deploy-render renders with `kubectl kustomize`")
    inherited = {"MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES", "OVERLAY", "IMAGE"}
    env = {key: value for key, value in os.environ.items() if key not in inherited}
    args = ["make", "-s", "--no-print-directory", "-C", str(ROOT), "deploy-render"]
    args.append(f"OVERLAY={overlay}")
    if image is not None:
        args.append(f"IMAGE={image}")
    return subprocess.run(args, capture_output=True, text=True, timeout=120, env=env, check=False)


def render_overlay(overlay: str, image: str | None = None) -> list[dict[str, Any]]:
    """The manifests ``make deploy-render`` prints for ``overlay`` (prod: with ``image``,
    by default :data:`PROD_IMAGE`), or fail the test with its output."""
    if image is None and overlay == "prod":
        image = PROD_IMAGE
    proc = make_deploy_render(overlay, image)
    if proc.returncode != 0:
        pytest.fail(
            f"make deploy-render OVERLAY={overlay} exited {proc.returncode}\n"
            f"stdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
        )
    return [doc for doc in yaml.safe_load_all(proc.stdout) if doc]


@pytest.fixture(scope="session")
def rendered_overlays() -> dict[str, list[dict[str, Any]]]:
    """Every overlay as ``make deploy-render`` renders it (:func:`render_overlay`)."""
    return {overlay: render_overlay(overlay) for overlay in OVERLAYS}


def load_alert_rules() -> list[dict[str, Any]]:
    """The alerting rules of ``deploy/prometheus/alerts.yml``, in file order."""
    doc = yaml.safe_load(ALERTS.read_text())
    return [rule for group in doc["groups"] for rule in group["rules"] if "alert" in rule]


_GRAFANA_VARIABLES = {
    "$__rate_interval": "5m",
    "$__interval": "1m",
    "$__range": "1h",
    "$namespace": "dominos",
    "$job": "dominos-table",
    "$pod": "dominos-table-7d9f8b6c5d-x2x8q",
}


def substitute_grafana_variables(expr: str) -> str:
    """``expr`` with the dashboard's variables replaced by plausible values (for promtool)."""
    for variable, value in sorted(_GRAFANA_VARIABLES.items(), key=lambda kv: -len(kv[0])):
        expr = expr.replace(variable, value)
    if re.search(r"\$\w+|\$\{", expr):
        raise AssertionError(f"unknown Grafana variable in {expr!r}")
    return expr


@pytest.fixture(params=OVERLAYS)
def overlay(request: pytest.FixtureRequest) -> str:
    """Each overlay's name in turn."""
    return str(request.param)


@pytest.fixture
def manifests(
    overlay: str, rendered_overlays: dict[str, list[dict[str, Any]]]
) -> list[dict[str, Any]]:
    """The rendered manifests of :func:`overlay`."""
    return rendered_overlays[overlay]
