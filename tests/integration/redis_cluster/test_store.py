"""The table store on a real Redis Cluster of three primaries (issue 16): every atomic step
touches one slot, so creating, joining, playing, the relay's outbox, the budgets and the phase
gauge work there exactly as on a single Redis; a table's keys all live on one node."""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable
from typing import Any

import grpc
import pytest
from dominos.v1 import gateway_pb2

from services.common import schema
from services.common.service_errors import Reason, ServiceError
from services.rules import legal_moves, replay
from services.table.application import Limits, Policy, TableApp
from services.table.command_log import decode_log
from services.table.store import Client, TableStore
from testing.redis_cluster import RedisClusterServers
from testing.tables import seat_four_at

from .conftest import keys_per_node

CLIENT = Client("ipv4:203.0.113.9", "gw-1/ipv4:203.0.113.9:40000")


def rid() -> str:
    return secrets.token_urlsafe(18)


def app_on(redis: Any, **limits: int) -> TableApp:
    policy = Policy(limits=Limits(**limits)) if limits else Policy()
    return TableApp(TableStore(redis), None, policy)


async def test_a_table_is_created_joined_started_and_played_on_redis_cluster(
    cluster_connect: Callable[[str], Any],
) -> None:
    app = app_on(cluster_connect("table"))
    made, tokens = await seat_four_at(app, CLIENT)
    await app.seated_command(
        gateway_pb2.StartGameRequest(request_id=rid(), table_id=made.table_id), tokens[0]
    )
    for _ in range(8):  # eight turns, each the first legal move (or a pass)
        record = await app.store.load(made.table_id)
        assert record is not None and record.state.round is not None
        seat = record.state.round.turn
        request: Any = gateway_pb2.PassRequest(request_id=rid(), table_id=made.table_id)
        if legal_moves(record.state, seat):
            first = (await app.view(made.table_id, tokens[seat])).legal_moves[0]
            request = gateway_pb2.PlayTileRequest(
                request_id=rid(), table_id=made.table_id, tile=first.tile, end=first.end
            )
        await app.seated_command(request, tokens[seat])
    record = await app.store.load(made.table_id)
    assert record is not None and record.version == 1 + 3 + 1 + 8
    # The log replays to the stored state, bit for bit.
    assert replay(decode_log(await app.store.read_log(made.table_id))) == record.state


async def test_every_key_of_a_table_lives_on_one_node_and_tables_spread_over_the_nodes(
    cluster_connect: Callable[[str], Any], redis_cluster: RedisClusterServers, cluster_admin: Any
) -> None:
    app = app_on(cluster_connect("table"))
    made = [(await seat_four_at(app, CLIENT))[0] for _ in range(12)]
    for table in made:
        keys = [
            schema.table_key(table.table_id),
            schema.outbox_key(table.table_id),
            schema.code_key(table.invitation_code),
        ]
        assert [await cluster_admin.exists(key) for key in keys] == [1, 1, 1]
        assert len({cluster_admin.keyslot(key) for key in keys}) == 1
    per_node = await keys_per_node(redis_cluster)
    assert sum(1 for count in per_node if count) >= 2, per_node


async def test_a_repeated_create_answers_the_first_table_on_redis_cluster(
    cluster_connect: Callable[[str], Any],
) -> None:
    app = app_on(cluster_connect("table"))
    request = gateway_pb2.CreateTableRequest(request_id=rid(), host_name="Ana")
    first = await app.create_table(request, CLIENT)
    again = await app.create_table(request, CLIENT)
    assert (again.table_id, again.seat_token) == (first.table_id, first.seat_token)


async def test_the_join_failure_budget_holds_on_redis_cluster_and_a_hit_costs_nothing(
    cluster_connect: Callable[[str], Any],
) -> None:
    app = app_on(cluster_connect("table"), join_failures_per_connection=3)
    made = await app.create_table(
        gateway_pb2.CreateTableRequest(request_id=rid(), host_name="Ana"), CLIENT
    )
    for name in ("Bo", "Cy"):  # hits: not failures
        await app.join_table(
            gateway_pb2.JoinTableRequest(
                request_id=rid(), player_name=name, invitation_code=made.invitation_code
            ),
            CLIENT,
        )
    for _ in range(3):
        with pytest.raises(ServiceError) as missed:
            await app.join_table(
                gateway_pb2.JoinTableRequest(
                    request_id=rid(), player_name="Eve", invitation_code="ZZZZZZZZZZ"
                ),
                CLIENT,
            )
        assert missed.value.reason is Reason.CODE_NOT_FOUND
    with pytest.raises(ServiceError) as limited:
        await app.join_table(
            gateway_pb2.JoinTableRequest(
                request_id=rid(), player_name="Di", invitation_code=made.invitation_code
            ),
            CLIENT,
        )
    assert limited.value.code == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert limited.value.metadata == {"limit": "join_failures_per_connection"}


async def test_the_create_budgets_of_two_slots_refund_when_the_second_is_spent(
    cluster_connect: Callable[[str], Any], cluster_admin: Any
) -> None:
    app = app_on(cluster_connect("table"), creates_per_second=1, creates_per_address_minute=5)
    await app.create_table(gateway_pb2.CreateTableRequest(request_id=rid(), host_name="A"), CLIENT)
    with pytest.raises(ServiceError) as limited:
        await app.create_table(
            gateway_pb2.CreateTableRequest(request_id=rid(), host_name="B"), CLIENT
        )
    assert limited.value.metadata == {"limit": "creates_per_second"}
    # The address's minute budget counted the first create only: the refused one was given back.
    minute = schema.limit_key("creates", CLIENT.address, "m")
    assert int(await cluster_admin.get(minute)) == 1


async def test_the_relay_finds_and_clears_outboxes_across_shards_on_redis_cluster(
    cluster_connect: Callable[[str], Any],
) -> None:
    app = app_on(cluster_connect("table"))
    made = [
        await app.create_table(
            gateway_pb2.CreateTableRequest(request_id=rid(), host_name="Ana"), CLIENT
        )
        for _ in range(10)
    ]
    ids = {table.table_id for table in made}
    assert len({schema.shard_of(table_id) for table_id in ids}) > 1
    later = int(time.time() * 1000) + 60_000
    assert set(await app.store.pending_tables(later)) == ids  # no publisher: all pending
    assert (await app.store.tables_by_phase(later - 60_000))["waiting"] == 10
    await app.store.mark_published({table_id: 1 for table_id in ids})
    assert await app.store.pending_tables(later) == []
    assert [await app.store.outbox(table_id) for table_id in ids] == [[]] * len(ids)
