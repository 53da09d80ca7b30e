"""Assembly of the timer service: Redis, NATS, the scheduler, and a gRPC server for health,
reflection and graceful shutdown (the service has no API of its own)."""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from typing import Any

from services.common.connections import connect_nats, connect_redis
from services.common.grpc_server import ServiceRuntime
from services.common.logging import get_logger
from services.common.presence import PresenceLeases
from services.common.settings import Settings
from services.timer.claims import TimerStore
from services.timer.membership import Membership
from services.timer.service import TimerService

log = get_logger(__name__)


@dataclass
class TimerServer:
    """A running timer service."""

    runtime: ServiceRuntime
    service: TimerService

    async def stop(self) -> None:
        """Graceful shutdown: NOT_SERVING, stop the loops, drain NATS, close Redis."""
        await self.runtime.shutdown("stop")


async def create_server(settings: Settings) -> tuple[TimerServer, int]:
    """Start the timer service; returns it and the bound (health) gRPC port."""
    redis = connect_redis(settings)
    nc: Any = await connect_nats(settings, f"{settings.service_name}-timer", identity="timer")
    # A heartbeat outlives three sweeps: a replica that misses two keeps its shards.
    membership = Membership(
        redis,
        f"{settings.service_name}-{secrets.token_hex(4)}",
        ttl_ms=max(3 * settings.timer_sweep_ms, 3000),
    )
    service = TimerService(
        TimerStore(redis),
        PresenceLeases(redis),
        nc,
        retry_ms=settings.timer_retry_ms,
        sweep_ms=settings.timer_sweep_ms,
        stream_replicas=settings.nats_stream_replicas,
        membership=membership,
    )
    await service.start()
    runtime = ServiceRuntime.from_settings(settings)  # overall health only
    runtime.add_shutdown_hook(service.stop, name="timer.stop")
    runtime.add_shutdown_hook(nc.drain, name="nats.drain")
    runtime.add_shutdown_hook(redis.aclose, name="redis.close")
    port = await runtime.start()
    log.info("timer.started", port=port)
    return TimerServer(runtime, service), port
