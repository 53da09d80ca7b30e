"""``flushed``: once it returns, the NATS server holds the subscription just made, so a
message published once right after reaches it (a gateway's feed relies on that before it
reads the table's snapshot)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from services.common.connections import flushed

ROUNDS = 200
BULK = b"x" * 512 * 1024


async def test_a_subscription_is_on_the_server_once_flushed_returns(
    nats_connect: Callable[[str], Awaitable[Any]],
) -> None:
    """Subscribe, ``flushed``, publish once from another connection: delivered every time
    (with a single ``flush()`` of nats-py 2.16 a round loses its message now and then)."""
    subscriber = await nats_connect("admin")
    publisher = await nats_connect("admin")
    lost = 0
    for round_ in range(ROUNDS):
        got = asyncio.Event()

        async def on_message(msg: Any, got: asyncio.Event = got) -> None:
            got.set()

        subject = f"dominos.v1.table.flushed{round_}"
        # The subscriber's flusher is busy writing a large message when the SUB is made.
        await subscriber.publish("dominos.v1.table.elsewhere", BULK)
        subscription = await subscriber.subscribe(subject, cb=on_message)
        await flushed(subscriber)
        await publisher.publish(subject, b"once")
        await flushed(publisher)
        try:
            await asyncio.wait_for(got.wait(), timeout=2)
        except TimeoutError:
            lost += 1
        await subscription.unsubscribe()
    assert lost == 0
