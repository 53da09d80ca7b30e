"""Where the timer learns a clock (issue 22): from the sweep of the deadline index, ahead of
time, when the clock ends later than the announcement horizon; from the table service's
``TableClock`` on ``dominos.v1.timer.clock`` when it ends sooner. Either way it fires on
time; the timer reads no table event."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from dominos.v1 import events_pb2

from services.common.bus import CLOCK_SUBJECT
from services.common.clock_hints import hint_horizon_ms
from services.common.connections import flushed
from services.rules import Expire, Phase
from testing.waiting import wait_for

from .conftest import Cluster, _cluster
from .history import check_auto_plays, history


async def _announced(nats_client: Any) -> list[events_pb2.TableClock]:
    """Every ``TableClock`` published from now on (the admin user hears everything)."""
    clocks: list[events_pb2.TableClock] = []

    async def on_clock(msg: Any) -> None:
        clocks.append(events_pb2.TableClock.FromString(msg.data))

    await nats_client.subscribe(CLOCK_SUBJECT, cb=on_clock)
    await flushed(nats_client)
    return clocks


async def _turn_expiries(cluster: Cluster, redis_client: Any, table_id: str, count: int) -> Any:
    async def expired() -> bool:
        steps = await history(redis_client, table_id)
        turns = [
            s for s in steps if isinstance(s.command, Expire) and s.before.phase is Phase.PLAYING
        ]
        return len(turns) >= count

    await wait_for(expired, timeout=count * 6 + 10, interval=0.1)
    steps = await history(redis_client, table_id)
    return [s for s in steps if isinstance(s.command, Expire) and s.before.phase is Phase.PLAYING]


@pytest.fixture
async def slow_sweep(
    redis_server: Any, nats_server: Any, redis_client: Any, nats_client: Any
) -> AsyncIterator[Cluster]:
    """Sweeps every 30 s: after the first (at start), only announcements are heard."""
    async for c in _cluster(redis_server, nats_server, with_timer=True, timer_sweep_seconds=30):
        yield c


@pytest.fixture
async def long_turns(
    redis_server: Any, nats_server: Any, redis_client: Any, nats_client: Any
) -> AsyncIterator[Cluster]:
    """1 s sweeps and 3.2 s turns: turns end after the announcement horizon (3 s)."""
    async for c in _cluster(
        redis_server,
        nats_server,
        with_timer=True,
        turn_seconds=3.2,
        away_turn_seconds=3.2,
        timer_sweep_seconds=1,
    ):
        yield c


async def test_a_clock_ending_before_a_sweep_would_see_it_is_announced_and_fires_on_time(
    slow_sweep: Cluster, redis_client: Any, nats_client: Any
) -> None:
    clocks = await _announced(nats_client)
    seats = await slow_sweep.client.full_table()
    await slow_sweep.client.start(seats[0])
    table_id = seats[0].table_id
    turns = await _turn_expiries(slow_sweep, redis_client, table_id, 4)
    check_auto_plays(await history(redis_client, table_id))  # R11 / D2
    # Each 400 ms turn was announced with its clock (the sweep comes 30 s later) ...
    announced = {(c.turn_number, c.deadline_ms) for c in clocks if c.table_id == table_id}
    for step in turns:
        assert (step.before.turn_number, step.before.deadline_ms) in announced
    # ... and fired on time: a sweep-only timer would have fired none of them yet.
    late = sorted(step.at_ms - step.before.deadline_ms for step in turns)
    assert late[len(late) // 2] < 100, late
    assert late[-1] < 1_000, late


async def test_a_clock_ending_after_the_horizon_is_swept_ahead_of_time_and_fires_on_time(
    long_turns: Cluster, redis_client: Any, nats_client: Any
) -> None:
    assert hint_horizon_ms(1000) < 3200
    clocks = await _announced(nats_client)
    seats = await long_turns.client.full_table()
    await long_turns.client.start(seats[0])
    table_id = seats[0].table_id
    turns = await _turn_expiries(long_turns, redis_client, table_id, 4)
    # No turn's clock was announced: the sweep found each one ...
    announced = {c.turn_number for c in clocks if c.table_id == table_id}
    assert not announced & {step.before.turn_number for step in turns}
    # ... ahead of time (scheduled to the millisecond), not when it came upon it after the
    # end: a sweep that only fired what was due would be late by up to its 1 s period.
    late = sorted(step.at_ms - step.before.deadline_ms for step in turns)
    assert late[0] >= 0
    assert late[len(late) // 2] < 150, late  # uniform over 0..1000 ms: this 1 time in 80
    assert late[-1] < 600, late
