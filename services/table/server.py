"""Assembly of the table service: Redis, NATS, the application, the servicer and the relay.

``await create_server(settings)`` connects to Redis and NATS, makes sure the JetStream
stream exists, starts the gRPC server (health, reflection, graceful shutdown from
:mod:`services.common.grpc_server`) and the outbox relay, and returns ``(server, port)``;
``settings.grpc_port == 0`` binds a free port, which is what tests do.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import Any

from dominos.v1 import table_pb2, table_pb2_grpc
from nats.aio.client import Client as NatsClient
from redis.asyncio import Redis

from services.common.bus import ensure_robot_stream, ensure_table_stream
from services.common.caller_auth import BOTS, CallerAuth, parse_credentials
from services.common.connections import DEPENDENCY_ERRORS, connect_nats, connect_redis
from services.common.grpc_server import INTERNAL_SERVER_OPTIONS, ServiceRuntime
from services.common.handler_wrapping import serialized_answers
from services.common.logging import get_logger
from services.common.presence import PresenceLeases
from services.common.settings import Settings
from services.common.tasks import stop_task
from services.rules import Timing
from services.table import metrics
from services.table.application import Limits, Policy, TableApp
from services.table.publisher import EventPublisher
from services.table.robot_servicer import RobotServicer
from services.table.robot_turns import RobotTurnPublisher
from services.table.servicer import EXECUTE_METHOD, EXECUTE_STREAM_METHOD, TableServicer
from services.table.store import TableStore
from services.table.timer_consumer import TimerConsumer

SERVICE_NAME = table_pb2.DESCRIPTOR.services_by_name["TableService"].full_name
ROBOT_SERVICE_NAME = table_pb2.DESCRIPTOR.services_by_name["RobotService"].full_name

log = get_logger(__name__)


def policy_from(settings: Settings) -> Policy:
    """The service policy the settings describe (D5, D6, D8)."""
    return Policy(
        timing=Timing(settings.turn_ms, settings.away_turn_ms, settings.round_break_ms),
        lobby_ttl_ms=settings.lobby_ttl_ms,
        finished_ttl_ms=settings.finished_ttl_ms,
        limits=Limits(
            creates_per_address_minute=settings.creates_per_address_minute,
            creates_per_address_hour=settings.creates_per_address_hour,
            creates_per_second=settings.creates_per_second,
            lobbies_per_address=settings.lobbies_per_address,
            join_failures_per_connection=settings.join_failures_per_connection,
            join_failures_per_address=settings.join_rate_limit,
            lobby_changes_per_minute=settings.lobby_changes_per_minute,
            connections_per_seat_minute=settings.connections_per_seat_minute,
        ),
        token_secret=settings.token_secret.encode(),
    )


async def _sample_tables(store: TableStore, interval_s: float = 5.0) -> None:
    """Refresh the ``dominos_tables`` gauge from the phase indexes and the outbox gauges
    from the pending indexes, forever."""
    while True:
        try:
            census = await store.census(int(time.time() * 1000))
            for phase, count in census.tables_by_phase.items():
                metrics.TABLES.labels(phase).set(count)
            metrics.OUTBOX_TABLES.set(census.outbox_tables)
            metrics.OUTBOX_OLDEST.set(census.outbox_oldest_ms / 1000)
        except asyncio.CancelledError:
            raise
        except Exception:
            DEPENDENCY_ERRORS.labels("redis").inc()
        await asyncio.sleep(interval_s)


def _caller_auth(settings: Settings) -> tuple[CallerAuth, ...]:
    """Every call must present a credential of ``DOMINOS_TABLE_CALLERS`` (none is asked only
    in development without callers configured). The caller ``bots`` may call RobotService
    and nothing else; every other caller TableService and not RobotService (issue 20)."""
    if not settings.table_callers:
        log.warning("table.callers_unauthenticated", reason="DOMINOS_DEVELOPMENT without callers")
        return ()
    return (
        CallerAuth(
            parse_credentials(settings.table_callers),
            [SERVICE_NAME, ROBOT_SERVICE_NAME],
            grants={BOTS: frozenset({ROBOT_SERVICE_NAME})},
            default_grant=frozenset({SERVICE_NAME}),
        ),
    )


def _register(servicer: TableServicer, robots: RobotServicer, server: Any) -> None:
    table_pb2_grpc.add_TableServiceServicer_to_server(servicer, server)  # type: ignore[no-untyped-call]
    table_pb2_grpc.add_RobotServiceServicer_to_server(robots, server)  # type: ignore[no-untyped-call]


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
    """Start the table service; returns it and the bound gRPC port. Refuses to start on the
    built-in token secret or without caller credentials, outside development."""
    settings.require_secrets("DOMINOS_TOKEN_SECRET", "DOMINOS_TABLE_CALLERS")
    redis = connect_redis(settings)
    nc = await connect_nats(settings, f"{settings.service_name}-table", identity="table")
    js = nc.jetstream()
    await ensure_table_stream(js, settings.nats_stream_replicas)
    await ensure_robot_stream(js, settings.nats_stream_replicas)
    store = TableStore(redis)
    publisher = EventPublisher(
        store,
        nc=nc,
        sweep_ms=settings.timer_sweep_ms,
        on_republish=metrics.OUTBOX_REPUBLISHED.inc,
    )
    app = TableApp(
        store,
        publisher,
        policy_from(settings),
        on_applied=metrics.record_applied,
        robot_turns=RobotTurnPublisher(js),
    )
    servicer = TableServicer(app, callers_authenticated=bool(settings.table_callers))
    robots = RobotServicer(app)
    runtime = ServiceRuntime.from_settings(
        settings,
        service_names=[SERVICE_NAME, ROBOT_SERVICE_NAME],
        registrars=[lambda server: _register(servicer, robots, server)],
        options=INTERNAL_SERVER_OPTIONS,
        wrappers=(
            *_caller_auth(settings),
            serialized_answers(EXECUTE_METHOD, EXECUTE_STREAM_METHOD),
        ),
    )
    consumer = TimerConsumer(
        app,
        PresenceLeases(redis),
        nc,
        stream_replicas=settings.nats_stream_replicas,
        on_expired=lambda _, acted: metrics.TIMERS_HANDLED.labels(
            "acted" if acted else "stale"
        ).inc(),
    )
    runtime.add_drain_callback(servicer.drain)
    await consumer.start()
    relay = asyncio.create_task(publisher.run_relay(), name="outbox-relay")
    gauges = asyncio.create_task(_sample_tables(store), name="tables-gauge")
    runtime.add_shutdown_hook(lambda: stop_task(relay), name="relay.stop")
    runtime.add_shutdown_hook(lambda: stop_task(gauges), name="gauges.stop")
    runtime.add_shutdown_hook(consumer.stop, name="timers.stop")
    runtime.add_shutdown_hook(nc.drain, name="nats.drain")
    runtime.add_shutdown_hook(publisher.flush_clearing, name="outbox.flush")
    runtime.add_shutdown_hook(redis.aclose, name="redis.close")
    port = await runtime.start()
    log.info("table.started", port=port)
    return TableServer(runtime, app, redis, nc, relay, consumer), port
