"""The lobby screen (services/client/lobby_screen.py) on crafted views: it fits 80 x 24, and
Start with fewer than four says why."""

from __future__ import annotations

from dominos.v1 import game_pb2

from services.client import texts
from services.client.app import DominosApp
from services.client.widgets import screen_text
from tests.client.pilots import fits, text_of
from tests.client.views import SMALL, view_of


async def test_the_lobby_fits_80_by_24() -> None:
    app = DominosApp(lang="fr", connect=False)
    async with app.run_test(size=SMALL) as pilot:
        app.code = "ABCDE23456"
        app.apply_view(view_of(game_pb2.PHASE_WAITING))
        await pilot.pause()
        app.set_status("Connecté · 127.0.0.1:50051")
        app.lobby_screen.say(texts.ui("unavailable", "fr"))  # the longest message
        await pilot.pause()
        assert fits(app, ("lobby", "start", "lobby-hint", "message", "status")) == []
        shown = screen_text(app)
        assert "Code d'invitation : ABCDE-23456" in shown
        assert "Éric de la Fontaine (équipe B)" in shown
        assert texts.ui("lobby_host_keys", "fr") in shown


async def test_start_with_fewer_than_four_says_why_to_the_host_and_a_guest() -> None:
    app = DominosApp(lang="fr", connect=False)
    async with app.run_test(size=SMALL) as pilot:
        view = view_of(game_pb2.PHASE_WAITING)
        view.seats[2].Clear()
        view.seats[3].Clear()
        app.apply_view(view)
        await pilot.pause()
        await pilot.press("s")
        await pilot.pause()
        assert (
            text_of(app, "message") == "Il faut quatre joueurs pour lancer la partie : 2/4 assis."
        )
        guest = view_of(game_pb2.PHASE_WAITING, your_seat=1, version=4)
        app.apply_view(guest)
        await pilot.pause()
        assert text_of(app, "message") == ""  # two more seated: the old reason is gone
        await pilot.press("s")
        await pilot.pause()
        assert text_of(app, "message") == "Seul l'hôte peut lancer la partie."
