"""Timers survive replicas dying, the timer service being down, and NATS restarting (issue 4)."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from dominos.v1 import events_pb2, game_pb2

from services.common.bus import TIMER_SUBJECT
from services.common.presence import PresenceLeases
from services.rules import Expire
from testing.services import ServiceProcess
from testing.waiting import wait_for

from .conftest import Cluster, short_env
from .history import check_auto_plays, history, lateness_ms
from .test_auto_play import finished

#: How long the frozen-timer test stops the timer process each time (SIGSTOP).
FREEZE_S = 0.25


async def test_with_two_timer_replicas_one_killed_no_turn_is_skipped_or_played_twice(
    table_only: Cluster, redis_server: Any, nats_server: Any, redis_client: Any
) -> None:
    env = short_env(redis_server, nats_server)
    replicas = [ServiceProcess("services.timer", env) for _ in range(2)]
    await asyncio.gather(*(asyncio.to_thread(r.start) for r in replicas))
    try:
        client = table_only.client
        seats = await client.full_table(target=50)
        await client.start(seats[0])
        # Let both replicas fire for a while, then SIGKILL one mid-game.
        await wait_for(lambda: _turns_played(client, seats[0], 15), timeout=20, interval=0.05)
        await asyncio.to_thread(replicas[0].kill)
        await wait_for(lambda: finished(table_only, seats[0]), timeout=90, interval=0.2)
    finally:
        for replica in replicas:
            await asyncio.to_thread(replica.stop)
    steps = await history(redis_client, seats[0].table_id)
    expiries = [s for s in steps if isinstance(s.command, Expire)]
    # Every clock after the start was resolved by exactly one expiry, in turn order.
    numbers = [s.command.turn_number for s in expiries]  # type: ignore[union-attr]
    assert numbers == list(range(numbers[0], numbers[0] + len(numbers)))
    assert check_auto_plays(steps) > 0
    retry_ms = 300
    assert max(lateness_ms(steps)) <= retry_ms + 250  # none waits much beyond one retry


async def _turns_played(client: Any, seat: Any, count: int) -> bool:
    view = await client.view(seat)
    return view.version >= 5 + count or view.phase == game_pb2.PHASE_FINISHED


async def test_overdue_turns_are_resolved_within_a_second_of_a_timer_restart_in_order(
    table_only: Cluster, nats_client: Any
) -> None:
    client = table_only.client
    tables = []
    for _ in range(5):
        seats = await client.full_table()
        view = await client.start(seats[0])
        tables.append((seats, view))
    latest = max(view.turn_deadline_ms for _, view in tables)
    fired: list[events_pb2.TimerExpired] = []

    async def on_fire(msg: Any) -> None:
        fired.append(events_pb2.TimerExpired.FromString(msg.data))

    await nats_client.subscribe(TIMER_SUBJECT, cb=on_fire)
    # With no timer service, the deadlines pass and nothing happens.
    await wait_for(lambda: time.time() * 1000 > latest + 300, timeout=5)
    for seats, view in tables:
        assert (await client.view(seats[0])).version == view.version
    started = time.monotonic()
    await table_only.start_timer()
    for seats, view in tables:
        await wait_for(_past(client, seats[0], view.version), timeout=1.5)
    assert time.monotonic() - started < 1.0
    first_fires = [f for f in fired if f.attempt == 1 and f.deadline_ms <= latest]
    assert len(first_fires) == len(tables)
    deadlines = [f.deadline_ms for f in first_fires]
    assert deadlines == sorted(deadlines)  # fired in deadline order


def _past(client: Any, seat: Any, version: int) -> Any:
    async def moved_on() -> bool:
        return bool((await client.view(seat)).version > version)

    return moved_on


async def test_a_nats_restart_mid_game_does_not_stop_the_game(
    cluster: Cluster, nats_server: Any
) -> None:
    client = cluster.client
    seats = await client.full_table(target=50)
    await client.start(seats[0])
    await wait_for(lambda: _turns_played(client, seats[0], 10), timeout=20, interval=0.05)
    await asyncio.to_thread(nats_server.restart)
    await wait_for(lambda: finished(cluster, seats[0]), timeout=120, interval=0.2)


async def test_a_presence_lease_left_by_a_crashed_gateway_marks_the_seat_disconnected(
    cluster: Cluster, redis_connect: Any
) -> None:
    client = cluster.client
    seats = await client.full_table()
    guest = seats[2]
    await cluster.table.app.set_presence(guest.table_id, guest.token, True)
    assert (await client.view(guest)).seats[2].connected
    # A gateway took a lease for the seat and died without renewing or releasing it.
    leases = PresenceLeases(redis_connect("gateway"))
    await leases.renew(guest.table_id, 2, "gateway-a:conn-1", 150)
    await wait_for(lambda: _disconnected(client, guest), timeout=3, interval=0.05)
    # A lease that keeps being renewed is left alone.
    await cluster.table.app.set_presence(guest.table_id, guest.token, True)
    for _ in range(6):
        await leases.renew(guest.table_id, 2, "gateway-b:conn-2", 300)
        await asyncio.sleep(0.1)  # a gateway's renewal period, not synchronisation
    assert (await client.view(guest)).seats[2].connected
    assert await leases.release(guest.table_id, 2, "gateway-b:conn-2")


async def _disconnected(client: Any, seat: Any) -> bool:
    return not (await client.view(seat)).seats[seat.seat].connected


async def test_a_timer_frozen_around_due_clocks_fires_each_once_as_soon_as_it_thaws(
    table_only: Cluster, redis_server: Any, nats_server: Any, redis_client: Any, nats_client: Any
) -> None:
    """S2 (issue 22: once, under load, first firings came 0.4-3.2 s late around a ~190 ms
    stall of the machine): the timer process is frozen (SIGSTOP) for 250 ms again and again
    while turn clocks (400 ms) of several tables fall due; every first firing comes at most
    the freeze plus a margin after its deadline (measured: 0-260 ms), never after a retry
    interval, and no clock is resolved twice."""
    fired: list[events_pb2.TimerExpired] = []

    async def on_fire(msg: Any) -> None:
        fired.append(events_pb2.TimerExpired.FromString(msg.data))

    await nats_client.subscribe(TIMER_SUBJECT, cb=on_fire)
    timer = ServiceProcess("services.timer", short_env(redis_server, nats_server))
    await asyncio.to_thread(timer.start)
    client = table_only.client
    try:
        hosts = []
        for _ in range(4):
            seats = await client.full_table(target=50)
            await client.start(seats[0])
            hosts.append(seats[0])
        for _ in range(6):  # ~3 s: every table's clocks fall due, some while frozen
            await asyncio.to_thread(timer.pause)
            await asyncio.sleep(FREEZE_S)  # the freeze's length, not synchronisation
            await asyncio.to_thread(timer.resume)
            await asyncio.sleep(0.25)  # running between two freezes
    finally:
        await asyncio.to_thread(timer.stop)
    first = [f for f in fired if f.attempt == 1]
    assert len(first) >= 8
    late_ms = sorted(f.fired_at_ms - f.deadline_ms for f in first)
    # A clock due in a freeze fires when the timer thaws (at most the freeze, ~250 ms, late);
    # a firing that waited for a retry (300 ms more) would be 550 ms late or more.
    assert late_ms[-1] <= FREEZE_S * 1000 + 200, late_ms
    for host in hosts:
        steps = await history(redis_client, host.table_id)
        numbers = [s.command.turn_number for s in steps if isinstance(s.command, Expire)]
        assert len(numbers) == len(set(numbers))  # each clock resolved once
