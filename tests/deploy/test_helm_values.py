"""The values we give the official NATS chart and the Bitnami Redis chart (deploy/helm/)."""

from __future__ import annotations

from typing import Any

import yaml

from services.common.cluster_auth.nats import permissions_of
from services.common.cluster_auth.secrets import IDENTITIES

from .conftest import DEPLOY, K8S

HELM = DEPLOY / "helm"


def load(name: str) -> dict[str, Any]:
    values: dict[str, Any] = yaml.safe_load((HELM / name).read_text())
    return values


def redis_config() -> dict[str, str]:
    lines = load("redis-values.yaml")["commonConfiguration"].splitlines()
    pairs = [line.split(None, 1) for line in lines if line.strip() and not line.startswith("#")]
    return {key: value.strip() for key, value in pairs}


def test_nats_is_a_three_node_jetstream_cluster_on_persistent_files() -> None:
    values = load("nats-values.yaml")
    assert values["config"]["cluster"] == {"enabled": True, "replicas": 3}
    jetstream = values["config"]["jetstream"]
    assert jetstream["enabled"] is True
    assert jetstream["fileStore"]["enabled"] is True
    assert jetstream["fileStore"]["pvc"]["enabled"] is True


def test_redis_is_a_sentinel_supervised_primary_with_replicas() -> None:
    values = load("redis-values.yaml")
    assert values["architecture"] == "replication"
    assert values["replica"]["replicaCount"] >= 3
    assert values["replica"]["persistence"]["enabled"] is True
    sentinel = values["sentinel"]
    assert sentinel["enabled"] is True
    assert sentinel["masterService"]["enabled"] is True
    assert sentinel["quorum"] == 2


def test_redis_configuration_the_table_layout_needs() -> None:
    config = redis_config()
    assert config["appendonly"] == "yes"
    assert config["appendfsync"] == "everysec"
    assert config["hash-max-listpack-value"] == "64"
    assert config["maxmemory-policy"] == "noeviction"
    assert "maxmemory" in config


def test_service_addresses_match_the_charts() -> None:
    """The services reach the Services the charts create (`nats`, `redis-master`): the
    addresses in deploy/k8s/base/settings.env that each Deployment builds its URLs from
    (the URLs themselves, with each service's user and password, are checked by
    tests/deploy/test_k8s.py); the URLs are never in the ConfigMap (they carry passwords)."""
    settings = dict(
        line.split("=", 1)
        for line in (K8S / "base" / "settings.env").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    )
    assert settings["NATS_ADDRESS"] == "nats:4222"
    assert settings["REDIS_ADDRESS"] == "redis-master:6379"
    assert (settings["NATS_SCHEME"], settings["REDIS_SCHEME"]) == ("nats", "redis")
    assert "DOMINOS_NATS_URL" not in settings
    assert "DOMINOS_REDIS_URL" not in settings
    assert load("redis-values.yaml")["sentinel"]["masterService"]["enabled"] is True


def test_nats_users_and_permissions_are_those_of_cluster_auth() -> None:
    """One user per identity, no anonymous access, the permissions of
    services/common/cluster_auth/nats.py, each password from the Secret `nats-auth`."""
    values = load("nats-values.yaml")
    merged = values["config"]["merge"]
    assert "no_auth_user" not in merged
    users = {user["user"]: user for user in merged["authorization"]["users"]}
    assert list(users) == list(IDENTITIES)
    env = values["container"]["env"]
    for identity, user in users.items():
        variable = f"NATS_{identity.upper()}_PASSWORD"
        assert user["password"] == f"<< ${variable} >>"
        assert env[variable]["valueFrom"]["secretKeyRef"] == {
            "name": "nats-auth",
            "key": f"{identity}-password",
        }
        expected = permissions_of(identity)
        publish = user["permissions"]["publish"]
        if expected.publish:
            assert publish == {"allow": list(expected.publish)}, identity
        else:
            assert publish == {"deny": [">"]}, identity
        assert user["permissions"]["subscribe"] == {"allow": list(expected.subscribe)}, identity


def test_the_charts_monitors_carry_the_release_label_of_ours() -> None:
    """kube-prometheus-stack only picks monitors labelled `release: <its name>`: the Redis
    chart's ServiceMonitor and the NATS chart's PodMonitor carry the label the Dominos
    ServiceMonitors carry, or Redis and NATS are silently unscraped."""
    ours = {
        doc["metadata"]["labels"]["release"]
        for doc in yaml.safe_load_all((K8S / "base" / "servicemonitors.yaml").read_text())
        if doc
    }
    assert len(ours) == 1
    (release,) = ours
    redis = load("redis-values.yaml")["metrics"]["serviceMonitor"]
    assert redis["enabled"] is True
    assert redis["additionalLabels"]["release"] == release
    nats = load("nats-values.yaml")["promExporter"]["podMonitor"]
    assert nats["enabled"] is True
    assert nats["merge"]["metadata"]["labels"]["release"] == release
