"""The gateway's presence leases: renewal a slice at a time keeps them alive; release is the
holder's.

The gateways' side runs as the ``gateway`` Redis user, the timer's sweep as ``timer`` (their
production ACLs); the assertions read as ``admin``."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from services.common.presence import PresenceLeases
from services.common.schema import SHARDS, presence_key, presence_leases_key, shard_of
from services.gateway.presence import BATCH, SLICES, LeaseKeeper, slice_of
from testing.leases import RecordedLeases
from testing.waiting import wait_for


async def test_leases_renewed_in_batches_outlive_their_ttl_and_expire_once_dropped(
    redis_connect: Any,
) -> None:
    store = PresenceLeases(redis_connect("timer"))
    keeper = LeaseKeeper(PresenceLeases(redis_connect("gateway")), ttl_ms=300)
    for seat in range(4):
        await keeper.take("t" * 22, seat, f"gw:{seat}")
    renewing = asyncio.create_task(keeper.run())
    try:
        started = time.monotonic()
        while time.monotonic() - started < 1.0:  # three lease lifetimes
            assert await store.claim_expired(int(time.time() * 1000)) == []
            await asyncio.sleep(0.05)  # sampling the leases, not synchronising
    finally:
        keeper.stop()
        renewing.cancel()
        await asyncio.gather(renewing, return_exceptions=True)
    # Without renewal, they run out and the sweep claims each exactly once.
    claimed: list[tuple[str, int]] = []

    async def all_claimed() -> bool:
        claimed.extend(await store.claim_expired(int(time.time() * 1000)))
        return len(claimed) >= 4

    await wait_for(all_claimed, timeout=3)
    assert sorted(claimed) == [("t" * 22, seat) for seat in range(4)]


async def test_one_renewal_round_renews_every_lease_of_many_tables_across_shards(
    redis_connect: Any, redis_client: Any
) -> None:
    """Leases renewed a table at a time (one HSET, one PEXPIRE per table, one ZADD per
    shard): each lease field, its hash's lifetime and its seat's index entry get the new
    expiry, whichever table, shard or number of seats and holders."""
    leases = PresenceLeases(redis_connect("gateway"))
    tables = [f"renew{i:02d}".ljust(22, "x") for i in range(12)]
    held = [
        (table, seat, f"gw:{i}.{seat}")
        for i, table in enumerate(tables)
        for seat in range(1 + i % 4)
    ]
    held.append((tables[0], 0, "gw:second-stream"))  # two streams on one seat
    assert len({shard_of(table) for table in tables}) > 3
    before = int(time.time() * 1000)
    await leases.renew_many(held, 60_000)
    after = int(time.time() * 1000)
    for table in tables:
        fields = await redis_client.hgetall(presence_leases_key(table))
        expected = {f"{seat}|{holder}".encode() for t, seat, holder in held if t == table}
        assert set(fields) == expected
        expiries = {int(value) for value in fields.values()}  # one round: one expiry
        assert len(expiries) == 1
        expiry = expiries.pop()
        assert before + 60_000 - 50 <= expiry <= after + 60_000 + 50
        assert 170_000 < await redis_client.pttl(presence_leases_key(table)) <= 180_000
        for seat in {seat for t, seat, _ in held if t == table}:
            member = f"{table}:{seat}"
            assert await redis_client.zscore(presence_key(shard_of(table)), member) == expiry


async def test_a_seat_stays_connected_until_its_last_stream_ends_in_either_order(
    redis_client: Any, redis_connect: Any
) -> None:
    """S3-S4: a player with streams on two gateways (a reconnection racing the old stream)
    is disconnected only when the last stream ends, whichever ends first; releasing a lease
    twice or another's lease changes nothing."""
    store = PresenceLeases(redis_connect("gateway"))
    table = PresenceLeases(redis_connect("table"))
    for first_to_end in ("gw-a:1", "gw-b:7"):
        table_id = ("u" if first_to_end == "gw-a:1" else "v") * 22
        older, newer = LeaseKeeper(store, ttl_ms=5000), LeaseKeeper(store, ttl_ms=5000)
        await older.take(table_id, 1, "gw-a:1")
        await newer.take(table_id, 1, "gw-b:7")  # the player reconnected through another gateway
        await older.renew_all()  # a renewal takes nothing from the other stream
        keepers = {"gw-a:1": older, "gw-b:7": newer}
        last = "gw-b:7" if first_to_end == "gw-a:1" else "gw-a:1"
        assert not await keepers[first_to_end].release(first_to_end)  # the other still holds
        assert await table.held(table_id, 1)
        assert not await keepers[first_to_end].release(first_to_end)  # twice: nothing
        assert await keepers[last].release(last)  # the last stream: now disconnected
        assert not await table.held(table_id, 1)
        assert await redis_client.hkeys(presence_leases_key(table_id)) == []
        assert await redis_client.zscore(presence_key(shard_of(table_id)), f"{table_id}:1") is None


