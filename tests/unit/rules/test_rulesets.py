"""Rule sets as data (issue 19): the presets, one per seed, and their adjustable ranges."""

from __future__ import annotations

import pytest

from services.rules import Create, Join, SetTarget, Start, apply, create
from services.rules import errors as e
from services.rules.rulesets import (
    CLASSIC,
    PRESETS,
    BlockedScore,
    BlockedTie,
    DominoScore,
    NextOpener,
    Opener,
    RuleSet,
    Scoring,
    preset,
    validate_rules,
)

from .builders import NOW, TIMING
from .rule_builders import lobby_of


def test_000_classic_is_todays_game_exactly() -> None:
    assert (CLASSIC.seats, CLASSIC.teams, CLASSIC.hand_size, CLASSIC.draw) == (4, True, 7, False)
    assert CLASSIC.opener is Opener.SIX_SIX_HOLDER
    assert CLASSIC.next_opener is NextOpener.ROTATION
    assert CLASSIC.domino_score is DominoScore.OPPONENTS
    assert CLASSIC.blocked_score is BlockedScore.OTHERS_TOTAL
    assert CLASSIC.blocked_tie is BlockedTie.LAST_PLACER
    assert CLASSIC.scoring is Scoring.BLOCK
    assert (CLASSIC.target, CLASSIC.min_target, CLASSIC.max_target, CLASSIC.target_step) == (
        100,
        50,
        500,
        50,
    )
    assert CLASSIC.turn_seconds == 45 and not CLASSIC.turn_adjustable
    assert preset("classic") == CLASSIC and PRESETS["classic"] is CLASSIC
    assert create(Create("t", "Ana", 100, TIMING), NOW).state.rules is CLASSIC


def test_there_is_one_preset_per_seed_system_and_each_is_hashable() -> None:
    assert set(PRESETS) == {
        "classic",
        "family_draw",
        "web_draw",
        "web_block",
        "web_fives",
        "app",
        "site",
    }
    assert len({hash(rules) for rules in PRESETS.values()}) == len(PRESETS)
    for name, rules in PRESETS.items():
        assert rules.preset == name
        with pytest.raises(AttributeError):
            rules.seats = 3  # type: ignore[misc]


@pytest.mark.parametrize("name", [n for n in PRESETS if n != "web_fives"])
def test_every_playable_preset_and_layout_validates(name: str) -> None:
    base = PRESETS[name]
    for seats, hand_size, teams in base.layouts:
        rules = preset(name, seats=seats, hand_size=hand_size, teams=teams)
        assert validate_rules(rules) is rules
        assert rules.stock_size == (28 - seats * hand_size if rules.draw else 0)


@pytest.mark.parametrize(
    ("seats", "hand_size"), [(2, 7), (3, 5), (4, 5)], ids=["two", "three", "four"]
)
def test_001_hand_size_follows_the_seat_count(seats: int, hand_size: int) -> None:
    assert preset("family_draw", seats=seats).hand_size == hand_size
    other = 5 if hand_size == 7 else 7
    with pytest.raises(e.RulesInvalid) as info:
        preset("family_draw", seats=seats, hand_size=other)
    assert info.value.field == "hand_size" and info.value.reason == "RULES_INVALID"


def test_001_the_target_is_fixed_at_100() -> None:
    assert preset("family_draw").target == 100
    with pytest.raises(e.TargetInvalid) as info:
        preset("family_draw", target=150)
    assert info.value.field == "target"


def test_002_block_deals_seven_to_everyone_and_draw_five_at_three_or_four() -> None:
    assert [preset("web_block", seats=s).hand_size for s in (2, 3, 4)] == [7, 7, 7]
    assert [preset("web_draw", seats=s).hand_size for s in (2, 3, 4)] == [7, 5, 5]
    assert preset("web_block", seats=3).stock_size == 0
    assert preset("web_draw", target=500).target == 500


def test_003_five_or_seven_tiles_targets_50_to_150_and_teams_at_four() -> None:
    for seats in (2, 3, 4):
        assert preset("app", seats=seats, hand_size=5).hand_size == 5
        assert preset("app", seats=seats, hand_size=7).hand_size == 7
    assert preset("app", seats=4).teams and not preset("app", seats=2).teams
    assert [preset("app", target=t).target for t in (50, 100, 150)] == [50, 100, 150]
    with pytest.raises(e.TargetInvalid):
        preset("app", target=200)
    with pytest.raises(e.RulesInvalid) as info:
        preset("app", seats=4, teams=False)
    assert info.value.field == "teams"


