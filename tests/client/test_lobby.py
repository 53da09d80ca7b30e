"""The lobby in words (services/client/lobby.py, S1, R3): the code, one line per seat."""

from __future__ import annotations

from dominos.v1 import game_pb2

from services.client.lobby import lobby_lines, seat_line
from tests.client.views import make_view


def test_the_seat_line_shows_team_tiles_and_passes_in_words() -> None:
    view = make_view(passes={1: [2, 5]}, turn_seat=1)
    assert seat_line(view, 1, "fr") == ("▶ Bob (équipe B) · 5 dominos · A passé sur cinq et deux")
    assert seat_line(view, 1, "en") == "▶ Bob (team B) · 5 tiles · Passed on five and two"
    assert seat_line(view, 0, "fr") == "  Ann (équipe A, hôte, vous) · 5 dominos"
    view.seats[3].connected = False
    assert "déconnecté" in seat_line(view, 3, "fr")


def test_lobby_lines_show_the_code_and_who_is_seated() -> None:
    view = make_view(phase=game_pb2.PHASE_WAITING)
    view.seats[3].occupied = False
    lines = lobby_lines(view, "ABCDE23456", "fr")
    assert lines[0] == "Code d'invitation : ABCDE-23456"  # read out in two groups
    assert "  (place libre)" in lines
    assert lines[-1] == "En attente de joueurs : 3/4 assis."
    assert lobby_lines(make_view(phase=game_pb2.PHASE_WAITING), "X", "en")[-1] == (
        "Four players: the host can start the game."
    )
