"""Network faults, through the TCP fault proxy of ``proxy.py``: placed between a client and a
gateway, between the gateway and the table service, and between a service and Redis or NATS.

- short set: a client's connection reset under its stream: the gateway notices at once,
  marks the seat disconnected, and the seat comes back with the round as it stands;
- long set: a blackholed client is detected dead within the gateway's keepalive bound
  (``services/common/grpc_server.py``: ping after 20 s, dead 10 s later) and resumes after
  the proxy heals; silently dead Redis connections hang nothing (redis-py's socket timeout);
  a stalled Redis link delivers everything when it heals; latency slows nothing into
  errors; and two links that never recover from a silently dead connection (xfail).

Every wait is bounded: conditions are polled with deadlines, calls carry deadlines.
"""

from __future__ import annotations

import asyncio
import functools
import time
from collections.abc import Iterator

import grpc
import pytest
from dominos.v1 import game_pb2
from redis.asyncio import Redis

from services.client.api import DominosClient
from testing.chaos_players import ChaosPlayer, Game, seat_chaos_players, start_game, start_games
from testing.cluster import FAST_ENV, ProcessCluster, Role
from testing.secrets import SESSION_SECRETS
from testing.servers import RedisServer
from testing.waiting import wait_for

from .audit import audit_game
from .faults import FaultLog, audit_all, figures, finish, progress, still_progressing
from .proxy import FaultProxy
from .reporting import report
from .tables import aread_fields, version_of

#: The gateway's server keepalive (services/common/grpc_server.py SERVER_OPTIONS).
KEEPALIVE_TIME_S = 20.0
KEEPALIVE_TIMEOUT_S = 10.0
DETECTION_BOUND_S = KEEPALIVE_TIME_S + KEEPALIVE_TIMEOUT_S + 5.0


@pytest.fixture(scope="module")
def net_cluster() -> Iterator[tuple[ProcessCluster, FaultProxy]]:
    """A cluster with one gateway, and a fault proxy in front of that gateway."""
    chaos = ProcessCluster.start(env=FAST_ENV, tables=1, timers=1, gateways=1)
    proxy = FaultProxy("127.0.0.1", chaos.gateways[0].port, name="client-proxy").start()
    try:
        yield chaos, proxy
    finally:
        proxy.close()
        chaos.stop()


def connected(player: ChaosPlayer, seat: int) -> bool | None:
    """Whether ``seat`` is connected in the newest view ``player`` received."""
    return None if player.latest is None else player.latest.seats[seat].connected


async def seated_game(
    chaos: ProcessCluster, proxied: str, *, act: bool, deadline: float
) -> tuple[Game, ChaosPlayer]:
    """Four players, seat 1 through ``proxied``, the others straight to the gateways;
    every stream open, game started."""
    direct = chaos.gateway_addresses
    players = [
        ChaosPlayer(f"N{i}", 40 + i, (lambda: [proxied]) if i == 1 else direct, act=act)
        for i in range(4)
    ]
    game = Game(players, target=500)
    await seat_chaos_players(players, 500, deadline)

    async def run() -> None:
        await asyncio.gather(*(p.run(deadline) for p in players))

    game.task = asyncio.create_task(run())
    await wait_for(lambda: all(p.latest is not None for p in players), timeout=20)
    await start_game(players[0], deadline)
    return game, players[1]


# -- short ------------------------------------------------------------------------------------


