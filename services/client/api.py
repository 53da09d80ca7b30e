"""A thin asyncio client of the public API (``dominos.v1.DominosService``).

Used by the reference terminal client, the demo, the load generator and the end-to-end
tests. It adds what every caller needs: a fresh request id per command, the seat token as
``authorization: Bearer <token>`` metadata, and keepalive options suitable for a
long-lived view stream.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import grpc
from dominos.v1 import game_pb2, gateway_pb2, gateway_pb2_grpc

DEFAULT_GATEWAY = "127.0.0.1:50051"
"""Where ``make run`` serves the gateway, and where the clients look by default."""

CHANNEL_OPTIONS = (
    ("grpc.keepalive_time_ms", 20_000),
    ("grpc.keepalive_timeout_ms", 10_000),
    # Without it gRPC core waits up to 60 s for a ping's ack: a dead gateway is noticed
    # within 30 s, not ~80 s.
    ("grpc.http2.ping_timeout_ms", 10_000),
    ("grpc.keepalive_permit_without_calls", 1),
    ("grpc.http2.max_pings_without_data", 0),
    # Each client its own connection, even several clients in one process (tests, demo).
    ("grpc.use_local_subchannel_pool", 1),
)


def request_id() -> str:
    """A fresh client request id."""
    return uuid.uuid4().hex


@dataclass(frozen=True)
class SeatCredentials:
    """What a player keeps to act and to reconnect: the table, the seat and its token."""

    table_id: str
    seat: int
    token: str

    def metadata(self) -> tuple[tuple[str, str], ...]:
        """The call metadata proving the seat."""
        return (("authorization", f"Bearer {self.token}"),)


class DominosClient:
    """One channel to a gateway."""

    def __init__(self, target: str, *, timeout: float = 10.0) -> None:
        self.target = target
        self.timeout = timeout
        self.channel = grpc.aio.insecure_channel(target, options=CHANNEL_OPTIONS)
        self.stub: Any = gateway_pb2_grpc.DominosServiceStub(self.channel)  # type: ignore[no-untyped-call]

    async def close(self) -> None:
        """Close the channel."""
        await self.channel.close()

    async def create_table(
        self,
        host_name: str,
        target: int = 0,
        rules: game_pb2.RuleChoice | None = None,
        options: game_pb2.TableOptions | None = None,
    ) -> tuple[SeatCredentials, str, game_pb2.TableView]:
        """Create a table (with the rule set ``rules``: a preset and its adjustments; None for
        the default game; and the host's ``options``: robots, the friendly end; None for
        none); returns the host's credentials, the invitation code, the view."""
        request = gateway_pb2.CreateTableRequest(
            request_id=request_id(), host_name=host_name, target=target
        )
        if rules is not None:
            request.rules.CopyFrom(rules)
        if options is not None:
            request.options.CopyFrom(options)
        reply: gateway_pb2.CreateTableResponse = await self.stub.CreateTable(
            request, timeout=self.timeout
        )
        return (
            SeatCredentials(reply.table_id, reply.seat, reply.seat_token),
            reply.invitation_code,
            reply.view,
        )

    async def join_table(self, code: str, name: str) -> tuple[SeatCredentials, game_pb2.TableView]:
        """Join with an invitation code; returns the credentials and the first view."""
        reply: gateway_pb2.JoinTableResponse = await self.stub.JoinTable(
            gateway_pb2.JoinTableRequest(
                request_id=request_id(), invitation_code=code, player_name=name
            ),
            timeout=self.timeout,
        )
        return SeatCredentials(reply.table_id, reply.seat, reply.seat_token), reply.view

    async def leave(self, seat: SeatCredentials) -> int:
        """Leave before the start; returns the version after."""
        reply: gateway_pb2.LeaveTableResponse = await self.stub.LeaveTable(
            gateway_pb2.LeaveTableRequest(request_id=request_id(), table_id=seat.table_id),
            metadata=seat.metadata(),
            timeout=self.timeout,
        )
        return int(reply.version)

    async def set_target(self, seat: SeatCredentials, target: int) -> game_pb2.TableView:
        """Set the target (host, before the start)."""
        reply: gateway_pb2.SetTargetResponse = await self.stub.SetTarget(
            gateway_pb2.SetTargetRequest(
                request_id=request_id(), table_id=seat.table_id, target=target
            ),
            metadata=seat.metadata(),
            timeout=self.timeout,
        )
        return reply.view

    async def start(self, seat: SeatCredentials) -> game_pb2.TableView:
        """Start the game (host, four seated)."""
        reply: gateway_pb2.StartGameResponse = await self.stub.StartGame(
            gateway_pb2.StartGameRequest(request_id=request_id(), table_id=seat.table_id),
            metadata=seat.metadata(),
            timeout=self.timeout,
        )
        return reply.view

    async def play(
        self, seat: SeatCredentials, move: game_pb2.Move, rid: str | None = None
    ) -> game_pb2.TableView:
        """Lay a tile on an end."""
        reply: gateway_pb2.PlayTileResponse = await self.stub.PlayTile(
            gateway_pb2.PlayTileRequest(
                request_id=rid or request_id(),
                table_id=seat.table_id,
                tile=move.tile,
                end=move.end,
            ),
            metadata=seat.metadata(),
            timeout=self.timeout,
        )
        return reply.view

    async def pass_turn(self, seat: SeatCredentials, rid: str | None = None) -> game_pb2.TableView:
        """Pass (only when nothing fits, R9)."""
        reply: gateway_pb2.PassResponse = await self.stub.Pass(
            gateway_pb2.PassRequest(request_id=rid or request_id(), table_id=seat.table_id),
            metadata=seat.metadata(),
            timeout=self.timeout,
        )
        return reply.view

    async def draw(self, seat: SeatCredentials, rid: str | None = None) -> game_pb2.TableView:
        """Draw one tile from the stock (rule sets with one, only when nothing fits); the
        view returned has it in the hand."""
        reply: gateway_pb2.DrawTileResponse = await self.stub.DrawTile(
            gateway_pb2.DrawTileRequest(request_id=rid or request_id(), table_id=seat.table_id),
            metadata=seat.metadata(),
            timeout=self.timeout,
        )
        return reply.view

    async def propose_end(
        self, seat: SeatCredentials, rid: str | None = None
    ) -> game_pb2.TableView:
        """Propose to end the game by consent (the friendly end, at tables that offer it)."""
        reply: gateway_pb2.ProposeFriendlyEndResponse = await self.stub.ProposeFriendlyEnd(
            gateway_pb2.ProposeFriendlyEndRequest(
                request_id=rid or request_id(), table_id=seat.table_id
            ),
            metadata=seat.metadata(),
            timeout=self.timeout,
        )
        return reply.view

    async def answer_end(
        self, seat: SeatCredentials, accept: bool, rid: str | None = None
    ) -> game_pb2.TableView:
        """Answer the open friendly-end proposal: accept, or refuse (which closes it)."""
        reply: gateway_pb2.AnswerFriendlyEndResponse = await self.stub.AnswerFriendlyEnd(
            gateway_pb2.AnswerFriendlyEndRequest(
                request_id=rid or request_id(), table_id=seat.table_id, accept=accept
            ),
            metadata=seat.metadata(),
            timeout=self.timeout,
        )
        return reply.view

    async def view(self, seat: SeatCredentials) -> game_pb2.TableView:
        """The seat's current view."""
        reply: gateway_pb2.GetTableViewResponse = await self.stub.GetTableView(
            gateway_pb2.GetTableViewRequest(table_id=seat.table_id),
            metadata=seat.metadata(),
            timeout=self.timeout,
        )
        return reply.view

    def watch(self, seat: SeatCredentials) -> Any:
        """The seat's view stream (a grpc.aio call: iterate it, ``cancel()`` it)."""
        return self.stub.WatchTable(
            gateway_pb2.WatchTableRequest(table_id=seat.table_id), metadata=seat.metadata()
        )

    async def views(self, seat: SeatCredentials) -> AsyncIterator[game_pb2.TableView]:
        """The seat's views, one per message, until the stream ends."""
        call = self.watch(seat)
        try:
            async for message in call:
                yield message.view
        finally:
            call.cancel()
