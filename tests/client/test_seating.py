"""The table around the player (services/client/seating.py): partner across, next player on
the right, what each seat shows (robots too), side columns wrapped between words."""

from __future__ import annotations

import time

from dominos.v1 import game_pb2

from services.client.seating import relative_seats, seat_column, seat_facts, seat_strip
from tests.client.views import make_view

AT_14_32 = int(time.mktime((2024, 5, 17, 14, 32, 0, 0, 0, -1)) * 1000)


def test_the_partner_sits_across_and_the_next_player_on_the_right() -> None:
    assert relative_seats(0) == {"south": 0, "east": 1, "north": 2, "west": 3}
    assert relative_seats(3) == {"south": 3, "east": 0, "north": 1, "west": 2}


def test_a_seat_shows_name_team_tiles_away_turn_and_passes_in_words() -> None:
    view = make_view(turn_seat=1, passes={1: [2, 5]}, your_seat=3)
    view.seats[1].connected = False
    assert seat_facts(view, 1, "fr") == [
        "▶ Bob (B, partenaire)",
        "5 dominos",
        "absent",
        "à son tour",
        "A passé sur cinq et deux",
    ]
    assert seat_strip(view, 3, "en") == "Dee (B, you) · 5 tiles"
    assert seat_strip(view, 0, "en") == "Ann (A) · 5 tiles"


def test_a_side_column_wraps_between_words_and_cuts_only_a_word_too_long() -> None:
    view = make_view(passes={3: [2, 4, 5, 6]})
    view.seats[3].name = "Dominique-Alexandre"
    column = seat_column(view, 3, "fr", 15)
    assert all(len(line) <= 15 for line in column)
    assert " ".join(column[-3:]) == "A passé sur six, cinq, quatre et deux"


def test_a_robot_seat_shows_the_robot_and_a_stand_in_until_when_its_player_may_return() -> None:
    view = make_view()
    view.seats[1].name = "Robot 2"
    view.seats[1].robot = game_pb2.ROBOT_LEVEL_STRONG
    assert seat_facts(view, 1, "fr") == ["Robot 2 (B)", "robot fort", "5 dominos"]
    assert seat_strip(view, 1, "en") == "Robot 2 (B) · strong robot · 5 tiles"
    view.seats[3].connected = False  # dropped: a robot plays for Dee meanwhile
    view.seats[3].stand_in = game_pb2.ROBOT_LEVEL_SOLID
    view.seats[3].stand_in_until_ms = AT_14_32
    assert seat_facts(view, 3, "fr") == [
        "Dee (B)",
        "5 dominos",
        "joué par un robot (retour avant 14:32)",
    ]  # instead of "absent"
    assert seat_strip(view, 3, "en") == "Dee (B) · 5 tiles · played by a robot (back by 14:32)"
    column = seat_column(view, 3, "fr", 15)
    assert column[2:] == ["joué par un", "robot (retour", "avant 14:32)"]
