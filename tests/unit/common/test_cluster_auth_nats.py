"""The NATS users and permissions as data, and the nats-server config rendered from them
(the permissions themselves are proven against a real server in
tests/integration/security/test_nats_permissions.py)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from services.common.bus import (
    ROBOT_CONSUMER,
    ROBOT_STREAM,
    ROBOT_SUBJECT,
    TABLE_SUBJECT_PREFIX,
    TIMER_CONSUMER,
    TIMER_STREAM,
    TIMER_SUBJECT,
    delivery_subject,
    reply_inbox_prefix,
)
from services.common.cluster_auth.nats import (
    ADMIN_PERMISSIONS,
    PERMISSIONS,
    TlsFiles,
    nats_server_config,
    permissions_of,
)
from services.common.cluster_auth.secrets import ADMIN, IDENTITIES, SERVICES, ClusterSecrets
from services.common.connections import nats_tls_context
from services.common.settings import Settings, SettingsError


def test_every_service_has_permissions_and_admin_has_every_right() -> None:
    assert set(PERMISSIONS) == set(SERVICES)
    assert permissions_of(ADMIN) == ADMIN_PERMISSIONS
    assert ADMIN_PERMISSIONS.publish == ADMIN_PERMISSIONS.subscribe == (">",)
    with pytest.raises(ValueError, match="unknown"):
        permissions_of("intruder")


def test_each_subject_has_one_publisher_and_gateways_publish_nothing() -> None:
    publishers = {
        subject: [s for s in SERVICES if subject in PERMISSIONS[s].publish]
        for subject in (TABLE_SUBJECT_PREFIX + ">", TIMER_SUBJECT, ROBOT_SUBJECT)
    }
    assert publishers == {
        TABLE_SUBJECT_PREFIX + ">": ["table"],
        TIMER_SUBJECT: ["timer"],
        ROBOT_SUBJECT: ["table"],
    }
    assert PERMISSIONS["gateway"].publish == ()
    assert PERMISSIONS["gateway"].subscribe == (TABLE_SUBJECT_PREFIX + ">",)
    for service in SERVICES:  # no service may use the whole JetStream API
        for subject in PERMISSIONS[service].publish:
            assert ">" not in subject or subject.startswith(
                (
                    TABLE_SUBJECT_PREFIX,
                    "$JS.ACK.",
                    f"$JS.API.CONSUMER.CREATE.{TIMER_STREAM}.",
                    f"$JS.API.CONSUMER.CREATE.{ROBOT_STREAM}.",
                )
            ), subject


def test_the_bots_service_reads_no_table_event_issue_20() -> None:
    """A robot decides from its seat's view only: the bots service cannot subscribe to the
    table events (every hand is in them) nor read their stream through JetStream."""
    bots = PERMISSIONS["bots"]
    assert bots.subscribe == ("_INBOX.bots.>", "_INBOX.dominos.work.dominos-bots")
    assert not any(s.startswith(TABLE_SUBJECT_PREFIX) for s in bots.publish)
    assert not any("DOMINOS_TABLES" in s for s in bots.publish)


def _matches(pattern: str, subject: str) -> bool:
    """Whether the NATS subject ``pattern`` (wildcards ``*`` and a final ``>``) covers
    ``subject``."""
    tokens = subject.split(".")
    for i, token in enumerate(pattern.split(".")):
        if token == ">":
            return len(tokens) > i
        if i >= len(tokens) or token not in ("*", tokens[i]):
            return False
    return len(pattern.split(".")) == len(tokens)


def test_nats_subject_matching_of_this_test() -> None:
    assert _matches("_INBOX.table.>", "_INBOX.table.abc.1")
    assert not _matches("_INBOX.table.>", "_INBOX.table")
    assert not _matches("_INBOX.table.>", "_INBOX.tables.abc")
    assert _matches("a.*.c", "a.b.c") and not _matches("a.*.c", "a.b.c.d")


def test_each_service_receives_only_its_own_replies_and_deliveries() -> None:
    """No service may subscribe to another's reply inboxes (JetStream acknowledgements, API
    answers) or to another's work-queue deliveries; each may to its own."""
    own = {
        "table": (f"{reply_inbox_prefix('table')}.nuid.1", delivery_subject(TIMER_CONSUMER)),
        "timer": (f"{reply_inbox_prefix('timer')}.nuid.1",),
        "bots": (f"{reply_inbox_prefix('bots')}.nuid.1", delivery_subject(ROBOT_CONSUMER)),
        "gateway": (),
    }
    assert set(own) == set(SERVICES)
    for service in SERVICES:
        for owner, subjects in own.items():
            for subject in subjects:
                allowed = any(_matches(p, subject) for p in PERMISSIONS[service].subscribe)
                assert allowed == (owner == service), (service, subject)
        # Nothing broader than its own prefix: no `_INBOX.>` and no `>`.
        for pattern in PERMISSIONS[service].subscribe:
            assert not _matches(pattern, "_INBOX.someone.nuid.1"), (service, pattern)


def test_the_config_has_one_user_per_identity_and_no_anonymous_access(
    tmp_path: Path,
) -> None:
    secrets = ClusterSecrets()
    text = nats_server_config(
        secrets,
        server_name="n1",
        host="127.0.0.1",
        port=4333,
        store_dir=tmp_path / "js",
        ping_interval_s=10,
        ping_max=2,
    )
    assert re.findall(r'user: "(\w+)"', text) == list(IDENTITIES)
    for identity in IDENTITIES:
        assert f'password: "{secrets.nats_passwords[identity]}"' in text
    assert "no_auth_user" not in text
    assert 'listen: "127.0.0.1:4333"' in text
    assert f'store_dir: "{tmp_path / "js"}"' in text
    assert 'ping_interval: "10s"' in text and "ping_max: 2" in text
    assert 'publish: { deny: [">"] }' in text  # the gateway
    assert "tls {" not in text


def test_the_config_without_jetstream_and_with_tls() -> None:
    tls = TlsFiles(Path("/c/server.pem"), Path("/c/server.key"), Path("/c/ca.pem"), True)
    text = nats_server_config(ClusterSecrets(), server_name="n1", tls=tls)
    assert "jetstream" not in text
    block = text[text.index("tls {") :]
    assert 'cert_file: "/c/server.pem"' in block
    assert 'key_file: "/c/server.key"' in block
    assert 'ca_file: "/c/ca.pem"' in block
    assert "verify: true" in block


def test_the_nats_tls_context_follows_the_settings() -> None:
    assert nats_tls_context(Settings()) is None
    with pytest.raises(SettingsError, match="DOMINOS_NATS_KEY_FILE"):
        nats_tls_context(Settings(nats_key_file="/run/nats/client.key"))
    with pytest.raises(FileNotFoundError):
        nats_tls_context(Settings(nats_ca_file="/nonexistent/ca.pem"))


def test_nats_passwords_are_masked_in_the_settings_log() -> None:
    password = ClusterSecrets().nats_passwords["table"]
    settings = Settings(nats_url=f"nats://table:{password}@nats:4222")
    assert password not in repr(settings)
    assert settings.public_dict()["nats_url"] == "nats://table:***@nats:4222"
