"""Which clocks the timer service must be told about, and how far ahead it sweeps.

The table service commits every running clock into the Redis deadline index with the state.
The timer service sweeps that index every ``sweep_ms`` (``DOMINOS_TIMER_SWEEP_SECONDS``) on
a fixed cadence and schedules the clocks ending within :func:`sweep_lookahead_ms` of the
sweep: consecutive sweeps' windows overlap by more than ``sweep_ms``, so every clock is in
memory before it ends, to the millisecond, as long as a sweep runs after its commit and
before it ends. A clock ending sooner than :func:`hint_horizon_ms` after its commit might
not meet such a sweep: for those only, the table service publishes a ``TableClock`` on
``dominos.v1.timer.clock`` and every timer replica schedules it from the message. With the
default one-second sweep, turns (45 s) and away turns (5 s) are found by the sweep; the
message carries short clocks (tests, or clocks shortened by a disconnection).

So the timer reads no table event: it never receives a hand, and a move costs it nothing
until its clock is about to end. Both services read the same setting (one ConfigMap).
"""

from __future__ import annotations

from typing import Final

from dominos.v1 import events_pb2

__all__ = ["hint_horizon_ms", "needs_hint", "sweep_lookahead_ms", "table_clock"]

#: How late a sweep may start (event loop lag, a slow Redis) before a clock could end
#: between two sweeps' windows unseen.
LOOKAHEAD_SLACK_MS: Final = 500
#: How late the first sweep after a commit may start before a clock not announced by a
#: message would be found after it ended.
HINT_SLACK_MS: Final = 1000


def sweep_lookahead_ms(sweep_ms: int) -> int:
    """How far past its start a sweep schedules the clocks it reads (two periods and slack:
    a sweep that starts up to ``sweep_ms + LOOKAHEAD_SLACK_MS`` late still leaves no gap)."""
    return 2 * sweep_ms + LOOKAHEAD_SLACK_MS


def hint_horizon_ms(sweep_ms: int) -> int:
    """Clocks ending sooner than this after their commit are announced by a ``TableClock``."""
    return 2 * sweep_ms + HINT_SLACK_MS


def needs_hint(deadline_ms: int, now_ms: int, sweep_ms: int) -> bool:
    """Whether a clock ending at ``deadline_ms`` (0: none runs), committed at ``now_ms``,
    must be announced: it might end before a sweep would find it."""
    return bool(deadline_ms) and deadline_ms - now_ms < hint_horizon_ms(sweep_ms)


def table_clock(event: events_pb2.TableEvent) -> bytes:
    """The serialised ``TableClock`` of a table event's running clock."""
    return events_pb2.TableClock(
        table_id=event.table_id,
        version=event.version,
        deadline_kind=event.deadline_kind,
        deadline_ms=event.deadline_ms,
        turn_number=event.turn_number,
    ).SerializeToString()
