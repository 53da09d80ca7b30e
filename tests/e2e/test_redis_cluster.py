"""Whole games through the gateways with the store on a Redis Cluster of three primaries
(issue 16): every service a separate process connecting with ``DOMINOS_REDIS_CLUSTER=1``; the
tables spread over the nodes, each seat sees exactly its own hand, the log replays every game."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from dominos.v1 import game_pb2
from redis.asyncio import Redis
from redis.asyncio.cluster import RedisCluster

from services.rules import LogEntry, apply, create, replay
from services.rules.tiles import HIGH, LOW, tiles_of
from services.table.command_log import decode_log
from services.table.store import TableStore
from testing.cluster import ProcessCluster, clock_env
from testing.players import all_messages, play_game
from testing.redis_cluster import RedisClusterServers
from testing.secrets import SESSION_SECRETS


def _hands_by_version(log: list[LogEntry]) -> dict[int, tuple[int, ...]]:
    """The four hands at every version, replayed from the log."""
    first, at = log[0]
    state = create(first, at).state  # type: ignore[arg-type]
    hands: dict[int, tuple[int, ...]] = {}
    for command, at_ms in log[1:]:
        state = apply(state, command, at_ms).state
        if state.round is not None:
            hands[state.version] = state.round.hands
    return hands


@pytest.fixture(scope="module")
def on_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ProcessCluster]:
    servers = RedisClusterServers(SESSION_SECRETS, Path(tmp_path_factory.mktemp("rc-e2e")))
    servers.start()
    try:
        cluster = ProcessCluster.start(
            redis=servers.nodes[0],  # the services discover the other nodes from this one
            env={**clock_env(2.0, 0.2, 0.2), "DOMINOS_REDIS_CLUSTER": "1"},
            gateways=2,
            timers=2,
        )
        cluster.redis_cluster = servers  # type: ignore[attr-defined]
        try:
            yield cluster
        finally:
            cluster.stop()
    finally:
        servers.stop()


async def test_games_play_to_the_end_on_redis_cluster_and_spread_over_its_nodes(
    on_cluster: ProcessCluster,
) -> None:
    addresses = [gateway.address for gateway in on_cluster.gateways]
    games = await asyncio.gather(*(play_game(addresses, seed=300 + i) for i in range(6)))
    servers: RedisClusterServers = on_cluster.redis_cluster  # type: ignore[attr-defined]
    admin: Any = RedisCluster.from_url(servers.url_for("admin"))
    try:
        for players in games:
            finals = [player.views[-1] for player in players]
            assert all(view.phase == game_pb2.PHASE_FINISHED for view in finals)
            assert len({(v.score_team_a, v.score_team_b, v.version) for v in finals}) == 1
            table_id = finals[0].table_id
            log = decode_log(await TableStore(admin).read_log(table_id))
            assert replay(log).version == finals[0].version  # the log holds every version
            hands = _hands_by_version(log)
            for seat, view in all_messages(players):
                if view.phase == game_pb2.PHASE_PLAYING:  # each seat sees its own hand only
                    mine = {(tile.low, tile.high) for tile in view.hand}
                    truth = tiles_of(hands[view.version][seat])
                    assert mine == {(LOW[t], HIGH[t]) for t in truth}
    finally:
        await admin.aclose()
    holding = []
    for node in servers.nodes:
        client = Redis.from_url(node.url_for("admin"))
        try:
            holding.append(int(await client.dbsize()))
        finally:
            await client.aclose()
    assert sum(1 for keys in holding if keys) >= 2, holding
