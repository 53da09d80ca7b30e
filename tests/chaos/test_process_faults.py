"""Process faults while games run: SIGKILL and restart of the table service, the timer
service and a gateway, a restart of nats-server, and a table service frozen (SIGSTOP) for
longer than its timeouts, then thawed.

Scripted players (``testing.chaos_players.ChaosPlayer``) reconnect their streams to any live
gateway and retry their commands with the same request id. Afterwards every game is audited
against its command log (``audit.audit_game``): it finished or still progresses, no version
gap or fork, every round's score recomputed, no turn auto-played twice, no tile leaked, every
acknowledged command in the log; and no process crashed.

The short test (``make test``) runs four games and one fault of each kind; the long one
(``make test-chaos``) runs twenty games on several replicas of each service and kills them
at random instants.
"""

from __future__ import annotations

import asyncio
import os
import random
import time
from collections.abc import Iterator

import grpc
import pytest

from services.client.api import DominosClient
from services.common.service_errors import reason_of
from testing.chaos_players import start_games
from testing.cluster import FAST_ENV, ProcessCluster, each
from testing.secrets import SESSION_SECRETS
from testing.servers import RedisServer

from .faults import (
    FaultLog,
    audit_all,
    figures,
    finish,
    freeze,
    kill_and_restart,
    progress,
    restart_nats,
    restart_redis,
)
from .reporting import report

#: Longer than every timeout of the table service's callers and consumers: the gateway's
#: call deadline (5 s), JetStream's ack wait (5 s), the presence lease (1.5 s here).
FREEZE_S = 6.0


@pytest.fixture(scope="module")
def cluster() -> Iterator[ProcessCluster]:
    """One table service, one timer service, two gateways; Redis with its AOF every second
    (the quick Redis-restart test of the short set uses it too)."""
    redis = RedisServer(appendonly=True, appendfsync="everysec", secrets=SESSION_SECRETS)
    chaos = ProcessCluster.start(env=FAST_ENV, tables=1, timers=1, gateways=2, redis=redis)
    try:
        yield chaos
    finally:
        chaos.stop()


async def test_four_games_survive_one_kill_of_each_kind(cluster: ProcessCluster) -> None:
    started = time.monotonic()
    # Four played games, and two idle ones that the timer plays by itself (every seat away):
    # the idle ones outlast the fault sequence, so every fault hits live games.
    games = await start_games(
        4, cluster.gateway_addresses, target=500, deadline=started + 150, idle=2
    )
    faults = FaultLog()
    try:
        await progress(cluster.redis.url_for("admin"), games, 5)
        await faults.inject(
            "table SIGKILL+restart", lambda: kill_and_restart(cluster.tables[0]), games
        )
        await progress(cluster.redis.url_for("admin"), games, 5)
        await faults.inject(
            "timer SIGKILL+restart", lambda: kill_and_restart(cluster.timers[0]), games
        )
        await progress(cluster.redis.url_for("admin"), games, 5)
        await faults.inject(
            "gateway SIGKILL+restart", lambda: kill_and_restart(cluster.gateways[0]), games
        )
        await progress(cluster.redis.url_for("admin"), games, 5)
        await faults.inject("nats-server SIGKILL+restart", lambda: restart_nats(cluster), games)
        await progress(cluster.redis.url_for("admin"), games, 5)
        await faults.inject(
            f"table SIGSTOP {FREEZE_S:g}s+SIGCONT",
            lambda: freeze(cluster.tables[0], FREEZE_S),
            games,
        )
        await progress(cluster.redis.url_for("admin"), games, 5)
    finally:
        await finish(games, within=max(started + 150 - time.monotonic(), 1))
    audits, stuck = await audit_all(cluster.redis.url_for("admin"), games)
    row = figures(audits, faults, stuck, games)
    row["crashes"] = cluster.dead()
    row["seconds"] = round(time.monotonic() - started, 1)
    row["retries"] = sum(p.stats.retries for g in games for p in g.players)
    row["stream_reconnects"] = sum(p.stats.reconnects for g in games for p in g.players)
    report("process faults (short)", **row)
    problems = [p for a in audits for p in a.problems()]
    assert not problems, problems[:20]
    assert not stuck, f"games neither finished nor progressing: {stuck}"
    assert not cluster.dead(), (cluster.dead(), cluster.logs("table"), cluster.logs("gateway"))
    assert faults.while_live() == len(faults.events), faults.events
    assert row["acks"] > 100 and row["views_checked"] > 1000, row


