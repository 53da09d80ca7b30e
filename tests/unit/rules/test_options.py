"""Table options are checked against the rule set at creation (issue 20, S2, D10, D11)."""

from __future__ import annotations

import pytest

from services.rules import CLASSIC, Create, create
from services.rules import errors as e
from services.rules.options import (
    MAX_RETURN_MS,
    MIN_VOTE_MS,
    ROBOT_PRESETS,
    RobotLevel,
    TableOptions,
    validate_options,
)
from services.rules.rulesets import PRESETS, preset

from .builders import NOW, TIMING
from .option_builders import SITE_PAIRS

ROBOT_OPTIONS = [
    TableOptions(practice=(1, 2, 3)),
    TableOptions(fill_level=RobotLevel.SOLID),
    TableOptions(replace_level=RobotLevel.STRONG),
]


@pytest.mark.parametrize("options", ROBOT_OPTIONS)
@pytest.mark.parametrize("name", ["classic", "family_draw"])
def test_seed_000_and_001_refuse_every_robot_option_s2_d10(
    name: str, options: TableOptions
) -> None:
    rules = PRESETS[name]
    with pytest.raises(e.RobotsUnavailable) as refused:
        create(Create("t", "Ana", rules.target, TIMING, rules, options), NOW)
    assert refused.value.field == "robots"


@pytest.mark.parametrize("name", sorted(ROBOT_PRESETS))
def test_the_seeds_with_computer_players_accept_every_robot_option_d10(name: str) -> None:
    rules = PRESETS[name]
    for options in (TableOptions(fill_level=1), TableOptions(replace_level=3)):
        assert create(Create("t", "Ana", rules.target, TIMING, rules, options), NOW).state.options
    practice = TableOptions(practice=(2,) * (rules.seats - 1))
    state = create(Create("t", "Ana", rules.target, TIMING, rules, practice), NOW).state
    assert state.robots[1 : rules.seats] == (2,) * (rules.seats - 1)


@pytest.mark.parametrize("name", sorted(set(PRESETS) - {"site"}))
def test_only_seed_004_has_the_friendly_end_d11(name: str) -> None:
    with pytest.raises(e.FriendlyEndUnavailable):
        validate_options(TableOptions(friendly_end=True), PRESETS[name])
    assert validate_options(TableOptions(friendly_end=True), SITE_PAIRS).friendly_end


def test_the_count_aid_is_allowed_everywhere_even_under_classic_rules() -> None:
    state = create(Create("t", "Ana", 100, TIMING, CLASSIC, TableOptions(count_aid=True)), NOW)
    assert state.state.options.count_aid and state.state.robots == (0, 0, 0, 0)


@pytest.mark.parametrize(
    ("options", "field"),
    [
        (TableOptions(practice=(1, 2)), "practice"),  # three robots beside the host at four
        (TableOptions(practice=(1, 2, 4)), "practice"),
        (TableOptions(fill_level=9), "fill_level"),
        (TableOptions(replace_level=-1), "replace_level"),
        (TableOptions(replace_level=1, return_ms=MAX_RETURN_MS + 1), "return_ms"),
        (TableOptions(friendly_end=True, vote_ms=MIN_VOTE_MS - 1), "vote_ms"),
    ],
)
def test_an_option_out_of_its_range_is_refused_naming_its_field(
    options: TableOptions, field: str
) -> None:
    with pytest.raises(e.RulesInvalid) as refused:
        validate_options(options, SITE_PAIRS)
    assert refused.value.field == field


def test_a_practice_table_at_two_seats_has_one_robot() -> None:
    rules = preset("web_fives", seats=2)
    assert validate_options(TableOptions(practice=(3,)), rules).practice == (3,)
    with pytest.raises(e.RulesInvalid):
        validate_options(TableOptions(practice=(3, 3)), rules)
