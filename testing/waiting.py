"""Waiting on conditions with deadlines: the only way tests synchronise with other processes.

A test never sleeps for a fixed time hoping something happened; it polls the condition it
needs (a key exists, a port answers, a status changed) until a deadline and fails with a clear
message when the deadline passes.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar, overload

__all__ = ["wait_for", "wait_until"]

T = TypeVar("T")


@overload
async def wait_for(
    predicate: Callable[[], Awaitable[T]],
    timeout: float = ...,  # noqa: ASYNC109
    interval: float = ...,
    *,
    ignore: tuple[type[BaseException], ...] = ...,
    message: str | None = ...,
) -> T: ...


@overload
async def wait_for(
    predicate: Callable[[], T],
    timeout: float = ...,  # noqa: ASYNC109
    interval: float = ...,
    *,
    ignore: tuple[type[BaseException], ...] = ...,
    message: str | None = ...,
) -> T: ...


async def wait_for(
    predicate: Callable[[], Any],
    timeout: float = 5.0,  # noqa: ASYNC109 - the deadline is the point of this helper
    interval: float = 0.01,
    *,
    ignore: tuple[type[BaseException], ...] = (),
    message: str | None = None,
) -> Any:
    """Poll ``predicate`` (sync or async) until it returns a truthy value; return that value.

    Exceptions of the types in ``ignore`` count as "not yet" (e.g. ``ConnectionError`` while a
    server restarts); any other exception propagates. Raises ``TimeoutError`` after
    ``timeout`` seconds, mentioning ``message`` (or the predicate) and the last value or
    ignored exception seen.
    """
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    last: object = None
    while True:
        try:
            result = predicate()
            if inspect.isawaitable(result):
                result = await result
            if result:
                return result
            last = result
        except ignore as exc:
            last = exc
        if loop.time() >= deadline:
            what = message or getattr(predicate, "__qualname__", repr(predicate))
            raise TimeoutError(f"{what}: not true after {timeout} s (last: {last!r})")
        await asyncio.sleep(interval)


def wait_until(
    predicate: Callable[[], T],
    timeout: float = 5.0,
    interval: float = 0.01,
    *,
    ignore: tuple[type[BaseException], ...] = (),
    message: str | None = None,
) -> T:
    """Blocking twin of :func:`wait_for` for synchronous code (fixtures, process managers)."""
    deadline = time.monotonic() + timeout
    last: object = None
    while True:
        try:
            result = predicate()
            if result:
                return result
            last = result
        except ignore as exc:
            last = exc
        if time.monotonic() >= deadline:
            what = message or getattr(predicate, "__qualname__", repr(predicate))
            raise TimeoutError(f"{what}: not true after {timeout} s (last: {last!r})")
        time.sleep(interval)
