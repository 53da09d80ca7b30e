"""The condition-waiting helpers: return the first truthy value, fail loudly on timeout."""

from __future__ import annotations

import itertools

import pytest

from testing.waiting import wait_for, wait_until


async def test_wait_for_returns_the_first_truthy_value() -> None:
    counter = itertools.count()
    assert await wait_for(lambda: next(counter) >= 3 and "done", timeout=5, interval=0) == "done"


async def test_wait_for_accepts_async_predicates_and_ignores_listed_errors() -> None:
    attempts = itertools.count()

    async def flaky() -> int:
        n = next(attempts)
        if n < 2:
            raise ConnectionError("not yet")
        return n

    assert await wait_for(flaky, timeout=5, interval=0, ignore=(ConnectionError,)) == 2


async def test_wait_for_propagates_other_errors() -> None:
    def broken() -> bool:
        raise ValueError("bug")

    with pytest.raises(ValueError, match="bug"):
        await wait_for(broken, timeout=5, ignore=(ConnectionError,))


async def test_wait_for_times_out_with_the_message_and_last_value() -> None:
    with pytest.raises(TimeoutError, match=r"table settled: not true after 0.05 s \(last: 0\)"):
        await wait_for(lambda: 0, timeout=0.05, message="table settled")


def test_wait_until_is_the_blocking_twin() -> None:
    counter = itertools.count()
    assert wait_until(lambda: next(counter) == 2, timeout=5, interval=0) is True
    with pytest.raises(TimeoutError, match="last: OSError"):
        wait_until(lambda: (_ for _ in ()).throw(OSError("x")), timeout=0.05, ignore=(OSError,))
