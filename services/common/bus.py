"""The NATS topology of the cluster, in one place: subjects, JetStream streams, consumers.

| name | kind | written by | read by |
|---|---|---|---|
| ``dominos.v1.table.<table_id>`` | subject, stream ``DOMINOS_TABLES`` | table service (from its outbox) | gateways (fan-out) |
| ``dominos.v1.timer.clock`` | core subject (``TableClock``: ids and the clock, no state) | table service, for clocks ending too soon for the timer's sweep | timer (scheduling) |
| ``dominos.v1.timer.expired`` | subject, work-queue stream ``DOMINOS_TIMERS`` | timer service | table service, durable queue consumer ``dominos-table`` |
| ``dominos.v1.robots.turn`` | subject, work-queue stream ``DOMINOS_ROBOTS`` | table service (``RobotTurn``: ids only, no state) | bots service, durable queue consumer ``dominos-bots`` |

Table events carry the JetStream message id ``<table_id>:<version>``, so a re-publish inside
the stream's duplicate window is dropped by the server. Every service that needs a stream
creates or converges it at start (:func:`ensure_table_stream`, :func:`ensure_timer_stream`):
whichever starts first, the configuration is the same.
"""  # noqa: E501

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, Final

import nats.errors
from nats.js import JetStreamContext
from nats.js.api import (
    AckPolicy,
    ConsumerConfig,
    DeliverPolicy,
    DiscardPolicy,
    RetentionPolicy,
    StorageType,
    StreamConfig,
)
from nats.js.errors import BadRequestError, NotFoundError, ServiceUnavailableError

from services.common.logging import get_logger

__all__ = [
    "CLOCK_SUBJECT",
    "CONSUMER_NAME_IN_USE",
    "ROBOT_CONSUMER",
    "ROBOT_STREAM",
    "ROBOT_SUBJECT",
    "TABLE_STREAM",
    "TABLE_SUBJECTS",
    "TABLE_SUBJECT_PREFIX",
    "TIMER_CONSUMER",
    "TIMER_STREAM",
    "TIMER_SUBJECT",
    "bind_work_queue",
    "delivery_subject",
    "ensure_robot_stream",
    "ensure_table_stream",
    "ensure_timer_stream",
    "message_id",
    "reply_inbox_prefix",
    "table_subject",
]

#: Every table's events: ``dominos.v1.table.<table_id>``.
TABLE_SUBJECT_PREFIX: Final = "dominos.v1.table."
TABLE_SUBJECTS: Final = TABLE_SUBJECT_PREFIX + ">"
TABLE_STREAM: Final = "DOMINOS_TABLES"
#: Clocks that end too soon for the timer's sweep of the deadline index (core NATS).
CLOCK_SUBJECT: Final = "dominos.v1.timer.clock"
#: The timer's expiries, a work queue the table service consumes.
TIMER_SUBJECT: Final = "dominos.v1.timer.expired"
TIMER_STREAM: Final = "DOMINOS_TIMERS"
#: The table service's durable consumer (and queue group) on the timer stream.
TIMER_CONSUMER: Final = "dominos-table"
#: The turns robots must play (issue 20), a work queue the bots service consumes.
ROBOT_SUBJECT: Final = "dominos.v1.robots.turn"
ROBOT_STREAM: Final = "DOMINOS_ROBOTS"
#: The bots service's durable consumer (and queue group) on the robots' stream.
ROBOT_CONSUMER: Final = "dominos-bots"


def table_subject(table_id: str) -> str:
    """The subject of a table's events."""
    return TABLE_SUBJECT_PREFIX + table_id


def message_id(table_id: str, version: int) -> str:
    """The JetStream de-duplication id of a table version."""
    return f"{table_id}:{version}"


log = get_logger(__name__)

#: Transient answers to a stream call at start: no reply in time, JetStream not ready yet.
_TRANSIENT: Final = (
    nats.errors.TimeoutError,
    nats.errors.NoRespondersError,
    ServiceUnavailableError,
)


async def _converge(
    js: JetStreamContext, config: StreamConfig, *, attempts: int = 5, backoff_s: float = 0.5
) -> None:
    """Create ``config``'s stream, or update it to ``config`` when it exists with another.

    A transient failure (a reply later than the context's timeout, JetStream not ready) is
    retried ``attempts`` times in all, ``backoff_s`` more between each: a NATS server slow
    under load at the moment a replica starts does not make the replica exit.
    """
    for attempt in range(1, attempts + 1):
        try:
            try:
                await js.add_stream(config)
            except BadRequestError:  # already exists with another config: converge
                await js.update_stream(config)
            return
        except _TRANSIENT as error:
            if attempt == attempts:
                raise
            log.warning("nats.stream_retry", stream=config.name, attempt=attempt, error=repr(error))
            await asyncio.sleep(backoff_s * attempt)


def table_stream_config(
    replicas: int = 1, name: str = TABLE_STREAM, subjects: tuple[str, ...] = (TABLE_SUBJECTS,)
) -> StreamConfig:
    """The table-events stream: an hour of history, at most 512 versions per table,
    duplicates dropped for 2 minutes (``name``/``subjects``: the load bench's floor pipeline
    stores its events the same way)."""
    return StreamConfig(
        num_replicas=replicas,
        name=name,
        subjects=list(subjects),
        retention=RetentionPolicy.LIMITS,
        storage=StorageType.FILE,
        max_age=3600.0,
        max_msgs_per_subject=512,
        discard=DiscardPolicy.OLD,
        duplicate_window=120.0,
    )


