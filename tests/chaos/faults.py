"""Injecting faults while games run, and recording them for the report."""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from redis.asyncio import Redis
from redis.exceptions import ConnectionError as RedisConnectionError

from services.rules import Phase
from testing.chaos_players import Game
from testing.cluster import ProcessCluster
from testing.services import ServiceProcess
from testing.waiting import wait_for

from .audit import GameAudit, audit_game, summary
from .tables import aread_fields, state_of, version_of


@dataclass
class FaultLog:
    """Every fault injected: its kind, when, how long it took, how many games were live."""

    events: list[dict[str, Any]] = field(default_factory=list)
    counts: Counter[str] = field(default_factory=Counter)

    async def inject(self, kind: str, action: Callable[[], Any], games: list[Game]) -> None:
        """Run ``action`` (blocking: in a thread, so the players keep playing)."""
        live = sum(not g.finished for g in games)
        started = time.monotonic()
        await asyncio.to_thread(action)
        self.counts[kind] += 1
        self.events.append(
            {"kind": kind, "live_games": live, "seconds": round(time.monotonic() - started, 2)}
        )

    def while_live(self) -> int:
        """Faults injected while at least one game was being played."""
        return sum(1 for e in self.events if e["live_games"])


def kill_and_restart(replica: ServiceProcess) -> None:
    """SIGKILL, then start again on the same port."""
    replica.kill()
    replica.restart()


def freeze(replica: ServiceProcess, seconds: float) -> None:
    """SIGSTOP for ``seconds`` (the fault's length, not a synchronisation), then SIGCONT."""
    replica.pause()
    try:
        time.sleep(seconds)
    finally:
        replica.resume()


def restart_redis(cluster: ProcessCluster, down_s: float = 0.0) -> None:
    """SIGKILL redis-server, keep it down ``down_s`` seconds (the fault's length), start it
    again on the same port with the same data directory and AOF (ready once it answers)."""
    cluster.redis.kill()
    time.sleep(down_s)
    cluster.redis.start()


def restart_nats(cluster: ProcessCluster) -> None:
    """SIGKILL nats-server and start it again (same port, same JetStream store)."""
    cluster.nats.kill()
    cluster.nats.start()


async def stored(redis: Redis, table_id: str) -> tuple[int, bool]:
    """A table's stored version and whether it is over (finished or closed)."""
    state = state_of(await aread_fields(redis, table_id))
    if state is None:
        return 0, True
    return state.version, state.phase in (Phase.FINISHED, Phase.CLOSED)


async def progress(redis_url: str, games: list[Game], versions: int, within: float = 45) -> None:
    """Until every game that is not over moved ``versions`` versions on (stored in Redis)."""
    redis = Redis.from_url(redis_url)
    try:
        marks = {g.table_id: (await stored(redis, g.table_id))[0] for g in games}

        async def moved() -> bool:
            for game in games:
                version, over = await stored(redis, game.table_id)
                if not over and version < marks[game.table_id] + versions:
                    return False
            return True

        await wait_for(
            moved,
            timeout=within,
            interval=0.05,
            ignore=(RedisConnectionError,),
            message=f"every game advanced {versions} versions",
        )
    finally:
        await redis.aclose()


async def finish(games: list[Game], within: float) -> None:
    """Let the games run until they end (each player stops at its own deadline too)."""
    tasks = [g.task for g in games if g.task is not None]
    try:
        await asyncio.wait_for(asyncio.gather(*tasks, return_exceptions=True), timeout=within)
    except TimeoutError:
        pass
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        for game in games:
            await game.close()


async def still_progressing(redis: Redis, table_id: str, bound: float = 20.0) -> bool:
    """Whether an unfinished table's stored version advances within ``bound`` seconds."""
    start = version_of(await aread_fields(redis, table_id))

    async def moved() -> bool:
        return version_of(await aread_fields(redis, table_id)) > start

    try:
        await wait_for(moved, timeout=bound, interval=0.1)
    except TimeoutError:
        return False
    return True


async def audit_all(redis_url: str, games: list[Game]) -> tuple[list[GameAudit], list[str]]:
    """Audit every game; returns the audits and the unfinished games that no longer move."""
    redis = Redis.from_url(redis_url)
    try:
        audits = [await audit_game(redis, g.table_id, g.players) for g in games]
        stuck = [
            a.table_id
            for a in audits
            if a.exists and not a.finished and not await still_progressing(redis, a.table_id)
        ]
    finally:
        await redis.aclose()
    return audits, stuck


def figures(
    audits: list[GameAudit], faults: FaultLog, stuck: list[str], games: Sequence[Game] = ()
) -> dict[str, Any]:
    """The report row of a chaos run (with the statuses the players met, given ``games``)."""
    statuses: Counter[str] = Counter()
    for game in games:
        for player in game.players:
            statuses.update(player.stats.statuses)
    return {
        **summary(audits),
        "games_stuck": len(stuck),
        "faults": dict(faults.counts),
        "faults_while_games_live": faults.while_live(),
        "fault_events": faults.events,
        "client_statuses_met": dict(sorted(statuses.items())),
    }
