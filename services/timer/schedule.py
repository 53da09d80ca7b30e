"""The timer service's in-process schedule: the next deadline of every table it knows.

One entry per table (a newer entry replaces the older one: a table has one running clock),
kept in a heap with lazy deletion, so adding, replacing and popping are O(log n). Pure:
time is passed in.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Deadline:
    """A table's running clock: when it ends, which clock it is, what it stands for."""

    table_id: str
    deadline_ms: int
    turn_number: int
    kind: int
    seat: int = 0
    attempt: int = 1
    #: The table version that announced the clock (0: read from the deadline index).
    version: int = 0


class Schedule:
    """Deadlines by table, earliest first."""

    def __init__(self) -> None:
        self._current: dict[str, Deadline] = {}
        self._heap: list[tuple[int, int, str, Deadline]] = []
        self._counter = 0

    def __len__(self) -> int:
        return len(self._current)

    def get(self, table_id: str) -> Deadline | None:
        """The table's scheduled deadline, if any."""
        return self._current.get(table_id)

    def put(self, deadline: Deadline, at_ms: int | None = None) -> bool:
        """Schedule ``deadline`` for its table at ``at_ms`` (default: the deadline itself),
        replacing any other entry of the table; returns whether it is now the earliest entry
        (the caller may need to wake its timer loop)."""
        self._current[deadline.table_id] = deadline
        self._counter += 1
        when = deadline.deadline_ms if at_ms is None else at_ms
        heapq.heappush(self._heap, (when, self._counter, deadline.table_id, deadline))
        return self._heap[0][3] is deadline

    def remove(self, table_id: str) -> None:
        """Forget the table's deadline (its clock stopped)."""
        self._current.pop(table_id, None)

    def next_due_ms(self) -> int | None:
        """When the earliest live entry is due, or None when the schedule is empty."""
        self._drop_stale()
        return self._heap[0][0] if self._heap else None

    def pop_due(self, now_ms: int) -> list[Deadline]:
        """Remove and return every live entry due at ``now_ms``, earliest first."""
        due: list[Deadline] = []
        while True:
            self._drop_stale()
            if not self._heap or self._heap[0][0] > now_ms:
                return due
            _, _, table_id, deadline = heapq.heappop(self._heap)
            del self._current[table_id]
            due.append(deadline)

    def _drop_stale(self) -> None:
        heap = self._heap
        while heap and self._current.get(heap[0][2]) is not heap[0][3]:
            heapq.heappop(heap)
