"""The Kubernetes manifests: each overlay rendered by ``kubectl kustomize``, validated strictly
against the Kubernetes OpenAPI schemas (kubernetes-validate), then checked for the hygiene
the services need: probes, resources, security context, ports, grace, policies, settings."""

from __future__ import annotations

import base64
import copy
import inspect
import json
import re
from typing import Any
from urllib.parse import urlsplit

import jsonschema
import kubernetes_validate  # type: ignore[import-untyped]
import pytest
import yaml
from kubernetes_validate.utils import (  # type: ignore[import-untyped]
    SchemaNotFoundError,
    latest_version,
)

from services.common.grpc_server import ServiceRuntime
from services.common.settings import Settings

from .conftest import DEPLOY, DEPLOY_README, PROD_IMAGE
from .netpol import Pod, connection_allowed, selects

Manifest = dict[str, Any]

#: Oldest Kubernetes the manifests support (preStop `sleep` is on by default from 1.30;
#: native gRPC probes are GA since 1.27), and the newest schema kubernetes-validate ships.
KUBERNETES_VERSIONS = ("1.30.0", latest_version())
SERVICES = ("table", "timer", "gateway", "bots")
#: The services with a Redis identity (URL, password, a route to Redis): the bots service
#: keeps nothing, connects to NATS and the table service only.
REDIS_CLIENTS = ("table", "timer", "gateway")
AUTOSCALED = ("table", "gateway")
#: Fixed replica counts (no autoscaler): prod (from base), dev.
FIXED_REPLICAS = {"timer": {"prod": 2, "dev": 1}, "bots": {"prod": 2, "dev": 1}}
UID = 10001
#: Secrets that are not rendered, by overlay: created out of band (deploy/README.md).
EXTERNAL_SECRETS = {"dev": set(), "prod": {"dominos-secrets"}}
#: The services' Secret.
SECRET = "dominos-secrets"
#: Per service, every variable it takes from the Secret and the key it comes from: each
#: service its own Redis and NATS password (its identity; the bots service NATS only), the
#: table service the token secret and its callers, the gateway and the bots service their
#: caller credentials; nothing else.
SECRET_REFS: dict[str, dict[str, str]] = {
    "table": {
        "REDIS_PASSWORD": "redis-password-table",
        "NATS_PASSWORD": "nats-password-table",
        "DOMINOS_TOKEN_SECRET": "token-secret",
        "DOMINOS_TABLE_CALLERS": "table-callers",
    },
    "timer": {
        "REDIS_PASSWORD": "redis-password-timer",
        "NATS_PASSWORD": "nats-password-timer",
    },
    "gateway": {
        "REDIS_PASSWORD": "redis-password-gateway",
        "NATS_PASSWORD": "nats-password-gateway",
        "DOMINOS_CALLER_CREDENTIAL": "gateway-credential",
    },
    "bots": {
        "NATS_PASSWORD": "nats-password-bots",
        "DOMINOS_CALLER_CREDENTIAL": "bots-credential",
    },
}
SECRET_KEYS = {key for refs in SECRET_REFS.values() for key in refs.values()}
#: Stand-ins for the production Secret (created out of band), in the formats deploy/README.md
#: prescribes; the table service accepts two gateway credentials, as during a rotation, and
#: the bots service's.
PROD_SECRET_VALUES = {
    "token-secret": "0123456789abcdef0123456789abcdef",
    "table-callers": (
        "gateway.p0ldGatewayCallerSecret,gateway.pn3wGatewayCallerSecret,bots.pBotsCallerSecret0"
    ),
    "gateway-credential": "gateway.pn3wGatewayCallerSecret",
    "bots-credential": "bots.pBotsCallerSecret0",
    **{f"redis-password-{service}": f"pRedis{service}0123456789" for service in REDIS_CLIENTS},
    **{f"nats-password-{service}": f"pNats{service}0123456789" for service in SERVICES},
}
#: Variables that carry a secret: never in the ConfigMap.
SECRET_VARIABLES = {
    "DOMINOS_TOKEN_SECRET",
    "DOMINOS_TABLE_CALLERS",
    "DOMINOS_CALLER_CREDENTIAL",
    "DOMINOS_REDIS_URL",
    "DOMINOS_NATS_URL",
}
#: A password both nats-server (a config token: a letter first, then letters and digits)
#: and a URL (no escaping) take as it is.
PASSWORD = re.compile(r"[A-Za-z][A-Za-z0-9]{7,}")

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


_REFERENCE = re.compile(r"\$\$|\$\(([A-Za-z_][A-Za-z0-9_]*)\)")


def expand(value: str, defined: dict[str, str]) -> str:
    """Kubernetes' dependent environment variables: ``$(VAR)`` of a variable defined before
    (by ``envFrom``, or higher in ``env``) is replaced, ``$$`` is a literal ``$``, any other
    reference stays as written (as the kubelet does)."""

    def replace(match: re.Match[str]) -> str:
        if match.group(0) == "$$":
            return "$"
        return defined.get(match.group(1), match.group(0))

    return _REFERENCE.sub(replace, value)