async def ensure_table_stream(js: JetStreamContext, replicas: int = 1) -> None:
    """Create or update the table-events stream (idempotent; every table replica calls it)."""
    await _converge(js, table_stream_config(replicas))


async def ensure_timer_stream(js: JetStreamContext, replicas: int = 1) -> None:
    """Create or update the timer work-queue stream (idempotent): an expiry lives 5 minutes
    at most, duplicates dropped for a minute."""
    await _converge(
        js,
        StreamConfig(
            num_replicas=replicas,
            name=TIMER_STREAM,
            subjects=[TIMER_SUBJECT],
            retention=RetentionPolicy.WORK_QUEUE,
            storage=StorageType.FILE,
            max_age=300.0,
            duplicate_window=60.0,
        ),
    )


async def ensure_robot_stream(js: JetStreamContext, replicas: int = 1) -> None:
    """Create or update the robots' work-queue stream (idempotent): a robot's turn is worth
    acting on for a minute at most (the table plays the seat itself after its short clock),
    duplicates dropped for a minute."""
    await _converge(
        js,
        StreamConfig(
            num_replicas=replicas,
            name=ROBOT_STREAM,
            subjects=[ROBOT_SUBJECT],
            retention=RetentionPolicy.WORK_QUEUE,
            storage=StorageType.FILE,
            max_age=60.0,
            duplicate_window=60.0,
        ),
    )


#: JetStream's error code when a consumer of that name is in use with another configuration.
CONSUMER_NAME_IN_USE: Final = 10013


def reply_inbox_prefix(identity: str) -> str:
    """The prefix of every reply inbox of a service connected as NATS user ``identity``
    (``_INBOX.<identity>``): its JetStream API answers and publish acknowledgements come back
    on ``_INBOX.<identity>.<nuid>...``. Each user may subscribe only under its own prefix
    (:mod:`services.common.cluster_auth.nats`), so no service reads another's replies."""
    return f"_INBOX.{identity}"


def delivery_subject(durable: str) -> str:
    """Where the shared consumer ``durable`` pushes its messages: one fixed subject for every
    replica; only the NATS user of the consumer's service may subscribe to it."""
    return f"_INBOX.dominos.work.{durable}"


async def bind_work_queue(
    js: JetStreamContext,
    subject: str,
    stream: str,
    durable: str,
    on_message: Callable[[Any], Awaitable[None]],
    *,
    ack_wait_s: float,
    max_ack_pending: int,
    attempts: int = 3,
) -> Any:
    """Bind a replica to a work queue's shared durable consumer (``durable``, also the queue
    group): each message goes to one replica, is acknowledged explicitly (``manual_ack``) and
    redelivered when not acknowledged within ``ack_wait_s``. Returns the subscription.

    Replicas starting together race to create the consumer: each looks it up, finds none and
    creates it. Every replica asks for the same configuration, delivery subject included
    (:func:`delivery_subject`; left to the client, each would pick its own inbox and the
    last creation would move the consumer's deliveries there, away from the replicas that
    created it before: they would stay bound and never get a message), so a creation that
    comes second changes nothing. A creation refused because the consumer is in use
    (:data:`CONSUMER_NAME_IN_USE`) is retried (``attempts`` in all): the next lookup finds
    it and joins its queue group. Any other refusal is raised.

    A consumer created by a release before the fixed subject delivers on a random
    ``_INBOX.<nuid>``, which the service's NATS user may no longer subscribe to (the server
    would refuse the subscription and the replica would wait for nothing): its delivery
    subject is moved to :func:`delivery_subject` first (its other settings, its position in
    the stream and the messages waiting are kept; a message delivered to the old subject and
    not acknowledged is redelivered after ``ack_wait_s``).
    """
    await _move_delivery(js, stream, durable)
    attempt = 1
    while True:
        try:
            return await js.subscribe(
                subject,
                queue=durable,
                durable=durable,
                stream=stream,
                cb=on_message,
                manual_ack=True,
                config=ConsumerConfig(
                    deliver_subject=delivery_subject(durable),
                    ack_policy=AckPolicy.EXPLICIT,
                    ack_wait=ack_wait_s,
                    deliver_policy=DeliverPolicy.ALL,
                    max_ack_pending=max_ack_pending,
                ),
            )
        except BadRequestError as error:
            if error.err_code != CONSUMER_NAME_IN_USE or attempt == attempts:
                raise
            log.info("nats.consumer_bind_retry", consumer=durable, attempt=attempt)
            attempt += 1


async def _move_delivery(js: JetStreamContext, stream: str, durable: str) -> None:
    """Point an existing consumer ``durable`` at :func:`delivery_subject` when it pushes
    elsewhere (see :func:`bind_work_queue`); nothing when it is missing or already there."""
    try:
        info = await js.consumer_info(stream, durable)
    except NotFoundError:
        return
    wanted = delivery_subject(durable)
    if info.config.deliver_subject in (None, wanted):
        return
    log.info(
        "nats.consumer_delivery_moved",
        consumer=durable,
        was=info.config.deliver_subject,
        now=wanted,
    )
    await js.add_consumer(stream, config=info.config.evolve(deliver_subject=wanted))
