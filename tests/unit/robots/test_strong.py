"""The strong player reads the public record (seeds 001 and 002's advice): it leaves open the
numbers an opponent passed on, locks a number it holds the last tiles of, keeps ends its
partner can answer, takes the all-fives points and weighs what it leaves the next player,
wins the game when a move reaches the target; it always answers a legal decision, fast."""

from __future__ import annotations

import random
import time

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from services.robots import solid, strong
from services.rules import End, Play, RuleSet, TableState, apply
from tests.unit.rules.builders import NOW
from tests.unit.rules.rule_builders import playing

from .positions import (
    BLOCK2,
    CLASSIC,
    FIVES2,
    LAYOUTS,
    assert_legal,
    line,
    observe,
    random_turns,
    tile,
)


def numbers(*values: int) -> int:
    return sum(1 << n for n in values)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rules=st.sampled_from(LAYOUTS), seed=st.integers(0, 2**64), chance=st.integers(0, 2**32))
def test_the_strong_player_always_answers_a_legal_decision(
    rules: RuleSet, seed: int, chance: int
) -> None:
    rng = random.Random(chance)
    for state in random_turns(rules, seed, rng):
        assert_legal(state, strong.decide(observe(state), rng))


def test_strong_leaves_open_a_number_the_next_opponent_passed_on() -> None:
    # "Observez ce que les autres n'ont pas pu jouer": Bob passed on 4. Ends 4 and 5: 5-1
    # keeps the 4 open, 4-6 (heavier, what the solid player lays) would cover it.
    state = line(BLOCK2, ("5-1 4-6 2-3", "0-0 0-1 0-2"), "4-3 3-3 3-5", passed=(0, numbers(4, 1)))
    observation = observe(state)
    assert solid.decide(observation, random.Random(1)) == Play(0, tile("4-6"), End.LEFT)
    assert strong.decide(observation, random.Random(1)) == Play(0, tile("5-1"), End.RIGHT)


def test_strong_counts_the_tiles_and_locks_a_number_it_holds_the_last_of() -> None:
    # "Il n'y en a que sept par nombre": four 6s are laid, Alice holds the other three.
    # 3-6 on the left leaves 6 at both ends: nobody else can play, and she still can.
    state = line(BLOCK2, ("3-6 6-4 6-5 0-1", "0-0 1-1 1-2"), "3-0 0-6 6-6 6-1 1-2 2-6")
    observation = observe(state)
    assert solid.decide(observation, random.Random(1)) == Play(0, tile("6-5"), End.RIGHT)
    assert strong.decide(observation, random.Random(1)) == Play(0, tile("3-6"), End.LEFT)


def test_strong_keeps_an_end_its_partner_can_answer() -> None:
    # Ends 0 and 2. The partner (seat 2) passed on 0 and every 5 is seen: 2-5 would leave
    # it nothing; the opponents passed on 4, so 2-4 blocks them as well and leaves the
    # partner the 4s only it can hold.
    state = line(
        CLASSIC,
        ("2-5 2-4 5-6 1-4", "0-0 0-1 1-1 2-2", "3-4 4-4 4-6 3-3", "0-2 0-6 1-2 6-6"),
        "0-4 4-5 5-5 5-0 0-3 3-5 5-1 1-6 6-2",
        by=(1, 2, 3, 0, 1, 2, 3, 0, 1),
        passed=(0, numbers(4, 3), numbers(0, 1), numbers(4, 3)),
    )
    observation = observe(state)
    assert solid.decide(observation, random.Random(1)) == Play(0, tile("2-5"), End.RIGHT)
    assert strong.decide(observation, random.Random(1)) == Play(0, tile("2-4"), End.RIGHT)


def _after_spinner(bob: str) -> TableState:
    state = playing(FIVES2, ("5-5 0-0 2-2 3-3 6-6 2-3 1-1", bob), turn=0, lead=tile("5-5"))
    return apply(state, Play(0, tile("5-5"), End.LEFT), NOW).state


def test_strong_takes_all_fives_points() -> None:
    # "Dans tous les 5, regardez d'abord le total": on the spinner 5-5, 0-5 makes 10.
    state = _after_spinner("0-5 5-6 2-3")
    decision = strong.decide(observe(state), random.Random(1))
    assert isinstance(decision, Play) and decision.tile == tile("0-5")


def test_strong_weighs_what_a_placement_leaves_the_next_player() -> None:
    # "... et ce qu'il laisse au joueur suivant": none of Bob's 5s scores. After 5-6 Alice
    # makes 10 with 6-0, after 5-4 with 4-0; after 5-1 nothing she may hold scores (Bob
    # holds 5-4 and 1-0). The solid player sheds the heavy 5-6.
    state = _after_spinner("5-1 5-6 5-4 1-0")
    observation = observe(state)
    solid_play = solid.decide(observation, random.Random(1))
    assert isinstance(solid_play, Play) and solid_play.tile == tile("5-6")
    decision = strong.decide(observation, random.Random(1))
    assert isinstance(decision, Play) and decision.tile == tile("5-1")


def test_strong_plays_a_move_that_reaches_the_target_when_there_is_one() -> None:
    """Reaching the target by a play ends the game at once (seed 002): the strong player
    always takes such a move, even where it would otherwise keep the tile."""
    rng = random.Random(4)
    changed = 0
    for game in range(6):
        for state in random_turns(FIVES2, game, rng):
            observation = observe(state)
            scoring = [move for move in observation.moves if move.points]
            if not scoring:
                continue
            move = min(scoring, key=lambda m: m.points)
            side = observation.seat
            scores = tuple(
                state.target - move.points if s == side else v for s, v in enumerate(state.scores)
            )
            before = strong.decide(observation, random.Random(0))
            near = observe(state._replace(scores=scores))
            decision = strong.decide(near, random.Random(0))
            assert isinstance(decision, Play)
            points = {(m.tile, m.end): m.points for m in near.moves}
            assert points[decision.tile, decision.end] >= move.points
            changed += decision != before
    assert changed > 0


def test_strong_decides_well_under_a_millisecond_on_average() -> None:
    rng = random.Random(8)
    spent = 0
    decisions = 0
    for rules in (CLASSIC, BLOCK2, FIVES2):
        for game in range(3):
            for state in random_turns(rules, game, rng):
                observation = observe(state)
                start = time.perf_counter_ns()
                strong.decide(observation, rng)
                spent += time.perf_counter_ns() - start
                decisions += 1
    assert spent / decisions < 1_000_000
