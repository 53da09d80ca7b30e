"""What each rendered overlay exposes outside the cluster: in production only the gateway's
gRPC port has a public Service (browsers reach the `web` port through the Ingress, metrics
stay inside), in development nothing; and the gateway believes a browser's address from
``X-Forwarded-For`` only from a narrow set of proxies, never a whole private range."""

from __future__ import annotations

import ipaddress
from typing import Any

from .conftest import DEPLOY, DEPLOY_README
from .netpol import Pod, connection_allowed
from .test_k8s import SERVICES, Cluster, by_kind, container_env, one, settings_data, settings_of

Manifest = dict[str, Any]

#: Service types that give a port an address outside the cluster.
PUBLIC_TYPES = frozenset({"LoadBalancer", "NodePort"})
#: The prod overlay's one public Service (overlays/prod/gateway-loadbalancer.yaml).
PUBLIC_SERVICE = "dominos-gateway-public"
#: The Services of base, in every overlay: {name: (how it is reached, sorted port names)};
#: "headless" is a ClusterIP Service without a cluster IP.
IN_CLUSTER = {
    "dominos-table": ("headless", ("grpc", "metrics")),
    "dominos-timer": ("ClusterIP", ("metrics",)),
    "dominos-gateway": ("ClusterIP", ("grpc", "metrics", "web")),
    "dominos-bots": ("ClusterIP", ("metrics",)),
}
#: Every Service of each overlay, with its ports: a new Service or port fails until listed.
EXPECTED_SERVICES = {
    "dev": IN_CLUSTER,
    "prod": {**IN_CLUSTER, PUBLIC_SERVICE: ("LoadBalancer", ("grpc",))},
}
#: Every (Service, port) each overlay's Ingresses route to.
EXPECTED_INGRESS_BACKENDS: dict[str, set[tuple[str, str]]] = {
    "dev": set(),
    "prod": {("dominos-gateway", "web")},
}

TRUSTED_PROXIES = "DOMINOS_WEB_TRUSTED_PROXIES"
#: Networks no setting may trust: everything, and the whole private ranges (every pod, and in
#: many clouds every machine of the VPC, could then pose as any browser).
WIDE_NETWORKS = ("0.0.0.0/0", "::/0", "10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16")
#: The widest trusted proxy network allowed, by IP version: a /24 (IPv6: a /120).
MIN_PREFIX = {4: 24, 6: 120}


def reach(service: Manifest) -> str:
    """How a Service is reached: its type (ClusterIP when unset), or "headless"."""
    spec = service["spec"]
    kind = str(spec.get("type", "ClusterIP"))
    if kind == "ClusterIP" and spec.get("clusterIP") == "None":
        return "headless"
    return kind


def exposure(manifests: list[Manifest]) -> dict[str, tuple[str, tuple[str, ...]]]:
    """``{Service name: (how it is reached, its port names sorted)}`` of ``manifests``."""
    return {
        name: (reach(service), tuple(sorted(port["name"] for port in service["spec"]["ports"])))
        for name, service in by_kind(manifests, "Service").items()
    }


def ingress_backends(manifests: list[Manifest]) -> set[tuple[str, str]]:
    """Every (Service, port name or number) the Ingresses route to, default backends too."""
    backends: set[tuple[str, str]] = set()
    for ingress in by_kind(manifests, "Ingress").values():
        spec = ingress["spec"]
        found = [spec["defaultBackend"]] if "defaultBackend" in spec else []
        for rule in spec.get("rules", []):
            found += [path["backend"] for path in rule.get("http", {}).get("paths", [])]
        for backend in found:
            assert "service" in backend, f"{ingress['metadata']['name']}: not a Service backend"
            port = backend["service"]["port"]
            backends.add((backend["service"]["name"], str(port.get("name", port.get("number")))))
    return backends


def too_wide_proxies(value: str) -> list[str]:
    """The entries of a DOMINOS_WEB_TRUSTED_PROXIES value that trust more than a /24 (IPv6:
    a /120) or one of :data:`WIDE_NETWORKS`; a lone address counts as a /32 (/128)."""
    wide = []
    for entry in (part.strip() for part in value.split(",")):
        if not entry:
            continue
        network = ipaddress.ip_network(entry, strict=False)
        if network.prefixlen < MIN_PREFIX[network.version] or str(network) in WIDE_NETWORKS:
            wide.append(entry)
    return wide


# -- Services and Ingress ---------------------------------------------------------------------


def test_each_overlay_exposes_exactly_the_expected_services_and_ports(
    overlay: str, manifests: list[Manifest]
) -> None:
    """The full map of Services to type and ports, so a port added anywhere is a decision."""
    assert exposure(manifests) == EXPECTED_SERVICES[overlay]


def test_prod_has_one_public_service_with_the_grpc_port_alone(
    rendered_overlays: dict[str, list[Manifest]],
) -> None:
    """Only the gRPC port gets a public address; metrics and the plaintext web port stay
    ClusterIP, the rest ClusterIP or headless."""
    services = by_kind(rendered_overlays["prod"], "Service")
    public = sorted(name for name, service in services.items() if reach(service) in PUBLIC_TYPES)
    assert public == [PUBLIC_SERVICE]
    ports = [
        (port["name"], port["port"], port["targetPort"], port.get("protocol", "TCP"))
        for port in services[PUBLIC_SERVICE]["spec"]["ports"]
    ]
    assert ports == [("grpc", 50051, "grpc", "TCP")]
    for name, service in services.items():
        if name != PUBLIC_SERVICE:
            assert reach(service) in ("ClusterIP", "headless"), name


