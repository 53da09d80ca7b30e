"""Whole games through the gateway only, with every service a separate process (issue 5)."""

from __future__ import annotations

import asyncio

from dominos.v1 import game_pb2
from redis.asyncio import Redis

from services.rules import apply, create
from services.rules.tiles import HIGH, LOW, tiles_of
from services.table.command_log import decode_log
from services.table.store import TableStore
from testing.players import PLAYING, all_messages, play_game

from .conftest import E2ECluster


async def hands_by_version(redis_url: str, table_id: str) -> dict[int, tuple[int, int, int, int]]:
    """The four hands at every version of a table, replayed from its command log."""
    redis = Redis.from_url(redis_url)
    try:
        entries = decode_log(await TableStore(redis).read_log(table_id))
    finally:
        await redis.aclose()
    first, at = entries[0]
    state = create(first, at).state  # type: ignore[arg-type]
    hands: dict[int, tuple[int, int, int, int]] = {}
    for command, at_ms in entries[1:]:
        state = apply(state, command, at_ms).state
        if state.round is not None:
            hands[state.version] = state.round.hands
    return hands


async def test_four_clients_play_a_complete_game_to_the_target_through_the_gateway(
    e2e: E2ECluster,
) -> None:
    players = await play_game([e2e.gateways[0].address], seed=1, target=50)
    finals = [p.views[-1] for p in players]
    assert all(v.phase == game_pb2.PHASE_FINISHED for v in finals)
    assert len({(v.score_team_a, v.score_team_b, v.version) for v in finals}) == 1
    assert max(finals[0].score_team_a, finals[0].score_team_b) >= 50  # R17


async def test_no_tile_of_another_live_hand_reaches_any_seat_in_twenty_games(
    e2e: E2ECluster,
) -> None:
    addresses = [g.address for g in e2e.gateways]
    games = await asyncio.gather(*(play_game(addresses, seed=100 + i) for i in range(20)))
    checked = 0
    for players in games:
        table_id = players[0].views[-1].table_id
        truth = await hands_by_version(e2e.redis.url_for("admin"), table_id)
        for seat, view in all_messages(players):
            if view.phase != PLAYING:
                continue
            hands = truth[view.version]
            mine = {(t.low, t.high) for t in view.hand}
            assert mine == {(LOW[t], HIGH[t]) for t in tiles_of(hands[seat])}
            others = {(LOW[t], HIGH[t]) for s in range(4) if s != seat for t in tiles_of(hands[s])}
            shown = mine | {(m.tile.low, m.tile.high) for m in view.legal_moves}
            shown |= {(min(p.left, p.right), max(p.left, p.right)) for p in view.chain}
            assert not shown & others, f"seat {seat} saw another seat's tile at v{view.version}"
            checked += 1
    assert checked > 20 * 50


async def test_two_gateways_serving_one_table_show_every_seat_the_same_versions(
    e2e: E2ECluster,
) -> None:
    addresses = [g.address for g in e2e.gateways]
    players = await play_game(addresses, seed=7, target=50)
    sequences = [[v.version for v in p.views] for p in players]
    # Streams opened at slightly different versions; from the last opening on, all agree.
    start = max(seq[0] for seq in sequences)
    tails = [[v for v in seq if v >= start] for seq in sequences]
    assert tails[0] == tails[1] == tails[2] == tails[3]
    assert tails[0] == list(range(start, tails[0][-1] + 1))  # no gap for a fast reader