def secret_value(overlay: str, manifests: list[Manifest], name: str, key: str) -> str:
    """The value of ``key`` in the Secret ``name``: rendered (dev), or the stand-in of an
    external one (prod)."""
    if name in EXTERNAL_SECRETS[overlay]:
        assert key in PROD_SECRET_VALUES, f"{name} has no key {key} (deploy/README.md)"
        return PROD_SECRET_VALUES[key]
    secrets = by_kind(manifests, "Secret")
    assert name in secrets, f"no Secret {name}"
    data = secrets[name]["data"]
    assert key in data, f"Secret {name} has no key {key}"
    return base64.b64decode(data[key]).decode()


def container_env(overlay: str, manifests: list[Manifest], service: str) -> dict[str, str]:
    """The environment the kubelet gives the container: ``envFrom`` ConfigMaps first, then
    ``env`` in order, each value expanded (:func:`expand`), Secret keys read."""
    container = container_of(manifests, service)
    config_maps = by_kind(manifests, "ConfigMap")
    env: dict[str, str] = {}
    for source in container["envFrom"]:
        env.update(config_maps[source["configMapRef"]["name"]]["data"])
    for var in container.get("env", []):
        if "value" in var:
            env[var["name"]] = expand(var["value"], env)
        else:
            ref = var["valueFrom"]["secretKeyRef"]
            env[var["name"]] = secret_value(overlay, manifests, ref["name"], ref["key"])
    return env


def secret_refs(manifests: list[Manifest], service: str) -> dict[str, dict[str, Any]]:
    """The container's variables that come from a Secret, with their ``secretKeyRef``."""
    return {
        var["name"]: var["valueFrom"]["secretKeyRef"]
        for var in container_of(manifests, service).get("env", [])
        if "valueFrom" in var
    }


def settings_of(overlay: str, manifests: list[Manifest], service: str) -> Settings:
    return Settings.from_env(container_env(overlay, manifests, service))


# -- schemas ----------------------------------------------------------------------------------


@pytest.mark.parametrize("version", KUBERNETES_VERSIONS)
def test_every_manifest_validates_strictly(manifests: list[Manifest], version: str) -> None:
    checked = 0
    for manifest in manifests:
        if manifest["kind"] in ("ServiceMonitor", "PrometheusRule", "Probe"):
            continue  # CRDs: checked against their own schema (test_alerts, test_probes)
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
    container = container_of(manifests, service)
    ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    env = {e["name"]: e.get("value") for e in container.get("env", ())}
    expected = {
        "grpc": int(data["DOMINOS_GRPC_PORT"]),
        "metrics": int(data["DOMINOS_METRICS_PORT"]),
    }
    if service == "gateway":  # the web edge (Connect, gRPC-Web), on the gateway only
        expected["web"] = int(env["DOMINOS_WEB_PORT"])
    else:
        assert "DOMINOS_WEB_PORT" not in env and "DOMINOS_WEB_PORT" not in data
    assert ports == expected


def test_the_prod_ingress_reaches_the_web_port_and_streams_unbuffered(
    rendered_overlays: dict[str, list[Manifest]],
) -> None:
    """Browsers come in through the Ingress to the gateway's `web` port; view streams are
    long responses, which a buffering proxy would hold back."""
    manifests = rendered_overlays["prod"]
    (ingress,) = [m for m in manifests if m["kind"] == "Ingress"]
    annotations = ingress["metadata"]["annotations"]
    assert annotations["nginx.ingress.kubernetes.io/proxy-buffering"] == "off"
    assert int(annotations["nginx.ingress.kubernetes.io/proxy-read-timeout"]) >= 3600
    (rule,) = ingress["spec"]["rules"]
    backend = rule["http"]["paths"][0]["backend"]["service"]
    assert backend == {"name": "dominos-gateway", "port": {"name": "web"}}
    assert ingress["spec"]["tls"][0]["hosts"] == [rule["host"]]


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


def cpu_cores(quantity: str) -> float:
    """A Kubernetes CPU quantity in cores ("1", "500m", "1.5")."""
    return int(quantity[:-1]) / 1000 if quantity.endswith("m") else float(quantity)


@pytest.mark.parametrize("service", SERVICES)
def test_cpu_limit_is_at_most_one_core(manifests: list[Manifest], service: str) -> None:
    """One process, one event loop: a limit above one core is never used (deploy/README.md,
    prod scale-up.yaml); the request stays below the limit so throttling is visible."""
    resources = container_of(manifests, service)["resources"]
    limit = cpu_cores(str(resources["limits"]["cpu"]))
    assert limit <= 1, f"{service}: CPU limit {limit} cores for a single event loop"
    assert cpu_cores(str(resources["requests"]["cpu"])) <= limit


def test_cpu_quantities_parse() -> None:
    assert cpu_cores("2") == 2 and cpu_cores("500m") == 0.5 and cpu_cores("1") == 1


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
    """The container's DOMINOS_* environment, as the kubelet builds it, is valid and has no
    misspelt variable (helper variables have no DOMINOS_ prefix) and no unexpanded
    reference (each is defined before it is used)."""
    env = container_env(overlay, manifests, service)
    assert Settings.unknown_variables(env) == []
    unexpanded = {name: value for name, value in env.items() if _REFERENCE.search(value)}
    assert not unexpanded, f"{service}: references to undefined variables: {unexpanded}"
    settings = Settings.from_env(env)
    assert settings.service_name == f"dominos-{service}"
    assert settings.grpc_port == int(env["DOMINOS_GRPC_PORT"])
    # Prometheus scrapes the pod IP: the metrics endpoint must not listen on loopback only.
    assert settings.metrics_host == "0.0.0.0"


