# ruff: noqa: E501  (the variable table in the docstring has long rows)
"""Process configuration: environment variables parsed once into a frozen :class:`Settings`.

:meth:`Settings.from_env` is the only place in the code base that reads ``os.environ``. Every
entry point calls it once at start-up and passes the resulting object (or the values it needs)
down; nothing else looks at the environment. An invalid value raises :class:`SettingsError`
naming the variable and the problem, so a misconfigured pod fails at start with a clear message
instead of misbehaving later. Variables that are unset keep their default; a variable that is
set must hold a valid value (an empty string is an error, not "use the default").

Durations are float seconds; each ``*_seconds`` attribute has an integer ``*_ms`` twin
(``turn_seconds`` → ``turn_ms``) because state, events and Redis scores use epoch
milliseconds.

Unknown ``DOMINOS_*`` variables are ignored, not rejected: Kubernetes injects
``<SERVICE>_SERVICE_HOST``-style variables for every Service in the namespace (a Service named
``dominos-table`` yields ``DOMINOS_TABLE_SERVICE_HOST``), so rejecting them would break
deployments. :meth:`Settings.unknown_variables` lists them so an entry point can log a warning
about likely typos.

Variables (this table is also produced by :func:`settings_table_markdown`; a unit test keeps
the two identical):

| Variable | Default | Allowed | Meaning |
|---|---|---|---|
| `DOMINOS_SERVICE_NAME` | `dominos` | letters, digits, `.`, `_`, `-` | Name of this process in logs (`service`) and metrics labels. |
| `DOMINOS_GRPC_HOST` | `0.0.0.0` | host name or IP | Interface the gRPC server listens on. |
| `DOMINOS_GRPC_PORT` | `50051` | 0 to 65535 | gRPC listen port; 0 picks a free port. |
| `DOMINOS_METRICS_PORT` | `9100` | -1 to 65535 | Prometheus `/metrics` HTTP port; 0 picks a free port, -1 disables the endpoint. |
| `DOMINOS_REDIS_URL` | `redis://127.0.0.1:6379/0` | `redis://`, `rediss://` or `unix://` URL | Redis holding all table state. |
| `DOMINOS_REDIS_CLUSTER` | `0` | `1`/`0`, `true`/`false`, `yes`/`no` | Redis is a Redis Cluster: `DOMINOS_REDIS_URL` names one of its nodes, the client discovers the others and follows the slots. |
| `DOMINOS_REDIS_CA_FILE` | `` | file path, or empty | PEM file of the CA that signed the Redis server's certificate (needs a `rediss://` URL); empty: the system's CAs. |
| `DOMINOS_NATS_URL` | `nats://127.0.0.1:4222` | comma-separated `nats://`, `tls://`, `ws://`, `wss://` URLs | NATS server(s) of the message bus. |
| `DOMINOS_TABLE_SERVICE_ADDR` | `127.0.0.1:50051` | `host:port` or gRPC target (`dns:///table:50051`) | Where the gateway and the bots service reach the table service. |
| `DOMINOS_TURN_SECONDS` | `45` | > 0 and <= 3600 | Time a connected player has for a turn before auto-play (R11). |
| `DOMINOS_AWAY_TURN_SECONDS` | `5` | > 0 and <= 3600 | Turn time of a seat whose player is disconnected (S3). |
| `DOMINOS_ROBOT_THINK_MIN_SECONDS` | `0.8` | >= 0 and <= 60 | Bots service: the shortest a robot thinks before its move (issue 20), so games feel human. |
| `DOMINOS_ROBOT_THINK_MAX_SECONDS` | `2.5` | >= 0 and <= 60 | Bots service: the longest a robot thinks (never past its seat's short clock: it acts at least half a second before). |
| `DOMINOS_ROUND_BREAK_SECONDS` | `10` | >= 0 and <= 3600 | Pause between two rounds (D1). |
| `DOMINOS_LOBBY_TTL_SECONDS` | `3600` | > 0 and <= 2592000 | Lifetime of a table that has not started. |
| `DOMINOS_FINISHED_TTL_SECONDS` | `86400` | > 0 and <= 2592000 | How long a finished table is kept. |
| `DOMINOS_SHUTDOWN_GRACE_SECONDS` | `10` | >= 0 and <= 3600 | On SIGTERM, time in-flight calls get before they are cancelled. |
| `DOMINOS_SHUTDOWN_DRAIN_SECONDS` | `2` | >= 0 and <= 3600 | On SIGTERM, time the server keeps serving with health NOT_SERVING before refusing new calls. |
| `DOMINOS_LOG_LEVEL` | `info` | `debug`, `info`, `warning`, `error`, `critical` | Lowest level written to the log. |
| `DOMINOS_EVENT_LOOP` | `uvloop` | `uvloop`, `asyncio` | The asyncio event loop the service runs on (uvloop: measured -20 % action latency p50, -6 % CPU per command). |
| `DOMINOS_JOIN_RATE_LIMIT` | `12000` | 1 to 1000000 | Table service: failed joins (no such code) per client address per minute, the ceiling over all its connections (D6). |
| `DOMINOS_JOIN_FAILURES_PER_CONNECTION` | `5` | 0 to 1000000 | Table service: failed joins per client connection per minute; 0: no such budget. |
| `DOMINOS_CREATES_PER_ADDRESS_MINUTE` | `20` | 0 to 1000000 | Table service: `CreateTable` attempts per client address per minute; 0: no limit. |
| `DOMINOS_CREATES_PER_ADDRESS_HOUR` | `120` | 0 to 1000000 | Table service: `CreateTable` attempts per client address per hour; 0: no limit. |
| `DOMINOS_CREATES_PER_SECOND` | `20` | 0 to 1000000 | Table service: `CreateTable` attempts of all clients together per second; 0: no limit. |
| `DOMINOS_LOBBIES_PER_ADDRESS` | `30` | 0 to 1000000 | Table service: lobbies open at once that were created from one client address; 0: no cap. |
| `DOMINOS_LOBBY_CHANGES_PER_MINUTE` | `30` | 0 to 1000000 | Table service: joins, leaves and target changes of one table per minute; 0: no limit. |
| `DOMINOS_CONNECTIONS_PER_SEAT_MINUTE` | `20` | 0 to 1000000 | Table service: times one seat may turn connected (a view stream opens) per minute; 0: no limit. |
| `DOMINOS_STREAMS_PER_SEAT` | `4` | 1 to 1000 | Gateway: view streams of one seat token open at once on a gateway; a newer one ends the oldest (ABORTED / STREAM_REPLACED). |
| `DOMINOS_STREAMS_PER_ADDRESS` | `512` | 0 to 1000000 | Gateway: view streams open at once from one client address on a gateway; 0: no cap. |
| `DOMINOS_CONNECTIONS_PER_ADDRESS` | `256` | 0 to 1000000 | Gateway: open client connections of one address on a gateway: on the gRPC door those with a call in progress, on the web door every open connection (behind a trusted proxy, each browser with a request in progress); 0: no cap. |
| `DOMINOS_STREAMS_PER_CONNECTION` | `100` | 1 to 100000 | Gateway: concurrent calls on one HTTP/2 connection (`max_concurrent_streams`); more wait in the client. |
| `DOMINOS_MAX_CONNECTION_AGE_SECONDS` | `1800` | >= 0 and <= 604800 | Gateway: a client connection older than this is asked to reconnect (HTTP/2 GOAWAY), so clients spread over new replicas; 0: never. |
| `DOMINOS_MAX_CONNECTION_AGE_GRACE_SECONDS` | `60` | >= 0 and <= 86400 | Gateway: how long calls of an aged connection may go on before they are ended (clients reconnect their streams). |
| `DOMINOS_MAX_CONNECTION_IDLE_SECONDS` | `60` | > 0 and <= 86400 | Gateway: a client connection without a call for this long is closed (clients reconnect when they call again). |
| `DOMINOS_TIMER_RETRY_SECONDS` | `2` | > 0 and <= 3600 | Lease of a claimed deadline: it fires again after this if its table has not moved on. |
| `DOMINOS_TIMER_SWEEP_SECONDS` | `1` | > 0 and <= 3600 | Period of the timer service's sweep of the deadline index (it schedules the clocks ending within two periods and 0.5 s); the table service announces on NATS the clocks ending sooner than two periods and 1 s after their commit. Give both services the same value. |
| `DOMINOS_NATS_STREAM_REPLICAS` | `1` | 1 to 5 | Replicas of the JetStream streams the services create (3 on a 3-node NATS cluster). |
| `DOMINOS_NATS_CA_FILE` | `` | file path, or empty | PEM file of the CA that signed the NATS servers' certificates (use `tls://` URLs); empty: the system's CAs. |
| `DOMINOS_NATS_CERT_FILE` | `` | file path, or empty | PEM client certificate presented to NATS servers that verify clients (mutual TLS); empty: none. |
| `DOMINOS_NATS_KEY_FILE` | `` | file path, or empty | PEM private key of `DOMINOS_NATS_CERT_FILE` (empty: the key is in the certificate file). |
| `DOMINOS_PRESENCE_LEASE_SECONDS` | `15` | > 0 and <= 3600 | Lifetime of a gateway's presence lease on a connected seat (renewed every third of it); a crashed gateway's seats turn disconnected after it. |
| `DOMINOS_TOKEN_SECRET` | `dev-only-insecure-token-secret` | at least 16 characters | Key seat tokens are derived from (HMAC-SHA256); the same on every table-service replica. Set a random value in production. |
| `DOMINOS_DEVELOPMENT` | `0` | `1`/`0`, `true`/`false`, `yes`/`no` | Development mode: allows the built-in token secret and a table service without caller credentials. Never set in production. |
| `DOMINOS_TABLE_CALLERS` | `` | comma-separated `<caller>.<secret>` (secret: 16+ characters) | Table service: the credentials its callers must present (`<caller>.<secret>`, comma-separated: several during a rotation). A caller named `gateway` may pass on the client's address. Required outside development. |
| `DOMINOS_CALLER_CREDENTIAL` | `` | `<caller>.<secret>` (secret: 16+ characters) | Gateway and bots service: the credential each presents to the table service (`gateway.<secret>`, `bots.<secret>`: one of the table service's `DOMINOS_TABLE_CALLERS`). |
| `DOMINOS_METRICS_HOST` | `0.0.0.0` | host name or IP | Interface the Prometheus `/metrics` endpoint listens on (127.0.0.1 under `make run`). |
| `DOMINOS_WEB_HOST` | `0.0.0.0` | host name or IP | Gateway: interface of the web edge (the public API over Connect and gRPC-Web, for browsers). |
| `DOMINOS_WEB_PORT` | `-1` | -1 to 65535 | Gateway: HTTP port of the web edge; 0 picks a free port, -1 turns the web edge off. |
| `DOMINOS_WEB_ROOT` | `` | directory path, or empty | Gateway: directory of the web client the web edge serves at `/` (`index.html` and its assets); empty: the API only. |
| `DOMINOS_WEB_ALLOWED_ORIGINS` | `` | comma-separated `http://` or `https://` origins, or empty | Gateway: other origins whose pages may call the web edge (CORS); the edge's own origin always may. |
| `DOMINOS_WEB_TRUSTED_PROXIES` | `` | comma-separated IP addresses or CIDR networks, or empty | Gateway: addresses of the proxies (the Ingress) whose `X-Forwarded-For` names the browser's address for the limits; empty: none (the connection's address counts). |
| `DOMINOS_WEB_MAX_HEAD_BYTES` | `16384` | 1024 to 1048576 | Gateway: largest request head (request line and headers) the web edge reads; a larger one is answered 431 and its connection closed. |
| `DOMINOS_WEB_HEAD_TIMEOUT_SECONDS` | `10` | > 0 and <= 3600 | Gateway: a web connection must send a whole request head this soon after it opens or its head begins (else 408, closed); between requests it may idle for `DOMINOS_MAX_CONNECTION_IDLE_SECONDS`. |
| `DOMINOS_WEB_BODY_TIMEOUT_SECONDS` | `10` | > 0 and <= 3600 | Gateway: a web request's body must arrive whole this soon after its head, else its connection is closed. |
| `DOMINOS_WEB_MAX_REQUESTS` | `10000` | 1 to 1000000 | Gateway: web requests served at once by one gateway process, view streams included; beyond, UNAVAILABLE with a RetryInfo. |

"""

