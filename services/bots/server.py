"""Assembly of the bots service: the table service's robots' door, NATS, the consumer.

``await create_server(settings)`` connects to NATS (the robots' work queue) and opens a
channel to the table service with the ``bots`` caller credential, starts the gRPC server
(health, reflection, graceful shutdown: it serves no API of its own) and the consumer, and
returns ``(server, port)``; ``settings.grpc_port == 0`` binds a free port (tests do). It
keeps nothing and reads no table event: robots see their seats' views only (S6, D10).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dominos.v1 import table_pb2_grpc

from services.bots.consumer import RobotTurnConsumer
from services.bots.think import ThinkTime
from services.bots.turns import TurnPlayer
from services.common.connections import connect_nats, table_channel
from services.common.grpc_server import INTERNAL_SERVER_OPTIONS, ServiceRuntime
from services.common.logging import get_logger
from services.common.settings import Settings

log = get_logger(__name__)


@dataclass
class BotsServer:
    """A running bots service."""

    runtime: ServiceRuntime
    consumer: RobotTurnConsumer

    async def stop(self) -> None:
        """Graceful shutdown: NOT_SERVING, hand the turns in progress back, drain NATS."""
        await self.runtime.shutdown("stop")


async def create_server(settings: Settings) -> tuple[BotsServer, int]:
    """Start the bots service; returns it and its bound gRPC port (health only)."""
    settings.require_secrets("DOMINOS_CALLER_CREDENTIAL")
    channel = table_channel(settings)
    robots: Any = table_pb2_grpc.RobotServiceStub(channel)  # type: ignore[no-untyped-call]
    think = ThinkTime(settings.robot_think_min_seconds, settings.robot_think_max_seconds)
    nc = await connect_nats(settings, f"{settings.service_name}-bots", identity="bots")
    consumer = RobotTurnConsumer(
        TurnPlayer(robots, think), nc, stream_replicas=settings.nats_stream_replicas
    )
    runtime = ServiceRuntime.from_settings(settings, options=INTERNAL_SERVER_OPTIONS)
    runtime.add_shutdown_hook(consumer.stop, name="consumer.stop")
    runtime.add_shutdown_hook(nc.drain, name="nats.drain")
    runtime.add_shutdown_hook(channel.close, name="table.close")
    await consumer.start()
    port = await runtime.start()
    log.info("bots.started", port=port)
    return BotsServer(runtime, consumer), port
