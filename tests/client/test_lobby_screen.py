"""The lobby screen (services/client/lobby_screen.py) on crafted views: it fits 80 x 24, and
Start with fewer than four says why; with robots for the empty seats the host starts at
once (the options shown, the keys say so)."""

from __future__ import annotations

from dominos.v1 import game_pb2
from textual.widgets import Button

from services.client import texts
from services.client.app import DominosApp
from services.client.widgets import screen_text
from testing.waiting import wait_for
from tests.client.pilots import fits, text_of
from tests.client.views import LONG_NAMES, SMALL, ruled_view, view_of


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


def site_lobby(your_seat: int = 0, version: int = 3) -> game_pb2.TableView:
    """A four-seat site lobby with long names, two seated, every option chosen."""
    view = ruled_view("site", 4, game_pb2.PHASE_WAITING, names=LONG_NAMES)
    view.your_seat, view.version = your_seat, version
    view.seats[2].Clear()
    view.seats[3].Clear()
    view.options.fill_empty_seats = game_pb2.ROBOT_LEVEL_SOLID
    view.options.replace_disconnected = game_pb2.ROBOT_LEVEL_STRONG
    view.options.friendly_end = True
    return view


async def test_with_robots_for_the_empty_seats_the_host_starts_at_once_and_it_fits() -> None:
    started: list[str] = []
    for lang in texts.LANGS:
        app = DominosApp(lang=lang, connect=False)

        async def start_game(lang: str = lang) -> None:
            started.append(lang)

        app.start_game = start_game  # type: ignore[method-assign]
        async with app.run_test(size=SMALL) as pilot:
            app.code = "ABCDE23456"
            app.apply_view(site_lobby())
            await pilot.pause()
            app.set_status("Connecté · 127.0.0.1:50051")
            app.lobby_screen.say(texts.ui("unavailable", lang))
            await pilot.pause()
            assert fits(app, ("lobby", "start", "lobby-hint", "message", "status")) == [], lang
            print(f"\n{screen_text(app)}")
            assert not app.lobby_screen.query_one("#start", Button).disabled  # 2/4 seated
            lobby = text_of(app, "lobby")
            hint = text_of(app, "lobby-hint")
            if lang == "fr":
                assert "Places vides au lancement : des robots solides les prennent" in lobby
                assert "Fin amiable : possible" in lobby
                assert "S : lancer maintenant (robots solides aux places vides)" in hint
            else:
                assert "Joueur parti" not in lobby and "A player who drops: a strong" in lobby
                assert "S: start now (solid robots in the empty seats)" in hint
            await pilot.press("s")

            def sent(lang: str = lang) -> bool:
                return lang in started

            await wait_for(sent, timeout=5, message="start sent")


async def test_a_guest_is_told_the_host_may_start_at_any_time_with_robots() -> None:
    app = DominosApp(lang="fr", connect=False)
    async with app.run_test(size=SMALL) as pilot:
        app.apply_view(site_lobby(your_seat=1))
        await pilot.pause()
        assert text_of(app, "lobby-hint") == texts.ui("lobby_guest_fill", "fr")
        assert not app.lobby_screen.query_one("#start", Button).display


async def test_a_view_arriving_while_the_lobby_is_torn_down_is_not_an_error() -> None:
    """A lobby view can arrive while the app closes (its stream still delivers): the lobby's
    widgets are already gone, and nothing is drawn (seen in CI as NoMatches('#lobby') out of
    a closed client's stream worker, failing the app)."""
    app = DominosApp(lang="fr", connect=False)
    async with app.run_test(size=SMALL) as pilot:
        app.apply_view(view_of(game_pb2.PHASE_WAITING))
        await pilot.pause()
        assert app.lobby_screen.ready
        await app.lobby_screen.query_one("#lobby").remove()  # as the teardown removes it
        app.apply_view(view_of(game_pb2.PHASE_WAITING, version=9))  # no NoMatches
        await pilot.pause()
        assert app.view is not None and app.view.version == 9
