"""Assembly of the gateway: the table-service channel, NATS (fan-out), Redis (presence
leases), the hub and the public servicer.

``await create_server(settings)`` returns ``(server, port)``; port 0 binds a free port. With
``DOMINOS_WEB_PORT`` set (not -1), the same servicer also answers browsers over Connect and
gRPC-Web on that port (:mod:`services.gateway.web`); ``server.web_port`` is its bound port.
"""

from __future__ import annotations

import asyncio
import secrets
from dataclasses import dataclass
from typing import Any

import grpc
from dominos.v1 import gateway_pb2, table_pb2, table_pb2_grpc

from services.common.command_streams import CommandStreams
from services.common.connections import connect_nats, connect_redis, table_channel
from services.common.grpc_server import SERVER_OPTIONS, ServiceRuntime
from services.common.logging import get_logger
from services.common.presence import PresenceLeases
from services.common.settings import Settings
from services.common.tasks import stop_task
from services.gateway import metrics
from services.gateway.admission import Admission
from services.gateway.hub import Hub, Version
from services.gateway.presence import LeaseKeeper
from services.gateway.servicer import GatewayServicer
from services.gateway.web.edge import WebEdge
from services.rules import decode_state

SERVICE_NAME = gateway_pb2.DESCRIPTOR.services_by_name["DominosService"].full_name
RESYNC_INTERVAL_S = 30.0

log = get_logger(__name__)


@dataclass
class GatewayServer:
    """A running gateway."""

    runtime: ServiceRuntime
    servicer: GatewayServicer
    hub: Hub
    #: The web edge's port (Connect and gRPC-Web), or ``None`` when it is off.
    web_port: int | None = None

    async def stop(self) -> None:
        """Graceful shutdown: NOT_SERVING, end the streams, drain NATS, close the rest."""
        await self.runtime.shutdown("stop")


def public_server_options(settings: Settings) -> tuple[tuple[str, int], ...]:
    """The gateway's server options: the common ones, plus what one client connection may
    hold (issue 15): concurrent calls per connection, a maximum age (GOAWAY, then a grace for
    calls in flight) so clients spread over new replicas, and an idle timeout."""
    options = [
        *SERVER_OPTIONS,
        ("grpc.max_concurrent_streams", settings.streams_per_connection),
        ("grpc.max_connection_idle_ms", settings.max_connection_idle_ms),
    ]
    if settings.max_connection_age_ms:
        options += [
            ("grpc.max_connection_age_ms", settings.max_connection_age_ms),
            ("grpc.max_connection_age_grace_ms", settings.max_connection_age_grace_ms),
        ]
    return tuple(options)


def _serialize(reply: Any) -> bytes:
    """A reply on the wire: bytes as they are (the view streams' views, serialised in two
    parts by ``services.common.projection.watch_response_from_parts``), a message serialised."""
    if isinstance(reply, bytes):
        return reply
    return bytes(reply.SerializeToString())


def _register(servicer: GatewayServicer, server: Any) -> None:
    """The public API's methods, as the generated ``add_DominosServiceServicer_to_server``
    registers them, with a reply serialiser that also takes pre-serialised bytes."""
    service = gateway_pb2.DESCRIPTOR.services_by_name["DominosService"]
    handlers = {}
    for method in service.methods:
        make = (
            grpc.unary_stream_rpc_method_handler
            if method.server_streaming
            else grpc.unary_unary_rpc_method_handler
        )
        handlers[method.name] = make(
            getattr(servicer, method.name),
            request_deserializer=getattr(gateway_pb2, method.input_type.name).FromString,
            response_serializer=_serialize,
        )
    server.add_generic_rpc_handlers(
        (grpc.method_handlers_generic_handler(service.full_name, handlers),)
    )
    server.add_registered_method_handlers(service.full_name, handlers)


async def create_server(settings: Settings) -> tuple[GatewayServer, int]:
    """Start a gateway; returns it and the bound gRPC port. Every call to the table service
    carries the gateway's credential (``DOMINOS_CALLER_CREDENTIAL``; required outside
    development)."""
    settings.require_secrets("DOMINOS_CALLER_CREDENTIAL")
    channel = table_channel(settings)
    table: Any = table_pb2_grpc.TableServiceStub(channel)  # type: ignore[no-untyped-call]

    async def read_snapshot(table_id: str) -> Version | None:
        metrics.RESYNCS.inc()
        reply = await table.GetSnapshot(
            table_pb2.GetSnapshotRequest(table_id=table_id), timeout=5.0
        )
        if not reply.state:
            return None
        return Version.of_state(decode_state(reply.state), reply.seat_holders)

    hub = Hub(
        None,
        read_snapshot,
        on_skip=metrics.FANOUT_SKIPS.inc,
        on_rejected=lambda reason: metrics.EVENTS_REJECTED.labels(reason).inc(),
    )

    async def on_reconnect() -> None:
        log.info("gateway.nats_reconnected")
        await hub.resync_all()

    nc = await connect_nats(
        settings, f"{settings.service_name}-gateway", identity="gateway", reconnected=on_reconnect
    )
    hub.nc = nc
    redis = connect_redis(settings)
    leases = LeaseKeeper(PresenceLeases(redis), settings.presence_lease_ms)
    admission = Admission(
        connections_per_address=settings.connections_per_address,
        streams_per_address=settings.streams_per_address,
        streams_per_seat=settings.streams_per_seat,
    )
    # A table's commands go on one stream while a client here watches it (issue 22).
    commands = CommandStreams(
        channel.channel, table.Execute, credential=settings.caller_credential, wanted=hub.watches
    )
    servicer = GatewayServicer(
        table,
        hub,
        leases,
        gateway_id=f"{settings.service_name}-{secrets.token_hex(4)}",
        admission=admission,
        execute=commands,
    )
    runtime = ServiceRuntime.from_settings(
        settings,
        service_names=[SERVICE_NAME],
        registrars=[lambda server: _register(servicer, server)],
        options=public_server_options(settings),
    )
    resync = asyncio.create_task(hub.run_resync(RESYNC_INTERVAL_S), name="hub-resync")
    renewals = asyncio.create_task(leases.run(), name="lease-renewals")
    runtime.add_drain_callback(servicer.end_streams)
    web = WebEdge(settings, servicer) if settings.web_port >= 0 else None
    if web is not None:
        runtime.add_drain_callback(web.drain)
        runtime.add_shutdown_hook(web.stop, name="web.stop")
    runtime.add_shutdown_hook(lambda: stop_task(resync), name="resync.stop")
    runtime.add_shutdown_hook(servicer.drain, name="streams.drain")
    leases_stop = leases.stop

    async def stop_renewals() -> None:
        leases_stop()
        await stop_task(renewals)

    runtime.add_shutdown_hook(stop_renewals, name="renewals.stop")
    runtime.add_shutdown_hook(nc.drain, name="nats.drain")
    runtime.add_shutdown_hook(redis.aclose, name="redis.close")
    runtime.add_shutdown_hook(commands.close, name="commands.close")
    runtime.add_shutdown_hook(channel.close, name="table.close")
    port = await runtime.start()
    web_port = await web.start() if web is not None else None
    log.info("gateway.started", port=port, web_port=web_port)
    return GatewayServer(runtime, servicer, hub, web_port), port
