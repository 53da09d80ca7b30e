"""Dependency metrics (issue 21): bounded command labels, publication timing, and the work
queue sampler."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

import pytest

from services.common.dependency_metrics import (
    JETSTREAM_ACK_PENDING,
    JETSTREAM_PENDING,
    NATS_PUBLISH_SECONDS,
    REDIS_COMMAND_SECONDS,
    command_label,
    redis_command_histogram,
    sample_consumer,
    timed_publish,
)
from testing.waiting import wait_for


@pytest.mark.parametrize(
    ("name", "label"),
    [
        (b"evalsha", "EVALSHA"),
        ("zrangebyscore", "ZRANGEBYSCORE"),
        (b"CLIENT_SETINFO", "CLIENT_SETINFO"),
        ("", "OTHER"),
        ("dominos:{s01}:table:abc", "OTHER"),  # a key never becomes a label
        ("x" * 40, "OTHER"),
        (7, "OTHER"),
    ],
)
def test_a_command_label_is_a_command_name_or_other(name: Any, label: str) -> None:
    assert command_label(name) == label


@pytest.mark.parametrize(
    "name", [b"evalsha", "EVALSHA", "hmget", "dominos:{s01}:table:abc", 7, bytearray(b"get")]
)
def test_a_command_is_timed_in_its_labelled_series_bound_once(name: Any) -> None:
    """The bound child is the labelled series (a key or a non-name still lands in OTHER, an
    unhashable name is labelled too), and the same object at every command."""
    child = redis_command_histogram(name)
    assert child is REDIS_COMMAND_SECONDS.labels(command_label(name))
    assert redis_command_histogram(name) is child


def _count(stream: str) -> float:
    for metric in NATS_PUBLISH_SECONDS.collect():
        for sample in metric.samples:
            if sample.name.endswith("_count") and sample.labels == {"stream": stream}:
                return sample.value
    return 0.0


async def test_a_failed_publication_is_timed_too() -> None:
    async def fails() -> None:
        raise TimeoutError

    before = _count("TEST_STREAM")
    with pytest.raises(TimeoutError):
        await timed_publish("TEST_STREAM", fails())
    assert await timed_publish("TEST_STREAM", asyncio.sleep(0, result="ack")) == "ack"
    assert _count("TEST_STREAM") == before + 2


async def test_the_sampler_publishes_pending_counts_and_keeps_them_through_a_failure() -> None:
    answers: list[Any] = [
        SimpleNamespace(num_pending=12, num_ack_pending=3),
        RuntimeError("no responders"),
        SimpleNamespace(num_pending=0, num_ack_pending=None),
    ]
    errors: list[int] = []
    asked = 0

    async def info() -> Any:
        nonlocal asked
        answer = answers[min(asked, len(answers) - 1)]
        asked += 1
        if isinstance(answer, Exception):
            raise answer
        return answer

    pending = JETSTREAM_PENDING.labels("S", "c")
    unacked = JETSTREAM_ACK_PENDING.labels("S", "c")
    task = asyncio.create_task(
        sample_consumer(info, "S", "c", interval_s=0.01, on_error=lambda: errors.append(1))
    )
    try:
        await wait_for(lambda: pending._value.get() == 12, timeout=5)
        await wait_for(lambda: errors == [1], timeout=5)
        assert pending._value.get() == 12  # the failure kept the last values
        await wait_for(lambda: asked >= 3, timeout=5)
        await wait_for(lambda: pending._value.get() == 0, timeout=5)
        assert unacked._value.get() == 0
    finally:
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