@pytest.mark.parametrize("service", SERVICES)
def test_each_service_connects_as_its_own_identity(
    overlay: str, manifests: list[Manifest], service: str
) -> None:
    """DOMINOS_REDIS_URL and DOMINOS_NATS_URL carry the service's own user and its own
    password from the Secret, and point at the charts' Services. The bots service has no
    Redis URL (nor a Redis password): it keeps nothing."""
    settings = settings_of(overlay, manifests, service)
    env = container_env(overlay, manifests, service)
    if service in REDIS_CLIENTS:
        redis = urlsplit(settings.redis_url)
        assert redis.scheme == "redis"
        assert redis.username == service
        assert redis.password == secret_value(
            overlay, manifests, SECRET, f"redis-password-{service}"
        )
        assert (redis.hostname, redis.port, redis.path) == ("redis-master", 6379, "/0")
    else:
        assert "DOMINOS_REDIS_URL" not in env and "REDIS_PASSWORD" not in env, service
    [nats_url] = settings.nats_servers
    nats = urlsplit(nats_url)
    assert nats.scheme == "nats"
    assert nats.username == service
    assert nats.password == secret_value(overlay, manifests, SECRET, f"nats-password-{service}")
    assert (nats.hostname, nats.port) == ("nats", 4222)


@pytest.mark.parametrize("service", SERVICES)
def test_secret_references(overlay: str, manifests: list[Manifest], service: str) -> None:
    """Each service reads exactly its own keys of dominos-secrets: no other service's
    password, the token secret and the callers for the table service only, the caller
    credential for the gateway only."""
    refs = secret_refs(manifests, service)
    assert refs == {
        variable: {"name": SECRET, "key": key} for variable, key in SECRET_REFS[service].items()
    }
    rendered = set(by_kind(manifests, "Secret"))
    assert SECRET in rendered | EXTERNAL_SECRETS[overlay]


@pytest.mark.parametrize("service", SERVICES)
def test_no_password_in_the_pod_spec(overlay: str, manifests: list[Manifest], service: str) -> None:
    """The URLs in the Deployment reference the passwords; the kubelet expands them."""
    deployment = json.dumps(one(manifests, "Deployment", f"dominos-{service}"))
    env = {var["name"]: var for var in container_of(manifests, service)["env"]}
    urls = ["DOMINOS_NATS_URL"] + (["DOMINOS_REDIS_URL"] if service in REDIS_CLIENTS else [])
    for variable in urls:
        assert "$(" in env[variable]["value"], variable
    for key in SECRET_REFS[service].values():
        assert secret_value(overlay, manifests, SECRET, key) not in deployment, key


def test_secrets_stay_out_of_the_config_map(overlay: str, manifests: list[Manifest]) -> None:
    data = settings_data(manifests)
    assert not set(data) & SECRET_VARIABLES
    for name, value in data.items():
        assert "@" not in value, f"{name}: credentials in a URL belong in the Secret"
        for key in SECRET_KEYS:
            assert secret_value(overlay, manifests, SECRET, key) not in value, (name, key)


def test_the_table_accepts_the_gateways_credential(overlay: str, manifests: list[Manifest]) -> None:
    """The gateway's credential is one of the table service's callers, and both services
    would start outside development mode with these values (no built-in secret)."""
    table, gateway = (
        container_env(overlay, manifests, service) for service in ("table", "gateway")
    )
    callers = table["DOMINOS_TABLE_CALLERS"].split(",")
    assert gateway["DOMINOS_CALLER_CREDENTIAL"] in callers
    assert {caller.partition(".")[0] for caller in callers} == {"gateway", "bots"}
    for env, required in (
        (table, ("DOMINOS_TOKEN_SECRET", "DOMINOS_TABLE_CALLERS")),
        (gateway, ("DOMINOS_CALLER_CREDENTIAL",)),
    ):
        production = {k: v for k, v in env.items() if k != "DOMINOS_DEVELOPMENT"}
        Settings.from_env(production).require_secrets(*required)


def test_the_table_accepts_the_bots_credential(overlay: str, manifests: list[Manifest]) -> None:
    """The bots service presents `bots.<secret>`, one of the table service's callers (next
    to the gateway's), and would start outside development mode with it."""
    table, bots, gateway = (
        container_env(overlay, manifests, service) for service in ("table", "bots", "gateway")
    )
    callers = table["DOMINOS_TABLE_CALLERS"].split(",")
    credential = bots["DOMINOS_CALLER_CREDENTIAL"]
    assert credential.startswith("bots.") and credential in callers
    assert credential != gateway["DOMINOS_CALLER_CREDENTIAL"]
    # Parsed as the table service parses them: the bots caller is among its accepted ones.
    accepted = Settings.from_env({"DOMINOS_TABLE_CALLERS": table["DOMINOS_TABLE_CALLERS"]})
    assert credential in accepted.table_callers.split(",")
    production = {k: v for k, v in bots.items() if k != "DOMINOS_DEVELOPMENT"}
    Settings.from_env(production).require_secrets("DOMINOS_CALLER_CREDENTIAL")


