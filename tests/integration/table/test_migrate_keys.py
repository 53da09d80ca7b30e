"""``tools/migrate_keys.py``: the Redis data of 0.1 (global indexes, ``{<table id>}`` tags)
moved to the sharded layout of 0.2 is read and played on by 0.2 as if it had written it."""

from __future__ import annotations

import random
import time
from typing import Any

import redis

from services.common import schema
from services.table.application import TableApp
from tools.migrate_keys import migrate

from .client import TableClient


async def downgrade(redis: Any, table_id: str, code: str) -> None:
    """Rename a table's keys and index entries to 0.1's names (the hash fields are the same,
    but for 0.2's ``av``, which 0.1 did not write)."""
    shard = schema.shard_of(table_id)
    await redis.hdel(schema.table_key(table_id), schema.Field.ACTION_VERSION)
    await redis.rename(schema.table_key(table_id), f"dominos:{{{table_id}}}:table")
    if await redis.exists(schema.outbox_key(table_id)):  # empty once published
        await redis.rename(schema.outbox_key(table_id), f"dominos:{{{table_id}}}:outbox")
    await redis.rename(schema.code_key(code), f"dominos:code:{code}")
    for new, old in [
        (schema.deadlines_key(shard), "dominos:deadlines"),
        (schema.pending_key(shard), "dominos:outbox:pending"),
        *((schema.phase_key(shard, p), f"dominos:phase:{p}") for p in schema.PHASES),
    ]:
        score = await redis.zscore(new, table_id)
        if score is not None:
            await redis.zadd(old, {table_id: score})
            await redis.zrem(new, table_id)


async def test_a_table_of_0_1_is_joined_and_played_after_the_migration(
    table_service: tuple[Any, int], client: TableClient, redis_client: Any, redis_server: Any
) -> None:
    app: TableApp = table_service[0].app
    seats = await client.full_table()
    await client.start(seats[0])
    lobby, lobby_code, _ = await client.create(name="Eva")
    record = await app.store.load(seats[0].table_id)
    assert record is not None and record.code
    await downgrade(redis_client, seats[0].table_id, record.code)
    await downgrade(redis_client, lobby.table_id, lobby_code)
    assert await app.store.load(seats[0].table_id) is None  # 0.2 does not read 0.1's names

    admin = redis.Redis.from_url(redis_server.url_for("admin"))  # the tool is synchronous
    moved = migrate(admin)
    assert (moved.tables, moved.codes) == (2, 2)
    assert migrate(admin).tables == 0  # a second run finds nothing left to move

    after = await app.store.load(seats[0].table_id)
    assert after is not None and after.version == record.version and after.state == record.state
    assert after.action_version == after.version  # absent in 0.1: the current version
    shard = schema.shard_of(seats[0].table_id)
    assert await redis_client.zscore(schema.deadlines_key(shard), seats[0].table_id)
    view = await client.view(seats[after.state.round.turn])  # type: ignore[union-attr]
    await client.act(seats[view.your_seat], view, random.Random(1))
    assert (await client.view(seats[0])).version == record.version + 1
    joined = await client.join(lobby_code, "Finn")  # the lobby's code works again
    assert joined.table_id == lobby.table_id
    phases = await app.store.tables_by_phase(int(time.time() * 1000))
    assert (phases["playing"], phases["waiting"]) == (1, 1)
    assert await redis_client.exists("dominos:deadlines", "dominos:phase:playing") == 0
