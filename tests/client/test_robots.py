"""Computer players in words (services/client/robots.py, issue 20): the levels, a robot's
seat, a player's stand-in with the time to come back, the host's options for the lobby, the
options of a creation; never a robot option with the games that have none."""

from __future__ import annotations

import time

import pytest
from dominos.v1 import game_pb2

from services.client import texts
from services.client.robots import (
    FRIENDLY_END_PRESETS,
    LEVELS,
    ROBOT_PRESETS,
    a_robot,
    clock_time,
    duration_text,
    level_word,
    options_lines,
    practice_options,
    robot_label,
    robots_label,
    stand_in_text,
    table_options,
)
from services.client.rule_sets import PLAYABLE
from tests.client.views import RULE_ID, make_view

BEGINNER = game_pb2.ROBOT_LEVEL_BEGINNER
SOLID = game_pb2.ROBOT_LEVEL_SOLID
STRONG = game_pb2.ROBOT_LEVEL_STRONG
#: 14:32 local time on some day (the stand-in's deadline as the player's clock reads it).
AT_14_32 = int(time.mktime((2024, 5, 17, 14, 32, 0, 0, 0, -1)) * 1000)


def test_the_games_with_robots_are_the_web_app_and_site_games_never_classic_or_family() -> None:
    assert set(ROBOT_PRESETS) == {"web_draw", "web_block", "web_fives", "app", "site"}
    assert set(ROBOT_PRESETS) <= set(PLAYABLE)
    assert "classic" not in ROBOT_PRESETS and "family_draw" not in ROBOT_PRESETS
    assert FRIENDLY_END_PRESETS == ("site",)


def test_every_level_has_its_words_in_both_languages() -> None:
    assert LEVELS == (BEGINNER, SOLID, STRONG)
    assert [level_word(level, "fr") for level in LEVELS] == ["débutant", "solide", "fort"]
    assert [level_word(level, "en") for level in LEVELS] == ["beginner", "solid", "strong"]
    assert robot_label(STRONG, "fr") == "robot fort"
    assert robot_label(STRONG, "en") == "strong robot"
    assert robots_label(BEGINNER, "fr") == "robots débutants"
    assert robots_label(SOLID, "en") == "solid robots"
    assert a_robot(SOLID, "fr") == "un robot solide"
    assert a_robot(SOLID, "en", capital=True) == "A solid robot"
    assert robot_label(99, "fr") == "robot"  # a level of a newer server: still a robot


def test_a_stand_in_says_a_robot_plays_and_until_when_the_player_may_come_back() -> None:
    assert clock_time(AT_14_32) == "14:32"
    seat = game_pb2.SeatInfo(name="Bob", occupied=True, stand_in=SOLID)
    seat.stand_in_until_ms = AT_14_32
    assert stand_in_text(seat, "fr") == "joué par un robot (retour avant 14:32)"
    assert stand_in_text(seat, "en") == "played by a robot (back by 14:32)"
    assert stand_in_text(game_pb2.SeatInfo(name="Bob", occupied=True), "fr") == ""


@pytest.mark.parametrize(("seconds", "shown"), [(180, "3 min"), (150, "2 min 30 s"), (45, "45 s")])
def test_durations(seconds: int, shown: str) -> None:
    assert duration_text(seconds) == shown


def test_the_hosts_options_in_words_for_the_lobby() -> None:
    view = make_view(phase=game_pb2.PHASE_WAITING)
    assert options_lines(view, "fr") == []  # a table without options
    view.options.fill_empty_seats = SOLID
    view.options.replace_disconnected = STRONG
    view.options.friendly_end = True
    assert options_lines(view, "fr") == [
        "Places vides au lancement : des robots solides les prennent",
        "Joueur parti : un robot fort joue pour lui (3 min pour revenir)",
        "Fin amiable : possible si tous les joueurs sont d'accord (30 s pour répondre)",
    ]
    view.options.return_seconds = 600
    view.options.vote_seconds = 20
    assert options_lines(view, "en") == [
        "Empty seats at the start: solid robots take them",
        "A player who drops: a strong robot plays (10 min to come back)",
        "Friendly end: if every player agrees (20 s to answer)",
    ]
    practice = make_view(phase=game_pb2.PHASE_WAITING)
    practice.options.CopyFrom(practice_options(4, BEGINNER))
    assert options_lines(practice, "fr") == ["Entraînement : contre des robots débutants"]
    for lang in texts.LANGS:
        assert not [line for line in options_lines(view, lang) if RULE_ID.search(line)]


def test_the_options_of_a_creation() -> None:
    assert table_options() is None  # nothing chosen: no options in the request
    chosen = table_options(fill=SOLID, replace=0, friendly_end=True)
    assert chosen is not None
    assert chosen.fill_empty_seats == SOLID
    assert chosen.replace_disconnected == game_pb2.ROBOT_LEVEL_UNSPECIFIED
    assert chosen.friendly_end and not chosen.practice
    practice = practice_options(3, STRONG)
    assert list(practice.practice) == [STRONG, STRONG]  # one robot per seat after the host's