from __future__ import annotations

import dataclasses
import ipaddress
import math
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal
from urllib.parse import urlsplit

__all__ = [
    "ENV_PREFIX",
    "EVENT_LOOPS",
    "LOG_LEVELS",
    "VARIABLES",
    "Settings",
    "SettingsError",
    "Variable",
    "settings_table_markdown",
]

ENV_PREFIX: Final = "DOMINOS_"
LOG_LEVELS: Final = ("debug", "info", "warning", "error", "critical")
EVENT_LOOPS: Final = ("uvloop", "asyncio")

_DAY: Final = 86_400.0
_THIRTY_DAYS: Final = 30 * _DAY
_HOUR: Final = 3_600.0
_SERVICE_NAME_RE: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,62}")
_GRPC_TARGET_SCHEMES: Final = ("dns:", "ipv4:", "ipv6:", "unix:", "unix-abstract:", "xds:")
_REDIS_SCHEMES: Final = ("redis", "rediss", "unix")
_NATS_SCHEMES: Final = ("nats", "tls", "ws", "wss")

Kind = Literal[
    "str",
    "name",
    "host",
    "int",
    "float",
    "log_level",
    "event_loop",
    "redis_url",
    "nats_url",
    "target",
    "secret",
    "optional_secret",
    "path",
    "callers",
    "flag",
    "origins",
    "networks",
]