def test_development_mode_in_the_dev_overlay_only(overlay: str, manifests: list[Manifest]) -> None:
    data = settings_data(manifests)
    if overlay == "dev":
        assert data["DOMINOS_DEVELOPMENT"] == "1"
    else:
        assert "DOMINOS_DEVELOPMENT" not in data
    for service in SERVICES:
        names = {var["name"] for var in container_of(manifests, service).get("env", [])}
        assert "DOMINOS_DEVELOPMENT" not in names, service
        assert settings_of(overlay, manifests, service).development is (overlay == "dev")


def test_secret_keys_are_documented(rendered_overlays: dict[str, list[Manifest]]) -> None:
    """The keys the Deployments read = the keys of the dev Secret = the keys of the table in
    deploy/README.md "3. The Secret" (what operators create in production)."""
    readme = DEPLOY_README.read_text()
    section = readme[readme.index("### 3. The Secret") : readme.index("### 4. ")]
    documented = set(re.findall(r"^\| `([a-z-]+)` \|", section, re.M))
    dev = one(rendered_overlays["dev"], "Secret", SECRET)
    assert documented == SECRET_KEYS
    assert set(dev["data"]) == SECRET_KEYS
    assert set(PROD_SECRET_VALUES) == SECRET_KEYS


def test_passwords_suit_nats_and_urls(rendered_overlays: dict[str, list[Manifest]]) -> None:
    """Every password of the dev overlay's Secrets (and of the production stand-ins) is one
    nats-server reads as a config token and a URL carries unescaped."""
    dev = rendered_overlays["dev"]
    checked = 0
    for name, secret in by_kind(dev, "Secret").items():
        for key in secret["data"]:
            if name != SECRET or "password" in key:
                assert PASSWORD.fullmatch(secret_value("dev", dev, name, key)), (name, key)
                checked += 1
    assert checked >= len(SERVICES) * 2
    for key, value in PROD_SECRET_VALUES.items():
        if "password" in key:
            assert PASSWORD.fullmatch(value), key


def helm_values(name: str) -> dict[str, Any]:
    values: dict[str, Any] = yaml.safe_load((DEPLOY / "helm" / name).read_text())
    return values


def test_dev_chart_secrets_hold_the_services_passwords(
    rendered_overlays: dict[str, list[Manifest]],
) -> None:
    """The dev overlay renders every Secret key the charts' values read, and the users the
    charts create have the passwords the services connect with."""
    dev = rendered_overlays["dev"]
    # NATS: `password: << $VAR >>` per user, VAR from a secretKeyRef in container.env.
    nats = helm_values("nats-values.yaml")
    env_refs = {
        name: var["valueFrom"]["secretKeyRef"]
        for name, var in nats["container"]["env"].items()
        if isinstance(var, dict) and "valueFrom" in var
    }
    nats_users = {
        user["user"]: user["password"] for user in nats["config"]["merge"]["authorization"]["users"]
    }
    for service in SERVICES:
        variable = re.fullmatch(r"<< \$(\w+) >>", nats_users[service])
        assert variable, f"NATS user {service}: password not from the environment"
        ref = env_refs[variable.group(1)]
        assert secret_value("dev", dev, ref["name"], ref["key"]) == secret_value(
            "dev", dev, SECRET, f"nats-password-{service}"
        ), service
    for ref in env_refs.values():
        secret_value("dev", dev, ref["name"], ref["key"])  # every key exists
    # Redis (Bitnami): the chart's own password, and one key per ACL user (its name).
    auth = helm_values("redis-values.yaml")["auth"]
    secret_value("dev", dev, auth["existingSecret"], auth["existingSecretPasswordKey"])
    for user in auth["acl"]["users"]:
        password = secret_value("dev", dev, auth["acl"]["userSecret"], user["username"])
        if user["username"] in REDIS_CLIENTS:
            expected = secret_value("dev", dev, SECRET, f"redis-password-{user['username']}")
            assert password == expected, user["username"]


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


def quantity_bytes(quantity: str) -> float:
    """A Kubernetes memory quantity (``512Mi``, ``1G``, ``1000``) in bytes."""
    units = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "K": 1e3, "M": 1e6, "G": 1e9}
    for suffix, factor in units.items():
        if quantity.endswith(suffix):
            return float(quantity.removesuffix(suffix)) * factor
    return float(quantity)


@pytest.mark.parametrize("service", AUTOSCALED)
def test_autoscaled_on_cpu_and_the_gateway_on_memory(
    manifests: list[Manifest], service: str
) -> None:
    name = f"dominos-{service}"
    hpa = one(manifests, "HorizontalPodAutoscaler", name)
    assert hpa["apiVersion"] == "autoscaling/v2"
    assert hpa["spec"]["scaleTargetRef"] == {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "name": name,
    }
    metrics = {m["resource"]["name"]: m["resource"]["target"] for m in hpa["spec"]["metrics"]}
    assert all(m["type"] == "Resource" for m in hpa["spec"]["metrics"])
    assert metrics["cpu"] == {"type": "Utilization", "averageUtilization": 70}
    if service == "gateway":
        # Issue 15: a gateway is bound by memory per open stream, not by CPU: it scales out
        # on memory before a pod reaches its limit.
        limit = quantity_bytes(container_of(manifests, service)["resources"]["limits"]["memory"])
        assert metrics["memory"]["type"] == "AverageValue"
        assert quantity_bytes(metrics["memory"]["averageValue"]) <= 0.75 * limit
    else:
        assert set(metrics) == {"cpu"}
    assert 1 <= hpa["spec"]["minReplicas"] <= hpa["spec"]["maxReplicas"]
    # The autoscaler owns the count: a `replicas` in the Deployment would fight it at each apply.
    assert "replicas" not in one(manifests, "Deployment", name)["spec"]


