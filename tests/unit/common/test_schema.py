"""The Redis schema (``services.common.schema``): every atomic step touches one hash slot
(Redis Cluster), the shards are balanced, and the table record reads back what a commit
wrote."""

from __future__ import annotations

import secrets
from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st
from redis.crc import key_slot

from services.common import credentials, schema
from services.common.schema import (
    LOAD_FIELDS,
    PHASES,
    SHARDS,
    Field,
    RecordChanges,
    RequestRecord,
    SeatChange,
    SeatRecord,
    TableRecord,
)
from services.rules import Create, Timing, create, encode_state
from services.timer.membership import ALL_SHARDS, shares

TABLE_IDS = st.text(
    alphabet="ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-",
    min_size=22,
    max_size=22,
)


def _slot(key: str) -> int:
    return int(key_slot(key.encode()))


@given(table_id=TABLE_IDS)
def test_every_key_of_a_table_and_its_shards_indexes_share_one_slot(table_id: str) -> None:
    shard = schema.shard_of(table_id)
    keys = [
        schema.table_key(table_id),
        schema.outbox_key(table_id),
        schema.table_limit_key(table_id, "lobby"),
        schema.timer_lease_key(table_id),
        schema.presence_leases_key(table_id),
        schema.deadlines_key(shard),
        schema.pending_key(shard),
        schema.presence_key(shard),
        *(schema.phase_key(shard, phase) for phase in PHASES),
    ]
    assert len({_slot(key) for key in keys}) == 1


def test_a_code_and_a_create_request_drawn_in_a_shard_share_its_tables_slot() -> None:
    for _ in range(20):
        request_hash = secrets.token_hex(8)
        shard = schema.shard_of(request_hash)
        table_id = next(
            i for i in iter(credentials.new_table_id, "") if schema.shard_of(i) == shard
        )
        code = next(c for c in iter(credentials.new_code, "") if schema.shard_of(c) == shard)
        keys = [schema.table_key(table_id), schema.code_key(code), schema.create_key(request_hash)]
        assert len({_slot(key) for key in keys}) == 1


def test_a_clients_two_join_budgets_share_one_slot() -> None:
    address = "ipv6:2001:db8:1:2::"
    keys = [
        schema.join_failures_key(address),
        schema.connection_failures_key(address, "gw-1/ipv6:[2001:db8:1:2::9]:4000"),
    ]
    assert len({_slot(key) for key in keys}) == 1


def test_random_tables_spread_evenly_over_the_shards() -> None:
    counts = Counter(schema.shard_of(credentials.new_table_id()) for _ in range(SHARDS * 200))
    assert set(counts) == set(range(SHARDS))
    assert min(counts.values()) > 120 and max(counts.values()) < 280  # 200 each on average


def test_the_shard_tags_name_distinct_slots_spread_over_three_nodes() -> None:
    slots = sorted({_slot(schema.deadlines_key(shard)) for shard in range(SHARDS)})
    assert len(slots) == SHARDS
    thirds = Counter(slot * 3 // 16384 for slot in slots)  # redis-cli's even split of slots
    assert min(thirds.values()) >= SHARDS // 6


def test_the_record_reads_back_what_a_commit_writes() -> None:
    state = create(Create("t" * 22, "Ana", 100, Timing(45_000, 5_000, 10_000)), 1_000).state
    joined = RequestRecord(b"h" * 8, b"f" * 8, 2, 1)
    changes = RecordChanges(
        seats={
            0: SeatChange(nonce="n0", digest=b"d" * 32),
            1: SeatChange(
                nonce="n1", digest=b"e" * 32, requests=(RequestRecord(b"r" * 8, b"p" * 8, 3),)
            ),
        },
        joins=(joined,),
        code="ABCDEFGHJK",
    )
    raw = dict(changes.fields()) | dict(schema.clock_fields(7, 1, 5_000, 1))
    data = encode_state(state)
    raw |= {Field.VERSION: "1", Field.STATE_CHUNKS: str(-(-len(data) // 64))}
    raw |= {Field.state_chunk(i // 64): data[i : i + 64] for i in range(0, len(data), 64)}
    as_stored = {
        name: value if isinstance(value, bytes) else str(value).encode()
        for name, value in raw.items()
    }
    record = TableRecord.read(state.table_id, [as_stored.get(name) for name in LOAD_FIELDS])
    assert record is not None
    assert (record.version, record.state, record.code) == (1, state, "ABCDEFGHJK")
    assert (record.turn_number, record.deadline_kind, record.last_time_ms) == (7, 1, 5_000)
    assert record.seats[0].nonce == "n0" and record.seats[0].digest == b"d" * 32
    assert record.seats[1].requests == (RequestRecord(b"r" * 8, b"p" * 8, 3),)
    assert record.seats[2].digest is None and record.joins == (joined,)
    assert TableRecord.read(state.table_id, [None] * len(LOAD_FIELDS)) is None


def test_lua_takes_field_names_from_the_schema_and_refuses_unknown_ones() -> None:
    assert schema.lua("HGET T '$TURN' '$STATE' .. 1") == "HGET T 'tn' 's' .. 1"
    with pytest.raises(KeyError):
        schema.lua("'$NOT_A_FIELD'")


@pytest.mark.parametrize("replicas", [1, 2, 3, 5])
def test_live_timer_replicas_own_disjoint_shares_of_every_shard(replicas: int) -> None:
    members = [f"timer-{i}" for i in range(replicas)]
    owned = [set(shares(members, me)) for me in members]
    assert set().union(*owned) == set(range(SHARDS))
    assert sum(len(share) for share in owned) == SHARDS  # disjoint
    assert max(map(len, owned)) - min(map(len, owned)) <= 1
    assert shares(members, "not-yet-listed") == ALL_SHARDS


def test_a_seat_change_over_a_record_keeps_what_it_does_not_change() -> None:
    old = SeatRecord(nonce="n1", digest=b"d1", requests=(RequestRecord(b"r", b"f", 3, 1),))
    assert SeatChange().over(old) == old
    assert SeatChange(digest=b"d2").over(old) == SeatRecord("n1", b"d2", old.requests)
    assert SeatChange(nonce="n2", requests=()).over(old) == SeatRecord("n2", b"d1", ())
    assert SeatChange(nonce="n3", digest=b"d3").over(None) == SeatRecord("n3", b"d3", ())