#: Kinds whose value may be empty (the default of each is "": not set).
_OPTIONAL_KINDS: Final = frozenset({"optional_secret", "path", "callers", "origins", "networks"})
#: A caller credential: ``<caller name>.<secret of at least 16 characters>``.
_CREDENTIAL_RE: Final = re.compile(r"[a-z][a-z0-9-]{0,31}\.[A-Za-z0-9_-]{16,}")
#: Kinds whose value is never logged.
_SECRET_KINDS: Final = frozenset({"secret", "optional_secret", "callers"})
#: The values a flag accepts.
_FLAG_VALUES: Final = {
    "1": True,
    "true": True,
    "yes": True,
    "0": False,
    "false": False,
    "no": False,
}


#: Kinds whose value is one of a few names (case-insensitive): what they name, the names.
_CHOICES: Final[dict[str, tuple[str, tuple[str, ...]]]] = {
    "log_level": ("log level", LOG_LEVELS),
    "event_loop": ("event loop", EVENT_LOOPS),
}


class SettingsError(ValueError):
    """A configuration variable holds an invalid value.

    ``variable`` is the environment variable's name and ``problem`` says what is wrong; the
    message is ``"<variable>: <problem>"``.
    """

    def __init__(self, variable: str, problem: str) -> None:
        super().__init__(f"{variable}: {problem}")
        self.variable = variable
        self.problem = problem


@dataclass(frozen=True, slots=True)
class Variable:
    """Description of one environment variable: the single source for parsing and docs.

    ``minimum``/``maximum`` bound numeric kinds; ``exclusive_minimum`` makes the lower bound
    strict (a duration that must be > 0).
    """

    name: str
    attribute: str
    kind: Kind
    default: str | int | float
    allowed: str
    meaning: str
    minimum: float | None = None
    maximum: float | None = None
    exclusive_minimum: bool = False


def _var(
    name: str,
    default: str | int | float,
    meaning: str,
    *,
    kind: Kind,
    allowed: str = "",
    minimum: float | None = None,
    maximum: float | None = None,
    exclusive_minimum: bool = False,
) -> Any:
    """A dataclass field whose metadata carries its :class:`Variable` (attribute set later)."""
    if not allowed and minimum is not None and maximum is not None:
        if kind == "int":
            allowed = f"{int(minimum)} to {int(maximum)}"
        else:
            low = ">" if exclusive_minimum else ">="
            allowed = f"{low} {_fmt_number(minimum)} and <= {_fmt_number(maximum)}"
    spec = Variable(
        name=name,
        attribute="",
        kind=kind,
        default=default,
        allowed=allowed,
        meaning=meaning,
        minimum=minimum,
        maximum=maximum,
        exclusive_minimum=exclusive_minimum,
    )
    return dataclasses.field(default=default, metadata={"variable": spec})


def _duration(
    name: str, default: float, meaning: str, *, maximum: float, allow_zero: bool = False
) -> Any:
    return _var(
        name,
        float(default),
        meaning,
        kind="float",
        minimum=0.0,
        maximum=maximum,
        exclusive_minimum=not allow_zero,
    )


def _fmt_number(value: float) -> str:
    """``45.0`` → ``"45"``, ``2.5`` → ``"2.5"``."""
    return str(int(value)) if float(value).is_integer() else repr(float(value))


