"""The levels and their one entry point: every level answers a legal decision at every turn of
random games under every preset and layout, for the seat to play only, and the same chance
gives the same decision."""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from services.robots.levels import Level, decide
from services.rules import Draw, Pass, Play, RuleSet

from .positions import BLOCK2, CLASSIC, DRAW2, LAYOUTS, assert_legal, line, observe, random_turns

SETTINGS = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def test_the_levels_carry_the_contracts_numbers() -> None:
    assert [(level.name, int(level)) for level in Level] == [
        ("BEGINNER", 1),
        ("SOLID", 2),
        ("STRONG", 3),
    ]


@SETTINGS
@given(rules=st.sampled_from(LAYOUTS), seed=st.integers(0, 2**64), chance=st.integers(0, 2**32))
def test_every_level_answers_a_legal_decision_at_every_turn_of_random_games(
    rules: RuleSet, seed: int, chance: int
) -> None:
    rng = random.Random(chance)
    turns = 0
    for state in random_turns(rules, seed, rng):
        observation = observe(state)
        for level in Level:
            assert_legal(state, decide(level, observation, random.Random(chance + turns)))
        turns += 1
    assert turns > 0


@pytest.mark.parametrize("level", list(Level))
def test_a_level_refuses_to_decide_for_a_seat_that_is_not_to_play(level: Level) -> None:
    state = line(CLASSIC, ("6-6 1-2", "3-3", "4-4", "5-5"), "6-1", turn=0)
    with pytest.raises(ValueError, match="not to play"):
        decide(level, observe(state, 1), random.Random(1))


@pytest.mark.parametrize("level", list(Level))
def test_a_level_refuses_an_observation_with_nothing_to_do(level: Level) -> None:
    state = line(CLASSIC, ("6-6 1-2", "3-3", "4-4", "5-5"), "6-1", turn=0)
    idle = observe(state)._replace(moves=(), can_draw=False, can_pass=False)
    with pytest.raises(ValueError, match="nothing to do"):
        decide(level, idle, random.Random(1))


@pytest.mark.parametrize("level", list(Level))
def test_without_a_move_every_level_draws_while_it_may_then_passes(level: Level) -> None:
    drawing = line(DRAW2, ("2-3 4-4", "1-1"), "6-6", turn=0, stock="0-5 1-6")
    assert decide(level, observe(drawing), random.Random(1)) == Draw(0)
    stuck = line(BLOCK2, ("2-3 4-4", "1-1"), "6-6", turn=0)
    assert decide(level, observe(stuck), random.Random(1)) == Pass(0)


@pytest.mark.parametrize("level", list(Level))
def test_the_same_chance_gives_the_same_decision(level: Level) -> None:
    rng = random.Random(9)
    for rules in (CLASSIC, BLOCK2, DRAW2):
        for state in random_turns(rules, 77, rng):
            observation = observe(state)
            first = decide(level, observation, random.Random(3))
            assert decide(level, observation, random.Random(3)) == first


def test_the_decision_is_for_the_observations_seat() -> None:
    state = line(CLASSIC, ("1-1", "6-6 1-2 2-2", "4-4", "5-5"), "6-1", turn=1)
    for level in Level:
        decision = decide(level, observe(state), random.Random(2))
        assert isinstance(decision, Play) and decision.seat == 1
