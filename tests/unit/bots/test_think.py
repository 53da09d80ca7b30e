"""A robot thinks within its range, and never past its seat's short clock (issue 20)."""

from __future__ import annotations

import random

from services.bots.think import MARGIN_S, ThinkTime


def test_a_robot_thinks_within_its_range_when_the_clock_leaves_room() -> None:
    think = ThinkTime(0.8, 2.5)
    rng = random.Random(1)
    delays = [think.delay(rng, 0, 60_000) for _ in range(500)]
    assert all(d is not None and 0.8 <= d <= 2.5 for d in delays)
    assert max(d for d in delays if d is not None) - min(d for d in delays if d is not None) > 1


def test_a_robot_moves_before_its_seats_clock_runs_out() -> None:
    think = ThinkTime(0.8, 2.5)
    delay = think.delay(random.Random(2), 10_000, 11_000)  # one second left
    assert delay is not None and delay <= 1.0 - MARGIN_S


def test_a_turn_whose_clock_has_run_out_is_not_thought_about() -> None:
    think = ThinkTime(0.8, 2.5)
    assert think.delay(random.Random(3), 10_000, 10_400) is None
    assert think.delay(random.Random(3), 10_000, 9_000) is None
