"""The gateway's presence leases: batched renewal keeps them alive; release is the holder's.

The gateways' side runs as the ``gateway`` Redis user, the timer's sweep as ``timer`` (their
production ACLs); the assertions read as ``admin``."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from services.common.presence import PresenceLeases
from services.common.schema import presence_leases_key
from services.gateway.presence import LeaseKeeper
from testing.waiting import wait_for


async def test_leases_renewed_in_batches_outlive_their_ttl_and_expire_once_dropped(
    redis_connect: Any,
) -> None:
    store = PresenceLeases(redis_connect("timer"))
    keeper = LeaseKeeper(PresenceLeases(redis_connect("gateway")), ttl_ms=300)
    for seat in range(4):
        await keeper.take("t" * 22, seat, f"gw:{seat}")
    renewing = asyncio.create_task(keeper.run())
    try:
        started = time.monotonic()
        while time.monotonic() - started < 1.0:  # three lease lifetimes
            assert await store.claim_expired(int(time.time() * 1000)) == []
            await asyncio.sleep(0.05)  # sampling the leases, not synchronising
    finally:
        keeper.stop()
        renewing.cancel()
        await asyncio.gather(renewing, return_exceptions=True)
    # Without renewal, they run out and the sweep claims each exactly once.
    claimed: list[tuple[str, int]] = []

    async def all_claimed() -> bool:
        claimed.extend(await store.claim_expired(int(time.time() * 1000)))
        return len(claimed) >= 4

    await wait_for(all_claimed, timeout=3)
    assert sorted(claimed) == [("t" * 22, seat) for seat in range(4)]


async def test_only_the_current_holder_releases_a_lease(
    redis_client: Any, redis_connect: Any
) -> None:
    store = PresenceLeases(redis_connect("gateway"))
    first = LeaseKeeper(store, ttl_ms=5000)
    second = LeaseKeeper(store, ttl_ms=5000)
    await first.take("u" * 22, 1, "gw-a:1")
    await second.take("u" * 22, 1, "gw-b:7")  # the player reconnected through another gateway
    assert not await first.release("gw-a:1")  # the old stream must not mark the seat away
    assert await redis_client.hget(presence_leases_key("u" * 22), "1") == b"gw-b:7"
    assert await second.release("gw-b:7")
    assert await redis_client.hget(presence_leases_key("u" * 22), "1") is None