async def test_a_reset_client_connection_is_noticed_at_once_and_the_seat_comes_back(
    net_cluster: tuple[ProcessCluster, FaultProxy],
) -> None:
    chaos, proxy = net_cluster
    deadline = time.monotonic() + 60
    players = [ChaosPlayer(f"R{i}", 60 + i, chaos.gateway_addresses) for i in (0, 2, 3)]
    seat1 = ChaosPlayer("R1", 61, lambda: [proxy.address])
    everyone = [players[0], seat1, *players[1:]]
    await seat_chaos_players(everyone, 50, deadline)
    game = Game(everyone, target=50)
    # Seat 1 first watches with a bare stream through the proxy; the others play.
    client = DominosClient(proxy.address)
    assert seat1.credentials is not None
    stream = client.watch(seat1.credentials)
    seat1.views.append((await asyncio.wait_for(stream.read(), 10)).view)

    async def run() -> None:
        await asyncio.gather(*(p.run(deadline) for p in players))

    game.task = asyncio.create_task(run())
    try:
        await wait_for(lambda: all(p.latest is not None for p in players), timeout=20)
        await start_game(players[0], deadline)
        watcher = players[1]
        await wait_for(lambda: connected(watcher, 1) is True, timeout=10)
        # Reset: both sides of seat 1's connection get an RST.
        reset_at = time.monotonic()
        assert proxy.reset() >= 1
        with pytest.raises(grpc.aio.AioRpcError) as broken:
            while True:
                message = await asyncio.wait_for(stream.read(), 10)
                assert message is not grpc.aio.EOF
                seat1.views.append(message.view)
        assert broken.value.code() == grpc.StatusCode.UNAVAILABLE
        await wait_for(lambda: connected(watcher, 1) is False, timeout=10, interval=0.01)
        noticed_s = time.monotonic() - reset_at
        # Back through the same proxy with the same token: the round as it stands (S4).
        last_seen = seat1.views[-1].version
        stream = client.watch(seat1.credentials)
        first = (await asyncio.wait_for(stream.read(), 10)).view
        assert first.version >= last_seen
        seat1.views.append(first)
        await wait_for(lambda: connected(watcher, 1) is True, timeout=10, interval=0.01)
        stream.cancel()
        # Seat 1 plays the rest of the game through the proxy.
        await asyncio.wait_for(seat1.run(deadline), timeout=max(deadline - time.monotonic(), 1))
        await asyncio.wait_for(asyncio.gather(*(p.finished.wait() for p in players)), 30)
    finally:
        stream.cancel()
        await client.close()
        await finish([game], within=max(deadline - time.monotonic(), 1))
    redis = Redis.from_url(chaos.redis.url_for("admin"))
    try:
        audit = await audit_game(redis, game.table_id, everyone)
    finally:
        await redis.aclose()
    report(
        "network: connection reset (short)",
        disconnect_noticed_s=round(noticed_s, 3),
        finished=audit.finished,
        views_checked=audit.views_checked,
        forks=len(audit.forks),
        tiles_leaked=audit.leaks,
    )
    assert noticed_s < 5, noticed_s
    assert not audit.problems(), audit.problems()[:10]
    assert audit.finished and seat1.views[-1].phase == game_pb2.PHASE_FINISHED


# -- long ---------------------------------------------------------------------------------------


async def blackhole_trials(
    chaos: ProcessCluster, proxy: FaultProxy, trials: int, detect_within: float
) -> tuple[list[float], list[float], list[str]]:
    """Blackhole seat 1's connection ``trials`` times: how long until another seat's view
    shows it disconnected, and after the heal until it is back and receiving views again.
    Returns the detection times, the resumption times and the audit's problems."""
    deadline = time.monotonic() + 600
    # Nobody acts: every turn runs its clock (2 s connected, 0.3 s away), so the game lasts.
    game, seat1 = await seated_game(chaos, proxy.address, act=False, deadline=deadline)
    watcher = game.players[2]
    detections: list[float] = []
    resumptions: list[float] = []
    try:
        for _ in range(trials):
            await wait_for(lambda: connected(watcher, 1) is True, timeout=60, interval=0.05)
            before = seat1.latest.version if seat1.latest else 0

            def resumed(before: int = before) -> bool:
                return (
                    connected(watcher, 1) is True
                    and seat1.latest is not None
                    and seat1.latest.version > before
                )

            cut = time.monotonic()
            await asyncio.to_thread(proxy.blackhole)
            try:
                await wait_for(
                    lambda: connected(watcher, 1) is False,
                    timeout=detect_within,
                    interval=0.05,
                    message="the gateway marked the blackholed seat disconnected",
                )
            finally:
                detections.append(round(time.monotonic() - cut, 1))
            healed = time.monotonic()
            await asyncio.to_thread(proxy.heal)
            await wait_for(
                resumed, timeout=120, interval=0.05, message="the client resumed after the heal"
            )
            resumptions.append(round(time.monotonic() - healed, 1))
    finally:
        await asyncio.to_thread(proxy.heal)
        await finish([game], within=1)
    audits, stuck = await audit_all(chaos.redis.url_for("admin"), [game])
    problems = [p for a in audits for p in a.problems()] + [f"stuck: {t}" for t in stuck]
    return detections, resumptions, problems


