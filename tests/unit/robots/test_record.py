"""What the public record tells a seat: tiles counted per number (seven each, the double
included), the voids a pass reveals (softened when the seat may have drawn since), the
partner's plays, and chances of holding each unseen tile that respect the counts."""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from services.robots.record import NUMBERS, VOID_AFTER_DRAW, fitting, read
from services.rules import RuleSet
from services.rules.tiles import FITS, TILE_COUNT

from .positions import BLOCK2, CLASSIC, LAYOUTS, line, observe, random_turns, tile


def numbers(*values: int) -> int:
    return sum(1 << n for n in values)


def test_a_number_counts_seven_tiles_less_the_laid_and_the_own() -> None:
    state = line(BLOCK2, ("3-6 6-4 6-5 0-1", "0-0 1-1 1-2"), "3-0 0-6 6-6 6-1 1-2 2-6")
    record = read(observe(state))
    assert record.unseen_of[6] == 7 - 4 - 3 == 0
    assert record.unseen_of[0] == 7 - 2 - 1
    assert record.unseen_of[3] == 7 - 1 - 1
    assert record.dead(numbers(6)) and not record.dead(numbers(6, 3))
    assert record.unseen == ((1 << TILE_COUNT) - 1) & ~record.hand & ~record.laid
    assert record.pool == record.unseen.bit_count() - 3


def test_a_pass_makes_a_seat_void_in_the_numbers_it_passed_on() -> None:
    state = line(BLOCK2, ("5-1 4-6 2-3", "0-0 0-1 0-2"), "4-3 3-3 3-5", passed=(0, numbers(4, 1)))
    record = read(observe(state))
    assert record.void == (0, numbers(4, 1)) and record.certain == (True, True)
    for t in range(TILE_COUNT):
        held = record.chances[1][t]
        if NUMBERS[t] & numbers(4, 1) or not record.unseen >> t & 1:
            assert held == 0.0
        else:
            assert held > 0.0
    assert record.none_of(1, FITS[4]) == 1.0


def test_an_old_pass_only_lowers_the_chances_of_a_seat_that_may_have_drawn_since() -> None:
    """Seed 001: "ne transforme donc pas une ancienne passe en certitude permanente": with a
    stock left, a seat that drew may hold the numbers it once passed on."""
    state = line(BLOCK2, ("5-1 4-6 2-3", "0-0 0-1 0-2"), "4-3 3-3 3-5")
    observation = observe(state)._replace(passed_on=(0, numbers(4)), drawn=(0, 2), stock=5)
    record = read(observation)
    assert record.certain == (True, False)
    void_tile, other = record.chances[1][tile("4-4")], record.chances[1][tile("0-6")]
    assert 0.0 < void_tile < other
    assert void_tile == pytest.approx(other * VOID_AFTER_DRAW, rel=0.35)


def test_the_record_tells_who_laid_which_tile_the_partners_included() -> None:
    state = line(CLASSIC, ("1-1", "2-2", "3-3", "4-4"), "6-5 5-4 4-0", by=(2, 1, 2))
    record = read(observe(state))
    assert record.laid_by[2] == 1 << tile("5-6") | 1 << tile("0-4")
    assert record.laid_by[1] == 1 << tile("4-5")
    assert record.laid_by[0] == record.laid_by[3] == 0


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rules=st.sampled_from(LAYOUTS), seed=st.integers(0, 2**64), chance=st.integers(0, 2**32))
def test_chances_respect_the_counts_the_voids_and_the_seen_tiles(
    rules: RuleSet, seed: int, chance: int
) -> None:
    for state in random_turns(rules, seed, random.Random(chance)):
        observation = observe(state)
        record = read(observation)
        assert record.unseen_of == tuple(
            7 - (record.laid & FITS[n]).bit_count() - (record.hand & FITS[n]).bit_count()
            for n in range(7)
        )
        assert all(v == 0 for v in record.chances[observation.seat])
        for s in range(observation.seats):
            if s == observation.seat:
                continue
            row = record.chances[s]
            assert all(0.0 <= p <= 1.0 for p in row)
            assert all(row[t] == 0.0 for t in range(TILE_COUNT) if not record.unseen >> t & 1)
            assert all(row[t] == 0.0 for t in range(TILE_COUNT) if NUMBERS[t] & record.void[s])
            if not any(record.void):
                assert sum(row) == pytest.approx(observation.tile_counts[s])
        total = sum(sum(record.chances[s]) for s in range(observation.seats))
        assert total <= record.unseen.bit_count() + 1e-6


def test_fitting_is_the_tiles_of_the_numbers() -> None:
    assert fitting(numbers(2, 5)) == FITS[2] | FITS[5]
    assert fitting(0) == 0
