"""The gateway's hub over real NATS: one subscription per table feeds every local stream;
snapshots are read when a feed starts and, periodically, only for quiet feeds."""

from __future__ import annotations

from collections import Counter
from typing import Any

from dominos.v1 import events_pb2

from services.gateway.hub import Hub
from services.table.publisher import table_subject
from services.table.rules import Join, TableState, apply, encode_state
from tests.support.waiting import wait_for
from tests.unit.rules.builders import NOW, lobby

BUSY, QUIET = "b" * 22, "q" * 22


async def publish(nc: Any, table_id: str, state: TableState) -> None:
    event = events_pb2.TableEvent(
        table_id=table_id, version=state.version, state=encode_state(state)
    )
    await nc.publish(table_subject(table_id), event.SerializeToString())


async def test_a_periodic_resync_reads_only_the_feeds_that_got_no_event(nats_client: Any) -> None:
    base = lobby(3)
    reads: Counter[str] = Counter()

    async def read_snapshot(table_id: str) -> TableState:
        reads[table_id] += 1
        return base

    hub = Hub(nats_client, read_snapshot)
    busy = await hub.watch(BUSY, 0)
    quiet = await hub.watch(QUIET, 0)
    assert reads == {BUSY: 1, QUIET: 1}  # each new feed is read once
    assert (await busy.next()).version == (await quiet.next()).version == base.version
    await nats_client.flush()
    # Both feeds have been quiet since their start: a resync of feeds quiet for 0.2 s waits.
    newer = apply(base, Join("Late"), NOW).state
    await wait_for(lambda: len(hub.quiet_tables(0.2)) == 2, timeout=5)
    await publish(nats_client, BUSY, newer)
    assert (await busy.next()).version == newer.version
    await hub.resync_all(quiet_for_s=0.2)
    assert reads == {BUSY: 1, QUIET: 2}  # the busy feed just got an event: not read
    await hub.resync_all()  # after a reconnect: every feed
    assert reads == {BUSY: 2, QUIET: 3}
    for watcher in (busy, quiet):
        await hub.unwatch(watcher)
    assert hub.tables == 0
