"""RecordCache: bounded, least recently used out first, never back to an older version."""

from __future__ import annotations

import pytest

from services.common.schema import TableRecord
from services.rules import Create, create
from services.table.record_cache import RecordCache


def _record(table_id: str, version: int) -> TableRecord:
    state = create(Create(table_id, "Ana"), 0).state
    return TableRecord(table_id=table_id, version=version, state=state)


def test_a_cached_record_is_returned_until_dropped() -> None:
    cache = RecordCache(4)
    cache.put(_record("a", 3))
    cached = cache.get("a")
    assert cached is not None and cached.version == 3
    cache.drop("a")
    assert cache.get("a") is None
    cache.drop("a")  # dropping twice is harmless


def test_an_older_version_never_replaces_a_newer_one() -> None:
    cache = RecordCache(4)
    cache.put(_record("a", 5))
    cache.put(_record("a", 4))  # a slower command's commit, finished after a newer one
    cached = cache.get("a")
    assert cached is not None and cached.version == 5
    cache.put(_record("a", 6))
    cached = cache.get("a")
    assert cached is not None and cached.version == 6


def test_the_least_recently_used_table_leaves_first_when_full() -> None:
    cache = RecordCache(2)
    cache.put(_record("a", 1))
    cache.put(_record("b", 1))
    assert cache.get("a") is not None  # "a" used: "b" is the least recently used now
    cache.put(_record("c", 1))
    assert len(cache) == 2
    assert cache.get("b") is None
    assert cache.get("a") is not None and cache.get("c") is not None


def test_a_cache_of_capacity_zero_keeps_nothing() -> None:
    cache = RecordCache(0)
    cache.put(_record("a", 1))
    assert cache.get("a") is None and len(cache) == 0
    with pytest.raises(ValueError):
        RecordCache(-1)
