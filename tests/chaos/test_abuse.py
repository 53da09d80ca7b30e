"""One client cannot take the cluster down (issue 15): while one address floods creates, view
streams, connections, lobby churn, presence flapping and wrong codes, a victim table on the
same cluster (and the same address: everything here is 127.0.0.1) plays its game to the end,
its move → four views latency stays within twice the baseline measured before the flood (three
times in the short run, see :data:`SLOWDOWN`), the
gateway's and Redis's memory stay bounded, and every flood meets its documented refusal.

The cluster runs the production budgets (every ``DOMINOS_*`` limit at its default), two
gateways: the victim plays through the first, the floods that a gateway caps (streams,
connections) go to the second, the others to both. Each flood is paced (bounded in rate,
count and time) and stops by itself. Short run in ``make test`` (8 s of flood), long run
(60 s) in ``make test-chaos``.
"""

from __future__ import annotations

import asyncio
import json
import random
import statistics
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from dominos.v1 import game_pb2
from redis.asyncio import Redis

from services.client.api import DominosClient, SeatCredentials
from testing.cluster import ProcessCluster, clock_env
from testing.limits import PRODUCTION
from testing.players import seat_four
from testing.services import ROOT
from testing.stats import percentile

from .reporting import long_enabled, report

FLOOD_S = 60.0 if long_enabled() else 15.0
#: Requests per second of each flood (each paced on its own).
RATE = 40.0
#: How much slower the victim's p99 may get under the flood: twice in the long run (issue
#: 15); in the short run's few hundred moves one scheduling hiccup of the two shared cores
#: moves the p99, so it allows three times (without the limits it was a hundred times).
SLOWDOWN = 2.0 if long_enabled() else 3.0
#: The victim's pause before each move (a fast human), and its moves before the flood.
THINK_S = 0.04
BASELINE_MOVES = 200
#: What the floods may hold at most, from the defaults: 512 streams of ~50 KB and 256
#: connections of ~30 KB on one gateway, with room for the interpreter's own growth.
GATEWAY_GROWTH_MB = 80
REDIS_GROWTH_MB = 4
PLAYING = game_pb2.PHASE_PLAYING


@pytest.fixture(scope="module")
def cluster() -> Iterator[ProcessCluster]:
    cluster = ProcessCluster.start(
        env={**clock_env(60, 60, 0.2), **PRODUCTION, "DOMINOS_LOG_LEVEL": "warning"},
        gateways=2,
        metrics=True,
    )
    try:
        yield cluster
    finally:
        cluster.stop()


# -- the victim ------------------------------------------------------------------------------


@dataclass
class Victim:
    """Four players of one table on one gateway; each move is timed until all four streams
    show its version."""

    clients: list[DominosClient]
    seats: list[SeatCredentials] = field(default_factory=list)
    latest: list[game_pb2.TableView | None] = field(default_factory=lambda: [None] * 4)
    changed: asyncio.Event = field(default_factory=asyncio.Event)
    readers: list[asyncio.Task[None]] = field(default_factory=list)
    samples: list[float] = field(default_factory=list)

    async def read(self, seat: int) -> None:
        call = self.clients[seat].watch(self.seats[seat])
        try:
            async for message in call:
                self.latest[seat] = message.view
                self.changed.set()
        finally:
            call.cancel()

    def lowest_version(self) -> int:
        return min((v.version if v is not None else 0) for v in self.latest)

    async def until(self, condition: Callable[[], bool]) -> None:
        async with asyncio.timeout(20):
            while not condition():
                self.changed.clear()
                await self.changed.wait()

    def done(self) -> bool:
        view = self.latest[0]
        return view is not None and view.phase == game_pb2.PHASE_FINISHED

    async def move(self, rng: random.Random) -> None:
        """The seat to play acts after a human's pause (:data:`THINK_S`); wait until all four
        views show it."""
        await asyncio.sleep(THINK_S)  # pacing, not synchronisation
        await self.until(lambda: self.latest[0] is not None and self._turn() is not None)
        seat, view = self._turn()  # type: ignore[misc]
        client, credentials = self.clients[seat], self.seats[seat]
        started = time.perf_counter()
        if view.legal_moves:
            await client.play(credentials, rng.choice(list(view.legal_moves)))
        else:
            await client.pass_turn(credentials)
        await self.until(lambda: self.lowest_version() > view.version)
        self.samples.append(time.perf_counter() - started)

    def _turn(self) -> tuple[int, game_pb2.TableView] | None:
        """The seat to play and its view, once every stream shows the same playing version."""
        views = self.latest
        if any(v is None for v in views) or len({v.version for v in views if v}) != 1:
            return None
        view = views[0]
        assert view is not None
        if view.phase != PLAYING:
            return None
        mine = views[view.turn_seat]
        assert mine is not None
        return view.turn_seat, mine


async def seat_victim(address: str, target: int) -> Victim:
    victim = Victim([DominosClient(address) for _ in range(4)])
    lobby = await seat_four(victim.clients, ["Victim", "V1", "V2", "V3"], target)
    victim.seats.extend(lobby.seats)
    victim.readers = [asyncio.create_task(victim.read(seat)) for seat in range(4)]
    await victim.until(lambda: all(v is not None for v in victim.latest))
    await victim.clients[0].start(lobby.host)
    return victim


