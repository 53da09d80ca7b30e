"""The Bitnami Redis chart's ACL users and network policy (deploy/helm/redis-values.yaml)
match the ACLs the tests enforce (services/common/cluster_auth/redis.py)."""

from __future__ import annotations

from typing import Any

import yaml

from services.common.cluster_auth.redis import acl_of
from services.common.cluster_auth.secrets import IDENTITIES

from .conftest import DEPLOY

#: The pods of the services that keep state in Redis: not the bots service (it keeps nothing;
#: its ACL user may only PING, and no pod holds its password).
SERVICE_PODS = ["dominos-table", "dominos-timer", "dominos-gateway"]


def values() -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load((DEPLOY / "helm" / "redis-values.yaml").read_text())
    return loaded


def test_every_identity_is_an_acl_user_with_the_rules_of_the_acl_module() -> None:
    auth = values()["auth"]
    assert auth["enabled"] is True
    assert auth["acl"]["enabled"] is True
    assert auth["acl"]["userSecret"] == auth["existingSecret"] == "redis-auth"
    users = auth["acl"]["users"]
    assert [user["username"] for user in users] == list(IDENTITIES)
    for user in users:
        rules = acl_of(user["username"])
        assert user["enabled"] == "on"
        assert user["keys"] == rules.key_rules(), user["username"]
        assert user["channels"] == rules.channel_rules(), user["username"]
        assert user["commands"] == rules.command_rules(), user["username"]
        # The chart's template puts the password before these: none may carry one.
        assert not any(word.startswith((">", "#", "nopass")) for word in user["keys"].split())


def test_the_bots_user_may_only_ping() -> None:
    """The bots service uses no Redis: its user exists (one per identity) with no key, no
    channel and PING alone."""
    (bots,) = [user for user in values()["auth"]["acl"]["users"] if user["username"] == "bots"]
    assert (bots["keys"], bots["channels"], bots["commands"]) == (
        "resetkeys",
        "resetchannels",
        "-@all +ping",
    )


def test_only_the_services_pods_reach_redis() -> None:
    policy = values()["networkPolicy"]
    assert policy["enabled"] is True
    assert policy["allowExternal"] is False
    [rule] = policy["extraIngress"]
    assert rule["ports"] == [{"port": 6379}]
    [source] = rule["from"]
    [expression] = source["podSelector"]["matchExpressions"]
    assert expression == {
        "key": "app.kubernetes.io/name",
        "operator": "In",
        "values": SERVICE_PODS,
    }
    assert "dominos-bots" not in expression["values"]
