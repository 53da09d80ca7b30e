"""The values we give the official NATS chart and the Bitnami Redis chart (deploy/helm/)."""

from __future__ import annotations

from typing import Any

import yaml

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
    """The settings point at the Services the charts create (`nats`, `redis-master`)."""
    settings = dict(
        line.split("=", 1)
        for line in (K8S / "base" / "settings.env").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    )
    assert settings["DOMINOS_NATS_URL"] == "nats://nats:4222"
    dev = (K8S / "overlays" / "dev" / "kustomization.yaml").read_text()
    assert "redis-url=redis://redis-master:6379/0" in dev
