"""The gateway's hub over real NATS: one subscription per table feeds every local stream;
snapshots are read when a feed starts, when an event does not follow the feed's version
(a gap, a jump or a forgery: the table service confirms), and periodically for quiet feeds."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from dominos.v1 import events_pb2

from services.common.bus import table_subject
from services.common.connections import flushed
from services.common.projection import view_parts
from services.gateway.hub import Hub, Version
from services.rules import Join, Phase, TableState, apply, encode_state
from testing.waiting import wait_for
from tests.unit.rules.builders import NOW, lobby

BUSY, QUIET = "b" * 22, "q" * 22
HOLDERS = bytes(range(32))


@pytest.fixture
async def gateway_nc(nats_connect: Callable[[str], Awaitable[Any]]) -> Any:
    """The hub's connection, as the gateway's NATS user (it may only subscribe); the events
    are published by ``nats_client`` (admin) as the table service, or a forger, would."""
    return await nats_connect("gateway")


async def next_version(watcher: Any) -> Version:
    """The watcher's next version, or a failure after 10 s (never a hang)."""
    return await asyncio.wait_for(watcher.next(), timeout=10)


async def delivered(nc: Any, watcher: Any, state: TableState) -> Version:
    """Publish ``state``'s event until the watcher streams a version (core NATS delivers at
    most once: a message lost on the way is sent again, as the table service's outbox relay
    and the gateways' periodic resync do); the version the watcher streamed."""
    for _ in range(5):
        await publish(nc, state)
        try:
            return await asyncio.wait_for(watcher.next(), timeout=2)
        except TimeoutError:
            continue
    raise AssertionError(f"no version streamed after 5 publications of v{state.version}")


def table(table_id: str, players: int = 3) -> TableState:
    return lobby(players)._replace(table_id=table_id)


async def publish(
    nc: Any, state: TableState, *, version: int = 0, raw: bytes = b"", views: bool = False
) -> None:
    """Publish ``state``'s event as the table service would (``views``: with every seat's
    view in parts and the phase; else as an older table service, the state alone)."""
    event = events_pb2.TableEvent(
        table_id=state.table_id,
        version=version or state.version,
        state=raw or encode_state(state),
        seat_holders=HOLDERS,
    )
    if views:
        parts = view_parts(state)
        event.public_view, event.phase = parts.public, int(state.phase)  # type: ignore[assignment]
        event.seat_views.extend(parts.seats)
    await nc.publish(table_subject(state.table_id), event.SerializeToString())
    await flushed(nc)


class Snapshots:
    """The table service's answers: the truth the hub confirms against, with a read count."""

    def __init__(self, *states: TableState) -> None:
        self.states = {s.table_id: s for s in states}
        self.reads: Counter[str] = Counter()

    async def __call__(self, table_id: str) -> Version | None:
        self.reads[table_id] += 1
        state = self.states.get(table_id)
        return None if state is None else Version.of_state(state, HOLDERS)


async def _watching(gateway_nc: Any, state: TableState) -> tuple[Snapshots, list[str], Any]:
    """A hub over ``state`` (its snapshot reads counted, its rejections listed) with one
    watcher that already received the first version."""
    snapshots = Snapshots(state)
    rejected: list[str] = []
    hub = Hub(gateway_nc, snapshots, on_rejected=rejected.append)
    watcher = await hub.watch(state.table_id, 0)
    assert (await next_version(watcher)).version == state.version
    return snapshots, rejected, watcher


async def test_a_periodic_resync_reads_only_the_feeds_that_got_no_event(
    gateway_nc: Any, nats_client: Any
) -> None:
    busy_state, quiet_state = table(BUSY), table(QUIET)
    snapshots = Snapshots(busy_state, quiet_state)
    hub = Hub(gateway_nc, snapshots)
    busy = await hub.watch(BUSY, 0)
    quiet = await hub.watch(QUIET, 0)
    assert snapshots.reads == {BUSY: 1, QUIET: 1}  # each new feed is read once
    assert (
        (await next_version(busy)).version
        == (await next_version(quiet)).version
        == busy_state.version
    )
    # Both feeds have been quiet since their start: a resync of feeds quiet for 0.2 s waits.
    newer = apply(busy_state, Join("Late"), NOW).state
    await wait_for(lambda: len(hub.quiet_tables(0.2)) == 2, timeout=5)
    assert (await delivered(nats_client, busy, newer)).version == newer.version
    snapshots.states[BUSY] = newer
    await hub.resync_all(quiet_for_s=0.2)
    assert snapshots.reads == {BUSY: 1, QUIET: 2}  # the busy feed just got an event: not read
    await hub.resync_all()  # after a reconnect: every feed
    assert snapshots.reads == {BUSY: 2, QUIET: 3}
    for watcher in (busy, quiet):
        await hub.unwatch(watcher)
    assert hub.tables == 0


