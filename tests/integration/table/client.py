"""A small test client of the internal table service (real gRPC)."""

from __future__ import annotations

import random
import uuid
from dataclasses import dataclass
from typing import Any

import grpc
from dominos.v1 import game_pb2, gateway_pb2, table_pb2, table_pb2_grpc

from services.common.caller_auth import CallerCredentials
from testing.secrets import SESSION_SECRETS


def rid() -> str:
    """A fresh request id."""
    return uuid.uuid4().hex


@dataclass
class Seat:
    """A player at a table: its seat number and token."""

    table_id: str
    seat: int
    token: str


class TableClient:
    """Calls ``dominos.v1.TableService`` on a real channel."""

    def __init__(self, target: str, credential: str = SESSION_SECRETS.gateway_credential) -> None:
        # Calls as the gateway does: with its service credential ('' for none).
        interceptors = [CallerCredentials(credential)] if credential else []
        self.channel = grpc.aio.insecure_channel(target, interceptors=interceptors)
        self.stub: Any = table_pb2_grpc.TableServiceStub(self.channel)

    async def close(self) -> None:
        await self.channel.close()

    async def execute(
        self, token: str = "", peer: str = "", connection: str = "", **command: Any
    ) -> Any:
        response = await self.stub.Execute(
            table_pb2.ExecuteRequest(seat_token=token, peer=peer, connection=connection, **command)
        )
        return getattr(response, response.WhichOneof("result"))

    async def create(
        self, name: str = "Host", target: int = 0, peer: str = ""
    ) -> tuple[Seat, str, Any]:
        response = await self.execute(
            peer=peer,
            create_table=gateway_pb2.CreateTableRequest(
                request_id=rid(), host_name=name, target=target
            ),
        )
        return Seat(response.table_id, 0, response.seat_token), response.invitation_code, response

    async def join(
        self, code: str, name: str, peer: str = "ipv4:10.0.0.1", connection: str = ""
    ) -> Seat:
        response = await self.execute(
            peer=peer,
            connection=connection,
            join_table=gateway_pb2.JoinTableRequest(
                request_id=rid(), invitation_code=code, player_name=name
            ),
        )
        return Seat(response.table_id, response.seat, response.seat_token)

    async def full_table(self, target: int = 0) -> list[Seat]:
        host, code, _ = await self.create(target=target)
        seats = [host]
        for name in ("Bo", "Cy", "Di"):
            seats.append(await self.join(code, name))
        return seats

    async def start(self, host: Seat) -> game_pb2.TableView:
        response = await self.execute(
            host.token,
            start_game=gateway_pb2.StartGameRequest(request_id=rid(), table_id=host.table_id),
        )
        return response.view

    async def view(self, seat: Seat) -> game_pb2.TableView:
        response = await self.stub.GetView(
            table_pb2.GetViewRequest(table_id=seat.table_id, seat_token=seat.token)
        )
        return response.view

    async def play(self, seat: Seat, move: Any, request_id: str | None = None) -> Any:
        return await self.execute(
            seat.token,
            play_tile=gateway_pb2.PlayTileRequest(
                request_id=rid() if request_id is None else request_id,
                table_id=seat.table_id,
                tile=move.tile,
                end=move.end,
            ),
        )

    async def pass_(self, seat: Seat, request_id: str | None = None) -> Any:
        request = gateway_pb2.PassRequest(
            request_id=rid() if request_id is None else request_id, table_id=seat.table_id
        )
        command: dict[str, Any] = {"pass": request}
        return await self.execute(seat.token, **command)

    async def act(self, seat: Seat, view: game_pb2.TableView, rng: random.Random) -> Any:
        """A random legal action for the seat whose view says it is to play."""
        if view.legal_moves:
            return await self.play(seat, rng.choice(list(view.legal_moves)))
        return await self.pass_(seat)
