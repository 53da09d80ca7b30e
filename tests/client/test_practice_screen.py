"""The practice screen (services/client/practice_screen.py, issue 20): it fits 80 x 24, offers
only the games with robots, and Play creates a practice table (a robot of the chosen level
in every other seat), starts it and opens the game at once; Escape goes back. The app's
calls are recorded by a fake gateway client (no cluster)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import grpc
from dominos.v1 import game_pb2
from textual.widgets import Select

from services.client import texts
from services.client.api import SeatCredentials
from services.client.app import DominosApp
from services.client.game_screen import GameScreen
from services.client.lobby_screen import LobbyScreen
from services.client.practice_screen import PracticeScreen
from services.client.robots import ROBOT_PRESETS
from services.client.start_screen import StartScreen
from services.client.widgets import screen_text
from services.common.service_errors import Reason, ServiceError
from testing.waiting import wait_for
from tests.client.pilots import fits, text_of
from tests.client.views import SMALL, ruled_view

WIDGETS = ("preset", "seats", "target", "level", "play", "back", "practice-keys", "error")


class Silent:
    """A view stream that never sends anything (the view the app shows is the start's)."""

    def __aiter__(self) -> AsyncIterator[Any]:
        return self

    async def __anext__(self) -> Any:
        await asyncio.Event().wait()

    def cancel(self) -> None:
        """Nothing to cancel."""


class FakeGateway:
    """Records CreateTable and StartGame; the table it creates is a practice table of the
    requested rule set with a robot in every other seat; ``refuse_start`` refuses the start."""

    def __init__(self, refuse_start: bool = False) -> None:
        self.calls: list[tuple[str, Any]] = []
        self.refuse_start = refuse_start
        self.seat = SeatCredentials("t" * 22, 0, "token")
        self.options: game_pb2.TableOptions | None = None

    def _table(self, rules: game_pb2.RuleChoice, phase: int) -> game_pb2.TableView:
        key = game_pb2.Preset.Name(rules.preset).removeprefix("PRESET_").lower()
        choice = {"teams": rules.teams} if rules.HasField("teams") else {}
        names = ("Ana", "Robot 2", "Robot 3", "Robot 4")
        view = ruled_view(key, rules.seats, phase, names=names, **choice)
        for seat in view.seats[1:]:
            seat.robot = game_pb2.ROBOT_LEVEL_STRONG
        if self.options is not None:
            view.options.CopyFrom(self.options)
        return view

    async def create_table(
        self,
        name: str,
        target: int,
        rules: game_pb2.RuleChoice,
        options: game_pb2.TableOptions | None,
    ) -> tuple[SeatCredentials, str, game_pb2.TableView]:
        self.calls.append(("create", (name, target, rules, options)))
        self.rules, self.options = rules, options
        return self.seat, "ABCDE23456", self._table(rules, game_pb2.PHASE_WAITING)

    async def start(self, seat: SeatCredentials) -> game_pb2.TableView:
        self.calls.append(("start", seat))
        if self.refuse_start:
            error = ServiceError(grpc.StatusCode.UNAVAILABLE, Reason.UNAVAILABLE, "down")
            raise grpc.aio.AioRpcError(
                error.code,
                grpc.aio.Metadata(),
                grpc.aio.Metadata(*error.trailing_metadata()),
                error.message,
            )
        view = self._table(self.rules, game_pb2.PHASE_PLAYING)
        view.version = 8
        return view

    def watch(self, seat: SeatCredentials) -> Silent:
        return Silent()

    async def close(self) -> None:
        """Nothing to close."""


async def open_practice(app: DominosApp, pilot: Any) -> PracticeScreen:
    await pilot.pause()
    await pilot.click("#practice")
    await wait_for(lambda: isinstance(app.screen, PracticeScreen), timeout=5, message="practice")
    await pilot.pause()
    screen = app.screen
    assert isinstance(screen, PracticeScreen)
    return screen


async def test_the_practice_screen_fits_80_by_24_and_offers_only_the_games_with_robots() -> None:
    for lang in texts.LANGS:
        app = DominosApp(lang=lang, connect=False, player_name="Ana")
        async with app.run_test(size=SMALL) as pilot:
            screen = await open_practice(app, pilot)
            screen.show_error(texts.ui("unavailable", lang))  # the longest message
            await pilot.pause()
            assert fits(app, WIDGETS) == [], lang
            shown = screen_text(app)
            print(f"\n{shown}")
            assert texts.ui("practice_title", lang) in shown
            presets = screen.query_one("#preset", Select)
            assert [value for _, value in presets._options] == list(ROBOT_PRESETS)
            assert screen.query_one("#level", Select).value == game_pb2.ROBOT_LEVEL_SOLID
            await pilot.press("escape")
            await pilot.pause()
            assert isinstance(app.screen, StartScreen)


async def test_play_creates_a_practice_table_starts_it_and_opens_the_game() -> None:
    gateway = FakeGateway()
    app = DominosApp(lang="fr", connect=False, player_name="Ana")
    async with app.run_test(size=SMALL) as pilot:
        app.client = gateway  # type: ignore[assignment]
        screen = await open_practice(app, pilot)
        screen.query_one("#preset", Select).value = "site"
        await pilot.pause()
        screen.query_one("#seats", Select).value = "4s"  # four, each for themselves
        screen.query_one("#level", Select).value = game_pb2.ROBOT_LEVEL_STRONG
        await pilot.pause()
        await pilot.click("#play")
        await wait_for(lambda: isinstance(app.screen, GameScreen), timeout=5, message="game")
        await pilot.pause()
        assert [kind for kind, _ in gateway.calls] == ["create", "start"]  # no lobby, no code
        name, target, rules, options = gateway.calls[0][1]
        assert (name, target) == ("Ana", 100)
        assert rules.preset == game_pb2.PRESET_SITE and rules.seats == 4 and not rules.teams
        assert rules.HasField("teams")
        assert list(options.practice) == [game_pb2.ROBOT_LEVEL_STRONG] * 3
        assert options.friendly_end  # F ends a practice game at once, unscored
        assert "robot fort" in text_of(app, "east")
        assert text_of(app, "vote") == texts.ui("friendly_end_hint", "fr")
        assert app.credentials == gateway.seat and app.code == "ABCDE23456"


async def test_a_refused_start_opens_the_lobby_with_the_refusal() -> None:
    gateway = FakeGateway(refuse_start=True)
    app = DominosApp(lang="en", connect=False, player_name="Ana")
    async with app.run_test(size=SMALL) as pilot:
        app.client = gateway  # type: ignore[assignment]
        await open_practice(app, pilot)
        await pilot.click("#play")
        await wait_for(lambda: isinstance(app.screen, LobbyScreen), timeout=5, message="lobby")
        await pilot.pause()
        assert text_of(app, "message") == texts.ui("unavailable", "en")
        assert "Robot 2 (strong robot)" not in text_of(app, "lobby")  # each for themselves
        assert "Robot 2 · strong robot" in text_of(app, "lobby")
