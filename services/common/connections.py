"""Connections to Redis, NATS and the table service, the same for every service, with their
health metrics.

NATS reconnects forever (the bus must come back by itself after a restart); every
disconnection, reconnection and asynchronous error is counted. The NATS credentials travel
in ``DOMINOS_NATS_URL`` (``nats://<identity>:<password>@host:port``); with ``tls://`` URLs
the server's certificate is verified against ``DOMINOS_NATS_CA_FILE`` (else the system's
CAs), and ``DOMINOS_NATS_CERT_FILE`` / ``DOMINOS_NATS_KEY_FILE`` are presented to servers
that verify clients. Redis errors are counted by
the code that meets them (:data:`DEPENDENCY_ERRORS`).
"""

from __future__ import annotations

import ssl
import time
from collections.abc import Awaitable, Callable
from typing import Any, Final

import grpc
import nats
from nats.aio.client import Client as NatsClient
from prometheus_client import Counter
from redis.asyncio import BlockingConnectionPool, Redis
from redis.asyncio.client import Pipeline
from redis.asyncio.cluster import ClusterPipeline, RedisCluster
from redis.exceptions import RedisClusterException

from services.common.bus import reply_inbox_prefix
from services.common.dependency_metrics import redis_command_histogram
from services.common.grpc_metrics import precreate_client
from services.common.logging import get_logger
from services.common.settings import Settings, SettingsError
from services.common.table_channel import TableChannel
from services.common.table_routing import SERVICE_CONFIG, enable_request_hash

DEPENDENCY_ERRORS = Counter(
    "dominos_dependency_errors_total",
    "Errors talking to Redis or NATS, by dependency.",
    ["dependency"],
)
for _dependency in ("redis", "nats"):
    DEPENDENCY_ERRORS.labels(_dependency)
#: The table service's gRPC name (its calls' client-side series are created at 0).
TABLE_SERVICE: Final = "dominos.v1.TableService"
NATS_RECONNECTS = Counter("dominos_nats_reconnects_total", "Reconnections to NATS.")
NATS_DISCONNECTS = Counter("dominos_nats_disconnects_total", "Disconnections from NATS.")

log = get_logger(__name__)


#: Client pings to the NATS server (seconds between pings, unanswered pings before the
#: connection counts as dead).
NATS_PING_INTERVAL_S = 5
NATS_MAX_OUTSTANDING_PINGS = 2


def nats_tls_context(settings: Settings) -> ssl.SSLContext | None:
    """The TLS context of the NATS connection, or None when no TLS file is configured (then
    a ``tls://`` URL uses nats-py's default: the system's CAs). Raises ``SettingsError``
    for a key without a certificate, ``OSError``/``ssl.SSLError`` for unreadable files."""
    if settings.nats_key_file and not settings.nats_cert_file:
        raise SettingsError("DOMINOS_NATS_KEY_FILE", "needs DOMINOS_NATS_CERT_FILE")
    if not (settings.nats_ca_file or settings.nats_cert_file):
        return None
    context = ssl.create_default_context(
        ssl.Purpose.SERVER_AUTH, cafile=settings.nats_ca_file or None
    )
    if settings.nats_cert_file:
        context.load_cert_chain(settings.nats_cert_file, settings.nats_key_file or None)
    return context


async def connect_nats(
    settings: Settings,
    name: str,
    *,
    identity: str,
    reconnected: Callable[[], Awaitable[None]] | None = None,
) -> NatsClient:
    """A NATS connection that reconnects forever; ``reconnected`` runs after each reconnection.
    ``identity`` is the service's NATS user (``table``, ``timer``, ``bots``, ``gateway``):
    its reply inboxes start with :func:`~services.common.bus.reply_inbox_prefix`, the only
    ones that user may subscribe to."""
    tls = nats_tls_context(settings)

    async def on_disconnected() -> None:
        NATS_DISCONNECTS.inc()
        log.warning("nats.disconnected")

    async def on_reconnected() -> None:
        NATS_RECONNECTS.inc()
        log.info("nats.reconnected")
        if reconnected is not None:
            await reconnected()

    async def on_error(error: Exception) -> None:
        DEPENDENCY_ERRORS.labels("nats").inc()
        log.warning("nats.error", error=repr(error))

    return await nats.connect(
        servers=settings.nats_servers,
        name=name,
        max_reconnect_attempts=-1,
        reconnect_time_wait=0.5,
        # A silently dead connection (peer vanished, no RST) is noticed after two unanswered
        # pings, 10-15 s, then replaced; nats-py's default (120 s pings) took 4-6 minutes.
        ping_interval=NATS_PING_INTERVAL_S,
        max_outstanding_pings=NATS_MAX_OUTSTANDING_PINGS,
        allow_reconnect=True,
        disconnected_cb=on_disconnected,
        reconnected_cb=on_reconnected,
        error_cb=on_error,
        tls=tls,
        inbox_prefix=reply_inbox_prefix(identity),
    )