@pytest.mark.chaos_long
@pytest.mark.timeout(900)
async def test_a_blackholed_client_is_detected_dead_and_resumes_after_the_heal(
    net_cluster: tuple[ProcessCluster, FaultProxy],
) -> None:
    """Measures the dead-peer detection (the strict keepalive bound is the xfail below)."""
    chaos, proxy = net_cluster
    detections, resumptions, problems = await blackhole_trials(chaos, proxy, 2, 150)
    report(
        "network: blackholed client (long)",
        keepalive_bound_s=KEEPALIVE_TIME_S + KEEPALIVE_TIMEOUT_S,
        detection_s=detections,
        worst_detection_s=max(detections),
        resume_after_heal_s=resumptions,
    )
    assert max(detections) <= 120, detections
    assert not problems, problems[:10]


@pytest.mark.chaos_long
@pytest.mark.timeout(300)
async def test_a_blackholed_client_is_detected_dead_within_the_keepalive_bound(
    net_cluster: tuple[ProcessCluster, FaultProxy],
) -> None:
    chaos, proxy = net_cluster
    detections, _, _ = await blackhole_trials(chaos, proxy, 1, DETECTION_BOUND_S)
    assert max(detections) <= DETECTION_BOUND_S, detections


async def _through_proxies(
    role_proxies: dict[Role, tuple[str, str]],
) -> tuple[ProcessCluster, dict[Role, FaultProxy]]:
    """A cluster whose roles reach Redis/NATS through fault proxies.

    ``role_proxies`` maps a role to ``(dependency, variable)``, e.g.
    ``{"timer": ("redis", "DOMINOS_REDIS_URL")}``."""
    redis = RedisServer(secrets=SESSION_SECRETS)
    await asyncio.to_thread(redis.start)
    proxies: dict[Role, FaultProxy] = {}
    nats_proxy: dict[Role, str] = {}
    chaos_env: dict[Role, dict[str, str]] = {}
    for role, (dependency, variable) in role_proxies.items():
        if dependency == "redis":
            proxy = FaultProxy("127.0.0.1", redis.port, name=f"{role}-redis").start()
            chaos_env.setdefault(role, {})[variable] = redis.url_for(role, port=proxy.port)
            proxies[role] = proxy
        else:
            nats_proxy[role] = variable
    chaos = await asyncio.to_thread(
        ProcessCluster.start, env=FAST_ENV, tables=0, timers=0, gateways=0, redis=redis
    )
    for role, variable in nats_proxy.items():
        proxy = FaultProxy("127.0.0.1", chaos.nats.port, name=f"{role}-nats").start()
        url = chaos.nats_url_for(role, f"127.0.0.1:{proxy.port}")
        chaos_env.setdefault(role, {})[variable] = url
        proxies[role] = proxy
    roles: tuple[Role, ...] = ("table", "timer", "gateway")
    for role in roles:
        await asyncio.to_thread(chaos.add, role, chaos_env.get(role))
    return chaos, proxies


@pytest.mark.chaos_long
@pytest.mark.timeout(600)
async def test_silently_dead_redis_connections_hang_nothing_and_a_stall_loses_nothing() -> None:
    chaos, proxies = await _through_proxies(
        {"table": ("redis", "DOMINOS_REDIS_URL"), "timer": ("redis", "DOMINOS_REDIS_URL")}
    )
    started = time.monotonic()
    faults = FaultLog()
    try:
        games = await start_games(6, chaos.gateway_addresses, target=300, deadline=started + 300)
        try:
            for seconds in (3.0, 8.0):
                await progress(chaos.redis.url_for("admin"), games, 10)
                await faults.inject(
                    f"redis links blackholed {seconds:g}s (table, timer)",
                    functools.partial(_blackhole_for, list(proxies.values()), seconds),
                    games,
                )
            for seconds in (2.0, 7.0):
                await progress(chaos.redis.url_for("admin"), games, 10)
                await faults.inject(
                    f"redis links stalled {seconds:g}s (table, timer)",
                    functools.partial(_stall_for, list(proxies.values()), seconds),
                    games,
                )
            await progress(chaos.redis.url_for("admin"), games, 10)
            for proxy in proxies.values():
                proxy.set_latency(0.02)
            await faults.inject("redis latency 20 ms", lambda: None, games)
            await progress(chaos.redis.url_for("admin"), games, 30, within=90)
        finally:
            await finish(games, within=max(started + 300 - time.monotonic(), 1))
        audits, stuck = await audit_all(chaos.redis.url_for("admin"), games)
        row = figures(audits, faults, stuck, games)
        row["crashes"] = chaos.dead()
        report("network: redis links (long)", **row)
        assert not [p for a in audits for p in a.problems()]
        assert not stuck and all(a.finished for a in audits), (stuck, row)
        assert not chaos.dead(), (chaos.dead(), chaos.logs("table"), chaos.logs("gateway"))
    finally:
        for proxy in proxies.values():
            proxy.close()
        await asyncio.to_thread(chaos.stop)


