"""The solid player sheds heavy tiles, keeps its numbers varied and takes the all-fives points
(seed 002's advice: "débarrassez-vous tôt de vos dominos les plus lourds", "gardez des
nombres variés"); it always answers a legal decision."""

from __future__ import annotations

import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from services.robots import solid
from services.rules import End, Play, RuleSet, apply
from tests.unit.rules.builders import NOW
from tests.unit.rules.rule_builders import playing

from .positions import CLASSIC, FIVES2, LAYOUTS, assert_legal, line, observe, random_turns, tile


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rules=st.sampled_from(LAYOUTS), seed=st.integers(0, 2**64), chance=st.integers(0, 2**32))
def test_the_solid_player_always_answers_a_legal_decision(
    rules: RuleSet, seed: int, chance: int
) -> None:
    rng = random.Random(chance)
    for state in random_turns(rules, seed, rng):
        assert_legal(state, solid.decide(observe(state), rng))


def test_solid_sheds_the_heaviest_tile_when_moves_keep_the_same_numbers() -> None:
    # Ends 6 and 2: laying 6-4 keeps {2, 4}, laying 2-4 keeps {4, 6}; 6-4 is heavier.
    state = line(CLASSIC, ("6-4 2-4 4-4", "1-1", "3-3", "5-5"), "6-2", turn=0)
    assert solid.decide(observe(state), random.Random(1)) == Play(0, tile("6-4"), End.LEFT)


def test_solid_keeps_numbers_varied_before_shedding_a_slightly_heavier_tile() -> None:
    # Ends 6 and 3: laying 6-2 (8) keeps {3, 4}, laying 3-4 (7) keeps {2, 4, 6}.
    state = line(CLASSIC, ("6-2 3-4 4-4", "1-1", "0-0", "5-5"), "6-3", turn=0)
    assert solid.decide(observe(state), random.Random(1)) == Play(0, tile("3-4"), End.RIGHT)


def test_solid_takes_all_fives_points_over_shedding_a_heavier_tile() -> None:
    # Alice opened the spinner 5-5 (10); Bob's 0-5 makes 10 again, his 5-6 makes 16.
    state = playing(FIVES2, ("5-5 0-0 2-2", "0-5 5-6 2-3"), turn=0, lead=tile("5-5"))
    state = apply(state, Play(0, tile("5-5"), End.LEFT), NOW).state
    decision = solid.decide(observe(state), random.Random(1))
    assert isinstance(decision, Play) and decision.tile == tile("0-5")


def test_solid_breaks_equal_scores_with_its_chance() -> None:
    # 6-1 fits both ends (6 and 1) and leaves the same hand either way.
    state = line(CLASSIC, ("6-1 0-0", "2-2", "3-3", "5-5"), "6-4 4-1", turn=0)
    observation = observe(state)
    decisions = {solid.decide(observation, random.Random(seed)) for seed in range(40)}
    assert decisions == {Play(0, tile("1-6"), End.LEFT), Play(0, tile("1-6"), End.RIGHT)}