def test_004_seven_tiles_turn_time_and_target_chosen_by_the_table() -> None:
    assert preset("site", seats=4).opener is Opener.SIX_SIX_HOLDER
    assert preset("site", seats=3).opener is Opener.HIGHEST_DOUBLE
    assert preset("site", seats=4, teams=False).teams is False
    assert preset("site", turn_seconds=15).turn_seconds == 15
    assert preset("site", target=300).target == 300
    for bad in ({"turn_seconds": 10}, {"turn_seconds": 121}, {"hand_size": 5}, {"seats": 5}):
        with pytest.raises(e.RulesInvalid) as info:
            preset("site", **bad)  # type: ignore[arg-type]
        assert info.value.field == next(iter(bad))
    with pytest.raises(e.TargetInvalid):
        preset("site", target=350)


def test_004_a_chosen_turn_time_sets_the_turn_clock() -> None:
    state = lobby_of(preset("site", seats=2, turn_seconds=20))
    assert state.timing.turn_ms == 20_000
    assert state.timing.away_ms == TIMING.away_ms
    assert lobby_of(preset("app")).timing == TIMING  # no turn choice: the operator's (D8)


def test_000_classic_adjusts_nothing_but_the_target() -> None:
    assert preset("classic", target=500).target == 500
    for bad in ({"seats": 2}, {"hand_size": 5}, {"turn_seconds": 30}, {"teams": False}):
        with pytest.raises(e.RulesInvalid) as info:
            preset("classic", **bad)
        assert info.value.field == next(iter(bad))


def test_an_unknown_preset_is_refused_naming_the_preset_field() -> None:
    with pytest.raises(e.RulesInvalid) as info:
        preset("mexican_train")
    assert info.value.field == "preset"


def test_002_all_fives_is_playable_in_every_layout() -> None:
    rules = preset("web_fives")
    assert rules.scoring is Scoring.ALL_FIVES
    assert create(Create("t", "Ana", 100, TIMING, rules), NOW).state.rules is rules
    for seats, hand_size, teams in rules.layouts:
        chosen = preset("web_fives", seats=seats, hand_size=hand_size, teams=teams)
        assert validate_rules(chosen) is chosen
        assert chosen.stock_size == 28 - seats * hand_size


def test_an_inconsistent_rule_set_is_refused_at_create() -> None:
    bad: list[tuple[RuleSet, str]] = [
        (_with(preset("app", seats=2), teams=True), "teams"),
        (_with(CLASSIC, hand_size=8), "hand_size"),
        (_with(preset("web_draw", seats=2), opener=Opener.SIX_SIX_HOLDER), "opener"),
    ]
    for rules, field in bad:
        with pytest.raises(e.RulesInvalid) as info:
            create(Create("t", "Ana", 100, TIMING, rules), NOW)
        assert info.value.field == field


def test_the_target_range_is_the_rule_sets_at_create_and_set_target() -> None:
    with pytest.raises(e.TargetInvalid):
        create(Create("t", "Ana", 200, TIMING, preset("app")), NOW)
    state = lobby_of(preset("site", seats=2))
    assert apply(state, SetTarget(0, 250), NOW).state.target == 250
    with pytest.raises(e.TargetInvalid):
        apply(state, SetTarget(0, 400), NOW)


@pytest.mark.parametrize("seats", [2, 3])
def test_a_table_starts_when_all_its_seats_are_taken(seats: int) -> None:
    rules = preset("web_block", seats=seats)
    full = lobby_of(rules)
    with pytest.raises(e.TableFull):
        apply(full, Join("Extra"), NOW)
    started = apply(full, Start(0, 7), NOW).state
    assert started.round is not None
    assert [started.round.hands[s].bit_count() for s in range(4)] == [7] * seats + [0] * (4 - seats)
    short = create(Create("t", "Ana", 100, TIMING, rules), NOW).state
    with pytest.raises(e.NotEnoughPlayers):
        apply(short, Start(0, 7), NOW)


def _fields(rules: RuleSet) -> dict[str, object]:
    return {name: getattr(rules, name) for name in rules.__dataclass_fields__}


def _with(rules: RuleSet, **changes: object) -> RuleSet:
    return RuleSet(**{**_fields(rules), **changes})  # type: ignore[arg-type]
