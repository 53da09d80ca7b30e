"""The commit script's writes as Redis holds them (issue 22: one HSET for the state's chunks,
the log's and the bookkeeping fields)."""

from __future__ import annotations

from typing import Any

from dominos.v1 import gateway_pb2

from services.common.schema import Field, table_key

from .client import TableClient, rid


async def test_a_state_that_shrinks_leaves_no_chunk_of_its_longer_self(
    client: TableClient, redis_client: Any
) -> None:
    host, code, _ = await client.create(name="H")
    guests = [
        await client.join(code, letter * 24, peer=f"ipv4:10.0.{i}.1")
        for i, letter in enumerate("XYZ")
    ]
    key = table_key(host.table_id)
    longer = int(await redis_client.hget(key, Field.STATE_CHUNKS))
    for guest in guests:  # three 24-character names leave: the state loses over a chunk
        await client.execute(
            token=guest.token,
            leave_table=gateway_pb2.LeaveTableRequest(request_id=rid(), table_id=guest.table_id),
        )
    shorter = int(await redis_client.hget(key, Field.STATE_CHUNKS))
    assert shorter < longer
    fields = {field.decode() for field in await redis_client.hkeys(key)}
    chunks = {Field.state_chunk(i) for i in range(longer)}
    assert chunks & fields == {Field.state_chunk(i) for i in range(shorter)}
    view = await client.view(host)
    assert [seat.name for seat in view.seats if seat.occupied] == ["H"]
    assert view.version == 7  # created, three joins, three leaves: every version kept