#: Connections a process may open to Redis; beyond, a command waits for a free one.
REDIS_POOL_SIZE = 64
#: How long a command waits for a free connection before failing (seconds).
REDIS_POOL_WAIT_S = 5.0
#: How long one Redis command may wait for its answer, and a connection for its handshake,
#: before the connection is dropped (our commands are short scripts: a longer wait means a
#: dead or frozen server, and the command fails as a dependency error instead of hanging).
REDIS_SOCKET_TIMEOUT_S = 5.0
REDIS_CONNECT_TIMEOUT_S = 2.0


async def flushed(nc: Any) -> None:
    """Return once the NATS server has processed every command this client issued before
    the call (a subscription it must hold before a snapshot is read, a publish).

    One ``flush()`` does not say that with nats-py 2.16: it writes its PING straight to the
    socket, ahead of the commands still waiting for the client's flusher task, so its PONG
    can come back before a SUB just made reaches the server (a message published meanwhile
    is not delivered). By the time that first PONG is read the flusher has written what
    waited; the PING of a second flush follows it on the connection, and the server answers
    a connection's commands in order."""
    await nc.flush()
    await nc.flush()


def redis_tls_options(settings: Settings) -> dict[str, Any]:
    """The TLS options of the Redis pool: with a ``rediss://`` URL the server's certificate is
    verified (hostname included) against ``DOMINOS_REDIS_CA_FILE``, else the system's CAs.
    Raises ``SettingsError`` for a CA file without a ``rediss://`` URL (TLS was meant, the
    connection would be plain text)."""
    tls = settings.redis_url.startswith("rediss://")
    if settings.redis_ca_file and not tls:
        raise SettingsError("DOMINOS_REDIS_CA_FILE", "needs a rediss:// DOMINOS_REDIS_URL")
    if not tls:
        return {}
    return {"ssl_cert_reqs": "required", "ssl_ca_certs": settings.redis_ca_file or None}


#: The histogram child every pipeline is timed in, bound once.
_PIPELINE_SECONDS: Final = redis_command_histogram("PIPELINE")


