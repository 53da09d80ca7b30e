"""The Kubernetes manifests: each overlay rendered by ``kubectl kustomize``, validated strictly
against the Kubernetes OpenAPI schemas (kubernetes-validate), then checked for the hygiene
the services need: probes, resources, security context, ports, grace, policies, settings."""

from __future__ import annotations

import base64
import copy
import inspect
from typing import Any

import jsonschema
import kubernetes_validate  # type: ignore[import-untyped]
import pytest
from kubernetes_validate.utils import (  # type: ignore[import-untyped]
    SchemaNotFoundError,
    latest_version,
)

from services.common.grpc_server import ServiceRuntime
from services.common.settings import Settings

from .conftest import OVERLAYS
from .netpol import Pod, connection_allowed

Manifest = dict[str, Any]

#: Oldest Kubernetes the manifests support (preStop `sleep` is on by default from 1.30;
#: native gRPC probes are GA since 1.27), and the newest schema kubernetes-validate ships.
KUBERNETES_VERSIONS = ("1.30.0", latest_version())
SERVICES = ("table", "timer", "gateway")
AUTOSCALED = ("table", "gateway")
UID = 10001
#: Secrets that are not rendered, by overlay: created out of band (deploy/README.md).
EXTERNAL_SECRETS = {"dev": set(), "prod": {"dominos-secrets"}}
CLIENT_SECRETS = {"DOMINOS_TOKEN_SECRET", "DOMINOS_REDIS_URL"}

_DURATION = (
    r"^(0|(([0-9]+)y)?(([0-9]+)w)?(([0-9]+)d)?(([0-9]+)h)?(([0-9]+)m)?(([0-9]+)s)?(([0-9]+)ms)?)$"
)
_STRING_MAP = {"type": "object", "additionalProperties": {"type": "string"}}
#: The part of the ServiceMonitor CRD (monitoring.coreos.com/v1) that our objects use; any
#: other field is rejected, so a typo cannot slip through.
SERVICE_MONITOR_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["apiVersion", "kind", "metadata", "spec"],
    "properties": {
        "apiVersion": {"const": "monitoring.coreos.com/v1"},
        "kind": {"const": "ServiceMonitor"},
        "metadata": {
            "type": "object",
            "additionalProperties": False,
            "required": ["name", "namespace"],
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
            "required": ["selector", "endpoints"],
            "properties": {
                "jobLabel": {"type": "string"},
                "selector": {
                    "type": "object",
                    "additionalProperties": False,
                    "required": ["matchLabels"],
                    "properties": {"matchLabels": _STRING_MAP},
                },
                "endpoints": {
                    "type": "array",
                    "minItems": 1,
                    "items": {
                        "type": "object",
                        "additionalProperties": False,
                        "required": ["port"],
                        "properties": {
                            "port": {"type": "string"},
                            "path": {"type": "string", "pattern": "^/"},
                            "scheme": {"enum": ["http", "https"]},
                            "interval": {"type": "string", "pattern": _DURATION},
                            "scrapeTimeout": {"type": "string", "pattern": _DURATION},
                        },
                    },
                },
            },
        },
    },
}


# -- helpers ----------------------------------------------------------------------------------


def by_kind(manifests: list[Manifest], kind: str) -> dict[str, Manifest]:
    return {m["metadata"]["name"]: m for m in manifests if m["kind"] == kind}


def one(manifests: list[Manifest], kind: str, name: str) -> Manifest:
    found = by_kind(manifests, kind)
    assert name in found, f"no {kind} {name}"
    return found[name]


def settings_data(manifests: list[Manifest]) -> dict[str, str]:
    maps = [
        m
        for m in by_kind(manifests, "ConfigMap").values()
        if "dominos-settings" in m["metadata"]["name"]
    ]
    assert len(maps) == 1
    data: dict[str, str] = maps[0]["data"]
    return data


