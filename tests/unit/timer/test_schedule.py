"""The timer service's in-process schedule (pure)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from services.timer.schedule import Deadline, Schedule


def d(table: str, at: int, turn: int = 1) -> Deadline:
    return Deadline(table, at, turn, 1)


def test_due_entries_come_out_earliest_first_and_only_when_due() -> None:
    s = Schedule()
    s.put(d("b", 200))
    s.put(d("a", 100))
    s.put(d("c", 300))
    assert s.pop_due(99) == []
    assert [x.table_id for x in s.pop_due(250)] == ["a", "b"]
    assert s.next_due_ms() == 300
    assert len(s) == 1


def test_a_newer_clock_replaces_the_tables_older_one() -> None:
    s = Schedule()
    s.put(d("a", 100, turn=1))
    s.put(d("a", 500, turn=2))
    assert s.pop_due(400) == []
    assert s.pop_due(500) == [d("a", 500, turn=2)]
    assert s.next_due_ms() is None


def test_a_removed_table_never_fires() -> None:
    s = Schedule()
    s.put(d("a", 100))
    s.remove("a")
    assert s.pop_due(10_000) == [] and len(s) == 0


def test_put_reports_a_new_earliest_entry_so_the_loop_can_wake() -> None:
    s = Schedule()
    assert s.put(d("a", 500))
    assert not s.put(d("b", 900))
    assert s.put(d("c", 100))


def test_a_retry_can_be_scheduled_later_than_its_deadline() -> None:
    s = Schedule()
    s.put(d("a", 100), at_ms=400)
    assert s.pop_due(300) == []
    assert s.pop_due(400) == [d("a", 100)]


@given(st.lists(st.tuples(st.sampled_from("abcdef"), st.integers(0, 1000)), max_size=60))
def test_popping_everything_yields_each_tables_last_deadline_in_order(
    puts: list[tuple[str, int]],
) -> None:
    s = Schedule()
    last: dict[str, int] = {}
    for table, at in puts:
        s.put(d(table, at))
        last[table] = at
    out = s.pop_due(10_000)
    assert [x.deadline_ms for x in out] == sorted(x.deadline_ms for x in out)
    assert {(x.table_id, x.deadline_ms) for x in out} == set(last.items())
    assert len(out) == len(last)
