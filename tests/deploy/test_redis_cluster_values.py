"""The Redis Cluster deployment (deploy/helm/redis-cluster-values.yaml, tools/redis_acl.py):
the values mount the ACL file where ``aclfile`` names it, and the file the tool renders is
loaded by a real redis-server: every identity logs in with its own password and has exactly
its rights, the chart's ``default`` user only with the chart's password, nobody anonymously."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import redis
import yaml

from services.common.cluster_auth.secrets import IDENTITIES
from testing.secrets import SESSION_SECRETS
from testing.servers import RedisServer
from tools.redis_acl import render

from .conftest import DEPLOY

#: The session's passwords (the test server's readiness probe logs in as its admin).
PASSWORDS = {
    "REDIS_CHART_PASSWORD": "chart" + "c" * 40,
    **{f"REDIS_PASSWORD_{i.upper()}": SESSION_SECRETS.redis_passwords[i] for i in IDENTITIES},
}


def values() -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load(
        (DEPLOY / "helm" / "redis-cluster-values.yaml").read_text()
    )
    return loaded


def test_the_values_mount_the_acl_file_that_aclfile_names_and_keep_aof_on() -> None:
    v = values()
    config = v["redis"]["configmap"].splitlines()
    aclfile = next(line.split()[1] for line in config if line.startswith("aclfile "))
    mount = v["redis"]["extraVolumeMounts"][0]
    volume = v["redis"]["extraVolumes"][0]
    assert mount["name"] == volume["name"] and mount["readOnly"] is True
    assert Path(aclfile).parent == Path(mount["mountPath"]) and Path(aclfile).name == "users.acl"
    assert volume["secret"]["secretName"] == "redis-cluster-acl"
    assert v["redis"]["useAOFPersistence"] == "yes"
    assert "maxmemory-policy noeviction" in config and "hash-max-listpack-value 64" in config
    assert v["usePassword"] is True and v["existingSecret"] == "redis-cluster-auth"
    assert v["cluster"]["nodes"] >= 6 and v["cluster"]["replicas"] >= 1
    assert v["nameOverride"] == "redis"  # our NetworkPolicies select app.kubernetes.io/name


def test_the_tool_refuses_to_render_without_every_password() -> None:
    with pytest.raises(KeyError, match="REDIS_PASSWORD_GATEWAY"):
        render({k: v for k, v in PASSWORDS.items() if k != "REDIS_PASSWORD_GATEWAY"})


def test_a_redis_server_loads_the_rendered_file_with_each_users_rights(tmp_path: Path) -> None:
    text = render(PASSWORDS)
    assert not any(password in text for password in PASSWORDS.values())  # hashes only
    acl = tmp_path / "users.acl"
    acl.write_text(text)
    # The last --aclfile wins: the rendered file, not the server's own.
    server = RedisServer(
        data_dir=tmp_path / "data", secrets=SESSION_SECRETS, extra_args=("--aclfile", str(acl))
    )
    with server:

        def client(user: str | None, password: str | None) -> Any:
            return redis.Redis(host=server.host, port=server.port, username=user, password=password)

        with pytest.raises(redis.AuthenticationError):
            client(None, None).ping()  # not anonymous, even with the chart's user on
        assert client(None, PASSWORDS["REDIS_CHART_PASSWORD"]).ping()  # the chart's tooling
        gateway = client("gateway", PASSWORDS["REDIS_PASSWORD_GATEWAY"])
        assert gateway.ping()
        with pytest.raises(redis.exceptions.NoPermissionError):
            gateway.hgetall("dominos:{s01}:table:" + "t" * 22)  # no table hash for a gateway
        with pytest.raises(redis.AuthenticationError):
            client("table", PASSWORDS["REDIS_PASSWORD_GATEWAY"]).ping()  # its own password only
        assert client("admin", PASSWORDS["REDIS_PASSWORD_ADMIN"]).dbsize() == 0