@pytest.mark.parametrize("service", sorted(FIXED_REPLICAS))
def test_timer_and_bots_are_not_autoscaled(
    overlay: str, manifests: list[Manifest], service: str
) -> None:
    """Fixed counts: two replicas in production (redundancy: claims / the work queue make
    the second one safe), one in development."""
    assert f"dominos-{service}" not in by_kind(manifests, "HorizontalPodAutoscaler")
    replicas = one(manifests, "Deployment", f"dominos-{service}")["spec"]["replicas"]
    assert replicas == FIXED_REPLICAS[service][overlay]


def test_every_service_is_autoscaled_or_fixed() -> None:
    assert sorted((*AUTOSCALED, *FIXED_REPLICAS)) == sorted(SERVICES)


def test_prod_sizes(rendered_overlays: dict[str, list[Manifest]]) -> None:
    prod = rendered_overlays["prod"]
    for service in AUTOSCALED:
        assert (
            one(prod, "HorizontalPodAutoscaler", f"dominos-{service}")["spec"]["minReplicas"] >= 3
        )
    # Public: the gRPC port alone, on a Service of its own (test_exposure pins every port).
    assert one(prod, "Service", "dominos-gateway-public")["spec"]["type"] == "LoadBalancer"
    assert one(prod, "Service", "dominos-gateway")["spec"]["type"] == "ClusterIP"
    table = one(prod, "Service", "dominos-table")["spec"]
    # Headless: the gateways' and bots' DNS target lists every table replica, for
    # table-affine routing (a ClusterIP would pin each gateway to one replica).
    assert table["type"] == "ClusterIP" and table["clusterIP"] == "None"
    # From a registry, by digest: the image make deploy-render was given (test_prod_image).
    assert container_of(prod, "gateway")["image"] == PROD_IMAGE


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

#: The pods of the charts, with the labels and named ports they get (release names `nats`
#: and `redis`): nats-io/k8s chart `nats` (servers: component `nats`; nats-box: component
#: `nats-box`) and Bitnami `redis` (one StatefulSet of Redis + Sentinel + exporter pods).
NATS_LABELS = {
    "app.kubernetes.io/name": "nats",
    "app.kubernetes.io/instance": "nats",
    "app.kubernetes.io/component": "nats",
}
NATS_PORTS = {"nats": 4222, "cluster": 6222, "monitor": 8222, "prom-metrics": 7777}
NATS_BOX_LABELS = {**NATS_LABELS, "app.kubernetes.io/component": "nats-box"}
REDIS_LABELS = {
    "app.kubernetes.io/name": "redis",
    "app.kubernetes.io/instance": "redis",
    "app.kubernetes.io/component": "node",
}
REDIS_PORTS = {"redis": 6379, "redis-sentinel": 26379, "metrics": 9121}


class Cluster:
    """The endpoints the reachability tests talk about, in the namespace of ``manifests``."""

    def __init__(self, manifests: list[Manifest]) -> None:
        policies = list(by_kind(manifests, "NetworkPolicy").values())
        (ns,) = {p["metadata"]["namespace"] for p in policies}
        self.policies, self.ns = policies, ns

        def ours(service: str) -> Pod:
            template = one(manifests, "Deployment", f"dominos-{service}")["spec"]["template"]
            (container,) = template["spec"]["containers"]
            ports = {p["name"]: p["containerPort"] for p in container["ports"]}
            return Pod(service, ns, template["metadata"]["labels"], {}, ports)

        def other_namespace(name: str, namespace: str, labels: dict[str, str]) -> Pod:
            return Pod(name, namespace, labels, {"kubernetes.io/metadata.name": namespace})

        self.table, self.timer, self.gateway = ours("table"), ours("timer"), ours("gateway")
        self.bots = ours("bots")
        self.services = (self.table, self.timer, self.gateway, self.bots)
        #: The services that keep state in Redis (the bots service keeps nothing).
        self.redis_clients = (self.table, self.timer, self.gateway)
        self.nats = Pod("nats-0", ns, NATS_LABELS, {}, NATS_PORTS)
        self.nats2 = Pod("nats-1", ns, NATS_LABELS, {}, NATS_PORTS)
        self.nats_box = Pod("nats-box", ns, NATS_BOX_LABELS)
        self.redis = Pod("redis-node-0", ns, REDIS_LABELS, {}, REDIS_PORTS)
        self.redis2 = Pod("redis-node-1", ns, REDIS_LABELS, {}, REDIS_PORTS)
        self.dns = other_namespace("dns", "kube-system", {"k8s-app": "kube-dns"})
        #: NodeLocal DNSCache: a hostNetwork pod on every node, reached at the link-local
        #: 169.254.20.10 (or at the kube-dns Service IP, not DNATed): no selector matches it.
        self.node_local_dns = Pod("node-local-dns at 169.254.20.10", None)
        self.prometheus = other_namespace(
            "prometheus", "monitoring", {"app.kubernetes.io/name": "prometheus"}
        )
        self.neighbour = Pod("another pod of the namespace", ns, {"app": "other"})
        self.stranger = other_namespace("a pod of another namespace", "other", {"app": "other"})
        #: Labelled like our pods, but in another namespace.
        self.impostor = other_namespace(
            "a dominos-table look-alike elsewhere", "other", dict(self.table.labels)
        )
        #: Labelled like Prometheus, but not in `monitoring`.
        self.fake_prometheus = other_namespace(
            "a prometheus look-alike elsewhere", "other", {"app.kubernetes.io/name": "prometheus"}
        )
        self.outside = Pod.outside()


