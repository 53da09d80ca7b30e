"""``services.common.stream_acks`` against a real nats-server with JetStream, as the table
service's NATS user: a publication is stored and acknowledged as ``js.publish`` did, a
repeat of a message id is a duplicate, a refusal, a missing stream and a silent subject
are the errors ``js.publish`` raised, and no reply waiter is left behind."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import nats.errors
import pytest
from nats.aio.client import Client as NatsClient
from nats.js.errors import BadRequestError, NoStreamResponseError

from services.common.bus import TABLE_STREAM, ensure_table_stream, message_id, table_subject
from services.common.stream_acks import Ack, StreamPublisher

Connect = Callable[..., Awaitable[NatsClient]]


async def test_a_publication_is_stored_once_per_message_id(
    nats_client: NatsClient, nats_connect: Connect
) -> None:
    await ensure_table_stream(nats_client.jetstream())
    publisher = StreamPublisher(await nats_connect("table"))
    subject, headers = table_subject("t1"), {"Nats-Msg-Id": message_id("t1", 1)}
    first = await publisher.publish(subject, b"event 1", headers=headers)
    again = await publisher.publish(subject, b"event 1", headers=headers)
    assert first == Ack(TABLE_STREAM, first.seq, duplicate=False)
    assert again == Ack(TABLE_STREAM, first.seq, duplicate=True)
    stored = await nats_client.jetstream().get_last_msg(TABLE_STREAM, subject)
    assert (stored.seq, stored.data) == (first.seq, b"event 1")
    assert not publisher._waiting


async def test_concurrent_publications_each_get_their_own_acknowledgement(
    nats_client: NatsClient, nats_connect: Connect
) -> None:
    await ensure_table_stream(nats_client.jetstream())
    publisher = StreamPublisher(await nats_connect("table"))
    acks = await asyncio.gather(
        *(
            publisher.publish(table_subject(f"t{i}"), b"%d" % i, headers={"Nats-Msg-Id": f"{i}"})
            for i in range(200)
        )
    )
    assert sorted(ack.seq for ack in acks) == list(range(1, 201))
    for i in (0, 117, 199):
        stored = await nats_client.jetstream().get_msg(TABLE_STREAM, acks[i].seq)
        assert (stored.subject, stored.data) == (table_subject(f"t{i}"), b"%d" % i)


async def test_a_refusal_and_a_missing_stream_raise_as_js_publish_did(
    nats_client: NatsClient, nats_connect: Connect
) -> None:
    await ensure_table_stream(nats_client.jetstream())
    publisher = StreamPublisher(await nats_connect("table"))
    with pytest.raises(BadRequestError):  # the stream is not the one the publisher expects
        await publisher.publish(
            table_subject("t1"), b"x", headers={"Nats-Expected-Stream": "ANOTHER"}
        )
    await nats_client.jetstream().delete_stream(TABLE_STREAM)
    with pytest.raises(NoStreamResponseError):
        await publisher.publish(table_subject("t1"), b"x")
    assert not publisher._waiting


async def test_an_unanswered_publication_times_out_and_leaves_nothing_waiting(
    nats_client: NatsClient, nats_connect: Connect
) -> None:
    # A core subscriber and no stream on the subject: nobody acknowledges, nobody says 503.
    silent: list[Any] = []

    async def keep(msg: Any) -> None:
        silent.append(msg)

    await nats_client.subscribe("dominos.v1.table.silent", cb=keep)
    await nats_client.flush()
    publisher = StreamPublisher(await nats_connect("table"), timeout_s=0.2)
    with pytest.raises(nats.errors.TimeoutError):
        await publisher.publish("dominos.v1.table.silent", b"x")
    assert len(silent) == 1 and silent[0].reply.startswith("_INBOX.")
    assert not publisher._waiting