@dataclass(frozen=True, slots=True)
class Settings:
    """Validated configuration of one process (see the module docstring for the variables).

    Construct it with :meth:`from_env` in entry points and with keyword arguments or
    :meth:`replace` in tests; every construction path validates, so an instance is always
    valid. Instances are immutable and hashable.
    """

    service_name: str = _var(
        "DOMINOS_SERVICE_NAME",
        "dominos",
        "Name of this process in logs (`service`) and metrics labels.",
        kind="name",
        allowed="letters, digits, `.`, `_`, `-`",
    )
    grpc_host: str = _var(
        "DOMINOS_GRPC_HOST",
        "0.0.0.0",
        "Interface the gRPC server listens on.",
        kind="host",
        allowed="host name or IP",
    )
    grpc_port: int = _var(
        "DOMINOS_GRPC_PORT",
        50051,
        "gRPC listen port; 0 picks a free port.",
        kind="int",
        minimum=0,
        maximum=65535,
    )
    metrics_port: int = _var(
        "DOMINOS_METRICS_PORT",
        9100,
        "Prometheus `/metrics` HTTP port; 0 picks a free port, -1 disables the endpoint.",
        kind="int",
        minimum=-1,
        maximum=65535,
    )
    redis_url: str = _var(
        "DOMINOS_REDIS_URL",
        "redis://127.0.0.1:6379/0",
        "Redis holding all table state.",
        kind="redis_url",
        allowed="`redis://`, `rediss://` or `unix://` URL",
    )
    redis_cluster: bool = _var(
        "DOMINOS_REDIS_CLUSTER",
        False,
        "Redis is a Redis Cluster: `DOMINOS_REDIS_URL` names one of its nodes, the client discovers the others and follows the slots.",
        kind="flag",
        allowed="`1`/`0`, `true`/`false`, `yes`/`no`",
    )
    redis_ca_file: str = _var(
        "DOMINOS_REDIS_CA_FILE",
        "",
        "PEM file of the CA that signed the Redis server's certificate (needs a `rediss://` URL); empty: the system's CAs.",
        kind="path",
        allowed="file path, or empty",
    )
    nats_url: str = _var(
        "DOMINOS_NATS_URL",
        "nats://127.0.0.1:4222",
        "NATS server(s) of the message bus.",
        kind="nats_url",
        allowed="comma-separated `nats://`, `tls://`, `ws://`, `wss://` URLs",
    )
    table_service_addr: str = _var(
        "DOMINOS_TABLE_SERVICE_ADDR",
        "127.0.0.1:50051",
        "Where the gateway and the bots service reach the table service.",
        kind="target",
        allowed="`host:port` or gRPC target (`dns:///table:50051`)",
    )
    turn_seconds: float = _duration(
        "DOMINOS_TURN_SECONDS",
        45,
        "Time a connected player has for a turn before auto-play (R11).",
        maximum=_HOUR,
    )
    away_turn_seconds: float = _duration(
        "DOMINOS_AWAY_TURN_SECONDS",
        5,
        "Turn time of a seat whose player is disconnected (S3).",
        maximum=_HOUR,
    )
    robot_think_min_seconds: float = _duration(
        "DOMINOS_ROBOT_THINK_MIN_SECONDS",
        0.8,
        "Bots service: the shortest a robot thinks before its move (issue 20), so games feel human.",
        maximum=60,
        allow_zero=True,
    )
    robot_think_max_seconds: float = _duration(
        "DOMINOS_ROBOT_THINK_MAX_SECONDS",
        2.5,
        "Bots service: the longest a robot thinks (never past its seat's short clock: it acts at least half a second before).",
        maximum=60,
        allow_zero=True,
    )
    round_break_seconds: float = _duration(
        "DOMINOS_ROUND_BREAK_SECONDS",
        10,
        "Pause between two rounds (D1).",
        maximum=_HOUR,
        allow_zero=True,
    )
    lobby_ttl_seconds: float = _duration(
        "DOMINOS_LOBBY_TTL_SECONDS",
        3600,
        "Lifetime of a table that has not started.",
        maximum=_THIRTY_DAYS,
    )
    finished_ttl_seconds: float = _duration(
        "DOMINOS_FINISHED_TTL_SECONDS",
        86400,
        "How long a finished table is kept.",
        maximum=_THIRTY_DAYS,
    )
    shutdown_grace_seconds: float = _duration(
        "DOMINOS_SHUTDOWN_GRACE_SECONDS",
        10,
        "On SIGTERM, time in-flight calls get before they are cancelled.",
        maximum=_HOUR,
        allow_zero=True,
    )
    shutdown_drain_seconds: float = _duration(
        "DOMINOS_SHUTDOWN_DRAIN_SECONDS",
        2,
        "On SIGTERM, time the server keeps serving with health NOT_SERVING before refusing new calls.",
        maximum=_HOUR,
        allow_zero=True,
    )
    log_level: str = _var(
        "DOMINOS_LOG_LEVEL",
        "info",
        "Lowest level written to the log.",
        kind="log_level",
        allowed=", ".join(f"`{level}`" for level in LOG_LEVELS),
    )
    event_loop: str = _var(
        "DOMINOS_EVENT_LOOP",
        "uvloop",
        "The asyncio event loop the service runs on (uvloop: measured -20 % action latency p50, -6 % CPU per command).",
        kind="event_loop",
        allowed=", ".join(f"`{loop}`" for loop in EVENT_LOOPS),
    )
    join_rate_limit: int = _var(
        "DOMINOS_JOIN_RATE_LIMIT",
        12000,
        "Table service: failed joins (no such code) per client address per minute, the ceiling over all its connections (D6).",
        kind="int",
        minimum=1,
        maximum=1_000_000,
    )
    join_failures_per_connection: int = _var(
        "DOMINOS_JOIN_FAILURES_PER_CONNECTION",
        5,
        "Table service: failed joins per client connection per minute; 0: no such budget.",
        kind="int",
        minimum=0,
        maximum=1_000_000,
    )
    creates_per_address_minute: int = _var(
        "DOMINOS_CREATES_PER_ADDRESS_MINUTE",
        20,
        "Table service: `CreateTable` attempts per client address per minute; 0: no limit.",
        kind="int",
        minimum=0,
        maximum=1_000_000,
    )
    creates_per_address_hour: int = _var(
        "DOMINOS_CREATES_PER_ADDRESS_HOUR",
        120,
        "Table service: `CreateTable` attempts per client address per hour; 0: no limit.",
        kind="int",
        minimum=0,
        maximum=1_000_000,
    )
    creates_per_second: int = _var(
        "DOMINOS_CREATES_PER_SECOND",
        20,
        "Table service: `CreateTable` attempts of all clients together per second; 0: no limit.",
        kind="int",
        minimum=0,
        maximum=1_000_000,
    )
    lobbies_per_address: int = _var(
        "DOMINOS_LOBBIES_PER_ADDRESS",
        30,
        "Table service: lobbies open at once that were created from one client address; 0: no cap.",
        kind="int",
        minimum=0,
        maximum=1_000_000,
    )
    lobby_changes_per_minute: int = _var(
        "DOMINOS_LOBBY_CHANGES_PER_MINUTE",
        30,
        "Table service: joins, leaves and target changes of one table per minute; 0: no limit.",
        kind="int",
        minimum=0,
        maximum=1_000_000,
    )
    connections_per_seat_minute: int = _var(
        "DOMINOS_CONNECTIONS_PER_SEAT_MINUTE",
        20,
        "Table service: times one seat may turn connected (a view stream opens) per minute; 0: no limit.",
        kind="int",
        minimum=0,
        maximum=1_000_000,
    )
    streams_per_seat: int = _var(
        "DOMINOS_STREAMS_PER_SEAT",
        4,
        "Gateway: view streams of one seat token open at once on a gateway; a newer one ends the oldest (ABORTED / STREAM_REPLACED).",
        kind="int",
        minimum=1,
        maximum=1_000,
    )
    streams_per_address: int = _var(
        "DOMINOS_STREAMS_PER_ADDRESS",
        512,
        "Gateway: view streams open at once from one client address on a gateway; 0: no cap.",
        kind="int",
        minimum=0,
        maximum=1_000_000,
    )
    connections_per_address: int = _var(
        "DOMINOS_CONNECTIONS_PER_ADDRESS",
        256,
        "Gateway: open client connections of one address on a gateway: on the gRPC door those with a call in progress, on the web door every open connection (behind a trusted proxy, each browser with a request in progress); 0: no cap.",
        kind="int",
        minimum=0,
        maximum=1_000_000,
    )
    streams_per_connection: int = _var(
        "DOMINOS_STREAMS_PER_CONNECTION",
        100,
        "Gateway: concurrent calls on one HTTP/2 connection (`max_concurrent_streams`); more wait in the client.",
        kind="int",
        minimum=1,
        maximum=100_000,
    )
    max_connection_age_seconds: float = _duration(
        "DOMINOS_MAX_CONNECTION_AGE_SECONDS",
        1800,
        "Gateway: a client connection older than this is asked to reconnect (HTTP/2 GOAWAY), so clients spread over new replicas; 0: never.",
        maximum=7 * 86400,
        allow_zero=True,
    )
    max_connection_age_grace_seconds: float = _duration(
        "DOMINOS_MAX_CONNECTION_AGE_GRACE_SECONDS",
        60,
        "Gateway: how long calls of an aged connection may go on before they are ended (clients reconnect their streams).",
        maximum=86400,
        allow_zero=True,
    )
    max_connection_idle_seconds: float = _duration(
        "DOMINOS_MAX_CONNECTION_IDLE_SECONDS",
        60,
        "Gateway: a client connection without a call for this long is closed (clients reconnect when they call again).",
        maximum=86400,
    )
    timer_retry_seconds: float = _duration(
        "DOMINOS_TIMER_RETRY_SECONDS",
        2,
        "Lease of a claimed deadline: it fires again after this if its table has not moved on.",
        maximum=_HOUR,
    )
    timer_sweep_seconds: float = _duration(
        "DOMINOS_TIMER_SWEEP_SECONDS",
        1,
        "Period of the timer service's sweep of the deadline index (it schedules the clocks ending within two periods and 0.5 s); the table service announces on NATS the clocks ending sooner than two periods and 1 s after their commit. Give both services the same value.",
        maximum=_HOUR,
    )

    nats_stream_replicas: int = _var(
        "DOMINOS_NATS_STREAM_REPLICAS",
        1,
        "Replicas of the JetStream streams the services create (3 on a 3-node NATS cluster).",
        kind="int",
        minimum=1,
        maximum=5,
    )
    nats_ca_file: str = _var(
        "DOMINOS_NATS_CA_FILE",
        "",
        "PEM file of the CA that signed the NATS servers' certificates (use `tls://` URLs); empty: the system's CAs.",
        kind="path",
        allowed="file path, or empty",
    )
    nats_cert_file: str = _var(
        "DOMINOS_NATS_CERT_FILE",
        "",
        "PEM client certificate presented to NATS servers that verify clients (mutual TLS); empty: none.",
        kind="path",
        allowed="file path, or empty",
    )
    nats_key_file: str = _var(
        "DOMINOS_NATS_KEY_FILE",
        "",
        "PEM private key of `DOMINOS_NATS_CERT_FILE` (empty: the key is in the certificate file).",
        kind="path",
        allowed="file path, or empty",
    )
    presence_lease_seconds: float = _duration(
        "DOMINOS_PRESENCE_LEASE_SECONDS",
        15,
        "Lifetime of a gateway's presence lease on a connected seat (renewed every third of it); a crashed gateway's seats turn disconnected after it.",
        maximum=_HOUR,
    )
    token_secret: str = _var(
        "DOMINOS_TOKEN_SECRET",
        "dev-only-insecure-token-secret",
        "Key seat tokens are derived from (HMAC-SHA256); the same on every table-service replica. Set a random value in production.",
        kind="secret",
        allowed="at least 16 characters",
    )

    development: bool = _var(
        "DOMINOS_DEVELOPMENT",
        False,
        "Development mode: allows the built-in token secret and a table service without caller credentials. Never set in production.",
        kind="flag",
        allowed="`1`/`0`, `true`/`false`, `yes`/`no`",
    )
    table_callers: str = _var(
        "DOMINOS_TABLE_CALLERS",
        "",
        "Table service: the credentials its callers must present (`<caller>.<secret>`, comma-separated: several during a rotation). A caller named `gateway` may pass on the client's address. Required outside development.",
        kind="callers",
        allowed="comma-separated `<caller>.<secret>` (secret: 16+ characters)",
    )
    caller_credential: str = _var(
        "DOMINOS_CALLER_CREDENTIAL",
        "",
        "Gateway and bots service: the credential each presents to the table service (`gateway.<secret>`, `bots.<secret>`: one of the table service's `DOMINOS_TABLE_CALLERS`).",
        kind="callers",
        allowed="`<caller>.<secret>` (secret: 16+ characters)",
    )
    metrics_host: str = _var(
        "DOMINOS_METRICS_HOST",
        "0.0.0.0",
        "Interface the Prometheus `/metrics` endpoint listens on (127.0.0.1 under `make run`).",
        kind="host",
        allowed="host name or IP",
    )
    web_host: str = _var(
        "DOMINOS_WEB_HOST",
        "0.0.0.0",
        "Gateway: interface of the web edge (the public API over Connect and gRPC-Web, for browsers).",
        kind="host",
        allowed="host name or IP",
    )
    web_port: int = _var(
        "DOMINOS_WEB_PORT",
        -1,
        "Gateway: HTTP port of the web edge; 0 picks a free port, -1 turns the web edge off.",
        kind="int",
        minimum=-1,
        maximum=65535,
    )
    web_root: str = _var(
        "DOMINOS_WEB_ROOT",
        "",
        "Gateway: directory of the web client the web edge serves at `/` (`index.html` and its assets); empty: the API only.",
        kind="path",
        allowed="directory path, or empty",
    )
    web_allowed_origins: str = _var(
        "DOMINOS_WEB_ALLOWED_ORIGINS",
        "",
        "Gateway: other origins whose pages may call the web edge (CORS); the edge's own origin always may.",
        kind="origins",
        allowed="comma-separated `http://` or `https://` origins, or empty",
    )
    web_trusted_proxies: str = _var(
        "DOMINOS_WEB_TRUSTED_PROXIES",
        "",
        "Gateway: addresses of the proxies (the Ingress) whose `X-Forwarded-For` names the browser's address for the limits; empty: none (the connection's address counts).",
        kind="networks",
        allowed="comma-separated IP addresses or CIDR networks, or empty",
    )

    web_max_head_bytes: int = _var(
        "DOMINOS_WEB_MAX_HEAD_BYTES",
        16384,
        "Gateway: largest request head (request line and headers) the web edge reads; a larger one is answered 431 and its connection closed.",
        kind="int",
        minimum=1024,
        maximum=1_048_576,
    )
    web_head_timeout_seconds: float = _duration(
        "DOMINOS_WEB_HEAD_TIMEOUT_SECONDS",
        10,
        "Gateway: a web connection must send a whole request head this soon after it opens or its head begins (else 408, closed); between requests it may idle for `DOMINOS_MAX_CONNECTION_IDLE_SECONDS`.",
        maximum=3600,
    )
    web_body_timeout_seconds: float = _duration(
        "DOMINOS_WEB_BODY_TIMEOUT_SECONDS",
        10,
        "Gateway: a web request's body must arrive whole this soon after its head, else its connection is closed.",
        maximum=3600,
    )
    web_max_requests: int = _var(
        "DOMINOS_WEB_MAX_REQUESTS",
        10000,
        "Gateway: web requests served at once by one gateway process, view streams included; beyond, UNAVAILABLE with a RetryInfo.",
        kind="int",
        minimum=1,
        maximum=1_000_000,
    )

    def __post_init__(self) -> None:
        """Validate and normalise every attribute; raise SettingsError on the first bad one."""
        for spec in VARIABLES:
            value = getattr(self, spec.attribute)
            object.__setattr__(self, spec.attribute, _validate(spec, value))

    # -- construction -------------------------------------------------------------------

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Settings:
        """Parse the ``DOMINOS_*`` variables of ``env`` (default: ``os.environ``).

        Unset variables keep their defaults. Leading/trailing whitespace is ignored. Raises
        :class:`SettingsError` naming the first variable that is empty, not a number where a
        number is expected, out of its range, or otherwise invalid.
        """
        source: Mapping[str, str] = os.environ if env is None else env
        values: dict[str, Any] = {}
        for spec in VARIABLES:
            raw = source.get(spec.name)
            if raw is not None:
                values[spec.attribute] = _parse(spec, raw)
        return cls(**values)

    def replace(self, **changes: Any) -> Settings:
        """A copy with ``changes`` applied (validated like any construction); for tests."""
        return dataclasses.replace(self, **changes)

    @staticmethod
    def unknown_variables(env: Mapping[str, str] | None = None) -> list[str]:
        """Sorted names in ``env`` (default ``os.environ``) that start with ``DOMINOS_`` but
        are not settings variables: probably typos, or Kubernetes service links."""
        source: Mapping[str, str] = os.environ if env is None else env
        known = {spec.name for spec in VARIABLES}
        return sorted(k for k in source if k.startswith(ENV_PREFIX) and k not in known)

    def public_dict(self) -> dict[str, Any]:
        """Every attribute by name, with passwords inside URLs masked; safe to log."""
        return {
            spec.attribute: _mask_password(getattr(self, spec.attribute))
            if spec.kind in ("redis_url", "nats_url")
            else "***"
            if spec.kind in _SECRET_KINDS and getattr(self, spec.attribute)
            else getattr(self, spec.attribute)
            for spec in VARIABLES
        }

    def __repr__(self) -> str:
        """Like the dataclass repr, but URL passwords are masked."""
        body = ", ".join(f"{k}={v!r}" for k, v in self.public_dict().items())
        return f"Settings({body})"

    def require_secrets(self, *names: str) -> None:
        """Refuse to run (:class:`SettingsError`) while any of the variables ``names`` holds
        its built-in default (the development token secret, or nothing), unless
        ``DOMINOS_DEVELOPMENT`` is on: a service never runs in production on a secret
        everybody can read in this repository."""
        if self.development:
            return
        for spec in VARIABLES:
            if spec.name in names and getattr(self, spec.attribute) == spec.default:
                shown = "unset" if spec.default == "" else "the built-in development value"
                raise SettingsError(
                    spec.name,
                    f"is {shown}: set a random secret (a Kubernetes Secret in production), or "
                    "DOMINOS_DEVELOPMENT=1 on a development machine",
                )

    # -- derived values -----------------------------------------------------------------

    @property
    def grpc_listen_address(self) -> str:
        """``host:port`` to bind the gRPC server to (IPv6 hosts in brackets)."""
        host = self.grpc_host
        if ":" in host and not host.startswith("["):
            host = f"[{host}]"
        return f"{host}:{self.grpc_port}"

    @property
    def nats_servers(self) -> list[str]:
        """The NATS server URLs of ``nats_url``, in order."""
        return _split_urls(self.nats_url)

    @property
    def metrics_enabled(self) -> bool:
        """False when ``DOMINOS_METRICS_PORT`` is -1."""
        return self.metrics_port != -1

    @property
    def turn_ms(self) -> int:
        """``turn_seconds`` in whole milliseconds."""
        return _to_ms(self.turn_seconds)

    @property
    def max_connection_age_ms(self) -> int:
        """``max_connection_age_seconds`` in whole milliseconds."""
        return _to_ms(self.max_connection_age_seconds)

    @property
    def max_connection_age_grace_ms(self) -> int:
        """``max_connection_age_grace_seconds`` in whole milliseconds."""
        return _to_ms(self.max_connection_age_grace_seconds)

    @property
    def max_connection_idle_ms(self) -> int:
        """``max_connection_idle_seconds`` in whole milliseconds."""
        return _to_ms(self.max_connection_idle_seconds)

    @property
    def away_turn_ms(self) -> int:
        """``away_turn_seconds`` in whole milliseconds."""
        return _to_ms(self.away_turn_seconds)

    @property
    def round_break_ms(self) -> int:
        """``round_break_seconds`` in whole milliseconds."""
        return _to_ms(self.round_break_seconds)

    @property
    def lobby_ttl_ms(self) -> int:
        """``lobby_ttl_seconds`` in whole milliseconds."""
        return _to_ms(self.lobby_ttl_seconds)

    @property
    def finished_ttl_ms(self) -> int:
        """``finished_ttl_seconds`` in whole milliseconds."""
        return _to_ms(self.finished_ttl_seconds)

    @property
    def shutdown_grace_ms(self) -> int:
        """``shutdown_grace_seconds`` in whole milliseconds."""
        return _to_ms(self.shutdown_grace_seconds)

    @property
    def timer_retry_ms(self) -> int:
        """``timer_retry_seconds`` in whole milliseconds."""
        return _to_ms(self.timer_retry_seconds)

    @property
    def presence_lease_ms(self) -> int:
        """``presence_lease_seconds`` in milliseconds."""
        return _to_ms(self.presence_lease_seconds)

    @property
    def timer_sweep_ms(self) -> int:
        """``timer_sweep_seconds`` in whole milliseconds."""
        return _to_ms(self.timer_sweep_seconds)


