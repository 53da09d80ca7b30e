"""The NATS topology of the cluster, in one place: subjects, JetStream streams, consumers.

| name | kind | written by | read by |
|---|---|---|---|
| ``dominos.v1.table.<table_id>`` | subject, stream ``DOMINOS_TABLES`` | table service (from its outbox) | gateways (fan-out), timer (scheduling) |
| ``dominos.v1.timer.expired`` | subject, work-queue stream ``DOMINOS_TIMERS`` | timer service | table service, durable queue consumer ``dominos-table`` |

Table events carry the JetStream message id ``<table_id>:<version>``, so a re-publish inside
the stream's duplicate window is dropped by the server. Every service that needs a stream
creates or converges it at start (:func:`ensure_table_stream`, :func:`ensure_timer_stream`):
whichever starts first, the configuration is the same.
"""  # noqa: E501

from __future__ import annotations

from typing import Final

from nats.js import JetStreamContext
from nats.js.api import DiscardPolicy, RetentionPolicy, StorageType, StreamConfig

__all__ = [
    "TABLE_STREAM",
    "TABLE_SUBJECTS",
    "TABLE_SUBJECT_PREFIX",
    "TIMER_CONSUMER",
    "TIMER_STREAM",
    "TIMER_SUBJECT",
    "ensure_table_stream",
    "ensure_timer_stream",
    "message_id",
    "table_subject",
]

#: Every table's events: ``dominos.v1.table.<table_id>``.
TABLE_SUBJECT_PREFIX: Final = "dominos.v1.table."
TABLE_SUBJECTS: Final = TABLE_SUBJECT_PREFIX + ">"
TABLE_STREAM: Final = "DOMINOS_TABLES"
#: The timer's expiries, a work queue the table service consumes.
TIMER_SUBJECT: Final = "dominos.v1.timer.expired"
TIMER_STREAM: Final = "DOMINOS_TIMERS"
#: The table service's durable consumer (and queue group) on the timer stream.
TIMER_CONSUMER: Final = "dominos-table"


def table_subject(table_id: str) -> str:
    """The subject of a table's events."""
    return TABLE_SUBJECT_PREFIX + table_id


def message_id(table_id: str, version: int) -> str:
    """The JetStream de-duplication id of a table version."""
    return f"{table_id}:{version}"


async def _converge(js: JetStreamContext, config: StreamConfig) -> None:
    try:
        await js.add_stream(config)
    except Exception:  # already exists with another config: converge
        await js.update_stream(config)


async def ensure_table_stream(js: JetStreamContext, replicas: int = 1) -> None:
    """Create or update the table-events stream (idempotent; every table replica calls it):
    an hour of history, at most 512 versions per table, duplicates dropped for 2 minutes."""
    await _converge(
        js,
        StreamConfig(
            num_replicas=replicas,
            name=TABLE_STREAM,
            subjects=[TABLE_SUBJECTS],
            retention=RetentionPolicy.LIMITS,
            storage=StorageType.FILE,
            max_age=3600.0,
            max_msgs_per_subject=512,
            discard=DiscardPolicy.OLD,
            duplicate_window=120.0,
        ),
    )


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
