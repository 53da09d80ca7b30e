"""A view stream's mailbox (``services.gateway.hub.Watcher``): what a stream takes and how
it waits between versions (pure asyncio, no server)."""

from __future__ import annotations

import asyncio

import pytest

from services.gateway.hub import Version, Watcher, WatcherClosed
from services.rules import Phase


def version(number: int) -> Version:
    return Version(number, Phase.PLAYING, b"")


async def test_take_gives_the_queued_versions_in_order_then_none() -> None:
    watcher = Watcher("t", 0)
    assert watcher.take() is None
    watcher.offer(version(1))
    watcher.offer(version(2))
    watcher.offer(version(2))  # not newer: ignored
    assert [watcher.take(), watcher.take(), watcher.take()] == [version(1), version(2), None]
    assert watcher.last_sent == 2
    watcher.offer(version(1))  # older than what was sent: ignored
    assert watcher.take() is None


async def test_the_wakeup_is_one_future_until_an_offer_completes_it() -> None:
    watcher = Watcher("t", 0)
    first = watcher.wakeup()
    assert watcher.wakeup() is first and not first.done()
    watcher.offer(version(1))
    assert first.done()
    second = watcher.wakeup()
    assert second is not first and not second.done()  # re-armed for the next version


async def test_a_stream_waiting_for_its_wakeup_gets_the_next_version() -> None:
    watcher = Watcher("t", 2)

    async def stream() -> Version:
        while (taken := watcher.take()) is None:
            await watcher.wakeup()
        return taken

    task = asyncio.create_task(stream())
    await asyncio.sleep(0)  # the stream is waiting
    assert not task.done()
    watcher.offer(version(7))
    assert await asyncio.wait_for(task, timeout=2) == version(7)


async def test_close_ends_a_waiting_stream_even_with_versions_queued() -> None:
    watcher = Watcher("t", 1)
    waiting = asyncio.create_task(watcher.next())
    await asyncio.sleep(0)
    watcher.close("replaced")
    with pytest.raises(WatcherClosed, match="replaced"):
        await asyncio.wait_for(waiting, timeout=2)
    watcher.offer(version(3))
    with pytest.raises(WatcherClosed):
        watcher.take()


async def test_a_cancelled_wait_leaves_the_watcher_usable() -> None:
    # A stream's task is cancelled (its client went away) while it waits: its future is
    # cancelled with it, and the next wait gets a fresh one that an offer completes.
    watcher = Watcher("t", 0)
    waiting = asyncio.create_task(watcher.next())
    await asyncio.sleep(0)
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting
    again = asyncio.create_task(watcher.next())
    await asyncio.sleep(0)
    watcher.offer(version(1))
    assert await asyncio.wait_for(again, timeout=2) == version(1)


async def test_a_slow_stream_skips_to_newer_versions_beyond_the_capacity() -> None:
    watcher = Watcher("t", 0)
    for number in range(1, Watcher.capacity + 4):
        watcher.offer(version(number))
    assert watcher.skipped == 3 and watcher.waiting == Watcher.capacity
    assert watcher.take() == version(4)
