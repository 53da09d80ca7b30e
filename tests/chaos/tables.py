"""Reading tables straight from their Redis hash (the truth), without any service.

The hash layout is ``services.table.store``'s: ``v`` the version, ``sn`` state chunks
``s0..``, ``ln`` log chunks ``l0..``. These helpers take the raw ``HGETALL`` result, so
sync (fuzz) and async (fault) tests share them.
"""

from __future__ import annotations

from typing import Any

from services.common.schema import table_key
from services.rules import LogEntry, TableState, decode_state
from services.table.command_log import decode_log

Fields = dict[bytes, bytes]


def state_of(fields: Fields) -> TableState | None:
    """The stored state of a table hash (None for a missing table)."""
    if b"v" not in fields:
        return None
    chunks = int(fields.get(b"sn", b"0"))
    return decode_state(b"".join(fields[f"s{i}".encode()] for i in range(chunks)))


def log_of(fields: Fields) -> list[LogEntry]:
    """The decoded command log of a table hash."""
    chunks = int(fields.get(b"ln", b"0"))
    return decode_log(b"".join(fields[f"l{i}".encode()] for i in range(chunks)))


def version_of(fields: Fields) -> int:
    """The stored version (0 for a missing table)."""
    return int(fields.get(b"v", b"0"))


def read_fields(redis: Any, table_id: str) -> Fields:
    """``HGETALL`` of a table with a sync ``redis.Redis``."""
    return dict(redis.hgetall(table_key(table_id)))


async def aread_fields(redis: Any, table_id: str) -> Fields:
    """``HGETALL`` of a table with a ``redis.asyncio.Redis``."""
    return dict(await redis.hgetall(table_key(table_id)))
