"""The Redis ACL users (``services/common/cluster_auth/redis.py``): their keys are the
services' keys, their commands cover what the services' Lua scripts run, the ACL file holds
no password, and the Redis client's TLS options follow the settings."""

from __future__ import annotations

import hashlib
import re
from fnmatch import fnmatchcase

import pytest

from services.common import presence, schema
from services.common.cluster_auth import redis as acl
from services.common.cluster_auth.secrets import IDENTITIES, SERVICES, ClusterSecrets
from services.common.connections import redis_tls_options
from services.common.settings import Settings, SettingsError
from services.table import limits, store
from services.timer import claims, membership

T = "AbCdEfGhIjKlMnOpQrStUv"

#: Every key the services use, by the name of its pattern in the ACL module.
KEYS = {
    "TABLE": schema.table_key(T),
    "OUTBOX": schema.outbox_key(T),
    "PENDING": schema.pending_key(7),
    "DEADLINES": schema.deadlines_key(63),
    "CODES": schema.code_key("ABCD-EFGH"),
    "CREATES": schema.create_key("0f" * 16),
    "JOIN_FAILURES": schema.join_failures_key("ipv4:10.0.0.1"),
    "PHASES": schema.phase_key(0, "playing"),
    "LIMITS": schema.limit_key("creates", "ipv4:10.0.0.1", "m"),
    "TABLE_LIMITS": schema.table_limit_key(T, "presence:2"),
    "LOBBIES": schema.lobbies_key("ipv4:10.0.0.1"),
    "TIMER_LEASE": schema.timer_lease_key(T),
    "LEASES": schema.presence_leases_key(T),
    "PRESENCE": schema.presence_key(12),
    "TIMERS": schema.TIMERS_KEY,
}

#: The Lua scripts each service calls (the commands in their ``redis.call``).
SCRIPTS = {
    "table": (
        store._COMMIT,
        store._PUBLISHED,
        limits._TAKE,
        limits._REFUND,
        limits._RESERVE_LOBBY,
    ),
    "timer": (claims._CLAIM, presence._CLAIM_EXPIRED_LEASE, membership._HEARTBEAT),
    "gateway": (presence._RENEW_LEASES, presence._RELEASE_LEASE),
    "bots": (),  # it keeps nothing in Redis
}


def _matching(key: str) -> set[str]:
    """The names of the module's key patterns that match ``key`` (Redis globs: ``*``)."""
    return {name for name in KEYS if fnmatchcase(key, getattr(acl, name))}


@pytest.mark.parametrize("name", sorted(KEYS))
def test_each_key_pattern_matches_its_key_and_no_other(name: str) -> None:
    assert _matching(KEYS[name]) == {name}


def _rights(identity: str, key: str) -> set[str]:
    """``{"R", "W"}``-subset the identity's own keys (not its scripts' selector) grant."""
    rights: set[str] = set()
    for rule in acl.REDIS_ACLS[identity].keys:
        flags, _, pattern = rule.partition("~")
        if fnmatchcase(key, pattern):
            rights |= set(flags.removeprefix("%")) or {"R", "W"}
    return rights


@pytest.mark.parametrize(
    ("identity", "key", "rights"),
    [
        ("table", "TABLE", {"R", "W"}),
        ("table", "DEADLINES", {"W"}),
        ("table", "LEASES", {"R"}),
        ("table", "TIMER_LEASE", set()),
        ("table", "PRESENCE", set()),
        ("timer", "TABLE", {"R"}),
        ("timer", "DEADLINES", {"R"}),
        ("timer", "OUTBOX", set()),
        ("timer", "CODES", set()),
        ("timer", "LEASES", {"R", "W"}),
        ("gateway", "LEASES", {"R", "W"}),
        ("gateway", "PRESENCE", {"W"}),
        *(
            ("gateway", key, set())
            for key in ("TABLE", "OUTBOX", "PENDING", "DEADLINES", "CODES", "TIMER_LEASE")
        ),
    ],
)
def test_who_may_read_and_write_what(identity: str, key: str, rights: set[str]) -> None:
    assert _rights(identity, KEYS[key]) == rights


@pytest.mark.parametrize("identity", [s for s in SERVICES if SCRIPTS[s]])
def test_every_command_of_a_services_scripts_is_granted(identity: str) -> None:
    used = set()
    for script in SCRIPTS[identity]:
        used |= {c.lower() for c in re.findall(r"redis\.call\('([A-Z]+)'", script)}
    assert used
    assert used <= set(acl.REDIS_ACLS[identity].commands)


def test_the_bots_service_may_touch_no_key_and_run_nothing_but_ping_issue_20() -> None:
    bots = acl.acl_of("bots")
    assert bots.keys == () and bots.channels == () and bots.script_keys == ()
    assert bots.command_rules() == "-@all +ping"


def test_only_the_services_have_restricted_users_and_admin_has_everything() -> None:
    assert set(acl.REDIS_ACLS) == set(SERVICES)
    assert acl.acl_of("admin").rules() == "resetkeys ~* resetchannels &* -@all +@all"
    with pytest.raises(ValueError, match="unknown identity"):
        acl.acl_of("default")


def test_no_service_may_evaluate_inline_scripts_or_use_pub_sub() -> None:
    for identity, user in acl.REDIS_ACLS.items():
        rules = user.rules()
        assert "+eval " not in rules and "&" not in rules, identity
        assert user.channels == ()


def test_the_acl_file_disables_default_and_holds_no_password() -> None:
    secrets = ClusterSecrets()
    text = acl.acl_file(secrets)
    lines = text.splitlines()
    assert lines[0] == acl.DEFAULT_USER_LINE
    assert lines[0].startswith("user default off resetpass ")
    assert "nopass" not in text
    assert [line.split()[1] for line in lines] == ["default", *IDENTITIES]
    for identity in IDENTITIES:
        password = secrets.redis_passwords[identity]
        assert password not in text
        digest = hashlib.sha256(password.encode()).hexdigest()
        assert f"user {identity} on #{digest} " in text


def test_a_password_with_whitespace_is_refused() -> None:
    with pytest.raises(ValueError, match="whitespace"):
        acl.acl_user_line("table", "two words")
    with pytest.raises(ValueError, match="empty"):
        acl.acl_user_line("table", "")


def test_the_scripts_selector_is_the_last_rule() -> None:
    rules = acl.REDIS_ACLS["gateway"].command_rules()
    assert rules.endswith("(~dominos:{*}:leases:* ~dominos:{*}:presence +evalsha +script|load)")


# -- the client's TLS options ----------------------------------------------------------------


def test_a_plain_url_has_no_tls_options() -> None:
    assert redis_tls_options(Settings(redis_url="redis://table:pw@redis:6379/0")) == {}


def test_a_rediss_url_verifies_the_server_with_the_ca_file_or_the_systems_cas() -> None:
    settings = Settings(redis_url="rediss://table:pw@redis:6380/0")
    assert redis_tls_options(settings) == {"ssl_cert_reqs": "required", "ssl_ca_certs": None}
    with_ca = settings.replace(redis_ca_file="/etc/dominos/redis-ca.pem")
    assert redis_tls_options(with_ca) == {
        "ssl_cert_reqs": "required",
        "ssl_ca_certs": "/etc/dominos/redis-ca.pem",
    }


def test_a_ca_file_without_a_rediss_url_is_a_configuration_error() -> None:
    settings = Settings(redis_url="redis://table:pw@redis:6379/0", redis_ca_file="/ca.pem")
    with pytest.raises(SettingsError, match="DOMINOS_REDIS_CA_FILE"):
        redis_tls_options(settings)