def _collect_variables() -> tuple[Variable, ...]:
    specs = []
    for f in dataclasses.fields(Settings):
        spec: Variable = f.metadata["variable"]
        specs.append(dataclasses.replace(spec, attribute=f.name))
    return tuple(specs)


VARIABLES: Final[tuple[Variable, ...]] = _collect_variables()
"""Every configuration variable, in documentation order."""


def settings_table_markdown() -> str:
    """The Markdown table (header + one row per variable) documenting every variable.

    Columns: Variable, Default, Allowed, Meaning. Used by the module docstring and README.
    """
    lines = ["| Variable | Default | Allowed | Meaning |", "|---|---|---|---|"]
    for spec in VARIABLES:
        default = (
            _fmt_number(spec.default)
            if isinstance(spec.default, (int, float))
            else str(spec.default)
        )
        lines.append(f"| `{spec.name}` | `{default}` | {spec.allowed} | {spec.meaning} |")
    return "\n".join(lines) + "\n"


# -- parsing and validation -----------------------------------------------------------------


def _to_ms(seconds: float) -> int:
    return round(seconds * 1000)


def _mask_password(urls: str) -> str:
    """Replace the password of every URL in a comma-separated list by ``***``."""
    masked = []
    for url in _split_urls(urls):
        parts = urlsplit(url)
        if parts.password is not None:
            userinfo, _, hostinfo = parts.netloc.rpartition("@")
            user = userinfo.partition(":")[0]
            masked.append(parts._replace(netloc=f"{user}:***@{hostinfo}").geturl())
        else:
            masked.append(url)
    return ",".join(masked)