class _TimedExecute:
    """A pipeline whose ``execute`` is timed as one ``PIPELINE`` command (a subclass, not
    an ``execute`` attribute set on the pipeline: that closure over the pipeline's own method
    made a reference cycle of every pipeline, left for the garbage collector)."""

    async def execute(self, *args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            return await super().execute(*args, **kwargs)  # type: ignore[misc]
        finally:
            _PIPELINE_SECONDS.observe(time.perf_counter() - started)


class TimedPipeline(_TimedExecute, Pipeline):  # type: ignore[misc]
    """The pipeline of :class:`TimedRedis`."""


class TimedClusterPipeline(_TimedExecute, ClusterPipeline):  # type: ignore[misc]
    """The pipeline of :class:`TimedRedisCluster`."""


class TimedRedis(Redis):
    """A Redis client that times every command and pipeline
    (``dominos_redis_command_seconds``)."""

    async def execute_command(self, *args: Any, **options: Any) -> Any:
        started = time.perf_counter()
        try:
            return await super().execute_command(*args, **options)  # type: ignore[no-untyped-call]
        finally:
            elapsed = time.perf_counter() - started
            redis_command_histogram(args[0] if args else "").observe(elapsed)

    def pipeline(self, transaction: bool = True, shard_hint: str | None = None) -> Any:
        return TimedPipeline(self.connection_pool, self.response_callbacks, transaction, shard_hint)


class TimedRedisCluster(RedisCluster):
    """A Redis Cluster client that times every command and pipeline, like
    :class:`TimedRedis` (a redirection followed is part of the command's time)."""

    async def execute_command(self, *args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            return await super().execute_command(*args, **kwargs)
        finally:
            elapsed = time.perf_counter() - started
            redis_command_histogram(args[0] if args else "").observe(elapsed)

    def pipeline(self, transaction: Any = None, shard_hint: Any = None) -> Any:
        if shard_hint:
            raise RedisClusterException("shard_hint is deprecated in cluster mode")
        return TimedClusterPipeline(self, transaction)  # type: ignore[abstract]


def connect_redis(settings: Settings) -> Redis:
    """A Redis client (bytes responses, keepalive, periodic health checks) whose pool waits
    for a free connection instead of failing when all are busy.

    The identity and its password travel in ``DOMINOS_REDIS_URL``
    (``redis://<identity>:<password>@host:port/0``; ``rediss://`` for TLS, see
    :func:`redis_tls_options`). A connection sends ``HELLO 3 AUTH`` and then, idle for 10 s,
    ``PING``: both within every service's ACL (``services.common.cluster_auth.redis``); no
    ``CLIENT SETINFO`` (``driver_info=None``), which the ACLs do not grant.

    With ``DOMINOS_REDIS_CLUSTER`` the client is a Redis Cluster client: the URL names one
    node, the others are discovered (``CLUSTER SLOTS``), each command goes to the node of its
    keys' slot and follows ``MOVED``/``ASK`` redirections; every step the services run
    touches one slot (:mod:`services.common.schema`). It is typed as ``Redis``: the services
    use the commands both clients share. Both time their commands
    (:mod:`services.common.dependency_metrics`)."""
    options: dict[str, Any] = {
        "driver_info": None,
        **redis_tls_options(settings),
        "max_connections": REDIS_POOL_SIZE,
        "decode_responses": False,
        "health_check_interval": 10,
        "socket_keepalive": True,
        "socket_timeout": REDIS_SOCKET_TIMEOUT_S,
        "socket_connect_timeout": REDIS_CONNECT_TIMEOUT_S,
    }
    client: Any
    if settings.redis_cluster:
        client = TimedRedisCluster.from_url(settings.redis_url, **options)
    else:
        pool = BlockingConnectionPool.from_url(
            settings.redis_url, timeout=REDIS_POOL_WAIT_S, **options
        )
        client = TimedRedis(connection_pool=pool)
    return client  # type: ignore[no-any-return]


#: The channel to the table service (gateway, bots service): a table's calls go to one
#: replica of every address the target resolves to (a headless Service lists every table
#: replica; ``common.table_routing``), calls without a table to any; the service config is
#: ours, never one published in DNS;
#: keepalive pings every 10 s, also without calls, and a connection whose peer does not ack
#: within 5 s is replaced (a silently dead connection would otherwise fail every call with
#: DEADLINE_EXCEEDED for as long as TCP keeps the socket).
TABLE_CHANNEL_OPTIONS: Final = (
    ("grpc.service_config", SERVICE_CONFIG),
    ("grpc.service_config_disable_resolution", 1),
    ("grpc.keepalive_time_ms", 10_000),
    ("grpc.keepalive_timeout_ms", 5_000),
    ("grpc.http2.ping_timeout_ms", 5_000),
    ("grpc.keepalive_permit_without_calls", 1),
    ("grpc.http2.max_pings_without_data", 0),
)


def table_channel(settings: Settings) -> TableChannel:
    """A channel to the table service (``DOMINOS_TABLE_SERVICE_ADDR``) whose every call
    carries the caller's credential (``DOMINOS_CALLER_CREDENTIAL``; none in development
    without one) and its table (table-affine routing), and is timed
    (``dominos_grpc_client_handling_seconds``): a
    :class:`~services.common.table_channel.TableChannel`."""
    precreate_client(TABLE_SERVICE)
    enable_request_hash()
    channel = grpc.aio.insecure_channel(settings.table_service_addr, options=TABLE_CHANNEL_OPTIONS)
    return TableChannel(channel, settings.caller_credential)
