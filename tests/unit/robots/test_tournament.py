"""Whole games between the levels: they end with a winner, are reproducible for a seed, and
every player sees only its own seat's projection."""

from __future__ import annotations

import pytest

from services.robots import tournament
from services.robots.chance import Chance
from services.robots.levels import Level, decide
from services.robots.observation import Decision, Observation
from services.robots.tournament import GameResult, derive, play_game
from services.rules import RuleSet

from .positions import CLASSIC, FIVES2

PAIRINGS = [
    (Level.BEGINNER, Level.SOLID),
    (Level.SOLID, Level.STRONG),
    (Level.BEGINNER, Level.STRONG),
]


def seats_of(rules: RuleSet, first: Level, second: Level) -> tuple[Level, ...]:
    return tuple(first if seat % 2 == 0 else second for seat in range(rules.seats))


@pytest.mark.parametrize("rules", [CLASSIC, FIVES2], ids=["classic", "web_fives 2"])
def test_twenty_games_per_pairing_end_with_a_winner_and_replay_for_their_seed(
    rules: RuleSet,
) -> None:
    for lower, higher in PAIRINGS:
        for game in range(20):
            first, second = (higher, lower) if game % 2 == 0 else (lower, higher)
            levels = seats_of(rules, first, second)
            result = play_game(rules, levels, derive(1, game))
            assert 0 <= result.winner < rules.sides
            assert result.scores[result.winner] >= rules.target
            assert result.rounds >= 1 and result.commands > 0
            if game < 3:
                assert play_game(rules, levels, derive(1, game)) == result


def test_different_seeds_give_different_games() -> None:
    levels = seats_of(CLASSIC, Level.SOLID, Level.STRONG)
    results = {play_game(CLASSIC, levels, seed) for seed in range(6)}
    assert len(results) > 1


def test_each_player_sees_its_own_seat_only_and_plays_its_level() -> None:
    levels = (Level.STRONG, Level.BEGINNER, Level.SOLID, Level.BEGINNER)
    seen: list[tuple[Level, Observation]] = []

    def spy(level: Level, observation: Observation, chance: Chance) -> Decision:
        seen.append((level, observation))
        return decide(level, observation, chance)

    play_game(CLASSIC, levels, 5, spy)
    assert seen
    for level, observation in seen:
        assert observation.turn == observation.seat
        assert level is levels[observation.seat]
        assert len(observation.hand) == observation.tile_counts[observation.seat]


def test_one_level_per_seat() -> None:
    with pytest.raises(ValueError, match="4 seats need 4 levels"):
        play_game(CLASSIC, (Level.SOLID, Level.STRONG), 1)


def test_a_game_that_does_not_end_is_cut_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tournament, "MAX_COMMANDS", 10)
    with pytest.raises(RuntimeError, match="did not end"):
        play_game(CLASSIC, seats_of(CLASSIC, Level.SOLID, Level.STRONG), 1)


def test_a_result_names_the_winning_side_rounds_scores_and_commands() -> None:
    assert GameResult._fields == ("winner", "rounds", "scores", "commands")
