"""A gateway repeats a budget refusal of the table service by itself until its window ends
(issue 15): the same subject is refused without a call, another subject is not, the
open-lobby cap is never repeated, and the held refusals are bounded."""

from __future__ import annotations

import grpc
import pytest

from services.common.service_errors import Limit, Reason, ServiceError, rate_limited
from services.gateway.refusals import MAX_HOLD_S, Refusals


class Clock:
    def __init__(self) -> None:
        self.now = 10.0

    def __call__(self) -> float:
        return self.now


def upstream(error: ServiceError) -> grpc.aio.AioRpcError:
    """The table service's refusal as the gateway's channel raises it."""
    return grpc.aio.AioRpcError(
        error.code,
        grpc.aio.Metadata(),
        grpc.aio.Metadata(*error.trailing_metadata()),
        error.message,
    )


CREATES = {"creates_per_address": ("create", "ipv4:203.0.113.7")}


def test_a_refusal_is_repeated_for_its_subject_until_its_window_ends() -> None:
    clock = Clock()
    refusals = Refusals(clock=clock)
    refusals.remember(upstream(rate_limited(Limit.CREATES_PER_ADDRESS, "too many", 3.0)), CREATES)
    clock.now += 1
    held = refusals.check(CREATES)
    assert held is not None
    assert (held.reason, held.metadata) == ("RATE_LIMITED", {"limit": "creates_per_address"})
    assert held.retry_after_s == pytest.approx(2.0)
    assert refusals.check({"creates_per_address": ("create", "ipv4:198.51.100.1")}) is None
    clock.now += 2
    assert refusals.check(CREATES) is None  # the window ended: ask the table service again
    assert len(refusals) == 0


def test_a_long_window_is_held_for_a_few_seconds_only() -> None:
    clock = Clock()
    refusals = Refusals(clock=clock)
    refusals.remember(upstream(rate_limited(Limit.CREATES_PER_ADDRESS, "too many", 3000)), CREATES)
    clock.now += MAX_HOLD_S - 0.1
    assert refusals.check(CREATES) is not None
    clock.now += 0.2
    assert refusals.check(CREATES) is None


def test_other_errors_and_the_lobby_cap_are_not_repeated() -> None:
    refusals = Refusals(clock=Clock())
    lobbies = {"lobbies_per_address": ("create", "a")}
    refusals.remember(upstream(rate_limited(Limit.LOBBIES_PER_ADDRESS, "full", 3000)), lobbies)
    not_found = ServiceError(grpc.StatusCode.NOT_FOUND, Reason.CODE_NOT_FOUND, "no table")
    codes = {"join_failures_per_connection": ("join", "p")}
    refusals.remember(upstream(not_found), codes)
    # A refusal for a limit the caller did not name a subject for.
    refusals.remember(upstream(rate_limited(Limit.LOBBY_CHANGES, "busy", 1)), CREATES)
    assert len(refusals) == 0


def test_held_refusals_are_bounded() -> None:
    clock = Clock()
    refusals = Refusals(clock=clock, max_entries=10)
    for i in range(100):
        subject = {"creates_per_address": ("create", f"ipv4:198.51.100.{i}")}
        refusals.remember(upstream(rate_limited(Limit.CREATES_PER_ADDRESS, "too many", 1)), subject)
    assert len(refusals) <= 10
    assert refusals.check({"creates_per_address": ("create", "ipv4:198.51.100.99")}) is not None