async def test_a_seat_whose_every_lease_ran_out_is_claimed_once_but_not_while_one_lives(
    redis_connect: Any,
) -> None:
    """A crashed gateway's stream and a live stream on the same seat: the sweep claims
    nothing while the live one renews; once it stops too, the seat is claimed exactly once."""
    gateway = PresenceLeases(redis_connect("gateway"))
    timer = PresenceLeases(redis_connect("timer"))
    table_id = "w" * 22
    crashed, alive = LeaseKeeper(gateway, ttl_ms=200), LeaseKeeper(gateway, ttl_ms=600)
    await crashed.take(table_id, 2, "gw-dead:1")
    await alive.take(table_id, 2, "gw-live:1")

    admin = redis_connect("admin")
    await wait_for(lambda: _expired(admin, table_id, "2|gw-dead:1"), timeout=3)
    assert await timer.claim_expired(int(time.time() * 1000)) == []  # the live one holds
    claimed: list[tuple[str, int]] = []

    async def claimed_once() -> bool:
        claimed.extend(await timer.claim_expired(int(time.time() * 1000)))
        return bool(claimed)

    await wait_for(claimed_once, timeout=3)
    assert claimed == [(table_id, 2)]
    assert await timer.claim_expired(int(time.time() * 1000) + 10_000) == []
    assert not await PresenceLeases(redis_connect("table")).held(table_id, 2)


async def _expired(redis: Any, table_id: str, field: str) -> bool:
    """Whether the lease ``field`` ran out on Redis's clock."""
    expiry = await redis.hget(presence_leases_key(table_id), field)
    seconds, micros = await redis.time()
    return expiry is not None and int(expiry) < seconds * 1000 + micros // 1000


async def test_a_lease_of_the_first_format_counts_as_held_until_claimed(
    redis_client: Any, redis_connect: Any
) -> None:
    """Upgrade: a lease written by a gateway of the first 0.2 format (field = the seat)
    keeps its seat connected while a new-format stream ends; the sweep still claims it."""
    table_id = "x" * 22
    await redis_client.hset(presence_leases_key(table_id), "3", "gw-old:1")
    await redis_client.zadd(presence_key(shard_of(table_id)), {f"{table_id}:3": 1})
    keeper = LeaseKeeper(PresenceLeases(redis_connect("gateway")), ttl_ms=5000)
    await keeper.take(table_id, 3, "gw-new:1")
    assert not await keeper.release("gw-new:1")
    assert await PresenceLeases(redis_connect("table")).held(table_id, 3)


def _tables_in_every_slice(per_slice: int) -> list[str]:
    """Table ids, ``per_slice`` in each renewal slice."""
    found: dict[int, list[str]] = {index: [] for index in range(SLICES)}
    number = 0
    while any(len(tables) < per_slice for tables in found.values()):
        table_id = f"slice{number:06d}".ljust(22, "s")
        number += 1
        if len(found[slice_of(table_id)]) < per_slice:
            found[slice_of(table_id)].append(table_id)
    return [table_id for tables in found.values() for table_id in tables]