def check(policies: list[Manifest], allowed: list[Any], denied: list[Any]) -> None:
    for src, dst, port in allowed:
        assert connection_allowed(policies, src, dst, port), f"{src.name} -> {dst.name}:{port}"
    for src, dst, port in denied:
        assert not connection_allowed(policies, src, dst, port), f"{src.name} -> {dst.name}:{port}"


def test_network_policies(manifests: list[Manifest]) -> None:
    c = Cluster(manifests)
    table, timer, gateway, bots = c.table, c.timer, c.gateway, c.bots
    grpc, metrics = gateway.named_ports["grpc"], gateway.named_ports["metrics"]

    allowed = [
        (c.outside, gateway, grpc),
        (c.stranger, gateway, grpc),
        (gateway, table, grpc),
        (bots, table, grpc),
        *((c.prometheus, pod, metrics) for pod in c.services),
        *((pod, c.redis, 6379) for pod in c.redis_clients),
        *((pod, c.nats, 4222) for pod in c.services),
    ]
    denied = [
        (c.outside, table, grpc),
        (c.stranger, table, grpc),
        (c.neighbour, table, grpc),
        (timer, table, grpc),
        (table, gateway, grpc),
        (c.outside, gateway, metrics),
        (c.stranger, gateway, metrics),
        (c.neighbour, timer, grpc),
        (gateway, timer, grpc),
        (gateway, table, metrics),
        (c.outside, timer, metrics),
        (c.prometheus, table, grpc),
        (c.fake_prometheus, table, metrics),
        (table, c.stranger, 443),
        (gateway, c.outside, 443),
        (timer, c.redis, 26379),
        # Nothing reaches the bots pods but Prometheus' scrape (and the kubelet's probes).
        *((pod, bots, grpc) for pod in (c.outside, c.stranger, c.neighbour, table, gateway, timer)),
        *((pod, bots, metrics) for pod in (c.outside, c.stranger, c.neighbour, c.fake_prometheus)),
        (c.prometheus, bots, grpc),
        # The bots service calls the table service's gRPC port and nothing else of ours.
        (bots, gateway, grpc),
        (bots, timer, grpc),
        (bots, table, metrics),
        (bots, c.outside, 443),
        (bots, c.stranger, 443),
        (bots, c.redis, 6379),
    ]
    check(c.policies, allowed, denied)
    for pod in c.services:
        assert connection_allowed(c.policies, pod, c.dns, 53, "UDP")
        assert connection_allowed(c.policies, pod, c.dns, 53, "TCP")


def test_dns_works_with_node_local_dns_cache(manifests: list[Manifest]) -> None:
    """DNS egress is open on port 53 whatever answers it (kube-dns pods, or the node-local
    cache, which pod selectors cannot match), and that opening is DNS only."""
    c = Cluster(manifests)
    for pod in c.services:
        for protocol in ("UDP", "TCP"):
            assert connection_allowed(c.policies, pod, c.node_local_dns, 53, protocol)
            assert connection_allowed(c.policies, pod, c.dns, 53, protocol)
        for port in (80, 443, 5353, 6379, 4222):
            assert not connection_allowed(c.policies, pod, c.node_local_dns, port), port
            assert not connection_allowed(c.policies, pod, c.stranger, port), port
        # Only the egress side opens: nobody may send to the Dominos pods on 53.
        assert not connection_allowed(c.policies, c.neighbour, pod, 53, "UDP")


def test_network_policies_of_nats(manifests: list[Manifest]) -> None:
    """Clients on 4222: the four services and the operators' nats-box only; cluster routes
    (6222) between NATS servers only; the exporter to Prometheus only."""
    c = Cluster(manifests)
    nats, exporter = c.nats, NATS_PORTS["prom-metrics"]
    allowed = [
        *((pod, nats, 4222) for pod in c.services),
        (c.nats_box, nats, 4222),
        (c.nats2, nats, 6222),
        (nats, c.nats2, 6222),
        (c.prometheus, nats, exporter),
    ]
    denied = [
        *((pod, nats, 4222) for pod in (c.neighbour, c.stranger, c.impostor, c.outside)),
        *((pod, nats, 4222) for pod in (c.redis, c.prometheus)),
        *((pod, nats, 6222) for pod in (*c.services, c.nats_box, c.neighbour, c.outside)),
        *((pod, nats, 8222) for pod in (*c.services, c.neighbour, c.outside)),
        *((pod, nats, exporter) for pod in (c.neighbour, c.fake_prometheus, c.gateway)),
        # nats-box listens on nothing, but is not left open either.
        *((pod, c.nats_box, 4222) for pod in (c.neighbour, c.stranger, c.outside)),
        (c.outside, c.nats_box, 8080),
    ]
    check(c.policies, allowed, denied)


