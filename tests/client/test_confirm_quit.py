"""Asking before quitting (services/client/confirm_quit.py): mid-game the question says how to
come back and a second Ctrl+C answers yes (and, where a robot replaces a player who drops,
that it keeps the seat unless they come back in time); a finished game quits without
asking."""

from __future__ import annotations

from dominos.v1 import game_pb2
from textual.widgets import Static

from services.client import texts
from services.client.app import DominosApp
from services.client.confirm_quit import ConfirmQuit
from services.client.widgets import screen_text, widget_text
from testing.waiting import wait_for
from tests.client.pilots import shows_game
from tests.client.views import SEAT, SMALL, crowded, finished


async def test_quitting_mid_game_asks_first_and_says_how_to_come_back() -> None:
    app = DominosApp("gw.example:443", lang="fr", connect=False)
    async with app.run_test(size=SMALL) as pilot:
        app.credentials, app.code = SEAT, "ABCDE23456"
        app.apply_view(crowded(turn_seat=2))
        await shows_game(pilot, app)
        await pilot.press("q")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmQuit)
        question = widget_text(app.screen.query_one("#question", Static))
        command = "dominos play --gateway gw.example:443 --resume ABCDE23456"
        assert question.endswith(f"Pour revenir :\n{command}")  # on its own line, to copy
        assert "la table joue pour vous" in question
        assert command in screen_text(app)
        await pilot.press("n")
        await pilot.pause()
        assert not isinstance(app.screen, ConfirmQuit) and not app._exit
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmQuit)
        await pilot.press("ctrl+c")  # a second Ctrl+C: yes
        await wait_for(lambda: app._exit, timeout=5, message="exit")
    assert command in app.farewell and "la table joue pour vous" in app.farewell


async def test_quitting_a_finished_game_asks_nothing() -> None:
    app = DominosApp(lang="en", connect=False)
    async with app.run_test(size=SMALL) as pilot:
        app.credentials, app.code = SEAT, "ABCDE23456"
        app.apply_view(finished())
        await shows_game(pilot, app)
        await pilot.press("q")
        await pilot.pause()
        assert app._exit and app.farewell == ""


async def test_quitting_where_a_robot_replaces_a_player_says_it_keeps_the_seat_after_a_while() -> (
    None
):
    for lang in texts.LANGS:
        app = DominosApp(lang=lang, connect=False)
        async with app.run_test(size=SMALL) as pilot:
            app.credentials, app.code = SEAT, "ABCDE23456"
            view = crowded(turn_seat=2)
            view.options.replace_disconnected = game_pb2.ROBOT_LEVEL_STRONG
            view.options.return_seconds = 300
            app.apply_view(view)
            await shows_game(pilot, app)
            question = app.quit_question()
            assert question is not None
            if lang == "fr":
                assert question.startswith(
                    "Quitter la partie ? Un robot fort joue pour vous : revenez dans les 5 min, "
                    "sinon il garde votre place pour de bon."
                )
            else:
                assert question.startswith(
                    "Quit the game? A strong robot plays for you: come back within 5 min, or it "
                    "keeps your seat for good."
                )
            assert question.endswith("dominos play --resume ABCDE23456")
