"""Overdue deadlines (issue 21): what the timer reports behind DominosDeadlinesOverdue."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from services.timer.service import OVERDUE_GRACE_MS, Overdue


def test_only_rows_past_the_grace_count_and_the_oldest_is_kept() -> None:
    now = 1_000_000
    overdue = Overdue(now - OVERDUE_GRACE_MS)
    overdue.count([("a", now - 500), ("b", now - 45_000), ("c", now + 3_000)])
    overdue.count([("d", now - OVERDUE_GRACE_MS - 1), ("e", now - OVERDUE_GRACE_MS)])
    assert overdue.deadlines == 2  # b and d; a and e are within the grace, c is not due
    assert overdue.oldest_age_ms(now) == 45_000


def test_nothing_overdue_is_age_zero() -> None:
    overdue = Overdue(10_000)
    overdue.count([("a", 10_000), ("b", 20_000)])
    assert overdue.deadlines == 0
    assert overdue.oldest_age_ms(30_000) == 0


@given(st.lists(st.integers(min_value=0, max_value=10**7)), st.integers(0, 10**7))
def test_the_count_and_age_match_a_direct_computation(deadlines: list[int], now: int) -> None:
    overdue = Overdue(now - OVERDUE_GRACE_MS)
    overdue.count([(str(i), d) for i, d in enumerate(deadlines)])
    late = [d for d in deadlines if d < now - OVERDUE_GRACE_MS]
    assert overdue.deadlines == len(late)
    assert overdue.oldest_age_ms(now) == (now - min(late) if late else 0)