async def test_the_next_version_is_streamed_without_a_snapshot_read(
    gateway_nc: Any, nats_client: Any
) -> None:
    state = table(BUSY)
    snapshots = Snapshots(state)
    hub = Hub(gateway_nc, snapshots)
    watcher = await hub.watch(BUSY, 0)
    assert (await next_version(watcher)).version == state.version
    newer = apply(state, Join("Late"), NOW).state
    received = await delivered(nats_client, watcher, newer)
    assert received.version == newer.version and received.holders == HOLDERS
    assert snapshots.reads == {BUSY: 1}  # the priming read only


async def test_a_forged_jump_is_confirmed_with_the_table_and_dropped(
    gateway_nc: Any, nats_client: Any
) -> None:
    """Issue 13: a forged event with a huge version froze every stream of the table."""
    state = table(BUSY)
    snapshots, rejected, watcher = await _watching(gateway_nc, state)
    forged = state._replace(version=10**9, names=("Mallory", "", "", ""))
    await publish(nats_client, forged)
    await wait_for(lambda: rejected == ["unconfirmed"], timeout=5)
    assert snapshots.reads[BUSY] >= 2  # the jump was checked with the table service
    # The streams keep moving: the real next version is streamed.
    newer = apply(state, Join("Late"), NOW).state
    snapshots.states[BUSY] = newer
    received = await delivered(nats_client, watcher, newer)
    assert received.version == newer.version
    assert received.views == view_parts(newer)


async def test_a_gap_is_healed_from_the_snapshot_not_from_the_event(
    gateway_nc: Any, nats_client: Any
) -> None:
    state = table(BUSY, players=1)
    snapshots, rejected, watcher = await _watching(gateway_nc, state)
    one = apply(state, Join("A"), NOW).state
    two = apply(one, Join("B"), NOW).state
    snapshots.states[BUSY] = two
    # Version +1 was lost on the bus; +2 arrives with a tampered body but the right number.
    received = await delivered(nats_client, watcher, two._replace(names=("Evil", "", "", "")))
    assert received.version == two.version
    assert received.views == view_parts(two)  # the table's state, not the event's
    assert rejected == []


async def test_a_malformed_event_is_counted_and_dropped(gateway_nc: Any, nats_client: Any) -> None:
    state = table(BUSY)
    _, rejected, watcher = await _watching(gateway_nc, state)
    await publish(nats_client, state, version=state.version + 1, raw=b"\xff garbage")
    await nats_client.publish(table_subject(BUSY), b"\x08\x01 not a table event")
    await flushed(nats_client)  # not left in the client's buffer until its flusher runs
    await wait_for(lambda: len(rejected) == 2, timeout=5)
    assert set(rejected) == {"malformed"}
    newer = apply(state, Join("Late"), NOW).state
    assert (await delivered(nats_client, watcher, newer)).version == newer.version


async def test_an_event_with_its_views_is_streamed_without_decoding_its_state(
    gateway_nc: Any, nats_client: Any
) -> None:
    """S6: the table service's projection travels in the event; the gateway streams it as
    it came (an undecodable state is not even read) and knows the phase from the event."""
    state = table(BUSY)
    _, rejected, watcher = await _watching(gateway_nc, state)
    newer = apply(state, Join("Late"), NOW).state
    await publish(nats_client, newer, raw=b"\xff not read", views=True)
    received = await next_version(watcher)
    assert (received.version, received.phase) == (newer.version, Phase.WAITING)
    assert received.state is None  # never decoded
    assert received.views == view_parts(newer)
    assert rejected == []


async def test_an_event_with_views_and_no_known_phase_is_rejected(
    gateway_nc: Any, nats_client: Any
) -> None:
    state = table(BUSY)
    _, rejected, watcher = await _watching(gateway_nc, state)
    newer = apply(state, Join("Late"), NOW).state
    parts = view_parts(newer)
    event = events_pb2.TableEvent(
        table_id=BUSY,
        version=newer.version,
        seat_holders=HOLDERS,
        public_view=parts.public,
        seat_views=parts.seats,
        phase=42,  # type: ignore[arg-type]
    )
    await nats_client.publish(table_subject(BUSY), event.SerializeToString())
    await flushed(nats_client)
    await wait_for(lambda: rejected == ["malformed"], timeout=5)
    assert (await delivered(nats_client, watcher, newer)).version == newer.version