def _split_urls(value: str) -> list[str]:
    return [part.strip() for part in value.split(",") if part.strip()]


def _parse(spec: Variable, raw: str) -> Any:
    """Text of an environment variable → typed value (range checks happen in validation)."""
    text = raw.strip()
    if not text:
        if spec.kind in _OPTIONAL_KINDS:
            return ""
        raise SettingsError(spec.name, "must not be empty")
    if spec.kind == "int":
        try:
            return int(text)
        except ValueError:
            raise SettingsError(spec.name, f"expected an integer, got {raw!r}") from None
    if spec.kind == "float":
        try:
            return float(text)
        except ValueError:
            raise SettingsError(spec.name, f"expected a number of seconds, got {raw!r}") from None
    return text


def _validate_int(spec: Variable, value: object) -> Any:
    if isinstance(value, bool) or not isinstance(value, int):
        raise SettingsError(spec.name, f"expected an integer, got {value!r}")
    _check_range(spec, value)
    return value


def _validate_float(spec: Variable, value: object) -> Any:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise SettingsError(spec.name, f"expected a number of seconds, got {value!r}")
    number = float(value)
    if not math.isfinite(number):
        raise SettingsError(spec.name, f"must be a finite number, got {value!r}")
    _check_range(spec, number)
    return number