def rss_mb(process: Any) -> float:
    for line in process.scrape().splitlines():
        if line.startswith("process_resident_memory_bytes "):
            return float(line.split()[1]) / 2**20
    raise AssertionError("no process_resident_memory_bytes")


async def redis_used_mb(cluster: ProcessCluster) -> float:
    redis = Redis.from_url(cluster.redis.url_for("admin"))
    try:
        return float((await redis.info("memory"))["used_memory"]) / 2**20
    finally:
        await redis.aclose()


def p99_ms(samples: list[float]) -> float:
    return percentile(sorted(int(s * 1e6) for s in samples), 99) / 1000


# -- the test --------------------------------------------------------------------------------


async def test_one_address_flooding_everything_cannot_take_the_cluster_down(
    cluster: ProcessCluster,
) -> None:
    rng = random.Random(7)
    near = cluster.gateways[0].address
    victim = await seat_victim(near, target=500 if long_enabled() else 300)
    try:
        for _ in range(BASELINE_MOVES):  # the baseline, same run, no flood
            await victim.move(rng)
        baseline = list(victim.samples)
        victim.samples.clear()
        gateway_before = rss_mb(cluster.gateways[1])
        redis_before = await redis_used_mb(cluster)

        flood = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "tests.chaos.abuse_flood",
            "--near", near, "--far", cluster.gateways[1].address,
            "--seconds", str(FLOOD_S), "--rate", str(RATE),
            cwd=ROOT, stdout=asyncio.subprocess.PIPE,
        )  # fmt: skip
        assert flood.stdout is not None
        assert await asyncio.wait_for(flood.stdout.readline(), timeout=30) == b"ready\n"
        finished = asyncio.create_task(flood.communicate())
        while not finished.done():
            if victim.done():
                break
            await victim.move(rng)
        out, _ = await asyncio.wait_for(finished, timeout=FLOOD_S + 60)
        assert flood.returncode == 0
        seen = json.loads(out.decode().strip().splitlines()[-1])
        gateway_peak = rss_mb(cluster.gateways[1])
        redis_after = await redis_used_mb(cluster)
        during = list(victim.samples)
        while not victim.done():  # the victim's game goes on to its end
            await victim.move(rng)
    finally:
        for reader in victim.readers:
            reader.cancel()
        for client in victim.clients:
            await client.close()

    figures = {
        "flood_s": FLOOD_S,
        "rate_per_flood": RATE,
        "baseline_moves": len(baseline),
        "baseline_p50_ms": statistics.median(baseline) * 1000,
        "baseline_p99_ms": p99_ms(baseline),
        "flood_moves": len(during),
        "flood_p50_ms": statistics.median(during) * 1000 if during else None,
        "flood_p99_ms": p99_ms(during) if during else None,
        "gateway_rss_growth_mb": gateway_peak - gateway_before,
        "redis_growth_mb": redis_after - redis_before,
        "outcomes": seen,
    }
    report("abuse flood (long)" if long_enabled() else "abuse flood (short)", **figures)
    assert victim.done()
    assert len(during) >= 20, figures
    assert p99_ms(during) <= SLOWDOWN * p99_ms(baseline), figures
    assert gateway_peak - gateway_before <= GATEWAY_GROWTH_MB, figures
    assert redis_after - redis_before <= REDIS_GROWTH_MB, figures
    limited = "RESOURCE_EXHAUSTED RATE_LIMITED"
    seen = {flood: Counter(counts) for flood, counts in seen.items()}
    assert seen["creates"][f"{limited} creates_per_address"] > 0, seen
    # Per-minute budgets: a flood longer than a minute sees their window end once more.
    windows = 1 + int(FLOOD_S // 60)
    assert seen["creates"]["OK"] <= min(20 * windows, 30 - 1), seen  # and the lobby cap
    assert seen["codes"][f"{limited} join_failures_per_connection"] > 0, seen
    assert seen["codes"]["NOT_FOUND CODE_NOT_FOUND"] <= 5 * windows, seen
    assert seen["churn"][f"{limited} lobby_changes"] > 0, seen
    assert seen["churn"]["OK"] <= 30 * windows, seen
    assert seen["streams ended"]["ABORTED STREAM_REPLACED"] > 0, seen
    # A gRPC connection counts only while a call is in progress: one-shot calls on new
    # connections are never locked out; the idle ones are closed by the idle timer.
    assert set(seen["connections"]) == {"OK"}, seen
    assert seen["flapping"][f"{limited} connections_per_seat"] > 0, seen
    assert seen["flapping"]["OK"] <= 20 * windows, seen
    repeated = [
        float(line.split()[1])
        for line in cluster.gateways[0].scrape().splitlines()
        if line.startswith("dominos_gateway_refusals_repeated_total{")
    ]
    assert sum(repeated) > 0  # the gateway answered most refusals without the table service
    documented = {
        "OK",
        "opened",
        "still open",
        "NOT_FOUND CODE_NOT_FOUND",
        "ABORTED STREAM_REPLACED",
    }
    for flood, counts in seen.items():
        strays = {o for o in counts if o not in documented and not o.startswith(limited)}
        assert not strays, (flood, counts)
