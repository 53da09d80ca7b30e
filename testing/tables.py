"""Tables seated straight through a :class:`~services.table.application.TableApp` (no gRPC),
for the table service's integration tests."""

from __future__ import annotations

import uuid

from dominos.v1 import gateway_pb2

from services.table.application import TableApp
from services.table.store import Client


async def seat_four_at(
    app: TableApp, client: Client
) -> tuple[gateway_pb2.CreateTableResponse, list[str]]:
    """A table created by Ana and joined by Bo, Cy and Di through ``app`` (not started): its
    create response and the four seats' tokens, seat order."""
    made = await app.create_table(
        gateway_pb2.CreateTableRequest(request_id=uuid.uuid4().hex, host_name="Ana"), client
    )
    tokens = [made.seat_token]
    for name in ("Bo", "Cy", "Di"):
        joined = await app.join_table(
            gateway_pb2.JoinTableRequest(
                request_id=uuid.uuid4().hex,
                player_name=name,
                invitation_code=made.invitation_code,
            ),
            client,
        )
        tokens.append(joined.seat_token)
    return made, tokens
