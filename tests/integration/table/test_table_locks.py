"""``services.table.table_locks`` in the table service: a table's commands wait for each
other only from the read to the compare-and-set, never for an earlier command's
publication (a NATS that does not answer delays answers, not the table's commits)."""

from __future__ import annotations

import asyncio
from typing import Any

import nats
from dominos.v1 import gateway_pb2

from services.common.bus import ensure_table_stream
from services.table.application import TableApp
from services.table.publisher import EventPublisher
from services.table.server import policy_from
from services.table.store import TableStore
from testing.servers import NatsServer
from testing.waiting import wait_for

from .client import rid
from .conftest import table_settings
from .test_outbox import LOCAL


async def test_a_table_s_next_command_commits_while_the_last_one_waits_for_nats(
    redis_server: Any, redis_connect: Any, nats_proc: NatsServer
) -> None:
    client = await nats.connect(nats_proc.url, allow_reconnect=False)
    try:
        await ensure_table_stream(client.jetstream())
        settings = table_settings(redis_server.url_for("table"), nats_proc.url)
        store = TableStore(redis_connect("table"))
        app = TableApp(
            store, EventPublisher(store, nc=client, sweep_ms=1000), policy_from(settings)
        )
        created = await app.create_table(
            gateway_pb2.CreateTableRequest(request_id=rid(), host_name="Ana"), LOCAL
        )
        table_id, token = created.table_id, created.seat_token

        def set_target(target: int) -> Any:
            request = gateway_pb2.SetTargetRequest(
                request_id=rid(), table_id=table_id, target=target
            )
            return asyncio.create_task(app.seated_command(request, token))

        async def stored_at(version: int) -> bool:
            record = await store.load(table_id)
            return record is not None and record.version == version

        nats_proc.pause()  # publications now wait for their acknowledgement (5 s at most)
        try:
            first = set_target(150)
            await wait_for(lambda: stored_at(2), timeout=3)
            second = set_target(200)
            # The second commits while the first still waits for NATS.
            await wait_for(lambda: stored_at(3), timeout=3)
            assert not first.done()
        finally:
            nats_proc.resume()
        answers = await asyncio.wait_for(asyncio.gather(first, second), timeout=15)
        assert [a.view.target for a in answers] == [150, 200]
        assert [a.view.version for a in answers] == [2, 3]
    finally:
        await client.close()
