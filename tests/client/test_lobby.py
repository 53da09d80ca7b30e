"""The lobby in words (services/client/lobby.py, S1, R3): the code, the host's options, one
line per seat (robots too)."""

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


def test_the_lobby_shows_the_hosts_options_robots_and_that_robots_take_the_empty_seats() -> None:
    view = make_view(phase=game_pb2.PHASE_WAITING)
    view.seats[2].Clear()
    view.seats[3].Clear()
    view.options.fill_empty_seats = game_pb2.ROBOT_LEVEL_SOLID
    view.options.replace_disconnected = game_pb2.ROBOT_LEVEL_BEGINNER
    lines = lobby_lines(view, "ABCDE23456", "fr")
    assert lines[2:4] == [
        "Places vides au lancement : des robots solides les prennent",
        "Joueur parti : un robot débutant joue pour lui (3 min pour revenir)",
    ]
    assert lines[-1] == (
        "2/4 assis : l'hôte peut lancer maintenant, des robots solides prendront les places vides."
    )
    assert lobby_lines(view, "X", "en")[-1] == (
        "2/4 seated: the host can start now, solid robots will take the empty seats."
    )
    view.seats[1].name = "Robot 2"
    view.seats[1].robot = game_pb2.ROBOT_LEVEL_STRONG
    assert seat_line(view, 1, "fr") == "  Robot 2 (équipe B) · robot fort"
