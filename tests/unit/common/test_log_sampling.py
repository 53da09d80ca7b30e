"""Sampling of per-request log lines: a token bucket per key, with counts of what was dropped."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from services.common.log_sampling import (
    OVERFLOW_KEY,
    REJECTION_LOG_BURST,
    REJECTION_LOG_RATE,
    LogSampler,
)


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_burst_then_the_rate_and_the_next_line_reports_what_was_dropped() -> None:
    clock = Clock()
    sampler = LogSampler(rate=2.0, burst=3, clock=clock)
    assert [sampler.admit("r") for _ in range(5)] == [0, 0, 0, None, None]
    clock.now += 0.25  # half a token
    assert sampler.admit("r") is None
    clock.now += 0.25  # one token
    assert sampler.admit("r") == 3
    assert sampler.admit("r") is None
    clock.now += 0.5
    assert sampler.admit("r") == 1
    clock.now += 0.5
    assert sampler.admit("r") == 0
    # A long pause refills the bucket up to the burst, not beyond.
    clock.now += 3600
    assert [sampler.admit("r") for _ in range(4)] == [0, 0, 0, None]


def test_keys_have_their_own_buckets() -> None:
    sampler = LogSampler(rate=1.0, burst=1, clock=Clock())
    assert sampler.admit(("rejected", "A")) == 0
    assert sampler.admit(("rejected", "A")) is None
    assert sampler.admit(("rejected", "B")) == 0
    assert sampler.admit(("rejected", "B")) is None


def test_lines_are_bounded_whatever_the_request_rate() -> None:
    clock = Clock()
    sampler = LogSampler(rate=1.0, burst=10, clock=clock)
    written = reported = 0
    for _ in range(10):  # ten seconds of 10,000 requests per second
        for _ in range(10_000):
            suppressed = sampler.admit("flood")
            if suppressed is not None:
                written += 1
                reported += suppressed
        clock.now += 1.0
    assert written == 10 + 9  # the burst, then one a second
    # Every dropped line is reported by a later one.
    final = sampler.admit("flood")
    assert final is not None
    assert reported + final == 100_000 - written


def test_keys_beyond_the_limit_share_one_bucket() -> None:
    sampler = LogSampler(rate=1.0, burst=1, max_keys=2, clock=Clock())
    assert sampler.admit("a") == 0
    assert sampler.admit("b") == 0
    assert sampler.admit("c") == 0  # the overflow bucket
    assert sampler.admit("d") is None  # shares it
    assert sampler.admit(OVERFLOW_KEY) is None
    assert sampler.admit("a") is None


def test_log_calls_the_method_only_when_admitted_with_the_suppressed_count() -> None:
    clock = Clock()
    sampler = LogSampler(rate=1.0, burst=1, clock=clock)
    calls: list[tuple[str, dict[str, Any]]] = []

    def method(event: str, **fields: Any) -> None:
        calls.append((event, fields))

    assert sampler.log(method, "table.command_rejected", key="R", reason="R")
    assert not sampler.log(method, "table.command_rejected", key="R", reason="R")
    assert not sampler.log(method, "table.command_rejected", key="R", reason="R")
    clock.now += 1.0
    assert sampler.log(method, "table.command_rejected", key="R", reason="R")
    assert calls == [
        ("table.command_rejected", {"reason": "R"}),
        ("table.command_rejected", {"reason": "R", "suppressed": 2}),
    ]


def test_defaults_and_validation() -> None:
    sampler = LogSampler()
    assert (sampler.rate, sampler.burst) == (REJECTION_LOG_RATE, REJECTION_LOG_BURST)
    with pytest.raises(ValueError):
        LogSampler(rate=-1.0)
    with pytest.raises(ValueError):
        LogSampler(burst=0)
    with pytest.raises(ValueError):
        LogSampler(max_keys=0)


def test_threads_share_the_bucket_without_losing_counts() -> None:
    sampler = LogSampler(rate=0.0, burst=5, clock=Clock())
    admitted: list[int | None] = []
    lock = threading.Lock()

    def worker() -> None:
        for _ in range(1000):
            result = sampler.admit("k")
            with lock:
                admitted.append(result)

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sum(result is not None for result in admitted) == 5
    # rate 0: no token ever comes back, but the count of dropped lines is kept.
    assert sampler.admit("k") is None
