"""The beginner plays any legal tile, each as likely; it draws when it must, passes when it
must, and always answers a legal decision."""

from __future__ import annotations

import random
from collections import Counter

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from services.robots import beginner
from services.rules import Draw, Pass, Play, RuleSet

from .positions import BLOCK2, CLASSIC, DRAW2, LAYOUTS, assert_legal, line, observe, random_turns


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rules=st.sampled_from(LAYOUTS), seed=st.integers(0, 2**64), chance=st.integers(0, 2**32))
def test_the_beginner_always_answers_a_legal_decision(
    rules: RuleSet, seed: int, chance: int
) -> None:
    rng = random.Random(chance)
    for state in random_turns(rules, seed, rng):
        assert_legal(state, beginner.decide(observe(state), rng))


def test_the_beginner_plays_every_legal_move_about_as_often() -> None:
    state = line(CLASSIC, ("6-2 6-4 1-1 1-5", "3-3", "4-4", "5-5"), "6-1", turn=0)
    observation = observe(state)
    assert len(observation.moves) == 4
    rng = random.Random(5)
    counts = Counter(beginner.decide(observation, rng) for _ in range(4_000))
    assert set(counts) == {Play(0, move.tile, move.end) for move in observation.moves}
    assert all(800 < count < 1_200 for count in counts.values())


def test_the_beginner_draws_when_nothing_fits_and_the_stock_holds_tiles() -> None:
    state = line(DRAW2, ("2-3 4-4", "1-1"), "6-6", turn=0, stock="0-5")
    assert beginner.decide(observe(state), random.Random(1)) == Draw(0)


def test_the_beginner_passes_when_nothing_fits_and_there_is_no_stock() -> None:
    state = line(BLOCK2, ("2-3 4-4", "1-1"), "6-6", turn=0)
    assert beginner.decide(observe(state), random.Random(1)) == Pass(0)
