"""The table around the player (services/client/seating.py): partner across, next player on
the right, what each seat shows, side columns wrapped between words."""

from __future__ import annotations

from services.client.seating import relative_seats, seat_column, seat_facts, seat_strip
from tests.client.views import make_view


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