def test_network_policies_of_redis(manifests: list[Manifest]) -> None:
    """6379: the three services that use Redis and the Redis pods (replication, Sentinel)
    only; Sentinel (26379) and the Redis Cluster bus (16379) between Redis pods only; the
    exporter to Prometheus only."""
    c = Cluster(manifests)
    redis, exporter = c.redis, REDIS_PORTS["metrics"]
    allowed = [
        *((pod, redis, 6379) for pod in c.redis_clients),
        (c.redis2, redis, 6379),
        (redis, c.redis2, 6379),
        (c.redis2, redis, 26379),
        (c.redis2, redis, 16379),
        (c.prometheus, redis, exporter),
    ]
    denied = [
        *((pod, redis, 6379) for pod in (c.neighbour, c.stranger, c.impostor, c.outside)),
        *((pod, redis, 6379) for pod in (c.nats, c.nats_box, c.prometheus, c.bots)),
        *((pod, redis, 26379) for pod in (*c.services, c.neighbour, c.stranger, c.outside)),
        *((pod, redis, 16379) for pod in (*c.services, c.neighbour, c.stranger, c.outside)),
        *((pod, redis, exporter) for pod in (c.neighbour, c.fake_prometheus, c.gateway)),
    ]
    check(c.policies, allowed, denied)


def test_the_bots_pods_get_no_redis_access(manifests: list[Manifest]) -> None:
    """The bots service keeps nothing: its pods reach no Redis port, and each side denies
    it on its own (our egress policies, without Redis' ingress policy; Redis' ingress
    policy and the chart's, without our egress ones), so one policy edited too widely still
    leaves them out. They still reach NATS, the table service and DNS."""
    c = Cluster(manifests)
    chart = bitnami_redis_policy(helm_values("redis-values.yaml"), c.ns)
    redis_side = {"dominos-redis-ingress"}
    ours_egress = [p for p in c.policies if p["metadata"]["name"] not in redis_side]
    redis_ingress = [
        p
        for p in (*c.policies, *([chart] if chart else []))
        if p["metadata"]["name"] in redis_side or p is chart
    ]
    assert len(ours_egress) < len(c.policies) and redis_ingress
    for port in (*REDIS_PORTS.values(), 16379):
        for policies in (c.policies, ours_egress, redis_ingress):
            assert not connection_allowed(policies, c.bots, c.redis, port), port
    # ... while the table, timer and gateway pods do reach it, through each side alone too.
    for pod in c.redis_clients:
        for policies in (c.policies, ours_egress, redis_ingress):
            assert connection_allowed(policies, pod, c.redis, 6379), pod.name
    assert connection_allowed(c.policies, c.bots, c.nats, 4222)
    assert connection_allowed(c.policies, c.bots, c.table, c.table.named_ports["grpc"])
    assert connection_allowed(c.policies, c.bots, c.dns, 53, "UDP")


def bitnami_redis_policy(values: dict[str, Any], namespace: str) -> Manifest | None:
    """The NetworkPolicy the Bitnami chart `redis` (23.x, templates/networkpolicy.yaml)
    renders for ``values`` (release `redis`, replication with Sentinel), or None. Parts of
    the template these values do not use raise, so the model cannot drift silently."""
    defaults: dict[str, Any] = {
        "enabled": True,
        "allowExternal": True,
        "allowExternalEgress": True,
        "extraIngress": [],
        "ingressNSMatchLabels": {},
        "ingressNSPodMatchLabels": {},
        "metrics": {
            "allowExternal": True,
            "ingressNSMatchLabels": {},
            "ingressNSPodMatchLabels": {},
        },
    }
    given = values.get("networkPolicy", {})
    policy = {**defaults, **given, "metrics": {**defaults["metrics"], **given.get("metrics", {})}}
    if not policy["enabled"]:
        return None
    if not policy["allowExternalEgress"] or policy.get("extraEgress"):
        raise NotImplementedError("the model covers allowExternalEgress: true only")
    if policy["ingressNSMatchLabels"] or policy["ingressNSPodMatchLabels"]:
        raise NotImplementedError("ingressNS*MatchLabels of the Redis ports")
    match = {"app.kubernetes.io/name": "redis", "app.kubernetes.io/instance": "redis"}
    ports: list[dict[str, Any]] = [{"port": 6379}]
    if values.get("sentinel", {}).get("enabled"):
        ports.append({"port": 26379})
    main: dict[str, Any] = {"ports": ports}
    if not policy["allowExternal"]:
        main["from"] = [
            {"podSelector": {"matchLabels": {"redis-client": "true"}}},
            {"podSelector": {"matchLabels": match}},
        ]
    ingress = [main]
    if values.get("metrics", {}).get("enabled"):
        rule: dict[str, Any] = {"ports": [{"port": REDIS_PORTS["metrics"]}]}
        scrape = policy["metrics"]
        if not scrape["allowExternal"]:
            # An empty `from` (no namespace labels given) lets everyone in, as the chart does.
            peers: list[dict[str, Any]] = []
            if scrape["ingressNSMatchLabels"] or scrape["ingressNSPodMatchLabels"]:
                peer: dict[str, Any] = {
                    "namespaceSelector": {"matchLabels": scrape["ingressNSMatchLabels"]}
                }
                if scrape["ingressNSPodMatchLabels"]:
                    peer["podSelector"] = {"matchLabels": scrape["ingressNSPodMatchLabels"]}
                peers.append(peer)
            rule["from"] = peers
        ingress.append(rule)
    ingress.extend(policy["extraIngress"])
    return {
        "kind": "NetworkPolicy",
        "metadata": {"name": "redis", "namespace": namespace},
        "spec": {
            "podSelector": {"matchLabels": match},
            "policyTypes": ["Ingress", "Egress"],
            "ingress": ingress,
            "egress": [{}],
        },
    }


