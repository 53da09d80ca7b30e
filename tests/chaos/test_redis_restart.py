"""Redis restarts with persistence (long set): redis-server runs with ``appendonly yes`` and
``appendfsync always`` or ``everysec``, is SIGKILLed mid-game at random instants and
restarted on the same port and data directory. Nobody touches the services: redis-py
reconnects on the next command, the timer service re-sweeps, the outbox relay republishes.

For each policy: how many ACKNOWLEDGED commands (an OK the client received) are missing
from the restarted Redis's command logs, and whether every game still reaches its end
with a clean history. (A SIGKILL of the process keeps what Redis wrote to the kernel; what
``everysec`` may lose is a power cut's last second, which a process kill cannot show.)
"""

from __future__ import annotations

import asyncio
import functools
import os
import random
import time
from typing import Literal

import pytest

from testing.chaos_players import start_games
from testing.cluster import FAST_ENV, ProcessCluster
from testing.secrets import SESSION_SECRETS
from testing.servers import RedisServer

from .faults import FaultLog, audit_all, figures, finish, progress, restart_redis
from .reporting import report


@pytest.mark.chaos_long
@pytest.mark.timeout(900)
@pytest.mark.parametrize("fsync", ["always", "everysec"])
async def test_redis_killed_mid_game_loses_no_acknowledged_command(
    fsync: Literal["always", "everysec"],
) -> None:
    seed = int(os.environ.get("DOMINOS_CHAOS_SEED", str(random.randrange(1 << 30))))
    rng = random.Random(seed)
    redis = RedisServer(appendonly=True, appendfsync=fsync, secrets=SESSION_SECRETS)
    chaos = await asyncio.to_thread(
        ProcessCluster.start, env=FAST_ENV, tables=2, timers=2, gateways=2, redis=redis
    )
    started = time.monotonic()
    faults = FaultLog()
    kills: list[float] = []
    try:
        games = await start_games(
            8, chaos.gateway_addresses, target=300, deadline=started + 400, seed=500
        )
        try:
            for down_s in (0.0, 1.0, 3.0):
                await progress(
                    chaos.redis.url_for("admin"), games, rng.randrange(10, 60), within=90
                )
                kills.append(time.time())
                await faults.inject(
                    f"redis SIGKILL, down {down_s:g}s, restart ({fsync})",
                    functools.partial(restart_redis, chaos, down_s),
                    games,
                )
        finally:
            await finish(games, within=max(started + 400 - time.monotonic(), 1))
        audits, stuck = await audit_all(chaos.redis.url_for("admin"), games)
        lost = [ack for a in audits for ack in a.acks_lost]
        row = figures(audits, faults, stuck, games)
        row.update(
            seed=seed,
            appendfsync=fsync,
            acknowledged_commands=row["acks"],
            acknowledged_commands_lost=len(lost),
            crashes=chaos.dead(),
            seconds=round(time.monotonic() - started, 1),
        )
        report(f"redis restart, appendfsync {fsync} (long)", **row)
        if fsync == "always":
            assert not lost, lost[:10]
        # everysec may lose the last second or two before a crash, nothing older.
        assert all(any(0 <= k - ack.at < 2.5 for k in kills) for ack in lost), lost[:10]
        problems = [p for a in audits for p in a.problems(lost_allowed=bool(lost))]
        assert not problems, (seed, problems[:20])
        assert not stuck and all(a.finished for a in audits), (seed, stuck, row)
        assert not chaos.dead(), (chaos.dead(), chaos.logs("table"), chaos.logs("gateway"))
    finally:
        await asyncio.to_thread(chaos.stop)
