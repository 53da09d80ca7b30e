"""Turn clocks and auto-play through the timer service (issue 4: R11, S3, S4, D1-D3)."""

from __future__ import annotations

import time
from typing import Any

from dominos.v1 import game_pb2

from services.rules import Expire, Phase
from testing.waiting import wait_for
from tests.integration.table.client import Seat

from .conftest import Cluster
from .history import check_auto_plays, history, lateness_ms


async def finished(cluster: Cluster, seat: Seat) -> bool:
    return (await cluster.client.view(seat)).phase == game_pb2.PHASE_FINISHED


async def test_four_idle_seats_play_the_game_to_its_end_by_auto_play_alone(
    cluster: Cluster, redis_client: Any
) -> None:
    seats = await cluster.client.full_table(target=50)
    await cluster.client.start(seats[0])
    await wait_for(lambda: finished(cluster, seats[0]), timeout=90, interval=0.2)
    steps = await history(redis_client, seats[0].table_id)
    expiries = [s for s in steps if isinstance(s.command, Expire)]
    assert len(expiries) == len(steps) - 4  # after 3 joins and Start, only the timers acted
    turns = check_auto_plays(steps)  # each the first fitting tile (D2), a pass only if none
    breaks = sum(1 for s in expiries if s.before.phase is Phase.ROUND_OVER)
    final = steps[-1].after
    assert final.phase is Phase.FINISHED and final.round is not None
    assert turns > 10
    assert breaks == final.round.number - 1  # D1: every break ran out into the next deal
    assert max(steps[-1].after.scores) >= 50
    late = lateness_ms(steps)
    assert min(late) >= 0
    assert sorted(late)[len(late) // 2] < 100  # median lateness, generous on a loaded CI box


async def test_a_disconnected_seat_gets_the_short_turn_and_reconnecting_keeps_the_deadline(
    table_only: Cluster, redis_client: Any
) -> None:
    client = table_only.client
    app = table_only.table.app
    seats = await client.full_table()
    for seat in seats:
        await app.set_presence(seat.table_id, seat.token, True)
    view = await client.start(seats[0])
    turn = seats[view.turn_seat]
    full = view.turn_deadline_ms - view.server_time_ms
    assert 350 <= full <= 450  # a connected seat: the 400 ms turn (R11)
    # D3: dropping mid-turn leaves at most the short duration (100 ms).
    before = time.time() * 1000
    await app.set_presence(turn.table_id, turn.token, False)
    dropped = await client.view(turn)
    assert dropped.turn_deadline_ms <= view.turn_deadline_ms
    assert dropped.turn_deadline_ms <= before + 100 + 50
    # S4: coming back does not move it.
    await app.set_presence(turn.table_id, turn.token, True)
    back = await client.view(turn)
    assert back.turn_deadline_ms == dropped.turn_deadline_ms
    # S3: the next seat is away, so its turn will be the short one.
    nxt = seats[(view.turn_seat + 1) % 4]
    await app.set_presence(nxt.table_id, nxt.token, False)
    mine = await client.view(turn)
    played = await client.act(turn, mine, __import__("random").Random(1))
    assert played.view.turn_seat == (view.turn_seat + 1) % 4
    assert played.view.turn_deadline_ms - played.view.server_time_ms <= 100 + 5


async def test_a_disconnected_seats_turn_ends_after_the_short_duration(
    cluster: Cluster, redis_client: Any
) -> None:
    client = cluster.client
    app = cluster.table.app
    seats = await client.full_table()
    for seat in seats:
        await app.set_presence(seat.table_id, seat.token, True)
    view = await client.start(seats[0])
    opener = seats[view.turn_seat]
    await app.set_presence(opener.table_id, opener.token, False)
    await wait_for(lambda: _moved_on(client, opener, view.version + 1), timeout=5, interval=0.02)
    steps = await history(redis_client, opener.table_id)
    auto = next(s for s in steps if isinstance(s.command, Expire))
    # The deadline became min(400 ms turn, drop + 100 ms) and the timer honoured it.
    assert auto.before.deadline_ms - steps[0].at_ms <= 400
    assert auto.at_ms - auto.before.deadline_ms < 150
    assert check_auto_plays(steps) == 1


async def _moved_on(client: Any, seat: Seat, past_version: int) -> bool:
    view = await client.view(seat)
    return view.version > past_version and view.turn_seat != seat.seat