def container_of(manifests: list[Manifest], service: str) -> dict[str, Any]:
    deployment = one(manifests, "Deployment", f"dominos-{service}")
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    return dict(container)


def seconds(duration: str) -> float:
    units = {"ms": 0.001, "s": 1, "m": 60, "h": 3600}
    for unit in ("ms", "s", "m", "h"):
        if duration.endswith(unit) and duration[: -len(unit)].isdigit():
            return int(duration[: -len(unit)]) * units[unit]
    raise ValueError(duration)


@pytest.fixture(params=OVERLAYS)
def overlay(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def manifests(overlay: str, rendered_overlays: dict[str, list[Manifest]]) -> list[Manifest]:
    return rendered_overlays[overlay]


# -- schemas ----------------------------------------------------------------------------------


@pytest.mark.parametrize("version", KUBERNETES_VERSIONS)
def test_every_manifest_validates_strictly(manifests: list[Manifest], version: str) -> None:
    checked = 0
    for manifest in manifests:
        if manifest["kind"] == "ServiceMonitor":
            continue  # a CRD: checked against its own schema below
        try:
            kubernetes_validate.validate(manifest, version, strict=True)
        except kubernetes_validate.ValidationError as exc:
            path = ".".join(str(p) for p in exc.path)
            pytest.fail(f"{manifest['kind']}/{manifest['metadata']['name']} {path}: {exc.message}")
        except SchemaNotFoundError as exc:
            pytest.fail(exc.message)
        checked += 1
    assert checked >= 17


def test_strict_validation_rejects_unknown_fields(manifests: list[Manifest]) -> None:
    """Negative control: the validator is strict (a misspelt field fails)."""
    deployment = copy.deepcopy(one(manifests, "Deployment", "dominos-table"))
    deployment["spec"]["template"]["spec"]["containers"][0]["readinessProbe"]["grcp"] = {}
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(deployment, KUBERNETES_VERSIONS[-1], strict=True)


def test_service_monitors_match_their_schema_and_services(manifests: list[Manifest]) -> None:
    monitors = by_kind(manifests, "ServiceMonitor")
    services = by_kind(manifests, "Service")
    assert set(monitors) == {f"dominos-{s}" for s in SERVICES}
    for name, monitor in monitors.items():
        jsonschema.validate(monitor, SERVICE_MONITOR_SCHEMA)
        spec = monitor["spec"]
        selected = [
            s
            for s in services.values()
            if spec["selector"]["matchLabels"].items() <= s["metadata"]["labels"].items()
        ]
        assert [s["metadata"]["name"] for s in selected] == [name]
        service = selected[0]
        assert service["metadata"]["labels"][spec["jobLabel"]] == name  # job = dominos-<service>
        port_names = {p["name"] for p in service["spec"]["ports"]}
        for endpoint in spec["endpoints"]:
            assert endpoint["port"] == "metrics" and endpoint["port"] in port_names
            assert endpoint["path"] == "/metrics"
            assert seconds(endpoint["scrapeTimeout"]) <= seconds(endpoint["interval"])


# -- the pods ---------------------------------------------------------------------------------


@pytest.mark.parametrize("service", SERVICES)
def test_container_runs_its_service_from_the_shared_image(
    manifests: list[Manifest], service: str
) -> None:
    container = container_of(manifests, service)
    assert container["command"] == ["python", "-m", f"services.{service}"]
    images = {container_of(manifests, s)["image"] for s in SERVICES}
    assert len(images) == 1, f"one image for all services, got {images}"
    assert not container["image"].endswith(":latest")


@pytest.mark.parametrize("service", SERVICES)
def test_named_ports_match_the_settings(manifests: list[Manifest], service: str) -> None:
    data = settings_data(manifests)
    ports = {p["name"]: p["containerPort"] for p in container_of(manifests, service)["ports"]}
    assert ports == {
        "grpc": int(data["DOMINOS_GRPC_PORT"]),
        "metrics": int(data["DOMINOS_METRICS_PORT"]),
    }


@pytest.mark.parametrize("service", SERVICES)
def test_grpc_probes_on_the_grpc_port(manifests: list[Manifest], service: str) -> None:
    container = container_of(manifests, service)
    grpc_port = {p["name"]: p["containerPort"] for p in container["ports"]}["grpc"]
    for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
        assert probe in container, f"{service}: no {probe}"
        # A grpc probe takes a port number (no named ports): it must equal the `grpc` port.
        assert container[probe]["grpc"] == {"port": grpc_port}, f"{service} {probe}"
    startup = container["startupProbe"]
    assert startup["periodSeconds"] * startup["failureThreshold"] >= 30


@pytest.mark.parametrize("service", SERVICES)
def test_resources_requests_and_limits(manifests: list[Manifest], service: str) -> None:
    resources = container_of(manifests, service)["resources"]
    for section in ("requests", "limits"):
        assert set(resources[section]) == {"cpu", "memory"}, f"{service} {section}"


@pytest.mark.parametrize("service", SERVICES)
def test_security_context(manifests: list[Manifest], service: str) -> None:
    pod = one(manifests, "Deployment", f"dominos-{service}")["spec"]["template"]["spec"]
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert pod["securityContext"]["runAsUser"] == UID
    assert pod["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
    assert pod["automountServiceAccountToken"] is False
    assert pod["enableServiceLinks"] is False
    context = container_of(manifests, service)["securityContext"]
    assert context["runAsNonRoot"] is True
    assert context["runAsUser"] == UID
    assert context["readOnlyRootFilesystem"] is True
    assert context["allowPrivilegeEscalation"] is False
    assert context["capabilities"] == {"drop": ["ALL"]}
    assert context["seccompProfile"] == {"type": "RuntimeDefault"}


@pytest.mark.parametrize("service", SERVICES)
def test_tmp_is_a_writable_empty_dir(manifests: list[Manifest], service: str) -> None:
    pod = one(manifests, "Deployment", f"dominos-{service}")["spec"]["template"]["spec"]
    mounts = {m["mountPath"]: m["name"] for m in container_of(manifests, service)["volumeMounts"]}
    volumes = {v["name"]: v for v in pod["volumes"]}
    assert "emptyDir" in volumes[mounts["/tmp"]]


@pytest.mark.parametrize("service", SERVICES)
def test_termination_grace_outlasts_the_drain(manifests: list[Manifest], service: str) -> None:
    """preStop + drain + grace + one shutdown-hook timeout < termination grace."""
    pod = one(manifests, "Deployment", f"dominos-{service}")["spec"]["template"]["spec"]
    container = container_of(manifests, service)
    pre_stop = container["lifecycle"]["preStop"]["sleep"]["seconds"]
    env = {e["name"]: e.get("value") for e in container.get("env", [])}
    grace = float(
        env.get("DOMINOS_SHUTDOWN_GRACE_SECONDS")
        or settings_data(manifests)["DOMINOS_SHUTDOWN_GRACE_SECONDS"]
    )
    drain = float(
        env.get("DOMINOS_SHUTDOWN_DRAIN_SECONDS")
        or settings_data(manifests)["DOMINOS_SHUTDOWN_DRAIN_SECONDS"]
    )
    hook_timeout = inspect.signature(ServiceRuntime).parameters["hook_timeout_seconds"].default
    assert pod["terminationGracePeriodSeconds"] > pre_stop + drain + grace + hook_timeout


@pytest.mark.parametrize("service", SERVICES)
def test_environment_parses_as_settings(
    overlay: str, manifests: list[Manifest], service: str
) -> None:
    """The container's DOMINOS_* environment is valid and has no misspelt variable."""
    container = container_of(manifests, service)
    config_maps = by_kind(manifests, "ConfigMap")
    secrets = by_kind(manifests, "Secret")
    env: dict[str, str] = {}
    for source in container["envFrom"]:
        env.update(config_maps[source["configMapRef"]["name"]]["data"])
    for var in container.get("env", []):
        if "value" in var:
            env[var["name"]] = var["value"]
            continue
        ref = var["valueFrom"]["secretKeyRef"]
        if ref["name"] in EXTERNAL_SECRETS[overlay]:
            env[var["name"]] = {"DOMINOS_TOKEN_SECRET": "x" * 32}.get(
                var["name"], "redis://:password@redis-master:6379/0"
            )
        else:
            data = secrets[ref["name"]]["data"]
            env[var["name"]] = base64.b64decode(data[ref["key"]]).decode()
    assert Settings.unknown_variables(env) == []
    settings = Settings.from_env(env)
    assert settings.service_name == f"dominos-{service}"
    assert settings.grpc_port == int(env["DOMINOS_GRPC_PORT"])


def test_secrets_stay_out_of_the_config_map(overlay: str, manifests: list[Manifest]) -> None:
    assert not set(settings_data(manifests)) & CLIENT_SECRETS
    table = container_of(manifests, "table")
    refs = {
        var["name"]: var["valueFrom"]["secretKeyRef"] for var in table["env"] if "valueFrom" in var
    }
    assert set(refs) == CLIENT_SECRETS
    rendered = set(by_kind(manifests, "Secret"))
    for ref in refs.values():
        assert ref["name"] in rendered | EXTERNAL_SECRETS[overlay]


# -- objects around the pods ------------------------------------------------------------------


@pytest.mark.parametrize("service", SERVICES)
def test_service_and_disruption_budget_select_the_pods(
    manifests: list[Manifest], service: str
) -> None:
    name = f"dominos-{service}"
    deployment = one(manifests, "Deployment", name)
    pod_labels = deployment["spec"]["template"]["metadata"]["labels"]
    assert deployment["spec"]["selector"]["matchLabels"].items() <= pod_labels.items()
    assert pod_labels["app.kubernetes.io/part-of"] == "dominos"
    svc = one(manifests, "Service", name)
    assert svc["spec"]["selector"].items() <= pod_labels.items()
    container_ports = {p["name"] for p in container_of(manifests, service)["ports"]}
    for port in svc["spec"]["ports"]:
        assert port["targetPort"] in container_ports
    pdb = one(manifests, "PodDisruptionBudget", name)
    assert pdb["spec"]["selector"]["matchLabels"].items() <= pod_labels.items()
    assert pdb["spec"].get("maxUnavailable") == 1


@pytest.mark.parametrize("service", AUTOSCALED)
def test_autoscaled_on_cpu(manifests: list[Manifest], service: str) -> None:
    name = f"dominos-{service}"
    hpa = one(manifests, "HorizontalPodAutoscaler", name)
    assert hpa["apiVersion"] == "autoscaling/v2"
    assert hpa["spec"]["scaleTargetRef"] == {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "name": name,
    }
    (metric,) = hpa["spec"]["metrics"]
    assert metric["type"] == "Resource" and metric["resource"]["name"] == "cpu"
    assert 1 <= hpa["spec"]["minReplicas"] <= hpa["spec"]["maxReplicas"]
    # The autoscaler owns the count: a `replicas` in the Deployment would fight it at each apply.
    assert "replicas" not in one(manifests, "Deployment", name)["spec"]


def test_timer_is_not_autoscaled(overlay: str, manifests: list[Manifest]) -> None:
    assert "dominos-timer" not in by_kind(manifests, "HorizontalPodAutoscaler")
    replicas = one(manifests, "Deployment", "dominos-timer")["spec"]["replicas"]
    assert replicas == (2 if overlay == "prod" else 1)


def test_prod_sizes(rendered_overlays: dict[str, list[Manifest]]) -> None:
    prod = rendered_overlays["prod"]
    for service in AUTOSCALED:
        assert (
            one(prod, "HorizontalPodAutoscaler", f"dominos-{service}")["spec"]["minReplicas"] >= 3
        )
    assert one(prod, "Service", "dominos-gateway")["spec"]["type"] == "LoadBalancer"
    assert one(prod, "Service", "dominos-table")["spec"]["type"] == "ClusterIP"
    image = container_of(prod, "gateway")["image"]
    assert "/" in image and ":" in image.rsplit("/", 1)[1], "prod pulls from a registry, by tag"


def test_everything_in_the_overlay_namespace(overlay: str, manifests: list[Manifest]) -> None:
    (namespace,) = by_kind(manifests, "Namespace").values()
    name = namespace["metadata"]["name"]
    labels = namespace["metadata"]["labels"]
    assert labels["pod-security.kubernetes.io/enforce"] in ("baseline", "restricted")
    assert labels["pod-security.kubernetes.io/warn"] == "restricted"
    for manifest in manifests:
        if manifest["kind"] != "Namespace":
            assert manifest["metadata"]["namespace"] == name, manifest["metadata"]["name"]


# -- network policies ---------------------------------------------------------------------------


def test_network_policies(manifests: list[Manifest]) -> None:
    policies = list(by_kind(manifests, "NetworkPolicy").values())
    (ns,) = {p["metadata"]["namespace"] for p in policies}

    def ours(service: str) -> Pod:
        template = one(manifests, "Deployment", f"dominos-{service}")["spec"]["template"]
        (container,) = template["spec"]["containers"]
        ports = {p["name"]: p["containerPort"] for p in container["ports"]}
        return Pod(service, ns, template["metadata"]["labels"], {}, ports)

    table, timer, gateway = ours("table"), ours("timer"), ours("gateway")
    redis = Pod("redis", ns, {"app.kubernetes.io/name": "redis"})
    nats = Pod("nats", ns, {"app.kubernetes.io/name": "nats"})
    dns = Pod(
        "dns",
        "kube-system",
        {"k8s-app": "kube-dns"},
        {"kubernetes.io/metadata.name": "kube-system"},
    )
    prometheus = Pod(
        "prometheus",
        "monitoring",
        {"app.kubernetes.io/name": "prometheus"},
        {"kubernetes.io/metadata.name": "monitoring"},
    )
    neighbour = Pod("another pod of the namespace", ns, {"app": "other"})
    stranger = Pod(
        "a pod of another namespace",
        "other",
        {"app": "other"},
        {"kubernetes.io/metadata.name": "other"},
    )
    outside = Pod.outside()
    grpc, metrics = gateway.named_ports["grpc"], gateway.named_ports["metrics"]

    allowed = [
        (outside, gateway, grpc),
        (stranger, gateway, grpc),
        (gateway, table, grpc),
        *((prometheus, pod, metrics) for pod in (table, timer, gateway)),
        *((pod, redis, 6379) for pod in (table, timer, gateway)),
        *((pod, nats, 4222) for pod in (table, timer, gateway)),
    ]
    denied = [
        (outside, table, grpc),
        (stranger, table, grpc),
        (neighbour, table, grpc),
        (timer, table, grpc),
        (table, gateway, grpc),
        (outside, gateway, metrics),
        (stranger, gateway, metrics),
        (neighbour, timer, grpc),
        (gateway, timer, grpc),
        (outside, timer, metrics),
        (prometheus, table, grpc),
        (table, stranger, 443),
        (gateway, outside, 443),
        (timer, redis, 26379),
    ]
    for src, dst, port in allowed:
        assert connection_allowed(policies, src, dst, port), f"{src.name} -> {dst.name}:{port}"
    for src, dst, port in denied:
        assert not connection_allowed(policies, src, dst, port), f"{src.name} -> {dst.name}:{port}"
    for pod in (table, timer, gateway):
        assert connection_allowed(policies, pod, dns, 53, "UDP")
        assert connection_allowed(policies, pod, dns, 53, "TCP")