def test_redis_with_the_charts_own_network_policy(manifests: list[Manifest]) -> None:
    """Policies add up: with the Redis chart's NetworkPolicy (deploy/helm/redis-values.yaml)
    next to ours, Redis and Sentinel are still closed to everything but the services that
    use it and Redis itself."""
    c = Cluster(manifests)
    chart = bitnami_redis_policy(helm_values("redis-values.yaml"), c.ns)
    policies = [*c.policies, *([chart] if chart else [])]
    redis = c.redis
    allowed = [
        *((pod, redis, 6379) for pod in c.redis_clients),
        (c.redis2, redis, 6379),
        (c.redis2, redis, 26379),
        (c.prometheus, redis, REDIS_PORTS["metrics"]),
    ]
    denied = [
        *((pod, redis, 6379) for pod in (c.neighbour, c.stranger, c.impostor, c.outside)),
        *((pod, redis, 6379) for pod in (c.nats, c.nats_box, c.prometheus, c.bots)),
        *((pod, redis, 26379) for pod in (*c.services, c.neighbour, c.stranger, c.outside)),
    ]
    check(policies, allowed, denied)


def test_redis_exporter_only_to_prometheus_with_the_charts_policy(
    manifests: list[Manifest],
) -> None:
    c = Cluster(manifests)
    chart = bitnami_redis_policy(helm_values("redis-values.yaml"), c.ns)
    policies = [*c.policies, *([chart] if chart else [])]
    exporter = REDIS_PORTS["metrics"]
    check(
        policies,
        [(c.prometheus, c.redis, exporter)],
        [(pod, c.redis, exporter) for pod in (c.neighbour, c.fake_prometheus, c.outside)],
    )


def test_the_chart_policy_model_can_fail(manifests: list[Manifest]) -> None:
    """Negative controls of :func:`bitnami_redis_policy`: with the chart's defaults any pod
    reaches Redis despite our policy (policies add up); with the exporter restricted to the
    monitoring namespace, only Prometheus scrapes it."""
    c = Cluster(manifests)
    defaults = bitnami_redis_policy(
        {"sentinel": {"enabled": True}, "metrics": {"enabled": True}}, c.ns
    )
    assert defaults is not None
    assert connection_allowed([*c.policies, defaults], c.neighbour, c.redis, 6379)
    assert connection_allowed([*c.policies, defaults], c.outside, c.redis, 26379)
    restricted = bitnami_redis_policy(
        {
            "metrics": {"enabled": True},
            "networkPolicy": {
                "allowExternal": False,
                "metrics": {
                    "allowExternal": False,
                    "ingressNSMatchLabels": {"kubernetes.io/metadata.name": "monitoring"},
                    "ingressNSPodMatchLabels": {"app.kubernetes.io/name": "prometheus"},
                },
            },
        },
        c.ns,
    )
    assert restricted is not None
    exporter = REDIS_PORTS["metrics"]
    assert connection_allowed([*c.policies, restricted], c.prometheus, c.redis, exporter)
    assert not connection_allowed([*c.policies, restricted], c.neighbour, c.redis, exporter)
    assert not connection_allowed([*c.policies, restricted], c.neighbour, c.redis, 6379)
    assert bitnami_redis_policy({"networkPolicy": {"enabled": False}}, c.ns) is None


def test_policy_evaluator_selectors() -> None:
    """Negative controls of tests/deploy/netpol.py's selectors (matchExpressions included)."""
    labels = {"app.kubernetes.io/name": "dominos-table", "tier": "backend"}
    assert selects({}, labels) and selects(None, labels)
    assert selects({"matchLabels": {"tier": "backend"}}, labels)
    assert not selects({"matchLabels": {"tier": "frontend"}}, labels)
    name_in = {"key": "app.kubernetes.io/name", "operator": "In"}
    assert selects({"matchExpressions": [{**name_in, "values": ["dominos-table"]}]}, labels)
    assert not selects({"matchExpressions": [{**name_in, "values": ["redis"]}]}, labels)
    assert not selects({"matchExpressions": [{**name_in, "values": ["dominos-table"]}]}, {})
    not_in = {"key": "tier", "operator": "NotIn", "values": ["backend"]}
    assert not selects({"matchExpressions": [not_in]}, labels)
    assert selects({"matchExpressions": [not_in]}, {})
    assert selects({"matchExpressions": [{"key": "tier", "operator": "Exists"}]}, labels)
    assert not selects({"matchExpressions": [{"key": "tier", "operator": "DoesNotExist"}]}, labels)
    both = {"matchLabels": {"tier": "backend"}, "matchExpressions": [{**name_in, "values": ["x"]}]}
    assert not selects(both, labels)
    with pytest.raises(NotImplementedError):
        selects({"matchExpressions": [{"key": "tier", "operator": "Gt", "values": ["1"]}]}, labels)
