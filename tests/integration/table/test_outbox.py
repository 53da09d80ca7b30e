"""A crash between commit and publish: the relay publishes the missing version exactly once
after a restart, without operator action (issue 3)."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from dominos.v1 import events_pb2, gateway_pb2

from services.common.bus import ensure_table_stream
from services.common.schema import SHARDS, outbox_key, pending_key, shard_of
from services.table.application import TableApp
from services.table.publisher import EventPublisher
from services.table.server import create_server, policy_from
from services.table.store import Client, TableStore
from testing.waiting import wait_for

from .client import rid
from .conftest import table_settings
from .test_concurrency import stream_versions

LOCAL = Client("ipv4:127.0.0.1", "gw/ipv4:127.0.0.1:4000")


async def test_a_version_committed_but_never_published_is_relayed_exactly_once_after_restart(
    redis_server: Any, nats_server: Any, redis_client: Any, nats_client: Any, redis_connect: Any
) -> None:
    settings = table_settings(redis_server.url_for("table"), nats_server.url_for("table"))
    js = nats_client.jetstream()
    await ensure_table_stream(js)
    store = TableStore(redis_connect("table"))  # the replicas' store, as the table service
    healthy = TableApp(
        store, EventPublisher(store, nc=nats_client, sweep_ms=1000), policy_from(settings)
    )
    created = await healthy.create_table(
        gateway_pb2.CreateTableRequest(request_id=rid(), host_name="Ana"), LOCAL
    )
    table_id = created.table_id
    await wait_for(lambda: _outbox_empty(store, table_id), timeout=5)  # version 1 went out
    # A replica that dies right after its commit: the join is committed, never published.
    crashed = TableApp(store, None, policy_from(settings))
    joined = await crashed.join_table(
        gateway_pb2.JoinTableRequest(
            request_id=rid(), invitation_code=created.invitation_code, player_name="Bo"
        ),
        Client("ipv4:10.9.9.9", "gw/ipv4:10.9.9.9:4000"),
    )
    assert joined.view.version == 2
    left_behind = await store.outbox(table_id)
    assert len(left_behind) == 1
    assert await stream_versions(js, table_id, 2, wait_s=0.3) == [1]
    # A restarted replica's relay finds the outbox and publishes it, by itself.
    restarted, _ = await create_server(settings)
    try:
        await wait_for(lambda: _outbox_empty(store, table_id), timeout=10)
        assert await stream_versions(js, table_id, 2) == [1, 2]
        # A relay that dies after publishing but before clearing its outbox publishes again
        # later: the stream still holds version 2 once.
        await redis_client.zadd(outbox_key(table_id), {left_behind[0]: 2})
        await redis_client.zadd(pending_key(shard_of(table_id)), {table_id: 0})
        publisher = restarted.app.publisher
        assert publisher is not None
        assert await publisher.relay_once(grace_ms=0) == 0
        assert await store.outbox(table_id) == []
        assert await stream_versions(js, table_id, 3, wait_s=0.3) == [1, 2]
    finally:
        await restarted.stop()


async def test_a_commit_publishes_the_events_a_crashed_replica_left_first_then_its_own(
    redis_server: Any, nats_server: Any, nats_client: Any, redis_connect: Any
) -> None:
    """The commit answers only the outbox's older events (its own it sends from memory):
    the next command of any replica publishes what a crash left behind, in version order,
    without waiting for the relay."""
    settings = table_settings(redis_server.url_for("table"), nats_server.url_for("table"))
    js = nats_client.jetstream()
    await ensure_table_stream(js)
    store = TableStore(redis_connect("table"))
    healthy = TableApp(  # no relay runs here: only its commands publish
        store, EventPublisher(store, nc=nats_client, sweep_ms=1000), policy_from(settings)
    )
    created = await healthy.create_table(
        gateway_pb2.CreateTableRequest(request_id=rid(), host_name="Ana"), LOCAL
    )
    await wait_for(lambda: _outbox_empty(store, created.table_id), timeout=5)
    crashed = TableApp(store, None, policy_from(settings))
    for name in ("Bo", "Cy"):
        await crashed.join_table(
            gateway_pb2.JoinTableRequest(
                request_id=rid(), invitation_code=created.invitation_code, player_name=name
            ),
            Client(f"ipv4:10.9.9.{len(name)}", f"gw/ipv4:10.9.9.{len(name)}:4000"),
        )
    assert len(await store.outbox(created.table_id)) == 2  # versions 2 and 3, unpublished
    joined = await healthy.join_table(
        gateway_pb2.JoinTableRequest(
            request_id=rid(), invitation_code=created.invitation_code, player_name="Di"
        ),
        Client("ipv4:10.9.8.1", "gw/ipv4:10.9.8.1:4000"),
    )
    assert joined.view.version == 4
    assert await stream_versions(js, created.table_id, 4) == [1, 2, 3, 4]
    await wait_for(lambda: _outbox_empty(store, created.table_id), timeout=5)


async def _outbox_empty(store: TableStore, table_id: str) -> bool:
    return await store.outbox(table_id) == []


async def test_republishing_a_version_already_on_the_stream_is_dropped_as_a_duplicate(
    table_service: Any, nats_client: Any
) -> None:
    server, _ = table_service
    created = await server.app.create_table(
        gateway_pb2.CreateTableRequest(request_id=rid(), host_name="Ana"), LOCAL
    )
    event = events_pb2.TableEvent(table_id=created.table_id, version=1, state=b"again")
    assert await server.app.publisher.publish(created.table_id, [event.SerializeToString()]) == 0
    assert await stream_versions(nats_client.jetstream(), created.table_id, 2, wait_s=0.3) == [1]


async def test_outboxes_acknowledged_together_are_cleared_in_one_round_trip(
    table_service: Any, redis_client: Any
) -> None:
    server, _ = table_service
    app: TableApp = server.app
    store = app.store
    batches: list[int] = []
    clear = store.mark_published

    async def counted(versions: Any) -> None:  # the real clearing, counted
        batches.append(len(versions))
        await clear(versions)

    store.mark_published = counted  # type: ignore[method-assign]
    try:
        created = await asyncio.gather(
            *(
                app.create_table(
                    gateway_pb2.CreateTableRequest(request_id=rid(), host_name="Ana"), LOCAL
                )
                for _ in range(20)
            )
        )

        async def all_cleared() -> bool:
            outboxes = [await store.outbox(c.table_id) for c in created]
            pending = [await redis_client.zcard(pending_key(shard)) for shard in range(SHARDS)]
            return not any(outboxes) and not any(pending)

        await wait_for(all_cleared, timeout=5)
    finally:
        store.mark_published = clear  # type: ignore[method-assign]
    # The clearings of all 20 share a few batches; each batch is one pipelined round trip
    # (a script call per shard it touches).
    assert 1 <= len(batches) <= 5, batches
    assert sum(batches) >= 20


async def test_the_outbox_backlog_counts_tables_left_behind_and_the_oldest_wait(
    redis_server: Any, nats_server: Any, nats_client: Any, redis_connect: Any
) -> None:
    """Issue 21: the gauges behind DominosOutboxBacklog. A commit whose events were never
    published stays in the pending index; the backlog counts it and ages it by its Redis
    score (when its outbox filled), and forgets it once it is published."""
    settings = table_settings(redis_server.url_for("table"), nats_server.url_for("table"))
    store = TableStore(redis_connect("table"))
    before, _ = await store.outbox_backlog(now_ms=_now_ms())
    crashed = TableApp(store, None, policy_from(settings))  # commits, never publishes
    tables = [
        await crashed.create_table(
            gateway_pb2.CreateTableRequest(request_id=rid(), host_name="Ana"), LOCAL
        )
        for _ in range(3)
    ]
    count, oldest_ms = await store.outbox_backlog(now_ms=_now_ms())
    assert count == before + 3
    later, oldest_later_ms = await store.outbox_backlog(now_ms=_now_ms() + 90_000)
    assert later == count
    assert oldest_later_ms - oldest_ms >= 89_000  # ages with the clock, from the same score
    js = nats_client.jetstream()
    await ensure_table_stream(js)
    publisher = EventPublisher(store, nc=nats_client, sweep_ms=1000)
    for created in tables:
        await publisher.publish(created.table_id, await store.outbox(created.table_id))
    after, oldest_after_ms = await store.outbox_backlog(now_ms=_now_ms())
    assert after == before
    if before == 0:
        assert oldest_after_ms == 0


def _now_ms() -> int:
    return int(time.time() * 1000)