def _validate_flag(spec: Variable, value: object) -> Any:
    if isinstance(value, bool):
        return value
    flag = _FLAG_VALUES.get(str(value).strip().lower())
    if flag is None:
        raise SettingsError(spec.name, f"expected 1/0, true/false or yes/no, got {value!r}")
    return flag


def _validate_name(spec: Variable, text: str) -> str:
    if not _SERVICE_NAME_RE.fullmatch(text):
        raise SettingsError(
            spec.name, f"invalid name {text!r}; use 1-63 letters, digits, '.', '_' or '-'"
        )
    return text


def _validate_nats_url(spec: Variable, text: str) -> str:
    urls = _split_urls(text)
    if not urls:
        raise SettingsError(spec.name, "must name at least one server")
    for url in urls:
        _check_url(spec, url, _NATS_SCHEMES, need_host=True)
    return ",".join(urls)


def _validate_redis_url(spec: Variable, text: str) -> str:
    _check_url(spec, text, _REDIS_SCHEMES, need_host=not text.startswith("unix:"))
    return text


def _validate_callers(spec: Variable, text: str) -> str:
    credentials = [credential.strip() for credential in text.split(",")]
    for credential in credentials:
        if not _CREDENTIAL_RE.fullmatch(credential):
            raise SettingsError(
                spec.name,
                "expected comma-separated <caller>.<secret> credentials (a lower-case "
                "name, a dot, at least 16 characters of A-Z a-z 0-9 _ -)",
            )
    return ",".join(credentials)


