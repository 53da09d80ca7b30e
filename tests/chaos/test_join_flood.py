"""Join floods across gateway replicas (D6): failed join attempts are limited per peer, by
the table service, in Redis, so two gateways share one budget per client address.

The cluster runs two gateways and ``DOMINOS_JOIN_RATE_LIMIT=5``; every client of the test
comes from 127.0.0.1, so both gateways see the same peer (``ipv4:127.0.0.1``). The table
service reaches Redis through a fault proxy, to add the latency of a real network.
"""

from __future__ import annotations

import asyncio
import random
from collections import Counter
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from typing import Any

import grpc
import pytest
from dominos.v1 import gateway_pb2
from redis.asyncio import Redis

from services.client.api import DominosClient, request_id
from services.common.credentials import CODE_ALPHABET, CODE_LENGTH
from services.common.schema import Pattern, join_failures_key, table_key
from services.common.service_errors import reason_of, retry_delay_of
from testing.cluster import FAST_ENV, ProcessCluster
from testing.secrets import SESSION_SECRETS
from testing.servers import RedisServer

from .proxy import FaultProxy
from .reporting import report

LIMIT = 5
PEER_KEY = join_failures_key("ipv4:127.0.0.1")


@dataclass
class Flood:
    """Two gateways, one table service reaching Redis through a fault proxy."""

    cluster: ProcessCluster
    redis_link: FaultProxy


@pytest.fixture(scope="module")
def flood() -> Iterator[Flood]:
    redis = RedisServer(secrets=SESSION_SECRETS)
    redis.start()
    link = FaultProxy("127.0.0.1", redis.port, name="table-redis").start()
    chaos = ProcessCluster.start(
        tables=1,
        timers=0,
        gateways=2,
        redis=redis,
        env={**FAST_ENV, "DOMINOS_JOIN_RATE_LIMIT": str(LIMIT)},
        role_env={"table": {"DOMINOS_REDIS_URL": redis.url_for("table", port=link.port)}},
    )
    try:
        yield Flood(chaos, link)
    finally:
        link.close()
        chaos.stop()


@pytest.fixture
async def clients(flood: Flood) -> AsyncIterator[tuple[DominosClient, ...]]:
    """A client of each gateway, with this peer's failure budget reset."""
    redis = Redis.from_url(flood.cluster.redis.url_for("admin"))
    await redis.delete(PEER_KEY)
    await redis.aclose()
    pair = tuple(DominosClient(g.address) for g in flood.cluster.gateways)
    try:
        yield pair
    finally:
        for client in pair:
            await client.close()


def wrong_code(rng: random.Random) -> str:
    """A well-formed invitation code of no table (1 chance in 6.6e11 otherwise)."""
    return "".join(rng.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))


async def join(client: DominosClient, code: str) -> tuple[grpc.StatusCode, str | None, Any]:
    request = gateway_pb2.JoinTableRequest(
        request_id=request_id(), invitation_code=code, player_name="Guesser"
    )
    try:
        return grpc.StatusCode.OK, None, await client.stub.JoinTable(request, timeout=10)
    except grpc.aio.AioRpcError as error:
        return error.code(), reason_of(error), error


async def test_failed_joins_are_limited_per_peer_across_both_gateways(
    flood: Flood, clients: tuple[DominosClient, DominosClient]
) -> None:
    rng = random.Random(7)
    first, second = clients
    _, code, _ = await first.create_table("Host")
    redis = Redis.from_url(flood.cluster.redis.url_for("admin"))
    try:
        tables_before = await redis.keys(Pattern.TABLE)
        assert len(tables_before) == 1
        table_before = await redis.hgetall(tables_before[0])
        # Malformed codes are refused before any lookup and cost nothing.
        assert (await join(first, "not a code"))[:2] == (
            grpc.StatusCode.INVALID_ARGUMENT,
            "ID_MALFORMED",
        )
        # LIMIT wrong guesses, alternating gateways, are answered...
        for attempt in range(LIMIT):
            status = await join((first, second)[attempt % 2], wrong_code(rng))
            assert status[:2] == (grpc.StatusCode.NOT_FOUND, "CODE_NOT_FOUND"), (attempt, status)
        assert int(await redis.get(PEER_KEY) or 0) == LIMIT
        # ...then every attempt through EITHER gateway is refused, the right code included.
        refused = []
        for client in (first, second, first, second):
            for guess in (wrong_code(rng), code):
                status, reason, error = await join(client, guess)
                refused.append((status, reason))
                delay = retry_delay_of(error)
                assert delay is not None and 0 < delay <= 60, delay
        assert set(refused) == {(grpc.StatusCode.RESOURCE_EXHAUSTED, "RATE_LIMITED")}, refused
        assert int(await redis.get(PEER_KEY) or 0) == LIMIT, "refused attempts are not counted"
        # The table did not change, and nothing else is limited.
        assert await redis.hgetall(tables_before[0]) == table_before
        assert await redis.keys(Pattern.TABLE) == tables_before
        creds, _, _ = await second.create_table("Other host")
        assert await redis.exists(table_key(creds.table_id))
        report(
            "join flood",
            limit=LIMIT,
            answered_before_limit=LIMIT,
            refused_after_limit=len(refused),
            gateways=2,
        )
    finally:
        await redis.aclose()


async def test_simultaneous_failed_joins_cannot_outrun_the_limit(
    flood: Flood, clients: tuple[DominosClient, DominosClient]
) -> None:
    rng = random.Random(11)
    attempts = 50
    await asyncio.to_thread(flood.redis_link.set_latency, 0.025)
    try:
        statuses = await asyncio.wait_for(
            asyncio.gather(*(join(clients[i % 2], wrong_code(rng)) for i in range(attempts))),
            timeout=60,
        )
    finally:
        await asyncio.to_thread(flood.redis_link.set_latency, 0)
    answered = Counter(f"{s[0].name} {s[1]}" for s in statuses)
    report("join flood", simultaneous_attempts=attempts, simultaneous_answers=dict(answered))
    assert answered["NOT_FOUND CODE_NOT_FOUND"] <= LIMIT, answered
    assert answered["RESOURCE_EXHAUSTED RATE_LIMITED"] >= attempts - LIMIT, answered
