"""The black-box probes of the gateway (issue 21): the blackbox exporter's modules
(deploy/prometheus/blackbox.yml, checked by the exporter Debian ships and run against a live
gateway health service and web edge), the Prometheus Operator Probes of the base
(deploy/k8s/base/probes.yaml, rendered per overlay), the network path from the exporter to
the gateway, and what deploy/README.md says about them."""

from __future__ import annotations

import asyncio
import re
import socket
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import jsonschema
import pytest
import yaml

from services.common.grpc_server import ServiceRuntime
from services.common.settings import Settings
from services.gateway.server import SERVICE_NAME
from services.gateway.web.edge import WebEdge

from .conftest import DEPLOY, DEPLOY_README, load_alert_rules, require_tool
from .netpol import Pod, connection_allowed
from .test_k8s import Cluster, by_kind, check, one

Manifest = dict[str, Any]

BLACKBOX = DEPLOY / "prometheus" / "blackbox.yml"
EXPORTER = "prometheus-blackbox-exporter"
EXPORTER_MISSING = (
    "the blackbox exporter's modules are checked by the exporter itself; Debian ships it as "
    "`apt-get install prometheus-blackbox-exporter`"
)
#: Probe (job) name -> its module, the gateway port it reaches, the prober of the module.
PROBES = {
    "dominos-probe-grpc": ("dominos_grpc", "grpc", "grpc"),
    "dominos-probe-web": ("dominos_web", "web", "http"),
}
#: The variants for the public addresses behind TLS (for Probes an overlay adds).
TLS_MODULES = {"dominos_grpc_tls": "grpc", "dominos_web_tls": "http"}
#: The blackbox exporter's Service (chart prometheus-community/prometheus-blackbox-exporter,
#: release `prometheus-blackbox-exporter` in `monitoring`), as deploy/README.md installs it.
PROBER_URL = "prometheus-blackbox-exporter.monitoring.svc:9115"

_DURATION = r"^[0-9]+(ms|s|m|h)$"
_STRING_MAP = {"type": "object", "additionalProperties": {"type": "string"}}
#: The part of the Probe CRD (monitoring.coreos.com/v1) our objects use: any other field is
#: rejected, so a typo (`staticConfigs`, `targets.staticConfig.targets`) cannot slip through.
PROBE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["apiVersion", "kind", "metadata", "spec"],
    "properties": {
        "apiVersion": {"const": "monitoring.coreos.com/v1"},
        "kind": {"const": "Probe"},
        "metadata": {
            "type": "object",
            "additionalProperties": False,
            "required": ["name", "namespace", "labels"],
            "properties": {
                "name": {"type": "string", "pattern": "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"},
                "namespace": {"type": "string"},
                "labels": _STRING_MAP,
                "annotations": _STRING_MAP,
            },
        },
        "spec": {
            "type": "object",
            "additionalProperties": False,
            "required": ["jobName", "module", "prober", "targets", "interval", "scrapeTimeout"],
            "properties": {
                "jobName": {"type": "string"},
                "module": {"type": "string"},
                "interval": {"type": "string", "pattern": _DURATION},
                "scrapeTimeout": {"type": "string", "pattern": _DURATION},
                "prober": {
                    "type": "object",
                    "additionalProperties": False,
                    "required": ["url"],
                    "properties": {
                        # host:port, no scheme (that is `scheme`).
                        "url": {"type": "string", "pattern": r"^[a-z0-9.-]+:[0-9]+$"},
                        "scheme": {"enum": ["http", "https"]},
                        "path": {"type": "string", "pattern": "^/"},
                    },
                },
                "targets": {
                    "type": "object",
                    "additionalProperties": False,
                    "required": ["staticConfig"],
                    "properties": {
                        "staticConfig": {
                            "type": "object",
                            "additionalProperties": False,
                            "required": ["static"],
                            "properties": {
                                "static": {
                                    "type": "array",
                                    "minItems": 1,
                                    "items": {"type": "string"},
                                },
                                "labels": _STRING_MAP,
                            },
                        }
                    },
                },
            },
        },
    },
}


def modules() -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load(BLACKBOX.read_text())["modules"]
    return loaded