def _validate_origins(spec: Variable, text: str) -> str:
    """Comma-separated origins, each ``scheme://host[:port]`` and nothing more."""
    origins = [origin.strip() for origin in text.split(",") if origin.strip()]
    for origin in origins:
        parts = urlsplit(origin)
        if (
            parts.scheme not in ("http", "https")
            or not parts.hostname
            or parts.path
            or parts.query
            or parts.fragment
            or parts.username
        ):
            raise SettingsError(
                spec.name, f"invalid origin {origin!r}; expected scheme://host[:port]"
            )
    return ",".join(origins)


def _validate_networks(spec: Variable, text: str) -> str:
    """Comma-separated IP addresses or CIDR networks."""
    networks = [network.strip() for network in text.split(",") if network.strip()]
    for network in networks:
        try:
            ipaddress.ip_network(network, strict=False)
        except ValueError:
            raise SettingsError(spec.name, f"invalid address or network {network!r}") from None
    return ",".join(networks)


def _validate_choice(spec: Variable, text: str) -> str:
    what, choices = _CHOICES[spec.kind]
    choice = text.lower()
    if choice not in choices:
        raise SettingsError(
            spec.name, f"unknown {what} {text!r}; expected one of {', '.join(choices)}"
        )
    return choice


def _validate_word(spec: Variable, text: str) -> str:
    """A text without whitespace: a target, a secret, a path."""
    if any(ch.isspace() for ch in text):
        shown = "" if spec.kind in _SECRET_KINDS else f", got {text!r}"
        raise SettingsError(spec.name, f"must not contain whitespace{shown}")
    if spec.kind == "target":
        _check_target(spec, text)
    if spec.kind in ("secret", "optional_secret") and len(text) < 16:
        raise SettingsError(spec.name, "must have at least 16 characters")
    return text


#: The validators of the kinds that are not text.
_VALUE_VALIDATORS: Final[dict[str, Callable[[Variable, object], Any]]] = {
    "int": _validate_int,
    "float": _validate_float,
    "flag": _validate_flag,
}
#: The validators of text kinds (any other text kind: :func:`_validate_word`).
_TEXT_VALIDATORS: Final[dict[str, Callable[[Variable, str], str]]] = {
    "name": _validate_name,
    "nats_url": _validate_nats_url,
    "redis_url": _validate_redis_url,
    "callers": _validate_callers,
    "origins": _validate_origins,
    "networks": _validate_networks,
}


def _validate(spec: Variable, value: object) -> Any:
    """Check ``value`` against ``spec``; return it normalised or raise :class:`SettingsError`."""
    if spec.kind in _VALUE_VALIDATORS:
        return _VALUE_VALIDATORS[spec.kind](spec, value)
    if not isinstance(value, str):
        raise SettingsError(spec.name, f"expected a string, got {value!r}")
    text = value.strip()
    if not text:
        if spec.kind in _OPTIONAL_KINDS:
            return ""
        raise SettingsError(spec.name, "must not be empty")
    if spec.kind in _CHOICES:
        return _validate_choice(spec, text)
    return _TEXT_VALIDATORS.get(spec.kind, _validate_word)(spec, text)


def _check_range(spec: Variable, number: float) -> None:
    low, high = spec.minimum, spec.maximum
    if low is not None:
        if spec.exclusive_minimum and number <= low:
            raise SettingsError(spec.name, f"must be > {_fmt_number(low)}, got {number!r}")
        if number < low:
            problem = "must not be negative" if low == 0 else f"must be >= {_fmt_number(low)}"
            raise SettingsError(spec.name, f"{problem}, got {number!r}")
    if high is not None and number > high:
        raise SettingsError(
            spec.name, f"out of range: must be <= {_fmt_number(high)}, got {number!r}"
        )


def _check_url(spec: Variable, url: str, schemes: tuple[str, ...], *, need_host: bool) -> None:
    shown = _mask_password(url)
    if any(ch.isspace() for ch in url):
        raise SettingsError(spec.name, f"URL {shown!r} must not contain whitespace")
    parts = urlsplit(url)
    if parts.scheme not in schemes:
        raise SettingsError(
            spec.name,
            f"URL {shown!r} must use one of the schemes {', '.join(s + '://' for s in schemes)}",
        )
    try:
        port = parts.port
    except ValueError:
        raise SettingsError(spec.name, f"URL {shown!r} has an invalid port") from None
    if need_host and not parts.hostname:
        raise SettingsError(spec.name, f"URL {shown!r} has no host")
    if port == 0:
        raise SettingsError(spec.name, f"URL {shown!r} has port 0")


def _check_target(spec: Variable, target: str) -> None:
    if target.startswith(_GRPC_TARGET_SCHEMES):
        scheme = target.split(":", 1)[0]
        if len(target) <= len(scheme) + 1:
            raise SettingsError(spec.name, f"gRPC target {target!r} names no address")
        return
    host, sep, port_text = target.rpartition(":")
    if not sep or not host.strip("[]"):
        raise SettingsError(spec.name, f"expected host:port, got {target!r}")
    try:
        port = int(port_text)
    except ValueError:
        raise SettingsError(spec.name, f"port of {target!r} is not a number") from None
    if not 1 <= port <= 65535:
        raise SettingsError(spec.name, f"port of {target!r} is out of range 1-65535")
