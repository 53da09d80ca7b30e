"""Move the Redis data of release 0.1 to the sharded key layout of 0.2 (single Redis only).

0.1 kept a table under ``dominos:{<table id>}:...`` and its index entries in global keys
(``dominos:deadlines``, ``dominos:outbox:pending``, ``dominos:phase:<phase>``,
``dominos:presence``, ``dominos:code:<CODE>``, ``dominos:create:<rid>``). 0.2 keeps them
under the table's shard (``services/common/schema.py``). The table hash itself has the same
fields; 0.2 adds one (``av``) and reads its absence as "the current version".

Run it with every service stopped, against the single Redis of 0.1, as ``admin``::

    python -m tools.migrate_keys redis://admin:<password>@redis-master:6379/0

Each key is renamed (``RENAME`` keeps its expiry) and each index entry moved with its score,
one table at a time in a ``MULTI``; a second run finds nothing left to move. Budget counters
of 0.1 (``dominos:limit:*``, ``dominos:joinfail:*``, ``dominos:lobbies:*``, ``dominos:{T}:
limit:*``) are left to expire (an hour at most): they only reset the budgets they counted.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import redis

from services.common import schema


def _phase_index(phase: str) -> Callable[[int], str]:
    return lambda shard: schema.phase_key(shard, phase)


#: 0.1's global indexes whose members are table ids, and their 0.2 counterparts by shard.
_TABLE_INDEXES: dict[str, Callable[[int], str]] = {
    "dominos:deadlines": schema.deadlines_key,
    "dominos:outbox:pending": schema.pending_key,
    **{f"dominos:phase:{phase}": _phase_index(phase) for phase in schema.PHASES},
}
#: 0.1's per-table keys: suffix after ``dominos:{<T>}:`` -> the 0.2 key of the table.
_TABLE_KEYS = {
    "table": schema.table_key,
    "outbox": schema.outbox_key,
    "timerlease": schema.timer_lease_key,
    "leases": schema.presence_leases_key,
}


@dataclass
class Moved:
    """What one run moved."""

    tables: int = 0
    keys: int = 0
    index_entries: int = 0
    codes: int = 0
    creates: int = 0
    leases: int = 0


def _old_tables(client: Any) -> Iterator[str]:
    """The table ids of 0.1's table hashes ``dominos:{<T>}:table``."""
    for raw in client.scan_iter(match="dominos:{*}:table", count=1000):
        key = raw.decode()
        inner = key[len("dominos:{") : -len("}:table")]
        if not inner.startswith("s") or len(inner) != 3:  # 0.2's own tags are {sNN}
            yield inner


def migrate(client: Any) -> Moved:
    """Move every 0.1 key of ``client``'s Redis to the 0.2 layout; what was moved."""
    moved = Moved()
    for table_id in list(_old_tables(client)):
        shard = schema.shard_of(table_id)
        with client.pipeline(transaction=True) as pipe:
            for suffix, new_key in _TABLE_KEYS.items():
                old = f"dominos:{{{table_id}}}:{suffix}"
                if client.exists(old):
                    pipe.rename(old, new_key(table_id))
                    moved.keys += 1
            for old_index, new_index in _TABLE_INDEXES.items():
                score = client.zscore(old_index, table_id)
                if score is not None:
                    pipe.zadd(new_index(shard), {table_id: score})
                    pipe.zrem(old_index, table_id)
                    moved.index_entries += 1
            pipe.execute()
        moved.tables += 1
    for raw in list(client.scan_iter(match="dominos:code:*", count=1000)):
        code = raw.decode().removeprefix("dominos:code:")
        client.rename(raw, schema.code_key(code))
        moved.codes += 1
    for raw in list(client.scan_iter(match="dominos:create:*", count=1000)):
        request_hash = raw.decode().removeprefix("dominos:create:")
        client.rename(raw, schema.create_key(request_hash))
        moved.creates += 1
    for member, score in client.zrange("dominos:presence", 0, -1, withscores=True):
        table_id = member.decode().rpartition(":")[0]
        client.zadd(schema.presence_key(schema.shard_of(table_id)), {member: score})
        moved.leases += 1
    client.delete("dominos:presence")
    return moved


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("redis_url", help="redis://admin:<password>@host:6379/0 (single Redis)")
    args = parser.parse_args(argv)
    client = redis.Redis.from_url(args.redis_url)
    moved = migrate(client)
    print(
        f"moved {moved.tables} tables ({moved.keys} keys, {moved.index_entries} index entries),"
        f" {moved.codes} codes, {moved.creates} create requests, {moved.leases} presence leases"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
