"""Assembly of the table service: Redis, NATS, the application, the servicer and the relay.

``await create_server(settings)`` connects to Redis and NATS, makes sure the JetStream
stream exists, starts the gRPC server (health, reflection, graceful shutdown from
:mod:`services.common.grpc_server`) and the outbox relay, and returns ``(server, port)``;
``settings.grpc_port == 0`` binds a free port, which is what tests do.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import nats
from dominos.v1 import table_pb2, table_pb2_grpc
from nats.aio.client import Client as NatsClient
from redis.asyncio import Redis

from services.common.grpc_server import ServiceRuntime
from services.common.logging import get_logger
from services.common.settings import Settings
from services.table.application import Policy, TableApp
from services.table.publisher import EventPublisher, ensure_stream, stop_task
from services.table.rules import Timing
from services.table.servicer import TableServicer
from services.table.store import TableStore
from services.table.timer_consumer import TimerConsumer

SERVICE_NAME = table_pb2.DESCRIPTOR.services_by_name["TableService"].full_name

log = get_logger(__name__)


def policy_from(settings: Settings) -> Policy:
    """The service policy the settings describe (D5, D6, D8)."""
    return Policy(
        timing=Timing(settings.turn_ms, settings.away_turn_ms, settings.round_break_ms),
        lobby_ttl_ms=settings.lobby_ttl_ms,
        finished_ttl_ms=settings.finished_ttl_ms,
        join_failures_per_minute=settings.join_rate_limit,
        token_secret=settings.token_secret.encode(),
    )


async def connect_nats(
    settings: Settings, name: str, *, reconnected: Callable[[], Awaitable[None]] | None = None
) -> NatsClient:
    """A NATS connection that reconnects forever (the bus must come back by itself);
    ``reconnected`` runs after each reconnection."""
    options: dict[str, Any] = {}
    if reconnected is not None:
        options["reconnected_cb"] = reconnected
    return await nats.connect(
        servers=settings.nats_servers,
        name=name,
        max_reconnect_attempts=-1,
        reconnect_time_wait=0.5,
        allow_reconnect=True,
        **options,
    )


def connect_redis(settings: Settings) -> Redis:
    """A Redis client (bytes responses, retried connection errors)."""
    return Redis.from_url(
        settings.redis_url,
        decode_responses=False,
        health_check_interval=10,
        socket_keepalive=True,
    )


def _register(servicer: TableServicer, server: Any) -> None:
    table_pb2_grpc.add_TableServiceServicer_to_server(servicer, server)  # type: ignore[no-untyped-call]


@dataclass
class TableServer:
    """A running table service."""

    runtime: ServiceRuntime
    app: TableApp
    redis: Redis
    nats: NatsClient
    relay: asyncio.Task[None]
    timers: TimerConsumer

    async def stop(self) -> None:
        """Graceful shutdown: NOT_SERVING, drain calls, stop the relay, drain NATS, close Redis."""
        await self.runtime.shutdown("stop")


async def create_server(settings: Settings) -> tuple[TableServer, int]:
    """Start the table service; returns it and the bound gRPC port."""
    redis = connect_redis(settings)
    nc = await connect_nats(settings, f"{settings.service_name}-table")
    js = nc.jetstream()
    await ensure_stream(js)
    store = TableStore(redis)
    publisher = EventPublisher(js, store)
    app = TableApp(store, publisher, policy_from(settings))
    servicer = TableServicer(app)
    runtime = ServiceRuntime.from_settings(
        settings,
        service_names=[SERVICE_NAME],
        registrars=[lambda server: _register(servicer, server)],
    )
    consumer = TimerConsumer(app, nc)
    await consumer.start()
    relay = asyncio.create_task(publisher.run_relay(), name="outbox-relay")
    runtime.add_shutdown_hook(lambda: stop_task(relay), name="relay.stop")
    runtime.add_shutdown_hook(consumer.stop, name="timers.stop")
    runtime.add_shutdown_hook(nc.drain, name="nats.drain")
    runtime.add_shutdown_hook(redis.aclose, name="redis.close")
    port = await runtime.start()
    log.info("table.started", port=port)
    return TableServer(runtime, app, redis, nc, relay, consumer), port