def _blackhole_for(proxies: list[FaultProxy], seconds: float) -> None:
    for proxy in proxies:
        proxy.blackhole()
    time.sleep(seconds)  # the fault's length
    for proxy in proxies:
        proxy.heal()


def _stall_for(proxies: list[FaultProxy], seconds: float) -> None:
    for proxy in proxies:
        proxy.stall()
    time.sleep(seconds)  # the fault's length
    for proxy in proxies:
        proxy.heal()


@pytest.mark.chaos_long
@pytest.mark.timeout(600)
async def test_client_latency_slows_games_without_breaking_them(
    net_cluster: tuple[ProcessCluster, FaultProxy],
) -> None:
    chaos, proxy = net_cluster
    started = time.monotonic()
    await asyncio.to_thread(proxy.set_latency, 0.08)
    try:
        games = await start_games(
            3, lambda: [proxy.address], target=100, deadline=started + 240, seed=300
        )
        await finish(games, within=240)
    finally:
        await asyncio.to_thread(proxy.set_latency, 0)
    audits, stuck = await audit_all(chaos.redis.url_for("admin"), games)
    report("network: 80 ms client latency (long)", **figures(audits, FaultLog(), stuck))
    assert not [p for a in audits for p in a.problems()]
    assert all(a.finished for a in audits), [a.phase for a in audits]


@pytest.mark.chaos_long
@pytest.mark.timeout(300)
async def test_a_silently_dead_gateway_to_table_connection_is_replaced(
    net_cluster: tuple[ProcessCluster, FaultProxy],
) -> None:
    chaos, _ = net_cluster
    proxy = FaultProxy("127.0.0.1", chaos.tables[0].port, name="table-proxy").start()
    gateway = await asyncio.to_thread(
        chaos.add, "gateway", {"DOMINOS_TABLE_SERVICE_ADDR": proxy.address}
    )
    client = DominosClient(gateway.address, timeout=8)
    try:
        creds, _, _ = await client.create_table("Host")
        await asyncio.to_thread(proxy.blackhole)  # the table replica's host vanished...
        await asyncio.to_thread(proxy.heal)  # ...and its address answers again
        cut = time.monotonic()

        async def answered() -> bool:
            try:
                await client.view(creds)
            except grpc.aio.AioRpcError as error:
                assert error.code() in (
                    grpc.StatusCode.UNAVAILABLE,
                    grpc.StatusCode.DEADLINE_EXCEEDED,
                ), error
                return False
            return True

        try:
            await wait_for(answered, timeout=60, interval=0.5)
        finally:
            report("network: dead gateway->table link (long)", waited_s=time.monotonic() - cut)
    finally:
        await client.close()
        gateway.kill()
        chaos.replicas.remove(gateway)
        proxy.close()


@pytest.mark.chaos_long
@pytest.mark.timeout(300)
async def test_a_silently_dead_nats_connection_of_the_table_service_is_replaced() -> None:
    chaos, proxies = await _through_proxies({"table": ("nats", "DOMINOS_NATS_URL")})
    try:
        # Nobody acts: the game moves only by the timer, through the table service's NATS.
        players = [
            ChaosPlayer(f"Q{i}", 80 + i, chaos.gateway_addresses, act=False) for i in range(4)
        ]
        deadline = time.monotonic() + 200
        await seat_chaos_players(players, 500, deadline)
        await start_game(players[0], deadline)
        redis = Redis.from_url(chaos.redis.url_for("admin"))
        try:
            table_id = players[0].table_id
            assert await still_progressing(redis, table_id, bound=10)
            await asyncio.to_thread(proxies["table"].blackhole)
            await asyncio.to_thread(proxies["table"].heal)
            cut = time.monotonic()
            start = version_of(await aread_fields(redis, table_id))

            async def moved_on() -> bool:
                # All seats away: about three versions a second while the timers work.
                return version_of(await aread_fields(redis, table_id)) >= start + 20

            try:
                await wait_for(moved_on, timeout=60, interval=0.2)
            finally:
                report(
                    "network: dead table->nats link (long)",
                    versions_after_cut=version_of(await aread_fields(redis, table_id)) - start,
                    waited_s=round(time.monotonic() - cut, 1),
                )
        finally:
            await redis.aclose()
            for player in players:
                await player.close()
    finally:
        for proxy in proxies.values():
            proxy.close()
        await asyncio.to_thread(chaos.stop)