def config_check(path: Path) -> subprocess.CompletedProcess[str]:
    exporter = require_tool(EXPORTER, EXPORTER_MISSING)
    return subprocess.run(
        [exporter, "--config.check", f"--config.file={path}"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


@pytest.fixture(params=("dev", "prod"))
def manifests(request: pytest.FixtureRequest, rendered_overlays: dict[str, list[Manifest]]) -> Any:
    return rendered_overlays[str(request.param)]


# -- the exporter's modules -------------------------------------------------------------------


def test_the_exporter_accepts_the_modules() -> None:
    """`prometheus-blackbox-exporter --config.check`: the exporter parses the file strictly
    (an unknown field fails)."""
    proc = config_check(BLACKBOX)
    assert proc.returncode == 0, proc.stderr
    assert "Config file is ok" in proc.stderr


def test_the_config_check_can_fail(tmp_path: Path) -> None:
    """Negative control: a misspelt field of a module is rejected."""
    broken = tmp_path / "blackbox.yml"
    broken.write_text(BLACKBOX.read_text().replace("      service: ", "      servce: ", 1))
    assert broken.read_text() != BLACKBOX.read_text()
    proc = config_check(broken)
    assert proc.returncode != 0
    assert "servce" in proc.stderr


def test_the_modules_ask_what_the_gateway_answers() -> None:
    """gRPC: the health of the service the gateway registers (services/gateway/server.py);
    web: 200 "ok" from /healthz, no redirect. The plain modules for the Service (the gateway
    speaks plaintext), the *_tls ones insist on TLS (the public addresses)."""
    mods = modules()
    assert set(mods) == {module for module, _, _ in PROBES.values()} | set(TLS_MODULES)
    for name, module in mods.items():
        prober = module["prober"]
        assert prober == ({**{m: p for m, _, p in PROBES.values()}, **TLS_MODULES})[name]
        assert module["timeout"] == "5s"
        tls = name.endswith("_tls")
        if prober == "grpc":
            assert module["grpc"]["service"] == SERVICE_NAME == "dominos.v1.DominosService"
            assert module["grpc"]["tls"] is tls
        else:
            http = module["http"]
            assert http["valid_status_codes"] == [200]
            assert http["follow_redirects"] is False
            assert http["fail_if_body_not_matches_regexp"] == ["^ok"]
            assert http.get("fail_if_not_ssl", False) is tls
            assert http.get("fail_if_ssl", False) is False


# -- live: the modules against the gateway's own health service and web edge -----------------


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def exporter(tmp_path: Path) -> Iterator[str]:
    """A blackbox exporter on 127.0.0.1 with blackbox.yml, plus a module `wrong_service`
    (the gRPC module asking for another service): its address."""
    binary = require_tool(EXPORTER, EXPORTER_MISSING)
    config = yaml.safe_load(BLACKBOX.read_text())
    wrong = yaml.safe_load(yaml.safe_dump(config["modules"]["dominos_grpc"]))
    wrong["grpc"]["service"] = "dominos.v1.TableService"
    config["modules"]["wrong_service"] = wrong
    path = tmp_path / "blackbox.yml"
    path.write_text(yaml.safe_dump(config))
    address = f"127.0.0.1:{_free_port()}"
    proc = subprocess.Popen(
        [binary, f"--config.file={path}", f"--web.listen-address={address}"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                with urllib.request.urlopen(f"http://{address}/-/healthy", timeout=2):
                    break
            except (urllib.error.URLError, ConnectionError):
                if proc.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"the blackbox exporter did not start (exit {proc.poll()})")
                time.sleep(0.1)
        yield address
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def _probe(exporter: str, module: str, target: str) -> dict[str, float]:
    """One probe through the exporter: its samples, by series."""
    url = f"http://{exporter}/probe?module={module}&target={quote(target, safe='')}"
    with urllib.request.urlopen(url, timeout=15) as response:
        body = response.read().decode()
    samples = {}
    for line in body.splitlines():
        if line and not line.startswith("#"):
            series, _, value = line.rpartition(" ")
            samples[series] = float(value)
    return samples


class _NoCalls:
    """A servicer for the web edge whose methods are never called here."""

    def __getattr__(self, name: str) -> Any:
        async def refuse(*args: Any, **kwargs: Any) -> Any:
            raise AssertionError(f"{name} called")

        return refuse


async def test_the_modules_probe_a_live_gateway_health_service_and_web_edge(
    exporter: str,
) -> None:
    """Against the gateway's real gRPC health (ServiceRuntime with its service name) and its
    real web edge: success while serving, failure once they drain (NOT_SERVING, 503), failure
    for another service's name and for the TLS-only modules on these plaintext ports."""
    runtime = ServiceRuntime(service_names=[SERVICE_NAME], host="127.0.0.1", port=0)
    settings = Settings.from_env({"DOMINOS_WEB_HOST": "127.0.0.1", "DOMINOS_WEB_PORT": "0"})
    web = WebEdge(settings, _NoCalls())
    grpc_port = await runtime.start()
    web_port = await web.start()
    grpc_target = f"127.0.0.1:{grpc_port}"
    web_target = f"http://127.0.0.1:{web_port}/healthz"

    async def success(module: str, target: str) -> float:
        samples = await asyncio.to_thread(_probe, exporter, module, target)
        return samples["probe_success"]

    try:
        assert await success("dominos_grpc", grpc_target) == 1
        samples = await asyncio.to_thread(_probe, exporter, "dominos_grpc", grpc_target)
        assert samples['probe_grpc_healthcheck_response{serving_status="SERVING"}'] == 1
        assert await success("dominos_web", web_target) == 1
        # Negative controls: another service's name; TLS required on a plaintext port.
        assert await success("wrong_service", grpc_target) == 0
        assert await success("dominos_grpc_tls", grpc_target) == 0
        assert await success("dominos_web_tls", web_target) == 0
        # Draining: health NOT_SERVING (every name), /healthz 503.
        await runtime.set_serving(False)
        web.drain()
        assert await success("dominos_grpc", grpc_target) == 0
        assert await success("dominos_web", web_target) == 0
    finally:
        await web.stop()
        await runtime.shutdown()
    # Nothing listens any more: the connection fails.
    assert await success("dominos_grpc", grpc_target) == 0
    assert await success("dominos_web", web_target) == 0


# -- the Probes ---------------------------------------------------------------------------------


def test_the_probes_match_their_schema_and_target_the_gateway_service(
    manifests: list[Manifest],
) -> None:
    """One Probe per public port, each naming the gateway Service of its own namespace (the
    exporter runs elsewhere) on the Service's port, with a module of blackbox.yml."""
    probes = by_kind(manifests, "Probe")
    assert set(probes) == set(PROBES)
    service = one(manifests, "Service", "dominos-gateway")
    namespace = service["metadata"]["namespace"]
    ports = {p["name"]: p["port"] for p in service["spec"]["ports"]}
    host = f"dominos-gateway.{namespace}.svc"
    for name, probe in probes.items():
        jsonschema.validate(probe, PROBE_SCHEMA)
        module, port_name, prober = PROBES[name]
        spec = probe["spec"]
        assert probe["metadata"]["namespace"] == namespace  # -> the `namespace` label
        assert spec["jobName"] == name
        assert spec["module"] == module and modules()[module]["prober"] == prober
        assert spec["prober"] == {"url": PROBER_URL, "path": "/probe"}
        (target,) = spec["targets"]["staticConfig"]["static"]
        assert "labels" not in spec["targets"]["staticConfig"], "namespace comes from the Probe"
        if prober == "grpc":
            assert target == f"{host}:{ports[port_name]}"
        else:
            assert target == f"http://{host}:{ports[port_name]}/healthz"
        # The exporter's own timeout (module) fits in Prometheus' scrape of it.
        assert int(spec["scrapeTimeout"].removesuffix("s")) > int(
            modules()[module]["timeout"].removesuffix("s")
        )


def test_the_probe_schema_can_fail(manifests: list[Manifest]) -> None:
    """Negative control: a misspelt field and a target list under the wrong key are rejected."""
    probe = one(manifests, "Probe", "dominos-probe-grpc")
    misspelt = yaml.safe_load(yaml.safe_dump(probe))
    misspelt["spec"]["jobname"] = misspelt["spec"].pop("jobName")
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(misspelt, PROBE_SCHEMA)
    wrong_key = yaml.safe_load(yaml.safe_dump(probe))
    static = wrong_key["spec"]["targets"]["staticConfig"]
    static["targets"] = static.pop("static")
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(wrong_key, PROBE_SCHEMA)


def test_the_probes_are_selected_like_the_other_monitors(manifests: list[Manifest]) -> None:
    """The `release` label of the ServiceMonitors and the PrometheusRule (the operator's
    selectors of a kube-prometheus-stack release)."""
    releases = {
        m["metadata"]["labels"]["release"]
        for m in manifests
        if m["kind"] in ("ServiceMonitor", "PrometheusRule")
    }
    assert releases == {"kube-prometheus-stack"}
    for probe in by_kind(manifests, "Probe").values():
        assert probe["metadata"]["labels"]["release"] in releases


def test_the_probe_alert_watches_exactly_the_probe_jobs(manifests: list[Manifest]) -> None:
    """DominosProbeFailing selects the Probes' jobs, and no ServiceMonitor's job."""
    (rule,) = [r for r in load_alert_rules() if r["alert"] == "DominosProbeFailing"]
    (selector,) = re.findall(r'probe_success\{job=~"([^"]+)"\}', str(rule["expr"]))
    probes = {p["spec"]["jobName"] for p in by_kind(manifests, "Probe").values()}
    monitors = set(by_kind(manifests, "ServiceMonitor"))
    assert probes and all(re.fullmatch(selector, job) for job in probes)
    assert not any(re.fullmatch(selector, job) for job in monitors)
    assert rule["for"] == "2m" and rule["labels"]["severity"] == "critical"


def test_every_overlay_lists_the_probe_targets_component() -> None:
    """Without it the targets keep the base's placeholder namespace (the rendered check above
    covers dev and prod; this is for the next overlay)."""
    for overlay in sorted((DEPLOY / "k8s" / "overlays").iterdir()):
        kustomization = yaml.safe_load((overlay / "kustomization.yaml").read_text())
        assert "../../components/probe-targets" in kustomization.get("components", []), overlay


# -- the network path ---------------------------------------------------------------------------


def test_the_blackbox_exporter_reaches_the_public_ports_only(manifests: list[Manifest]) -> None:
    """The exporter (namespace `monitoring`, the chart's pod label) reaches the gateway's
    grpc and web ports, as clients and browsers do, through dominos-gateway-ingress; not the
    gateway's metrics port, nor any other service."""
    c = Cluster(manifests)
    exporter = Pod(
        "blackbox exporter",
        "monitoring",
        {"app.kubernetes.io/name": "prometheus-blackbox-exporter"},
        {"kubernetes.io/metadata.name": "monitoring"},
    )
    gateway = c.gateway.named_ports
    allowed = [
        (exporter, c.gateway, gateway["grpc"]),
        (exporter, c.gateway, gateway["web"]),
        (c.outside, c.gateway, gateway["web"]),
        (c.stranger, c.gateway, gateway["web"]),
    ]
    denied = [
        (exporter, c.gateway, gateway["metrics"]),
        *((exporter, pod, pod.named_ports["grpc"]) for pod in (c.table, c.timer, c.bots)),
        (exporter, c.redis, 6379),
        (exporter, c.nats, 4222),
    ]
    check(c.policies, allowed, denied)
    # The opening is dominos-gateway-ingress: without it, the exporter gets nothing.
    others = [p for p in c.policies if p["metadata"]["name"] != "dominos-gateway-ingress"]
    assert not connection_allowed(others, exporter, c.gateway, gateway["grpc"])
    assert not connection_allowed(others, exporter, c.gateway, gateway["web"])


# -- the runbook --------------------------------------------------------------------------------


def test_the_readme_says_how_to_run_the_exporter() -> None:
    readme = DEPLOY_README.read_text()
    section = readme[readme.index("- **Black-box probes**") : readme.index("- **Dashboard**")]
    for needed in (
        "deploy/prometheus/blackbox.yml",
        PROBER_URL,
        "dominos-gateway-ingress",
        "configExistingSecretName",
        *PROBES,
        *(module for module, _, _ in PROBES.values()),
        *TLS_MODULES,
    ):
        assert needed in section, needed
    # The chart reads its configuration from the key `blackbox.yaml` of that Secret.
    assert "--from-file=blackbox.yaml=deploy/prometheus/blackbox.yml" in section
    runbook = readme[readme.index("### DominosProbeFailing") :].split("\n## ")[0]
    assert "debug=true" in runbook and "dominos-gateway-ingress" in runbook