async def test_a_redis_sigkill_mid_game_loses_no_acknowledged_command(
    cluster: ProcessCluster,
) -> None:
    """Quick variant (short set): Redis with ``appendfsync everysec`` is SIGKILLed mid-game
    and restarted on the same port and data directory; the services recover by themselves."""
    started = time.monotonic()
    games = await start_games(2, cluster.gateway_addresses, target=150, deadline=started + 90)
    faults = FaultLog()
    try:
        await progress(cluster.redis.url_for("admin"), games, 20)
        killed_at = time.time()
        await faults.inject(
            "redis SIGKILL, down 1s, restart (everysec)",
            lambda: restart_redis(cluster, down_s=1.0),
            games,
        )
        await progress(cluster.redis.url_for("admin"), games, 20)
    finally:
        await finish(games, within=max(started + 90 - time.monotonic(), 1))
    audits, stuck = await audit_all(cluster.redis.url_for("admin"), games)
    lost = [ack for a in audits for ack in a.acks_lost]
    row = figures(audits, faults, stuck, games)
    row["acks_lost_after_kill"] = len(lost)
    report("redis restart, appendfsync everysec (short)", **row)
    # everysec may lose what was acknowledged in the last second or two, nothing older.
    assert all(ack.at > killed_at - 2.5 for ack in lost), lost
    problems = [p for a in audits for p in a.problems(lost_allowed=bool(lost))]
    assert not problems, problems[:20]
    assert not stuck and all(a.finished for a in audits), (stuck, [a.phase for a in audits])
    assert not cluster.dead(), (cluster.dead(), cluster.logs("table"), cluster.logs("gateway"))


async def test_a_command_while_the_table_service_is_down_gets_unavailable_with_its_reason(
    cluster: ProcessCluster,
) -> None:
    client = DominosClient(cluster.gateways[0].address)
    table = cluster.tables[0]
    try:
        creds, _, _ = await client.create_table("Host")
        await asyncio.to_thread(table.kill)
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await client.set_target(creds, 150)
        report(
            "table service down",
            status=refused.value.code().name,
            reason=reason_of(refused.value),
            details=refused.value.details(),
        )
        assert refused.value.code() == grpc.StatusCode.UNAVAILABLE
        assert reason_of(refused.value) == "UNAVAILABLE"
    finally:
        await asyncio.to_thread(table.restart)
        await client.close()


# -- the long set ---------------------------------------------------------------------------


@pytest.mark.chaos_long
@pytest.mark.timeout(900)
async def test_twenty_games_survive_random_kills_of_every_replica() -> None:
    seed = int(os.environ.get("DOMINOS_CHAOS_SEED", str(random.randrange(1 << 30))))
    rng = random.Random(seed)
    chaos = await asyncio.to_thread(
        ProcessCluster.start, env=FAST_ENV, tables=2, timers=2, gateways=3
    )
    started = time.monotonic()
    faults = FaultLog()
    try:
        games = await start_games(
            20, chaos.gateway_addresses, target=500, deadline=started + 600, seed=1000, idle=4
        )
        actions = [
            *(
                (f"table SIGKILL+restart #{i}", lambda r=r: kill_and_restart(r))
                for i, r in enumerate(chaos.tables)
            ),
            *(
                (f"timer SIGKILL+restart #{i}", lambda r=r: kill_and_restart(r))
                for i, r in enumerate(chaos.timers)
            ),
            *(
                (f"gateway SIGKILL+restart #{i}", lambda r=r: kill_and_restart(r))
                for i, r in enumerate(chaos.gateways)
            ),
            ("nats-server SIGKILL+restart", lambda: restart_nats(chaos)),
            *(
                (f"table SIGSTOP {FREEZE_S:g}s #{i}", lambda r=r: freeze(r, FREEZE_S))
                for i, r in enumerate(chaos.tables)
            ),
            ("all timers SIGKILL+restart", lambda: each(chaos.timers, kill_and_restart)),
        ]
        try:
            for _ in range(3):
                rng.shuffle(actions)
                for kind, action in actions:
                    # A random instant: after a random number of versions of play.
                    await progress(
                        chaos.redis.url_for("admin"), games, rng.randrange(1, 40), within=90
                    )
                    await faults.inject(kind.split(" #")[0], action, games)
        finally:
            await finish(games, within=max(started + 600 - time.monotonic(), 1))
        audits, stuck = await audit_all(chaos.redis.url_for("admin"), games)
        row = figures(audits, faults, stuck, games)
        row.update(
            seed=seed,
            crashes=chaos.dead(),
            seconds=round(time.monotonic() - started, 1),
            retries=sum(p.stats.retries for g in games for p in g.players),
            stream_reconnects=sum(p.stats.reconnects for g in games for p in g.players),
            rss_mb={r: round(chaos.max_rss_mb(r), 1) for r in ("gateway", "table", "timer")},
        )
        report("process faults (long)", **row)
        problems = [p for a in audits for p in a.problems()]
        assert not problems, (seed, problems[:20])
        assert not stuck, (seed, stuck)
        assert not chaos.dead(), (chaos.dead(), chaos.logs("table"), chaos.logs("gateway"))
        played = [a for a, g in zip(audits, games, strict=True) if not g.idle]
        assert all(a.finished for a in played), (seed, row)
    finally:
        await asyncio.to_thread(chaos.stop)