def test_the_renewal_slices_split_the_shards_evenly() -> None:
    """Every slice holds SHARDS / SLICES neighbouring shards."""
    slices: dict[int, set[int]] = {}
    for shard in range(SHARDS):
        slices.setdefault(shard * SLICES // SHARDS, set()).add(shard)
    assert sorted(slices) == list(range(SLICES))
    assert {len(shards) for shards in slices.values()} == {SHARDS // SLICES}
    table_id = "q" * 22
    assert slice_of(table_id) == shard_of(table_id) * SLICES // SHARDS


async def test_a_round_renews_each_lease_once_a_slice_per_tick_spread_over_its_period(
    redis_connect: Any,
) -> None:
    """S3 (issue 22): one period renews every held lease exactly once, one slice of shards per
    tick, the ticks spread over the period instead of one burst; each tick's call carries
    only its slice's leases, with the seat index and expiries written as before."""
    leases = RecordedLeases(redis_connect("gateway"))
    keeper = LeaseKeeper(leases, ttl_ms=1_600)  # period 533 ms, a tick every ~33 ms
    tables = _tables_in_every_slice(per_slice=3)
    for table_id in tables:
        for seat in range(4):
            await keeper.take(table_id, seat, f"gw:{table_id}:{seat}")
    leases.calls.clear()  # the takes' own renewals
    renewing = asyncio.create_task(keeper.run())
    try:
        await wait_for(lambda: len(leases.calls) >= SLICES, timeout=5)
    finally:
        keeper.stop()
        renewing.cancel()
        await asyncio.gather(renewing, return_exceptions=True)
    period = leases.calls[:SLICES]
    renewed = [lease for _, batch in period for lease in batch]
    expected = {(t, seat, f"gw:{t}:{seat}") for t in tables for seat in range(4)}
    assert sorted(renewed) == sorted(expected)  # each once
    for index, (_, batch) in enumerate(period):
        assert {slice_of(table_id) for table_id, _, _ in batch} == {index}
    tick_s = 1.6 / 3 / SLICES
    span = period[-1][0] - period[0][0]
    assert span >= 0.8 * (SLICES - 1) * tick_s  # spread over the period, not one burst
    store = PresenceLeases(redis_connect("table"))
    assert all([await store.held(table_id, seat) for table_id in tables for seat in range(4)])


async def test_a_lease_released_while_its_slice_is_renewed_is_not_taken_again(
    redis_connect: Any, redis_client: Any
) -> None:
    """A slice of more than BATCH leases goes out in several round trips; a stream that ends
    while the first is on its way gives its lease back, and the next batch does not renew
    (take again) the lease it gave back: the seat's lease field stays gone."""
    leases = RecordedLeases(redis_connect("gateway"))
    keeper = LeaseKeeper(leases, ttl_ms=60_000)
    tables = [t for t in _tables_in_every_slice(per_slice=BATCH // 4 + 2) if slice_of(t) == 0]
    for table_id in tables:
        for seat in range(4):
            await keeper.take(table_id, seat, f"gw:{table_id}:{seat}")
    assert keeper.held > BATCH
    last_table = tables[-1]
    leaving = f"gw:{last_table}:3"

    async def stream_ends(batch: list[tuple[str, int, str]]) -> None:
        if len(leases.calls) == 0:  # the first batch, sent before the release
            assert all(holder != leaving for _, _, holder in batch)
            await keeper.release(leaving)

    leases.before = stream_ends
    leases.calls.clear()
    assert await keeper.renew_slice(0) == 4 * len(tables) - 1
    assert len(leases.calls) == 2
    assert all(holder != leaving for _, batch in leases.calls for _, _, holder in batch)
    fields = await redis_client.hkeys(presence_leases_key(last_table))
    assert sorted(fields) == [f"{seat}|gw:{last_table}:{seat}".encode() for seat in range(3)]
    assert keeper.held == 4 * len(tables) - 1


async def test_a_holder_that_takes_another_seat_is_renewed_only_there(
    redis_connect: Any,
) -> None:
    """A holder (one stream) that takes a lease on another table's seat gives up its place in
    the first table's slice: a renewal round renews only its current lease, never the seat it
    left (that lease would otherwise be taken again every period, its seat kept connected)."""
    leases = RecordedLeases(redis_connect("gateway"))
    keeper = LeaseKeeper(leases, ttl_ms=60_000)
    first, second = _tables_in_every_slice(per_slice=1)[:2]
    assert slice_of(first) != slice_of(second)
    await keeper.take(first, 1, "gw:one")
    await keeper.take(second, 2, "gw:one")
    leases.calls.clear()
    assert await keeper.renew_all() == 1
    assert [batch for _, batch in leases.calls] == [[(second, 2, "gw:one")]]
    assert keeper.held == 1
    assert await keeper.release("gw:one")
    assert await keeper.renew_all() == 0
