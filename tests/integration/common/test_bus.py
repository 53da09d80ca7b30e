"""The streams' creation at start against a real NATS server that is slow to answer, and
replicas binding a work queue's shared consumer at the same moment."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from typing import Any

import nats
import pytest
from nats.aio.client import Client as NatsClient
from nats.js.api import AckPolicy, ConsumerConfig
from nats.js.errors import NotFoundError
from structlog.testing import capture_logs

from services.common.bus import (
    ROBOT_CONSUMER,
    ROBOT_STREAM,
    ROBOT_SUBJECT,
    TABLE_STREAM,
    bind_work_queue,
    delivery_subject,
    ensure_robot_stream,
    ensure_table_stream,
    reply_inbox_prefix,
)
from testing.servers import NatsServer
from testing.waiting import wait_for


async def test_stream_creation_outlasts_a_server_that_does_not_answer_in_time(
    nats_proc: NatsServer,
) -> None:
    # A replica starting while NATS is slow (the HA run saw a replica restarted) retries the
    # stream call instead of exiting.
    client = await nats.connect(nats_proc.url, allow_reconnect=False)
    try:
        js = client.jetstream(timeout=0.3)
        nats_proc.pause()
        try:
            with capture_logs() as logs:
                creation = asyncio.create_task(ensure_table_stream(js))
                await wait_for(
                    lambda: any(entry["event"] == "nats.stream_retry" for entry in logs),
                    timeout=5,
                    message="a retry after the first call timed out",
                )
                assert not creation.done()
        finally:
            nats_proc.resume()
        await asyncio.wait_for(creation, timeout=15)
        info = await client.jetstream().stream_info(TABLE_STREAM)
        assert info.config.name == TABLE_STREAM
        retry = next(entry for entry in logs if entry["event"] == "nats.stream_retry")
        assert retry["stream"] == TABLE_STREAM and retry["attempt"] == 1
    finally:
        await client.close()


async def test_stream_creation_gives_up_after_its_attempts(nats_proc: NatsServer) -> None:
    client = await nats.connect(nats_proc.url, allow_reconnect=False)
    try:
        js = client.jetstream(timeout=0.2)
        nats_proc.pause()
        try:
            with pytest.raises(nats.errors.TimeoutError):
                await asyncio.wait_for(ensure_table_stream(js), timeout=30)
        finally:
            nats_proc.resume()
    finally:
        await client.close()


async def test_replicas_binding_a_work_queue_together_all_bind_and_share_its_messages(
    nats_client: NatsClient, nats_connect: Callable[..., Awaitable[NatsClient]]
) -> None:
    # Replicas started together race to create the shared durable consumer: each finds none
    # and creates it. With an inbox of its own each, the last creation moves the consumer's
    # deliveries to its inbox (the others stay bound to theirs and never get a message), or
    # is refused ("consumer name already in use") and the replica exits: the HA run saw a
    # bots replica restarted. Forty rounds of four replicas (the bots service's own NATS
    # user) binding at once: every replica binds, to the subject the consumer delivers on.
    replicas = [await nats_connect("bots") for _ in range(4)]
    await ensure_robot_stream(replicas[0].jetstream())
    admin = nats_client.jetstream()
    received: list[tuple[int, bytes]] = []

    def collector(index: int) -> Callable[[Any], Awaitable[None]]:
        async def on_message(msg: Any) -> None:
            received.append((index, msg.data))
            await msg.ack()

        return on_message

    async def bind_all() -> list[Any]:
        return await asyncio.gather(
            *(
                bind_work_queue(
                    client.jetstream(),
                    ROBOT_SUBJECT,
                    ROBOT_STREAM,
                    ROBOT_CONSUMER,
                    collector(index),
                    ack_wait_s=30,
                    max_ack_pending=16,
                )
                for index, client in enumerate(replicas)
            )
        )

    for _ in range(40):
        with contextlib.suppress(NotFoundError):
            await admin.delete_consumer(ROBOT_STREAM, ROBOT_CONSUMER)
        subscriptions = await bind_all()
        info = await admin.consumer_info(ROBOT_STREAM, ROBOT_CONSUMER)
        assert [sub.subject for sub in subscriptions] == [info.config.deliver_subject] * 4
        for subscription in subscriptions:
            await subscription.unsubscribe()

    # The last round's replicas share one consumer: every message reaches exactly one.
    subscriptions = await bind_all()
    consumers = await admin.consumers_info(ROBOT_STREAM)
    assert [info.name for info in consumers] == [ROBOT_CONSUMER]
    sent = [f"turn {n}".encode() for n in range(40)]
    for data in sent:
        await admin.publish(ROBOT_SUBJECT, data)
    await wait_for(lambda: len(received) >= len(sent), timeout=10, message="every turn taken")
    assert sorted(data for _, data in received) == sorted(sent)  # each once, none twice
    assert {index for index, _ in received} == set(range(4))  # (3/4)^40: none left out
    for subscription in subscriptions:
        await subscription.unsubscribe()


async def test_a_consumer_of_an_earlier_release_is_moved_to_the_fixed_delivery_subject(
    nats_client: NatsClient, nats_connect: Callable[..., Awaitable[NatsClient]]
) -> None:
    # A release before the fixed delivery subject created the shared consumer with a random
    # inbox of its own (`_INBOX.<nuid>`). The bots service's NATS user may no longer
    # subscribe there: a replica that joined it as it is would be refused and wait for
    # nothing. Binding moves the consumer's deliveries to the fixed subject, keeping the
    # turns already waiting in the queue.
    admin = nats_client.jetstream()
    bots = await nats_connect("bots")
    await ensure_robot_stream(bots.jetstream())
    old_inbox = nats_client.new_inbox()
    assert not old_inbox.startswith(reply_inbox_prefix("bots"))
    await admin.add_consumer(
        ROBOT_STREAM,
        config=ConsumerConfig(
            durable_name=ROBOT_CONSUMER,
            deliver_subject=old_inbox,
            deliver_group=ROBOT_CONSUMER,
            filter_subject=ROBOT_SUBJECT,
            ack_policy=AckPolicy.EXPLICIT,
            ack_wait=30,
            max_ack_pending=16,
        ),
    )
    waiting = [f"turn {n}".encode() for n in range(3)]
    for data in waiting:
        await admin.publish(ROBOT_SUBJECT, data)
    received: list[bytes] = []

    async def on_message(msg: Any) -> None:
        received.append(msg.data)
        await msg.ack()

    async def bind() -> Any:
        return await bind_work_queue(
            bots.jetstream(),
            ROBOT_SUBJECT,
            ROBOT_STREAM,
            ROBOT_CONSUMER,
            on_message,
            ack_wait_s=30,
            max_ack_pending=16,
        )

    with capture_logs() as logs:
        subscription = await bind()
    info = await admin.consumer_info(ROBOT_STREAM, ROBOT_CONSUMER)
    assert info.config.deliver_subject == delivery_subject(ROBOT_CONSUMER) == subscription.subject
    moved = [entry for entry in logs if entry["event"] == "nats.consumer_delivery_moved"]
    assert [entry["was"] for entry in moved] == [old_inbox]
    await wait_for(lambda: sorted(received) == waiting, timeout=10, message="the waiting turns")
    later = b"turn 3"
    await admin.publish(ROBOT_SUBJECT, later)
    await wait_for(lambda: later in received, timeout=10, message="a turn after the move")
    await subscription.unsubscribe()

    # Bound again (a restart): already where it should be, nothing is moved.
    with capture_logs() as logs:
        again = await bind()
    assert not [entry for entry in logs if entry["event"] == "nats.consumer_delivery_moved"]
    await again.unsubscribe()
