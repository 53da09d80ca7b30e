"""The last committed record of the tables a replica served recently (issue 22).

A command's loop starts from the cached record instead of reading the table from Redis: the
commit's compare-and-set on the version still decides, so a stale record (another replica
wrote since, the table expired) costs one refused commit and a fresh read, never a wrong
write. The gateway routes a table's calls to one replica (``common.table_routing``), so the
cache is nearly always current. Bounded: the least recently used table leaves first.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Final

from services.common.schema import TableRecord

#: Tables a replica keeps (a record is a few KB: ~100 MB at most).
CACHED_TABLES: Final = 20_000


class RecordCache:
    """Table id → its last record this replica committed or read, least recently used
    first out; never replaces a record by an older version of it."""

    def __init__(self, capacity: int = CACHED_TABLES) -> None:
        if capacity < 0:
            raise ValueError("capacity must be >= 0")
        self.capacity = capacity
        self._records: OrderedDict[str, TableRecord] = OrderedDict()

    def __len__(self) -> int:
        return len(self._records)

    def get(self, table_id: str) -> TableRecord | None:
        """The cached record of the table (``None``: none)."""
        record = self._records.get(table_id)
        if record is not None:
            self._records.move_to_end(table_id)
        return record

    def put(self, record: TableRecord) -> None:
        """Remember ``record`` unless a newer version of the table is cached."""
        if self.capacity == 0:
            return
        cached = self._records.get(record.table_id)
        if cached is not None and cached.version > record.version:
            return
        self._records[record.table_id] = record
        self._records.move_to_end(record.table_id)
        if len(self._records) > self.capacity:
            self._records.popitem(last=False)

    def drop(self, table_id: str) -> None:
        """Forget the table (its cached record proved stale)."""
        self._records.pop(table_id, None)
