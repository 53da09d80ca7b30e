"""A robot receives exactly what a person in its seat receives (issue 20, D10, S6): the
observation the bots service builds from the contract's ``TableView`` equals the one the
engine's projection gives, for every seat of random games under every preset, and the
observation has no field that could carry another seat's hand, the stock or the seed."""

from __future__ import annotations

import random

import pytest

from services.bots.views import observation_of
from services.common.projection import table_view
from services.robots.observation import Observation, from_view
from services.rules import PRESETS, view_for
from services.rules.options import TableOptions
from tests.unit.common.test_projection import _option_game
from tests.unit.rules.option_builders import SITE_PAIRS

SERVER_TIME = 1_767_225_612_345


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_the_observation_of_a_view_message_is_the_engines_for_every_seat(name: str) -> None:
    rules = PRESETS[name]
    options = TableOptions(count_aid=True)
    checked = 0
    for number in range(2):
        for state in _option_game(rules, options, rules.seats, random.Random(number)):
            for seat in range(rules.seats):
                message = table_view(state, seat, SERVER_TIME)
                assert observation_of(message) == from_view(view_for(state, seat))
                checked += 1
    assert checked > 100


def test_robot_tables_observations_match_too() -> None:
    options = TableOptions(fill_level=2, replace_level=3, friendly_end=True, return_ms=60_000)
    for state in _option_game(SITE_PAIRS, options, 2, random.Random(5)):
        for seat in range(4):
            message = table_view(state, seat, SERVER_TIME)
            assert observation_of(message) == from_view(view_for(state, seat))


def test_an_observation_holds_only_the_seats_own_hand_and_public_facts() -> None:
    """The fields a player decides from: none names another seat's tiles, the stock's
    order or the seed (per-seat fields are counts and masks of numbers passed on)."""
    assert set(Observation._fields) == {
        "seat",
        "seats",
        "teams",
        "fives",
        "hand",
        "moves",
        "can_draw",
        "can_pass",
        "open_ends",
        "laid",
        "tile_counts",
        "passed_on",
        "drawn",
        "stock",
        "scores",
        "target",
        "turn",
        "layout",
    }
