"""The timer service on a real Redis Cluster (issue 16): replicas divide the 64 shards between
them and take over a dead replica's; turns run out into auto-plays with two replicas sharing
the work; a crashed gateway's presence lease is found in its shard and claimed once."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from dominos.v1 import game_pb2

from services.common.presence import PresenceLeases
from services.common.schema import SHARDS
from services.rules import Expire, Phase
from services.timer.membership import Membership
from services.timer.server import create_server as create_timer_server
from testing.waiting import wait_for
from tests.integration.timer.conftest import Cluster
from tests.integration.timer.history import check_auto_plays, history

ALL = set(range(SHARDS))


async def test_timer_replicas_divide_the_shards_and_take_over_a_dead_ones(
    cluster_connect: Callable[[str], Any],
) -> None:
    a = Membership(cluster_connect("timer"), "timer-a", ttl_ms=600)
    b = Membership(cluster_connect("timer"), "timer-b", ttl_ms=600)
    await a.heartbeat()
    await b.heartbeat()
    await a.heartbeat()
    assert set(a.owned) | set(b.owned) == ALL
    assert not set(a.owned) & set(b.owned)
    assert len(a.owned) == len(b.owned) == SHARDS // 2
    # b dies (no more heartbeats): within its heartbeat's lifetime a owns every shard.
    started = time.monotonic()

    async def a_owns_all() -> bool:
        return set(await a.heartbeat()) == ALL

    await wait_for(a_owns_all, timeout=3, interval=0.05)
    assert 0.3 < time.monotonic() - started < 2.0
    # A replica that leaves cleanly hands its shards over at the others' next heartbeat.
    c = Membership(cluster_connect("timer"), "timer-c", ttl_ms=60_000)
    await c.heartbeat()
    assert len(await a.heartbeat()) == SHARDS // 2
    await c.leave()
    assert set(await a.heartbeat()) == ALL


async def test_idle_turns_are_auto_played_once_with_two_timer_replicas_on_redis_cluster(
    timed_cluster: Cluster, cluster_admin: Any
) -> None:
    second, _ = await create_timer_server(timed_cluster.timer_settings)
    try:
        tables = [await timed_cluster.client.full_table(target=50) for _ in range(3)]
        for seats in tables:
            await timed_cluster.client.start(seats[0])

        async def three_turns_run_out() -> bool:
            views = [await timed_cluster.client.view(seats[0]) for seats in tables]
            return all(view.version >= 5 + 3 for view in views)

        await wait_for(three_turns_run_out, timeout=30, interval=0.1)
    finally:
        await second.stop()
    for seats in tables:
        steps = await history(cluster_admin, seats[0].table_id)
        expiries = [s for s in steps if isinstance(s.command, Expire)]
        assert len(expiries) >= 3
        assert check_auto_plays(steps) >= 3  # each the documented auto-play, applied once
        assert all(s.before.phase in (Phase.PLAYING, Phase.ROUND_OVER) for s in expiries)
        view = await timed_cluster.client.view(seats[0])
        assert view.phase in (game_pb2.PHASE_PLAYING, game_pb2.PHASE_ROUND_OVER)


async def test_a_lapsed_presence_lease_is_claimed_once_from_its_shard_on_redis_cluster(
    cluster_connect: Callable[[str], Any],
) -> None:
    gateway = PresenceLeases(cluster_connect("gateway"))
    timer = PresenceLeases(cluster_connect("timer"))
    tables = [f"{'t' * 20}{i:02d}" for i in range(8)]  # ids of several shards
    await gateway.renew_many([(table_id, 1, f"gw:{table_id}") for table_id in tables], 50)
    claimed: list[tuple[str, int]] = []

    async def all_claimed() -> bool:
        claimed.extend(await timer.claim_expired(int(time.time() * 1000) + 100))
        return len(claimed) >= len(tables)

    await wait_for(all_claimed, timeout=3)
    assert sorted(claimed) == sorted((table_id, 1) for table_id in tables)
    assert await timer.claim_expired(int(time.time() * 1000) + 100) == []