def test_the_public_service_sends_grpc_to_the_gateway_pods_only(
    rendered_overlays: dict[str, list[Manifest]],
) -> None:
    """It selects the gateway pods and no other service's, on their `grpc` container port,
    and keeps the client's address (externalTrafficPolicy Local) for the per-address
    budgets."""
    prod = rendered_overlays["prod"]
    spec = one(prod, "Service", PUBLIC_SERVICE)["spec"]
    for service in SERVICES:
        template = one(prod, "Deployment", f"dominos-{service}")["spec"]["template"]
        selected = spec["selector"].items() <= template["metadata"]["labels"].items()
        assert selected == (service == "gateway"), service
        if service == "gateway":
            (container,) = template["spec"]["containers"]
            ports = {p["name"]: p["containerPort"] for p in container["ports"]}
            assert ports["grpc"] == 50051
    assert spec["externalTrafficPolicy"] == "Local"


def test_dev_has_no_public_service_and_no_ingress(
    rendered_overlays: dict[str, list[Manifest]],
) -> None:
    """A development cluster is reached by port-forward only."""
    dev = rendered_overlays["dev"]
    assert not [s for s in by_kind(dev, "Service").values() if reach(s) in PUBLIC_TYPES]
    assert not by_kind(dev, "Ingress")


def test_no_service_takes_external_ips(manifests: list[Manifest]) -> None:
    """``externalIPs`` would publish a ClusterIP Service's ports too."""
    for name, service in by_kind(manifests, "Service").items():
        assert not service["spec"].get("externalIPs"), name


def test_the_ingress_routes_only_to_the_gateways_web_port(
    overlay: str, manifests: list[Manifest]
) -> None:
    """Browsers come in through the Ingress to the `web` port of the in-cluster gateway
    Service, and to nothing else (no metrics, no gRPC)."""
    backends = ingress_backends(manifests)
    assert backends == EXPECTED_INGRESS_BACKENDS[overlay]
    for name, _ in backends:
        assert reach(one(manifests, "Service", name)) == "ClusterIP"


def test_the_network_policies_admit_the_public_port_from_outside_but_not_metrics(
    rendered_overlays: dict[str, list[Manifest]],
) -> None:
    """The load balancer's traffic (from outside, the client's own address) reaches the
    gateway pods' `grpc` port; the metrics port stays closed to it."""
    c = Cluster(rendered_overlays["prod"])
    public = one(rendered_overlays["prod"], "Service", PUBLIC_SERVICE)
    for port in public["spec"]["ports"]:
        target = c.gateway.named_ports[port["targetPort"]]
        assert connection_allowed(c.policies, Pod.outside(), c.gateway, target), port["name"]
    metrics = c.gateway.named_ports["metrics"]
    assert not connection_allowed(c.policies, Pod.outside(), c.gateway, metrics)


# -- trusted proxies --------------------------------------------------------------------------


def test_prod_trusts_no_wide_network_for_forwarded_for(
    rendered_overlays: dict[str, list[Manifest]],
) -> None:
    """No proxy network wider than a /24 (IPv6: /120), and no whole private range, in the
    settings, in any container's environment, or in what the gateway parses."""
    prod = rendered_overlays["prod"]
    values = [settings_data(prod).get(TRUSTED_PROXIES, "")]
    values += [container_env("prod", prod, s).get(TRUSTED_PROXIES, "") for s in SERVICES]
    values.append(settings_of("prod", prod, "gateway").web_trusted_proxies)
    for value in values:
        assert too_wide_proxies(value) == [], value
        for network in WIDE_NETWORKS:
            assert network not in value, value


def test_the_trusted_proxy_check_rejects_whole_private_ranges() -> None:
    """Negative control of :func:`too_wide_proxies`: the forbidden ranges and anything wider
    than a /24 (/120) are caught among narrow entries; addresses and small subnets pass."""
    for wide in (*WIDE_NETWORKS, "10.1.0.0/16", "10.4.2.0/23", "10.9.9.9/8", "fd00::/8"):
        assert too_wide_proxies(f"10.4.2.17, {wide},10.4.2.16/28") == [wide]
    assert too_wide_proxies("10.4.2.16/28,10.4.2.17,10.4.3.0/24,fd00::/120,fd00::1,") == []
    assert too_wide_proxies("") == []


def test_the_operator_is_told_to_set_the_trusted_proxies() -> None:
    """The overlay leaves the variable to the operator: its kustomization, its Ingress and
    deploy/README.md say to set it to the ingress controller's addresses, never a whole
    private range."""
    prod = DEPLOY / "k8s" / "overlays" / "prod"
    for path in (prod / "kustomization.yaml", prod / "web-ingress.yaml", DEPLOY_README):
        text = " ".join(path.read_text().lower().split())
        assert TRUSTED_PROXIES.lower() in text, path
        assert "never a whole private range" in text, path
        assert "10.0.0.0/8" not in text, path
