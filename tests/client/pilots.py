"""What the terminal client's tests (and the screenshot script) share: three scripted seats
that join a table and play at once, and the steps a person takes through the screens, each
waiting on a condition with a deadline (never a fixed sleep)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from dominos.v1 import game_pb2
from textual.css.query import NoMatches
from textual.pilot import Pilot
from textual.widget import Widget
from textual.widgets import Button, Select, Static

from services.client.app import DominosApp
from services.client.bots import ScriptedSeat
from services.client.game_screen import GameScreen
from services.client.lobby import code_text
from services.client.lobby_screen import LobbyScreen
from services.client.tiles import hand_items
from services.client.widgets import Plain, widget_text
from testing.waiting import wait_for

TURN_S = 30.0
AWAY_S = 10.0
BREAK_S = 2.0

#: The widgets of the table around the player, north to south.
SEAT_WIDGETS = ("north", "west", "east", "south")


@dataclass
class Bots:
    """Three scripted seats that play at once on their turns, and their watch tasks."""

    seats: list[ScriptedSeat]
    tasks: list[asyncio.Task[game_pb2.TableView | None]]

    @classmethod
    def connect(cls, address: str, names: tuple[str, ...] = ("Bot1", "Bot2", "Bot3")) -> Bots:
        """Seats named ``names`` (three by default) with a channel each to ``address``, not
        seated yet."""
        seats = [ScriptedSeat(name, address, seed=i) for i, name in enumerate(names, start=1)]
        for seat in seats:
            seat.connect()
        return cls(seats, [])

    @property
    def all_watching_again(self) -> bool:
        return all(s._stream is not None and s._stream.streams_opened >= 2 for s in self.seats)

    async def join(self, code: str) -> None:
        """Join with the invitation code, then watch and play."""
        for bot in self.seats:
            assert bot.client is not None
            bot.credentials, _ = await bot.client.join_table(code, bot.name)
            self.tasks.append(asyncio.create_task(bot.run()))
        await wait_for(lambda: all(b.views for b in self.seats), timeout=10, message="bots")

    async def close(self) -> None:
        """Stop watching and close the channels."""
        for task in self.tasks:
            task.cancel()
        for seat in self.seats:
            await seat.close()


def current(app: DominosApp) -> game_pb2.TableView:
    assert app.view is not None
    return app.view


def my_turn(app: DominosApp) -> bool:
    view = app.view
    return (
        view is not None
        and view.phase == game_pb2.PHASE_PLAYING
        and view.HasField("turn_seat")
        and view.turn_seat == view.your_seat
    )


def text_of(app: DominosApp, widget_id: str) -> str:
    """The text of a widget of the lobby (before the start) or of the game screen."""
    playing = app.view is not None and app.view.phase != game_pb2.PHASE_WAITING
    screen: GameScreen | LobbyScreen = app.game_screen if playing else app.lobby_screen
    return widget_text(screen.query_one(f"#{widget_id}", Static))


def seats_text(app: DominosApp) -> str:
    """Every seat of the table as drawn around the player, north, west, east, south."""
    return "\n".join(text_of(app, side) for side in SEAT_WIDGETS)


async def create_and_start(pilot: Pilot[None], app: DominosApp, bots: Bots) -> None:
    """Through the start screen and the lobby, as a person would: target 500, create, let
    the bots join, S."""
    await pilot.pause()
    app.screen.query_one("#target", Select).value = 500
    await pilot.click("#create")
    await wait_for(lambda: isinstance(app.screen, LobbyScreen) and app.code, timeout=10)
    await pilot.pause()
    lobby = text_of(app, "lobby")
    if app.lang == "fr":
        assert f"Code d'invitation : {code_text(app.code)}" in lobby
        assert "Objectif : 500 points" in lobby
    else:
        assert f"Invitation code: {code_text(app.code)}" in lobby
        assert "Target: 500 points" in lobby
    start = app.lobby_screen.query_one("#start", Button)
    assert start.disabled  # R3: one seated
    await bots.join(app.code)
    await wait_for(lambda: sum(s.occupied for s in current(app).seats) == 4, timeout=10)
    await pilot.pause()
    assert not start.disabled
    assert ("Bot3 (équipe B)" if app.lang == "fr" else "Bot3 (team B)") in text_of(app, "lobby")
    await pilot.press("s")
    await shows_game(pilot, app)


async def shows_game(pilot: Pilot[None], app: DominosApp) -> None:
    """Until the game screen is up and drawn."""
    await wait_for(
        lambda: isinstance(app.screen, GameScreen) and text_of(app, "header"),
        timeout=10,
        ignore=(NoMatches,),
        message="game screen",
    )
    await pilot.pause()


async def moved_on(app: DominosApp, view: game_pb2.TableView) -> None:
    """Until the app shows a newer version than ``view``."""
    await wait_for(lambda: current(app).version > view.version, timeout=10, message="moved on")


async def play_first_legal(pilot: Pilot[None], app: DominosApp) -> None:
    """On our turn with a play possible: select the first playable tile by its number key and
    lay it with L or R; returns once the view moved on."""
    view = current(app)
    item = next(i for i in hand_items(view) if i.playable)
    await pilot.press(str(item.index + 1))
    key = "l" if game_pb2.END_LEFT in item.ends else "r"
    await pilot.press(key)
    await moved_on(app, view)


async def play_our_turn(pilot: Pilot[None], app: DominosApp) -> None:
    """On our turn: pass when nothing fits, else lay the first playable tile."""
    view = current(app)
    if view.can_pass:
        await pilot.press("p")
        await moved_on(app, view)
    else:
        await play_first_legal(pilot, app)


def fits(app: DominosApp, widget_ids: tuple[str, ...]) -> list[str]:
    """What does not fit the terminal: the screen scrolls, or one of ``widget_ids`` (shown)
    is drawn outside the screen or clipped (its content taller than its region). Empty when
    everything fits."""
    screen = app.screen
    problems = []
    if screen.max_scroll_y or screen.max_scroll_x:
        problems.append(f"the screen scrolls ({screen.max_scroll_x}, {screen.max_scroll_y})")
    area = screen.region
    for widget_id in widget_ids:
        widget: Widget = screen.query_one(f"#{widget_id}")
        region = widget.region
        if not widget.display:
            continue
        if region.area == 0 or not area.contains_region(region):
            problems.append(f"#{widget_id} is outside the screen: {region} of {area}")
        elif isinstance(widget, Plain):
            inner = widget.content_region
            needed = widget.get_content_height(area.size, area.size, inner.width)
            if needed > inner.height:
                problems.append(f"#{widget_id} is clipped: {needed} lines in {inner}")
    return problems
