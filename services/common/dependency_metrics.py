"""How long the services wait for Redis and NATS, and what waits in JetStream.

Errors alone (``dominos_dependency_errors_total``) tell an operator that Redis or NATS is
down, not that it is slow; these say how slow, from the caller's side:

- ``dominos_redis_command_seconds{command}``: one Redis command or one pipeline
  (``command="PIPELINE"``), from sending it to its answer (a busy connection pool included).
  ``command`` is the command's name (``EVALSHA`` is a script call), never a key.
- ``dominos_nats_publish_seconds{stream}``: a JetStream publication, until the server's
  acknowledgement (the stream stored it).
- ``dominos_jetstream_consumer_pending{stream, consumer}`` and
  ``dominos_jetstream_consumer_ack_pending{stream, consumer}``: a work queue's messages not
  yet delivered, and delivered but not yet acknowledged, as the server reports them (each
  replica bound to the queue samples the same numbers: aggregate with ``max``).

Every label set known in advance exists from the start, so a first burst shows in
``rate()``.
"""

from __future__ import annotations

import asyncio
import functools
import time
from collections.abc import Awaitable, Callable
from typing import Any, Final, TypeVar

from prometheus_client import Gauge, Histogram

__all__ = [
    "JETSTREAM_ACK_PENDING",
    "JETSTREAM_PENDING",
    "NATS_PUBLISH_SECONDS",
    "REDIS_COMMAND_SECONDS",
    "command_label",
    "redis_command_histogram",
    "sample_consumer",
    "timed_publish",
    "watch_consumer",
]

#: From a quarter of a millisecond (a local Redis) to the 5 s socket timeout.
_BUCKETS: Final = (
    0.00025,
    0.0005,
    0.001,
    0.0025,
    0.005,
    0.01,
    0.025,
    0.05,
    0.1,
    0.25,
    0.5,
    1.0,
    2.5,
    5.0,
)

REDIS_COMMAND_SECONDS: Final = Histogram(
    "dominos_redis_command_seconds",
    "Time from sending a Redis command (or a pipeline: PIPELINE) to its answer, by command.",
    ["command"],
    buckets=_BUCKETS,
)
NATS_PUBLISH_SECONDS: Final = Histogram(
    "dominos_nats_publish_seconds",
    "Time from a JetStream publication to the server's acknowledgement, by stream.",
    ["stream"],
    buckets=_BUCKETS,
)
JETSTREAM_PENDING: Final = Gauge(
    "dominos_jetstream_consumer_pending",
    "Messages of a work queue not yet delivered to a replica (as the server reports).",
    ["stream", "consumer"],
)
JETSTREAM_ACK_PENDING: Final = Gauge(
    "dominos_jetstream_consumer_ack_pending",
    "Messages of a work queue delivered and not yet acknowledged (as the server reports).",
    ["stream", "consumer"],
)

#: Commands whose series exist from the start (what every service sends most).
_KNOWN_COMMANDS: Final = ("EVALSHA", "PIPELINE")
for _command in _KNOWN_COMMANDS:
    REDIS_COMMAND_SECONDS.labels(_command)

#: A command label is at most this long and made of letters (else ``OTHER``): the label set
#: stays the set of command names the code sends.
_MAX_COMMAND: Final = 24


def command_label(name: Any) -> str:
    """The ``command`` label of a Redis command's first argument (``b"evalsha"`` →
    ``EVALSHA``); anything that is not a plain command name is ``OTHER``."""
    if isinstance(name, (bytes, bytearray, memoryview)):
        name = bytes(name).decode("ascii", "replace")
    text = str(name).upper()
    if not text or len(text) > _MAX_COMMAND or not text.replace("_", "").isalpha():
        return "OTHER"
    return text


#: Each command name's bound histogram child, by the name as the client sent it (the set of
#: names is the code's own; past :data:`_MAX_CACHED` names a child is looked up each time).
_COMMAND_CHILDREN: dict[Any, Any] = {}
_MAX_CACHED: Final = 64


def redis_command_histogram(name: Any) -> Any:
    """The ``dominos_redis_command_seconds`` child of the command ``name`` (the first
    argument sent: ``"EVALSHA"``, ``b"hmget"``), labelled by :func:`command_label`, bound
    once per name instead of at every command."""
    if not isinstance(name, (str, bytes)):  # a bytearray or memoryview is not hashable
        return REDIS_COMMAND_SECONDS.labels(command_label(name))
    child = _COMMAND_CHILDREN.get(name)
    if child is None:
        child = REDIS_COMMAND_SECONDS.labels(command_label(name))
        if len(_COMMAND_CHILDREN) < _MAX_CACHED:
            _COMMAND_CHILDREN[name] = child
    return child


_T = TypeVar("_T")


async def timed_publish(stream: str, publish: Awaitable[_T]) -> _T:
    """Await a JetStream ``publish`` (its acknowledgement) and record how long it took as
    ``stream``'s (failures included: a timeout is a slow publication too)."""
    started = time.perf_counter()
    try:
        return await publish
    finally:
        _publish_histogram(stream).observe(time.perf_counter() - started)


@functools.lru_cache(maxsize=16)
def _publish_histogram(stream: str) -> Any:
    """``dominos_nats_publish_seconds`` of ``stream``, bound once per stream."""
    return NATS_PUBLISH_SECONDS.labels(stream)


def watch_consumer(
    subscription: Any, stream: str, consumer: str, *, on_error: Callable[[], object] | None = None
) -> asyncio.Task[None]:
    """Start :func:`sample_consumer` for a bound work-queue subscription (nats-py's
    ``consumer_info``); cancel the task to stop it."""
    return asyncio.create_task(
        sample_consumer(subscription.consumer_info, stream, consumer, on_error=on_error),
        name=f"consumer-sampler-{consumer}",
    )


async def sample_consumer(
    info: Callable[[], Awaitable[Any]],
    stream: str,
    consumer: str,
    *,
    interval_s: float = 5.0,
    on_error: Callable[[], object] | None = None,
) -> None:
    """Forever: ask the server for the consumer's state (``info()``: a subscription's
    ``consumer_info``) and publish its pending and ack-pending counts. A failed request
    calls ``on_error`` and keeps the last values."""
    pending = JETSTREAM_PENDING.labels(stream, consumer)
    ack_pending = JETSTREAM_ACK_PENDING.labels(stream, consumer)
    while True:
        try:
            state = await info()
            pending.set(int(state.num_pending or 0))
            ack_pending.set(int(state.num_ack_pending or 0))
        except asyncio.CancelledError:
            raise
        except Exception:
            if on_error is not None:
                on_error()
        await asyncio.sleep(interval_s)
