"""Which clocks are announced to the timer, and why the others cannot be missed (issue 22)."""

from __future__ import annotations

from dominos.v1 import events_pb2
from hypothesis import example, given
from hypothesis import strategies as st

from services.common.clock_hints import (
    LOOKAHEAD_SLACK_MS,
    hint_horizon_ms,
    needs_hint,
    sweep_lookahead_ms,
    table_clock,
)


def test_a_clock_is_announced_only_when_it_ends_within_the_horizon() -> None:
    horizon = hint_horizon_ms(1000)
    assert horizon == 3000
    assert needs_hint(10_000 + horizon - 1, 10_000, 1000)
    assert not needs_hint(10_000 + horizon, 10_000, 1000)
    assert needs_hint(9_000, 10_000, 1000)  # already over (a relayed event): announced
    assert not needs_hint(0, 10_000, 1000)  # no clock runs


def test_default_turns_are_swept_and_short_clocks_announced() -> None:
    """With the 1 s sweep, a 45 s turn (R11) and a 5 s away turn (S3) need no message; a
    turn shortened to under 3 s by a disconnection (D3) gets one."""
    assert not needs_hint(45_000, 0, 1000)
    assert not needs_hint(5_000, 0, 1000)
    assert needs_hint(2_500, 0, 1000)


def test_the_announcement_carries_the_clock_and_no_state() -> None:
    event = events_pb2.TableEvent(
        table_id="t1",
        version=7,
        state=b"every hand",
        seat_holders=b"\x01" * 32,
        deadline_kind=events_pb2.DEADLINE_KIND_TURN,
        deadline_ms=1234,
        turn_number=5,
    )
    clock = events_pb2.TableClock.FromString(table_clock(event))
    assert (clock.table_id, clock.version, clock.deadline_ms, clock.turn_number) == (
        "t1",
        7,
        1234,
        5,
    )
    assert clock.deadline_kind == events_pb2.DEADLINE_KIND_TURN
    assert b"every hand" not in table_clock(event)


@given(
    period=st.integers(min_value=10, max_value=5_000),
    phase=st.integers(min_value=0, max_value=5_000),
    commit=st.integers(min_value=0, max_value=60_000),
    extra=st.integers(min_value=0, max_value=20_000),
    lags=st.lists(st.integers(min_value=0, max_value=LOOKAHEAD_SLACK_MS), min_size=1, max_size=3),
)
# A sweep on time, the next one 400 ms late: a window of one period and 250 ms would miss it.
@example(period=1000, phase=0, commit=0, extra=300, lags=[0, 400])
def test_a_clock_not_announced_is_in_some_sweeps_window_before_it_ends(
    period: int, phase: int, commit: int, extra: int, lags: list[int]
) -> None:
    """Sweeps start on a fixed cadence (``phase + k * period``), each up to the slack late;
    a sweep sees the rows committed before it starts and schedules those ending within
    the lookahead. A clock ending at or after the horizon is always seen by a sweep that
    starts after its commit and before it ends, with its end inside that sweep's window."""
    deadline = commit + hint_horizon_ms(period) + extra
    assert not needs_hint(deadline, commit, period)
    window = sweep_lookahead_ms(period)
    phase %= period  # sweeps ran before the commit too
    first = -(-(commit - phase) // period)  # the first whose nominal start follows the commit
    caught = False
    for k in range(first, first + (deadline - commit) // period + 2):
        start = phase + k * period + lags[k % len(lags)]
        if commit <= start <= deadline and deadline <= start + window:
            caught = True
            break
    assert caught
