"""``services.table.table_locks``: a table's commands run one at a time in a replica, in
the order they came, without holding up other tables' commands, and the locks of idle
tables are forgotten."""

from __future__ import annotations

import asyncio

import pytest

from services.table.table_locks import TableLocks


async def test_commands_of_one_table_run_one_at_a_time_in_the_order_they_came() -> None:
    locks = TableLocks()
    events: list[str] = []

    async def command(name: str) -> None:
        async with locks.hold("T"):
            events.append(f"{name} in")
            await asyncio.sleep(0)  # a Redis round trip: another command could run here
            await asyncio.sleep(0)
            events.append(f"{name} out")

    await asyncio.gather(*(command(str(i)) for i in range(5)))
    assert events == [e for i in range(5) for e in (f"{i} in", f"{i} out")]
    assert locks.tables == 0


async def test_a_table_s_command_does_not_wait_for_another_table_s() -> None:
    locks = TableLocks()
    release = asyncio.Event()

    async def slow() -> None:
        async with locks.hold("A"):
            await release.wait()

    holder = asyncio.create_task(slow())
    await asyncio.sleep(0)
    async with asyncio.timeout(1):
        async with locks.hold("B"):
            assert locks.tables == 2
    release.set()
    await holder
    assert locks.tables == 0


async def test_a_command_cancelled_while_queued_leaves_the_queue() -> None:
    locks = TableLocks()
    release = asyncio.Event()
    entered: list[str] = []

    async def command(name: str, wait: asyncio.Event | None = None) -> None:
        async with locks.hold("T"):
            entered.append(name)
            if wait is not None:
                await wait.wait()

    first = asyncio.create_task(command("first", release))
    queued = asyncio.create_task(command("queued"))
    await asyncio.sleep(0)
    assert entered == ["first"] and locks.tables == 1
    queued.cancel()
    with pytest.raises(asyncio.CancelledError):
        await queued
    release.set()
    await first
    assert locks.tables == 0
    await command("next")
    assert entered == ["first", "next"] and locks.tables == 0


async def test_a_command_that_fails_releases_its_table() -> None:
    locks = TableLocks()
    with pytest.raises(ValueError):
        async with locks.hold("T"):
            raise ValueError("refused")
    assert locks.tables == 0
    async with asyncio.timeout(1), locks.hold("T"):
        assert locks.tables == 1
