"""Disconnections: a client killed mid-round, a gateway killed mid-game (issue 5: S3, S4, D3)."""

from __future__ import annotations

import asyncio
import functools
from typing import Any

from dominos.v1 import game_pb2
from redis import asyncio as aioredis

from services.client.api import DominosClient
from services.common.schema import presence_leases_key
from testing.players import PLAYING, Player, seat_players
from testing.waiting import wait_for

from .conftest import AWAY_S, E2ECluster


async def _start(players: list[Player], target: int) -> list[asyncio.Task[None]]:
    for player in players:
        player.connect()
    await seat_players(players, target)
    tasks = [asyncio.create_task(p.play_until_done()) for p in players]
    await wait_for(lambda: all(p.views for p in players), timeout=10)
    host = players[0]
    assert host.client is not None and host.credentials is not None
    await host.client.start(host.credentials)
    return tasks


async def test_a_killed_client_gets_short_turns_and_comes_back_to_the_round_as_it_stands(
    e2e: E2ECluster,
) -> None:
    address = e2e.gateways[0].address
    players = [Player(f"K{i}", address, 500 + i, target=100) for i in range(4)]
    tasks = await _start(players, target=100)
    try:
        lost = players[1]
        await wait_for(lambda: len(lost.views) >= 6 or tasks[1].done(), timeout=20)
        assert not tasks[1].done(), tasks[1].exception()
        # Kill the client: its stream task dies and its channel closes without a goodbye.
        tasks[1].cancel()
        await lost.close()
        others = [p for i, p in enumerate(players) if i != 1]
        await wait_for(
            lambda: not others[0].views[-1].seats[1].connected, timeout=10, interval=0.02
        )
        # Its turns now last the short duration (S3): find one auto-played for it.
        await wait_for(lambda: _auto_played(others[0], 1), timeout=30, interval=0.05)
        away_turns = [
            v
            for v in others[0].views
            if v.phase == PLAYING and v.turn_seat == 1 and not v.seats[1].connected
        ]
        assert away_turns
        assert all(v.turn_deadline_ms - v.server_time_ms <= AWAY_S * 1000 + 50 for v in away_turns)
        # Back with the same token: the first view is the round where it stands (S4).
        client = DominosClient(address)
        try:
            assert lost.credentials is not None
            call = client.watch(lost.credentials)
            first = (await call.read()).view
            reference = await others[0].client.view(others[0].credentials)  # type: ignore[union-attr, arg-type]
            if first.version == reference.version:
                assert [list(s.passed_on) for s in first.seats] == [
                    list(s.passed_on) for s in reference.seats
                ]
                assert first.turn_deadline_ms == reference.turn_deadline_ms
                assert list(first.chain) == list(reference.chain)
            assert first.phase in (PLAYING, game_pb2.PHASE_ROUND_OVER, game_pb2.PHASE_FINISHED)
            assert first.seats[1].tile_count == len(first.hand)
            # Reconnecting never extends a running deadline: a later view of the same turn
            # carries the same deadline.
            second = (await call.read()).view
            same_turn = (
                second.phase == first.phase == PLAYING
                and second.turn_seat == first.turn_seat
                and second.round_number == first.round_number
                and len(second.chain) == len(first.chain)
                and second.consecutive_passes == first.consecutive_passes
            )
            if same_turn:
                assert second.turn_deadline_ms == first.turn_deadline_ms
            call.cancel()
        finally:
            await client.close()
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        for player in players:
            await player.close()


def _auto_played(player: Player, seat: int) -> bool:
    return any(
        v.last_action.seat == seat and v.last_action.auto_play == game_pb2.AUTO_PLAY_CAUSE_AWAY
        for v in player.views
    )


async def test_a_killed_gateway_does_not_stop_the_game_and_every_seat_resumes_elsewhere(
    e2e: E2ECluster,
) -> None:
    doomed = e2e.add("gateway")
    survivor = e2e.gateways[0]
    players = [Player(f"G{i}", doomed.address, 700 + i) for i in range(4)]
    tasks = await _start(players, target=50)
    await wait_for(lambda: len(players[0].views) >= 8, timeout=20)
    await asyncio.to_thread(doomed.kill)
    e2e.replicas.remove(doomed)
    await asyncio.gather(*tasks, return_exceptions=True)  # their streams broke
    before = [p.views[-1].version for p in players]
    # Every client reconnects to the surviving gateway with its token and plays on.
    for player in players:
        await player.close()
        player.connect(survivor.address)
    resumed = [asyncio.create_task(p.play_until_done()) for p in players]
    await asyncio.wait_for(asyncio.gather(*resumed), timeout=120)
    for player, last_before in zip(players, before, strict=True):
        after = [v for v in player.views if v.version > last_before]
        assert after, "the seat resumed"
        assert player.views[-1].phase == game_pb2.PHASE_FINISHED
    for player in players:
        await player.close()


async def test_a_seat_with_streams_on_two_gateways_stays_connected_until_the_last_ends(
    e2e: E2ECluster,
) -> None:
    """S3-S4: a player whose new stream (another gateway) opened before the old one ended is
    not marked away when either ends first; only the end of the last one disconnects it."""
    for newer_ends_first in (True, False):
        first, second = e2e.gateways[0].address, e2e.gateways[1].address
        players = [Player(f"T{i}", first, 700 + i, target=100, act=False) for i in range(4)]
        for player in players:
            player.connect()
        await seat_players(players, target=100)
        watcher, seat = players[0], players[1]
        assert watcher.client is not None and watcher.credentials is not None
        assert seat.client is not None and seat.credentials is not None
        other = DominosClient(second)
        redis = aioredis.Redis.from_url(e2e.redis.url_for("admin"))
        try:
            older = seat.client.watch(seat.credentials)
            await older.read()
            newer = other.watch(seat.credentials)
            await newer.read()
            leases = presence_leases_key(seat.credentials.table_id)
            await wait_for(functools.partial(_streams_held, redis, leases, 1, 2), timeout=10)
            (newer if newer_ends_first else older).cancel()
            await wait_for(functools.partial(_streams_held, redis, leases, 1, 1), timeout=10)
            # The stream that ended gave its lease back and marked nothing: the seat is
            # still connected (a view read after it, through the same path).
            view = await watcher.client.view(watcher.credentials)
            assert view.seats[1].connected
            (older if newer_ends_first else newer).cancel()

            await wait_for(functools.partial(_away, watcher, 1), timeout=10)
        finally:
            await redis.aclose()
            await other.close()
            for player in players:
                await player.close()


async def _streams_held(redis: Any, leases: str, seat: int, expected: int) -> bool:
    """Whether ``expected`` streams hold a presence lease on ``seat``."""
    fields = await redis.hkeys(leases)
    return sum(bytes(f).startswith(f"{seat}|".encode()) for f in fields) == expected


async def _away(watcher: Player, seat: int) -> bool:
    assert watcher.client is not None and watcher.credentials is not None
    view = await watcher.client.view(watcher.credentials)
    return not view.seats[seat].connected
