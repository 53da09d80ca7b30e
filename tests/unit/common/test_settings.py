"""Settings: defaults, parsing, validation naming the variable, immutability, documentation."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

import services.common.settings as settings_module
from services.common.settings import (
    VARIABLES,
    Settings,
    SettingsError,
    settings_table_markdown,
)

EXPECTED_DEFAULTS = {
    "DOMINOS_SERVICE_NAME": ("service_name", "dominos"),
    "DOMINOS_GRPC_HOST": ("grpc_host", "0.0.0.0"),
    "DOMINOS_GRPC_PORT": ("grpc_port", 50051),
    "DOMINOS_METRICS_PORT": ("metrics_port", 9100),
    "DOMINOS_REDIS_URL": ("redis_url", "redis://127.0.0.1:6379/0"),
    "DOMINOS_NATS_URL": ("nats_url", "nats://127.0.0.1:4222"),
    "DOMINOS_TABLE_SERVICE_ADDR": ("table_service_addr", "127.0.0.1:50051"),
    "DOMINOS_TURN_SECONDS": ("turn_seconds", 45.0),
    "DOMINOS_AWAY_TURN_SECONDS": ("away_turn_seconds", 5.0),
    "DOMINOS_ROUND_BREAK_SECONDS": ("round_break_seconds", 10.0),
    "DOMINOS_ROBOT_THINK_MIN_SECONDS": ("robot_think_min_seconds", 0.8),
    "DOMINOS_ROBOT_THINK_MAX_SECONDS": ("robot_think_max_seconds", 2.5),
    "DOMINOS_LOBBY_TTL_SECONDS": ("lobby_ttl_seconds", 3600.0),
    "DOMINOS_FINISHED_TTL_SECONDS": ("finished_ttl_seconds", 86400.0),
    "DOMINOS_SHUTDOWN_GRACE_SECONDS": ("shutdown_grace_seconds", 10.0),
    "DOMINOS_LOG_LEVEL": ("log_level", "info"),
    "DOMINOS_EVENT_LOOP": ("event_loop", "uvloop"),
    "DOMINOS_JOIN_RATE_LIMIT": ("join_rate_limit", 12000),
    "DOMINOS_JOIN_FAILURES_PER_CONNECTION": ("join_failures_per_connection", 5),
    "DOMINOS_CREATES_PER_ADDRESS_MINUTE": ("creates_per_address_minute", 20),
    "DOMINOS_CREATES_PER_ADDRESS_HOUR": ("creates_per_address_hour", 120),
    "DOMINOS_CREATES_PER_SECOND": ("creates_per_second", 20),
    "DOMINOS_LOBBIES_PER_ADDRESS": ("lobbies_per_address", 30),
    "DOMINOS_LOBBY_CHANGES_PER_MINUTE": ("lobby_changes_per_minute", 30),
    "DOMINOS_CONNECTIONS_PER_SEAT_MINUTE": ("connections_per_seat_minute", 20),
    "DOMINOS_STREAMS_PER_SEAT": ("streams_per_seat", 4),
    "DOMINOS_STREAMS_PER_ADDRESS": ("streams_per_address", 512),
    "DOMINOS_CONNECTIONS_PER_ADDRESS": ("connections_per_address", 256),
    "DOMINOS_STREAMS_PER_CONNECTION": ("streams_per_connection", 100),
    "DOMINOS_MAX_CONNECTION_AGE_SECONDS": ("max_connection_age_seconds", 1800.0),
    "DOMINOS_MAX_CONNECTION_AGE_GRACE_SECONDS": ("max_connection_age_grace_seconds", 60.0),
    "DOMINOS_MAX_CONNECTION_IDLE_SECONDS": ("max_connection_idle_seconds", 60.0),
    "DOMINOS_TIMER_RETRY_SECONDS": ("timer_retry_seconds", 2.0),
    "DOMINOS_TIMER_SWEEP_SECONDS": ("timer_sweep_seconds", 1.0),
    "DOMINOS_NATS_STREAM_REPLICAS": ("nats_stream_replicas", 1),
    "DOMINOS_REDIS_CA_FILE": ("redis_ca_file", ""),
    "DOMINOS_REDIS_CLUSTER": ("redis_cluster", False),
    "DOMINOS_NATS_CA_FILE": ("nats_ca_file", ""),
    "DOMINOS_NATS_CERT_FILE": ("nats_cert_file", ""),
    "DOMINOS_NATS_KEY_FILE": ("nats_key_file", ""),
    "DOMINOS_PRESENCE_LEASE_SECONDS": ("presence_lease_seconds", 15.0),
    "DOMINOS_SHUTDOWN_DRAIN_SECONDS": ("shutdown_drain_seconds", 2.0),
    "DOMINOS_TOKEN_SECRET": ("token_secret", "dev-only-insecure-token-secret"),
    "DOMINOS_DEVELOPMENT": ("development", False),
    "DOMINOS_TABLE_CALLERS": ("table_callers", ""),
    "DOMINOS_CALLER_CREDENTIAL": ("caller_credential", ""),
    "DOMINOS_METRICS_HOST": ("metrics_host", "0.0.0.0"),
    "DOMINOS_WEB_HOST": ("web_host", "0.0.0.0"),
    "DOMINOS_WEB_PORT": ("web_port", -1),
    "DOMINOS_WEB_ROOT": ("web_root", ""),
    "DOMINOS_WEB_ALLOWED_ORIGINS": ("web_allowed_origins", ""),
    "DOMINOS_WEB_TRUSTED_PROXIES": ("web_trusted_proxies", ""),
    "DOMINOS_WEB_MAX_HEAD_BYTES": ("web_max_head_bytes", 16384),
    "DOMINOS_WEB_HEAD_TIMEOUT_SECONDS": ("web_head_timeout_seconds", 10.0),
    "DOMINOS_WEB_BODY_TIMEOUT_SECONDS": ("web_body_timeout_seconds", 10.0),
    "DOMINOS_WEB_MAX_REQUESTS": ("web_max_requests", 10000),
}

DURATIONS = [spec for spec in VARIABLES if spec.attribute.endswith("_seconds")]


def test_defaults_from_empty_environment() -> None:
    settings = Settings.from_env({})
    assert {spec.name for spec in VARIABLES} == set(EXPECTED_DEFAULTS)
    for name, (attribute, default) in EXPECTED_DEFAULTS.items():
        value = getattr(settings, attribute)
        assert value == default, name
        assert type(value) is type(default), name
    assert settings == Settings()


def test_defaults_milliseconds() -> None:
    settings = Settings()
    assert settings.turn_ms == 45_000
    assert settings.away_turn_ms == 5_000
    assert settings.round_break_ms == 10_000
    assert settings.lobby_ttl_ms == 3_600_000
    assert settings.finished_ttl_ms == 86_400_000
    assert settings.shutdown_grace_ms == 10_000
    assert settings.timer_retry_ms == 2_000
    assert settings.timer_sweep_ms == 1_000


#: Durations only ever read in seconds (the shutdown's drain is handed to asyncio as such).
SECONDS_ONLY = {
    "shutdown_drain_seconds",
    "robot_think_min_seconds",
    "robot_think_max_seconds",
    "web_head_timeout_seconds",
    "web_body_timeout_seconds",
}


def test_every_duration_read_in_ms_has_an_int_ms_property() -> None:
    settings = Settings.from_env({spec.name: "1.2346" for spec in DURATIONS})
    for spec in DURATIONS:
        if spec.attribute in SECONDS_ONLY:
            assert not hasattr(settings, spec.attribute.removesuffix("_seconds") + "_ms")
            continue
        ms = getattr(settings, spec.attribute.removesuffix("_seconds") + "_ms")
        assert type(ms) is int
        assert ms == 1235, spec.name


def test_parses_every_variable() -> None:
    env = {
        "DOMINOS_SERVICE_NAME": "dominos-gateway",
        "DOMINOS_GRPC_HOST": " 127.0.0.1 ",
        "DOMINOS_GRPC_PORT": "0",
        "DOMINOS_METRICS_PORT": "-1",
        "DOMINOS_REDIS_URL": "rediss://user:pw@redis.example:6380/2",
        "DOMINOS_NATS_URL": "nats://a:4222, tls://b:4222",
        "DOMINOS_TABLE_SERVICE_ADDR": "dns:///table.dominos.svc:50051",
        "DOMINOS_TURN_SECONDS": "30.5",
        "DOMINOS_AWAY_TURN_SECONDS": "2",
        "DOMINOS_ROUND_BREAK_SECONDS": "0",
        "DOMINOS_LOBBY_TTL_SECONDS": "60",
        "DOMINOS_FINISHED_TTL_SECONDS": "120",
        "DOMINOS_SHUTDOWN_GRACE_SECONDS": "0",
        "DOMINOS_LOG_LEVEL": "DEBUG",
        "DOMINOS_EVENT_LOOP": "ASYNCIO",
        "DOMINOS_JOIN_RATE_LIMIT": "5",
        "DOMINOS_TIMER_RETRY_SECONDS": "0.25",
        "DOMINOS_TIMER_SWEEP_SECONDS": "0.5",
        "DOMINOS_DEVELOPMENT": "Yes",
        "DOMINOS_TABLE_CALLERS": "gateway.0123456789abcdef, gateway.fedcba9876543210",
        "DOMINOS_CALLER_CREDENTIAL": "gateway.0123456789abcdef",
        "DOMINOS_METRICS_HOST": "127.0.0.1",
        "UNRELATED": "ignored",
    }
    s = Settings.from_env(env)
    assert s.service_name == "dominos-gateway"
    assert s.grpc_host == "127.0.0.1"
    assert s.grpc_port == 0
    assert s.event_loop == "asyncio"
    assert s.metrics_port == -1
    assert not s.metrics_enabled
    assert s.redis_url == "rediss://user:pw@redis.example:6380/2"
    assert s.nats_url == "nats://a:4222,tls://b:4222"
    assert s.nats_servers == ["nats://a:4222", "tls://b:4222"]
    assert s.table_service_addr == "dns:///table.dominos.svc:50051"
    assert s.turn_seconds == 30.5
    assert s.turn_ms == 30_500
    assert s.away_turn_seconds == 2.0
    assert s.round_break_ms == 0
    assert s.lobby_ttl_seconds == 60.0
    assert s.finished_ttl_seconds == 120.0
    assert s.shutdown_grace_seconds == 0.0
    assert s.log_level == "debug"
    assert s.join_rate_limit == 5
    assert s.timer_retry_ms == 250
    assert s.timer_sweep_ms == 500
    assert s.grpc_listen_address == "127.0.0.1:0"
    assert s.development is True
    assert s.caller_credential == "gateway.0123456789abcdef"
    assert s.table_callers == "gateway.0123456789abcdef,gateway.fedcba9876543210"
    assert s.metrics_host == "127.0.0.1"


def test_reads_os_environ_when_no_mapping_given(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DOMINOS_TURN_SECONDS", "12")
    monkeypatch.setenv("DOMINOS_LOG_LEVEL", "warning")
    settings = Settings.from_env()
    assert settings.turn_seconds == 12.0
    assert settings.log_level == "warning"


@pytest.mark.parametrize(
    ("variable", "value", "problem"),
    [
        # not a number
        ("DOMINOS_GRPC_PORT", "fifty", "integer"),
        ("DOMINOS_GRPC_PORT", "50051.5", "integer"),
        ("DOMINOS_METRICS_PORT", "abc", "integer"),
        ("DOMINOS_JOIN_RATE_LIMIT", "many", "integer"),
        ("DOMINOS_TURN_SECONDS", "45s", "number"),
        ("DOMINOS_AWAY_TURN_SECONDS", "five", "number"),
        ("DOMINOS_ROUND_BREAK_SECONDS", "x", "number"),
        ("DOMINOS_LOBBY_TTL_SECONDS", "1h", "number"),
        ("DOMINOS_FINISHED_TTL_SECONDS", "", "empty"),
        ("DOMINOS_SHUTDOWN_GRACE_SECONDS", "ten", "number"),
        ("DOMINOS_TIMER_RETRY_SECONDS", "2ms", "number"),
        ("DOMINOS_TIMER_SWEEP_SECONDS", "   ", "empty"),
        ("DOMINOS_TURN_SECONDS", "nan", "finite"),
        ("DOMINOS_TURN_SECONDS", "inf", "finite"),
        # negative
        ("DOMINOS_GRPC_PORT", "-1", "negative"),
        ("DOMINOS_METRICS_PORT", "-2", ">= -1"),
        ("DOMINOS_TURN_SECONDS", "-5", "> 0"),
        ("DOMINOS_AWAY_TURN_SECONDS", "-0.1", "> 0"),
        ("DOMINOS_ROUND_BREAK_SECONDS", "-1", "negative"),
        ("DOMINOS_LOBBY_TTL_SECONDS", "-3600", "> 0"),
        ("DOMINOS_FINISHED_TTL_SECONDS", "-1", "> 0"),
        ("DOMINOS_SHUTDOWN_GRACE_SECONDS", "-10", "negative"),
        ("DOMINOS_JOIN_RATE_LIMIT", "-20", ">= 1"),
        ("DOMINOS_TIMER_RETRY_SECONDS", "-2", "> 0"),
        ("DOMINOS_TIMER_SWEEP_SECONDS", "-1", "> 0"),
        # zero where a positive value is required
        ("DOMINOS_TURN_SECONDS", "0", "> 0"),
        ("DOMINOS_JOIN_RATE_LIMIT", "0", ">= 1"),
        ("DOMINOS_TIMER_SWEEP_SECONDS", "0", "> 0"),
        # out of range
        ("DOMINOS_GRPC_PORT", "65536", "out of range"),
        ("DOMINOS_METRICS_PORT", "70000", "out of range"),
        ("DOMINOS_TURN_SECONDS", "45000", "out of range"),
        ("DOMINOS_LOBBY_TTL_SECONDS", "99999999", "out of range"),
        ("DOMINOS_JOIN_RATE_LIMIT", "1000001", "out of range"),
        # unknown log level
        ("DOMINOS_LOG_LEVEL", "verbose", "unknown log level"),
        ("DOMINOS_EVENT_LOOP", "trio", "unknown event loop"),
        ("DOMINOS_LOG_LEVEL", "", "empty"),
        # malformed strings
        ("DOMINOS_SERVICE_NAME", "my service", "invalid name"),
        ("DOMINOS_GRPC_HOST", "", "empty"),
        ("DOMINOS_GRPC_HOST", "0.0.0.0 1", "whitespace"),
        ("DOMINOS_REDIS_URL", "http://127.0.0.1:6379", "scheme"),
        ("DOMINOS_REDIS_URL", "redis://127.0.0.1:99999/0", "invalid port"),
        ("DOMINOS_REDIS_URL", "127.0.0.1:6379", "scheme"),
        ("DOMINOS_NATS_URL", "http://127.0.0.1:4222", "scheme"),
        ("DOMINOS_NATS_URL", "nats://a:4222,redis://b:1", "scheme"),
        ("DOMINOS_NATS_URL", ",", "at least one"),
        ("DOMINOS_NATS_URL", "nats://", "no host"),
        ("DOMINOS_TABLE_SERVICE_ADDR", "table", "host:port"),
        ("DOMINOS_TABLE_SERVICE_ADDR", "table:http", "not a number"),
        ("DOMINOS_TABLE_SERVICE_ADDR", "table:0", "out of range"),
        ("DOMINOS_TABLE_SERVICE_ADDR", "dns:", "no address"),
    ],
)
def test_invalid_value_raises_naming_the_variable(variable: str, value: str, problem: str) -> None:
    with pytest.raises(SettingsError) as caught:
        Settings.from_env({variable: value})
    error = caught.value
    assert error.variable == variable
    assert str(error).startswith(f"{variable}: ")
    assert problem in error.problem


def test_error_messages_never_show_url_passwords() -> None:
    with pytest.raises(SettingsError) as caught:
        Settings.from_env({"DOMINOS_REDIS_URL": "http://user:hunter2@redis:6379"})
    assert "hunter2" not in str(caught.value)


def test_repr_and_public_dict_mask_url_passwords() -> None:
    settings = Settings.from_env(
        {"DOMINOS_REDIS_URL": "redis://u:hunter2@r:6379/0", "DOMINOS_NATS_URL": "nats://n:pw9@n:1"}
    )
    assert settings.redis_url == "redis://u:hunter2@r:6379/0"
    assert "hunter2" not in repr(settings)
    assert "pw9" not in repr(settings)
    public = settings.public_dict()
    assert public["redis_url"] == "redis://u:***@r:6379/0"
    assert public["nats_url"] == "nats://n:***@n:1"


def test_frozen() -> None:
    settings = Settings()
    with pytest.raises(dataclasses.FrozenInstanceError):
        settings.turn_seconds = 1.0  # type: ignore[misc]
    assert hash(settings) == hash(Settings())


def test_replace_returns_a_validated_copy() -> None:
    base = Settings()
    changed = base.replace(turn_seconds=3, grpc_port=0)
    assert changed.turn_seconds == 3.0
    assert type(changed.turn_seconds) is float
    assert changed.grpc_port == 0
    assert base.turn_seconds == 45.0
    with pytest.raises(SettingsError) as caught:
        base.replace(turn_seconds=-1)
    assert caught.value.variable == "DOMINOS_TURN_SECONDS"
    with pytest.raises(SettingsError):
        base.replace(grpc_port="50051")
    with pytest.raises(SettingsError):
        base.replace(join_rate_limit=True)
    with pytest.raises(TypeError):
        base.replace(no_such_setting=1)


def test_unknown_dominos_variables_are_listed_not_rejected() -> None:
    env = {"DOMINOS_TURN_SECOND": "3", "DOMINOS_TABLE_SERVICE_HOST": "10.0.0.1", "HOME": "/"}
    assert Settings.from_env(env) == Settings()
    assert Settings.unknown_variables(env) == [
        "DOMINOS_TABLE_SERVICE_HOST",
        "DOMINOS_TURN_SECOND",
    ]


def test_markdown_table_lists_every_variable_with_its_default() -> None:
    table = settings_table_markdown()
    rows = [line for line in table.splitlines() if line.startswith("| `DOMINOS_")]
    assert len(rows) == len(EXPECTED_DEFAULTS)
    for name, (_, default) in EXPECTED_DEFAULTS.items():
        shown = str(default)
        if isinstance(default, float | bool) and float(default).is_integer():
            shown = str(int(default))
        assert any(row.startswith(f"| `{name}` | `{shown}` |") for row in rows), name


def test_module_docstring_carries_the_generated_table() -> None:
    assert settings_module.__doc__ is not None
    assert settings_table_markdown() in settings_module.__doc__


def test_token_secret_is_masked_and_must_be_long_enough() -> None:
    settings = Settings.from_env({"DOMINOS_TOKEN_SECRET": "a-very-long-production-secret"})
    assert settings.token_secret == "a-very-long-production-secret"
    assert "a-very-long-production-secret" not in repr(settings)
    assert settings.public_dict()["token_secret"] == "***"
    with pytest.raises(SettingsError, match="DOMINOS_TOKEN_SECRET"):
        Settings.from_env({"DOMINOS_TOKEN_SECRET": "short"})


def test_the_readme_documents_every_variable_with_its_default() -> None:
    readme = (Path(__file__).resolve().parents[3] / "README.md").read_text()
    for row in settings_table_markdown().splitlines()[2:]:
        assert row in readme, row


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("DOMINOS_DEVELOPMENT", "maybe"),
        ("DOMINOS_TABLE_CALLERS", "gateway:0123456789abcdef"),
        ("DOMINOS_TABLE_CALLERS", "gateway.short"),
        ("DOMINOS_TABLE_CALLERS", "Gateway.0123456789abcdef"),
        ("DOMINOS_TABLE_CALLERS", "gateway.0123456789abcdef,"),
        ("DOMINOS_CALLER_CREDENTIAL", "gateway.0123456789abc def"),
        ("DOMINOS_WEB_ALLOWED_ORIGINS", "https://play.example/path"),
        ("DOMINOS_WEB_ALLOWED_ORIGINS", "ftp://play.example"),
        ("DOMINOS_WEB_ALLOWED_ORIGINS", "play.example"),
        ("DOMINOS_WEB_TRUSTED_PROXIES", "10.0.0.0/8,not-an-address"),
        ("DOMINOS_WEB_PORT", "65536"),
    ],
)
def test_flags_and_caller_credentials_are_validated(variable: str, value: str) -> None:
    with pytest.raises(SettingsError, match=variable) as raised:
        Settings.from_env({variable: value})
    assert "0123456789abc" not in str(raised.value)  # a credential is never echoed


def test_caller_credentials_are_masked_when_set() -> None:
    settings = Settings.from_env({"DOMINOS_TABLE_CALLERS": "gateway.0123456789abcdef"})
    assert "0123456789abcdef" not in repr(settings)
    assert settings.public_dict()["table_callers"] == "***"
    assert Settings().public_dict()["table_callers"] == ""  # unset shows as unset


def test_built_in_secrets_are_refused_outside_development() -> None:
    """Issue 14: no service runs on the repository's token secret, or without its callers."""
    with pytest.raises(SettingsError, match=r"DOMINOS_TOKEN_SECRET.*built-in"):
        Settings().require_secrets("DOMINOS_TOKEN_SECRET")
    with pytest.raises(SettingsError, match=r"DOMINOS_TABLE_CALLERS.*unset"):
        Settings(token_secret="a-random-secret-of-32-characters").require_secrets(
            "DOMINOS_TOKEN_SECRET", "DOMINOS_TABLE_CALLERS"
        )
    Settings(
        token_secret="a-random-secret-of-32-characters", table_callers="gateway.0123456789abcdef"
    ).require_secrets("DOMINOS_TOKEN_SECRET", "DOMINOS_TABLE_CALLERS")
    Settings(development=True).require_secrets("DOMINOS_TOKEN_SECRET", "DOMINOS_TABLE_CALLERS")
