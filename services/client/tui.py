"""The reference terminal client of Dominos, built on textual (``dominos play``).

Three screens, keyboard-driven:

- **start** (:class:`StartScreen`): your name; create a table choosing its target (R16: 50 to
  500 in steps of 50), or join one with an invitation code (S1).
- **lobby** (:class:`LobbyScreen`): the invitation code, the seated players, the target (the
  host changes it with ``+``/``-``), and *Start* for the host, enabled only with four seated
  (R3).
- **game** (:class:`GameScreen`): a header with the target and both teams' scores; every
  seat with its team, tiles left and passes in words (R10); whose turn it is with the seconds
  left (R11); the chain and its two open ends (R8); your hand with the playable tiles marked
  (``legal_moves``); a *Pass* button that is disabled while a play is possible (R9,
  ``can_pass``); the end-of-round summary (D1, with the tie rule R14 spelled out) and the
  winner (R17).

Keys on the game screen: ``←``/``→`` or ``1``-``7`` select a tile; ``L`` (or ``G``) lays it on
the left end, ``R`` (or ``D``) on the right end, ``Enter`` on its only possible end; ``P``
passes; ``Q`` quits. In the hand, ``>`` marks the selected tile and ``*`` the playable ones
(also highlighted in colour).

All the words come from :mod:`services.client.texts` (pure, unit-tested); this module only
lays them out, as plain text: names, codes and the server's messages are text, never markup
(see :class:`Plain`). The seat's view stream is a :class:`~services.client.stream.ViewStream`:
when the gateway restarts, the client reconnects with its seat token (backoff) and resumes from
the new stream's first view; commands are retried with the same request id meanwhile.
"""

from __future__ import annotations

import io
import time
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Any, ClassVar, Final, TypeVar

import grpc
from dominos.v1 import game_pb2
from rich.console import Console
from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.css.query import NoMatches
from textual.screen import Screen
from textual.widgets import Button, Input, Label, Select, Static

from services.client import texts
from services.client.api import DominosClient, SeatCredentials
from services.client.seats import SeatStore
from services.client.stream import (
    Backoff,
    StreamEvent,
    StreamFatal,
    ViewStream,
    error_reason,
    retry_command,
)
from services.client.texts import Lang

__all__ = [
    "TARGETS",
    "DominosApp",
    "GameScreen",
    "LobbyScreen",
    "Plain",
    "StartScreen",
    "screen_text",
    "widget_text",
]

T = TypeVar("T")

TARGETS: tuple[int, ...] = tuple(range(50, 501, 50))
"""The targets a host may choose (R16)."""

_REASONS: dict[str, str] = {
    "MUST_PLAY": "must_play",
    "NOT_YOUR_TURN": "not_your_turn",
    "TILE_DOES_NOT_FIT": "does_not_fit",
    "NAME_INVALID": "name_invalid",
    "NAME_TAKEN": "name_taken",
}


def widget_text(widget: Static) -> str:
    """The plain text a :class:`Static` currently shows."""
    content = widget.content
    if isinstance(content, Text):
        return content.plain
    return str(content)


def screen_text(app: App[Any]) -> str:
    """The whole current screen as plain text, as a terminal would show it (for logs and
    reports; the text twin of ``App.export_screenshot``)."""
    width, height = app.size
    console = Console(
        width=width, height=height, file=io.StringIO(), record=True, color_system=None
    )
    console.print(app.screen._compositor.render_update(full=True))
    return console.export_text()


#: Phases with nothing left to come back to: a saved seat is forgotten.
_OVER: Final = (game_pb2.PHASE_FINISHED, game_pb2.PHASE_CLOSED)


class Plain(Static):
    """A :class:`Static` that shows its text as typed, never parsed as markup.

    Names are text, never markup: player names, the invitation code, table ids and the
    server's error messages reach the screen through these widgets, and any of them may hold
    square brackets. Parsed as textual markup, a name ``[/]`` raises ``MarkupError`` (the
    client crashes on every redraw), ``[@click=app.quit]Bob[/]`` becomes a link running an
    action, ``[reverse]X`` or ``[$error]X`` restyles the rest of the line. Every widget of
    this app that shows changing text is a ``Plain`` (labels and buttons show fixed words
    only), so no string from outside is ever read as markup; styled content is passed as a
    ``rich.text.Text`` whose styles are set by code (the hand). Escaping with
    ``rich.markup.escape`` instead would not do: textual's markup is its own dialect, and
    ``[$error]`` or ``[ bold]`` get through rich's escape.
    """

    def __init__(self, content: str = "", *, id: str | None = None) -> None:
        super().__init__(content, id=id, markup=False)


class DominosScreen(Screen[None]):
    """A screen of the Dominos app: typed access to the app and its newest view."""

    ready = False  # composed and mounted (``is_mounted`` turns true only after on_mount)

    @property
    def dominos(self) -> DominosApp:
        """The app this screen belongs to."""
        app = self.app
        assert isinstance(app, DominosApp)
        return app

    def shown_view(self) -> game_pb2.TableView | None:
        """The app's newest view, once the screen can show it (None before)."""
        return self.dominos.view if self.ready else None


class StartScreen(DominosScreen):
    """Create a table (name, target) or join one (name, invitation code)."""

    def __init__(self, lang: Lang, name: str) -> None:
        super().__init__()
        self.lang = lang
        self.player_name = name

    def compose(self) -> ComposeResult:
        """The form."""
        lang = self.lang
        with Vertical(id="start-form"):
            yield Label(texts.ui("title", lang), id="title")
            yield Label(texts.ui("your_name", lang))
            yield Input(value=self.player_name, max_length=24, id="name")
            yield Label(texts.ui("target", lang))
            yield Select([(str(t), t) for t in TARGETS], value=100, allow_blank=False, id="target")
            yield Button(texts.ui("create", lang), id="create", variant="primary")
            yield Label(texts.ui("code", lang))
            yield Input(max_length=16, id="code")
            yield Button(texts.ui("join", lang), id="join")
            yield Plain(texts.ui("start_keys", lang), id="start-keys")
            yield Plain("", id="error")

    async def on_button_pressed(self, event: Button.Pressed) -> None:
        """Create or join with what the form holds."""
        app = self.dominos
        name = self.query_one("#name", Input).value.strip()
        if event.button.id == "create":
            target = self.query_one("#target", Select).value
            app.send(app.create_table(name, int(target) if isinstance(target, int) else 100))
        elif event.button.id == "join":
            app.send(app.join_table(self.query_one("#code", Input).value, name))

    async def on_input_submitted(self, event: Input.Submitted) -> None:
        """Enter in the code field joins."""
        if event.input.id == "code" and event.value.strip():
            app = self.dominos
            app.send(app.join_table(event.value, self.query_one("#name", Input).value.strip()))

    def show_error(self, message: str) -> None:
        """Say why creating or joining failed."""
        self.query_one("#error", Plain).update(message)


class LobbyScreen(DominosScreen):
    """Before the start: code, seats, target; *Start* for the host with four seated (R3)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("s", "start", "Start"),
        Binding("plus,equals_sign", "target(50)", "+50"),
        Binding("minus", "target(-50)", "-50"),
        Binding("q", "app.quit", "Quit"),
    ]

    def compose(self) -> ComposeResult:
        """Lobby text, start button, host keys, status."""
        app = self.dominos
        yield Plain("", id="lobby")
        yield Button(texts.ui("start", app.lang), id="start", disabled=True, variant="primary")
        yield Plain("", id="lobby-hint")
        yield Plain("", id="status")

    def on_mount(self) -> None:
        """Show the newest view."""
        self.ready = True
        self.refresh_view()

    def refresh_view(self) -> None:
        """Redraw from the app's newest view."""
        app = self.dominos
        view = self.shown_view()
        if view is None:
            return
        lang = app.lang
        self.query_one("#lobby", Plain).update("\n".join(texts.lobby_lines(view, app.code, lang)))
        seated = sum(1 for s in view.seats if s.occupied)
        host = view.your_seat == 0
        start = self.query_one("#start", Button)
        start.display = host  # only the host starts (R3)
        start.disabled = not (host and seated == 4)
        self.query_one("#lobby-hint", Plain).update(
            texts.ui("lobby_host_keys" if host else "lobby_guest", lang)
        )
        self.query_one("#status", Plain).update(app.status)

    async def on_button_pressed(self, event: Button.Pressed) -> None:
        """Start."""
        if event.button.id == "start":
            await self.action_start()

    async def action_start(self) -> None:
        """Start the game (host, four seated); the button state mirrors the rule."""
        app = self.dominos
        if not self.query_one("#start", Button).disabled:
            app.send(app.start_game())

    async def action_target(self, delta: int) -> None:
        """Change the target by ``delta`` within 50..500 (host, before the start)."""
        app = self.dominos
        if app.view is not None and app.view.your_seat == 0:
            target = min(500, max(50, app.view.target + delta))
            if target != app.view.target:
                app.send(app.set_target(target))


class GameScreen(DominosScreen):
    """The game: header, seats, turn and countdown, chain, hand, Pass, round summary."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("left", "move(-1)", "←", show=False),
        Binding("right", "move(1)", "→", show=False),
        *[Binding(str(i), f"select({i - 1})", str(i), show=False) for i in range(1, 8)],
        Binding("l,g", "play('left')", "Left"),
        Binding("r,d", "play('right')", "Right"),
        Binding("enter", "play('any')", "Play"),
        Binding("p", "pass_turn", "Pass"),
        Binding("q", "app.quit", "Quit"),
    ]

    selected: int = 0

    def compose(self) -> ComposeResult:
        """The game's widgets."""
        app = self.dominos
        lang = app.lang
        yield Plain("", id="header")
        yield Plain("", id="seats")
        yield Plain("", id="turn")
        yield Plain("", id="last-action")
        yield Plain("", id="chain")
        yield Plain("", id="ends")
        yield Plain("", id="hand")
        with Horizontal(id="actions"):
            yield Button(texts.ui("pass", lang), id="pass", disabled=True)
            yield Plain("", id="message")
        yield Plain("", id="summary")
        yield Plain(texts.ui("keys", lang), id="keys")
        yield Plain("", id="status")

    def on_mount(self) -> None:
        """Show the newest view and tick the countdown."""
        self.ready = True
        self.query_one("#pass", Button).can_focus = False
        self.refresh_view()
        self.set_interval(0.2, self.tick)

    def _items(self) -> list[texts.HandItem]:
        app = self.dominos
        return texts.hand_items(app.view) if app.view is not None else []

    def refresh_view(self) -> None:
        """Redraw everything from the app's newest view (nothing while the screen is not
        mounted: a view can arrive while screens are being switched)."""
        try:
            self._redraw()
        except NoMatches:
            return

    def _redraw(self) -> None:
        app = self.dominos
        view = self.shown_view()
        if view is None:
            return
        lang = app.lang
        self.query_one("#header", Plain).update(texts.header_text(view, lang))
        self.query_one("#seats", Plain).update(
            "\n".join(texts.seat_line(view, s, lang) for s in range(len(view.seats)))
        )
        self.query_one("#last-action", Plain).update(texts.last_action_text(view, lang))
        self.query_one("#chain", Plain).update(
            texts.labelled(texts.ui("chain", lang), texts.chain_text(view, lang), lang)
        )
        self.query_one("#ends", Plain).update(texts.ends_text(view, lang))
        items = self._items()
        if items and not (0 <= self.selected < len(items) and items[self.selected].playable):
            playable = [i.index for i in items if i.playable]
            self.selected = playable[0] if playable else min(self.selected, len(items) - 1)
        self._draw_hand(items)
        self.query_one("#pass", Button).disabled = not view.can_pass
        lines = texts.round_summary_lines(view, lang)
        winner = texts.winner_text(view, lang)
        if winner:
            lines.append(winner)
        elif view.phase == game_pb2.PHASE_CLOSED:
            lines.append(texts.phase_text(view, lang))
        summary = self.query_one("#summary", Plain)
        summary.update("\n".join(lines))
        summary.display = bool(lines)
        self.query_one("#status", Plain).update(app.status)
        self.tick()

    def _draw_hand(self, items: list[texts.HandItem]) -> None:
        app = self.dominos
        text = Text(texts.labelled(texts.ui("hand", app.lang), "", app.lang))
        for item in items:
            chosen = item.index == self.selected
            mark = "*" if item.playable else " "
            label = f"{'>' if chosen else ' '}{item.index + 1}:{item.text}{mark}"
            if item.playable:
                style = "bold black on green" if chosen else "bold green"
            else:
                style = "reverse dim" if chosen else "dim"
            text.append(label, style=style)
            text.append(" ")
        self.query_one("#hand", Plain).update(text)

    def tick(self) -> None:
        """Redraw whose turn it is and the seconds left (R11)."""
        app = self.dominos
        view = self.shown_view()
        if view is None:
            return
        left = texts.remaining_seconds(view, app.received_at, time.monotonic())
        self.query_one("#turn", Plain).update(texts.turn_text(view, left, app.lang))

    def say(self, message: str) -> None:
        """Show a one-line message next to the Pass button."""
        self.query_one("#message", Plain).update(message)

    def action_move(self, step: int) -> None:
        """Select the previous/next tile."""
        items = self._items()
        if items:
            self.selected = (self.selected + step) % len(items)
            self._draw_hand(items)

    def action_select(self, index: int) -> None:
        """Select tile ``index`` (0-based)."""
        items = self._items()
        if 0 <= index < len(items):
            self.selected = index
            self._draw_hand(items)

    async def action_play(self, end: str) -> None:
        """Lay the selected tile on ``end`` (``left``, ``right``, or ``any``: its only end)."""
        app = self.dominos
        items = self._items()
        if not items or app.view is None:
            return
        item = items[min(self.selected, len(items) - 1)]
        lang = app.lang
        if end == "any":
            if not item.ends:
                self.say(texts.ui("does_not_fit", lang))
                return
            if len(item.ends) > 1 and app.view.chain:
                self.say(texts.ui("pick_end", lang))
                return
            chosen = item.ends[0]
        else:
            chosen = game_pb2.END_LEFT if end == "left" else game_pb2.END_RIGHT
        self.say("")
        move = game_pb2.Move(tile=game_pb2.Tile(low=item.low, high=item.high), end=chosen)
        app.send(app.play(move))

    async def action_pass_turn(self) -> None:
        """Pass, only when the view says so (R9); otherwise say why not."""
        app = self.dominos
        if app.view is None:
            return
        if not app.view.can_pass:
            if app.view.legal_moves:
                self.say(texts.ui("must_play", app.lang))
            return
        self.say("")
        app.send(app.pass_turn())

    async def on_button_pressed(self, event: Button.Pressed) -> None:
        """The Pass button."""
        if event.button.id == "pass":
            await self.action_pass_turn()


class DominosApp(App[None]):
    """The terminal client. Give ``create_target`` to create a table at once, ``join_code`` to
    join one at once, neither to open the start screen. ``connect=False`` builds the app
    without a gateway (to show crafted views, e.g. in tests)."""

    TITLE = "Dominos"
    ENABLE_COMMAND_PALETTE = False
    CSS = """
    Screen { padding: 0 1; }
    #start-form { width: 60; height: auto; }
    #title { text-style: bold; }
    #header { background: $primary; color: $text; text-style: bold; padding: 0 1; }
    #seats { margin: 1 0 0 0; }
    #turn { text-style: bold; color: $warning; margin: 1 0 0 0; }
    #chain { margin: 1 0 0 0; }
    #hand { margin: 1 0 0 0; }
    #actions { height: 3; }
    #message { padding: 1 1; }
    #summary { border: round $accent; padding: 0 1; height: auto; }
    #keys { color: $text-muted; }
    #start-keys { color: $text-muted; margin: 1 0 0 0; }
    #status { color: $text-muted; }
    #error { color: $error; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [Binding("ctrl+c", "quit", "Quit", show=False)]

    def __init__(
        self,
        gateway: str = "127.0.0.1:50051",
        *,
        lang: Lang = "fr",
        player_name: str = "",
        create_target: int | None = None,
        join_code: str | None = None,
        resume_code: str | None = None,
        seats: SeatStore | None = None,
        backoff: Backoff | None = None,
        connect: bool = True,
    ) -> None:
        super().__init__()
        self.gateway = gateway
        self.lang: Lang = lang
        self.player_name = player_name
        self.create_target = create_target
        self.join_code = join_code
        self.resume_code = resume_code
        #: Where taken seats are saved (None: nowhere), so a closed client gets its seat back.
        self.seats = seats
        self.backoff = backoff or Backoff()
        self.online = connect
        # Created in on_mount: a grpc.aio channel belongs to the event loop that runs the app.
        self.client: DominosClient | None = None
        self.credentials: SeatCredentials | None = None
        self.code = ""
        self.view: game_pb2.TableView | None = None
        self.received_at = time.monotonic()
        self.status = ""
        self.status_log: deque[str] = deque(maxlen=50)
        self.stream: ViewStream | None = None
        self.start_screen: StartScreen | None = None
        self.lobby_screen = LobbyScreen()
        self.game_screen = GameScreen()
        self._wanted: Screen[None] | None = None

    async def on_mount(self) -> None:
        """Open the start screen, or create/join at once as asked."""
        if self.online:
            self.client = DominosClient(self.gateway)
        self.start_screen = StartScreen(self.lang, self.player_name)
        await self.push_screen(self.start_screen)
        if self.resume_code:
            await self.resume(self.resume_code)
        elif self.join_code:
            await self.join_table(self.join_code, self.player_name)
        elif self.create_target is not None:
            await self.create_table(self.player_name, self.create_target)

    async def on_unmount(self) -> None:
        """Close the channel."""
        if self.client is not None:
            await self.client.close()

    # -- views ----------------------------------------------------------------------------

    def apply_view(self, view: game_pb2.TableView, received_at: float | None = None) -> None:
        """Show ``view`` (older versions are ignored): the lobby before the start, the game
        screen after it. ``received_at`` is the monotonic time it arrived (default: now)."""
        if self.view is not None and view.version < self.view.version:
            return
        self.view = view
        self.received_at = time.monotonic() if received_at is None else received_at
        if view.phase in _OVER and self.seats is not None and self.code:
            self.seats.forget(self.code)  # nothing left to come back to
        wanted: Screen[None] = (
            self.lobby_screen if view.phase == game_pb2.PHASE_WAITING else self.game_screen
        )
        if self._wanted is not wanted:
            self._wanted = wanted
            if self.screen is not wanted:
                self.switch_screen(wanted)
        if isinstance(wanted, (LobbyScreen, GameScreen)):
            wanted.refresh_view()

    def set_status(self, status: str) -> None:
        """Show a connection status line on the lobby and game screens."""
        self.status = status
        self.status_log.append(status)
        if isinstance(self.screen, (LobbyScreen, GameScreen)):
            for widget in self.screen.query("#status").results(Plain):
                widget.update(status)

    def _on_stream_event(self, event: StreamEvent) -> None:
        if event.kind == "connected":
            self.set_status(f"{texts.ui('connected', self.lang)} · {self.gateway}")
        elif event.kind == "ended":
            self.set_status(texts.ui("game_over", self.lang))
        elif event.kind == "lost":
            delay = f"{event.retry_in or 0:.1f}"
            self.set_status(texts.ui("reconnecting", self.lang, delay=delay))

    async def _watch(self) -> None:
        assert self.client is not None and self.credentials is not None
        self.stream = ViewStream(
            self.client, self.credentials, self.apply_view, self._on_stream_event,
            backoff=self.backoff,
        )  # fmt: skip
        try:
            await self.stream.run()
        except StreamFatal as error:
            if error.reason == "TOKEN_INVALID" and self.seats is not None:
                self.seats.forget(self.code)  # the seat was freed: the token is worth nothing
            self.set_status(str(error))

    def _seated(self, credentials: SeatCredentials, code: str, view: game_pb2.TableView) -> None:
        self.credentials = credentials
        self.code = code
        if self.seats is not None and view.phase not in _OVER:
            self.seats.save(code, credentials, self.gateway, self.player_name)
        self.apply_view(view)
        self.run_worker(self._watch(), name="view-stream", group="stream", exclusive=True)

    # -- commands -------------------------------------------------------------------------

    def send(self, command: Awaitable[object]) -> None:
        """Run a command in the background (a worker), so the screen keeps counting down
        and answering keys while the command is sent, or retried during a gateway restart."""
        self.run_worker(command, group="commands")

    def _error_text(self, error: grpc.aio.AioRpcError) -> str:
        reason = error_reason(error)
        if reason in _REASONS:
            return texts.ui(_REASONS[reason], self.lang)
        return f"{error.code().name} {reason or ''}: {error.details() or ''}"

    async def _command(self, run: Callable[[], Awaitable[T]]) -> T | None:
        """Run a command; show its rejection on the current screen instead of raising."""
        try:
            return await run()
        except grpc.aio.AioRpcError as error:
            message = self._error_text(error)
            screen = self.screen
            if isinstance(screen, GameScreen):
                screen.say(message)
            elif isinstance(screen, StartScreen):
                screen.show_error(message)
            else:
                self.set_status(message)
            return None

    async def create_table(self, name: str, target: int) -> None:
        """Create a table as host (seat 0) with ``target`` and open the lobby."""
        client = self.client
        assert client is not None
        result = await self._command(lambda: client.create_table(name or "Hôte", target))
        if result is not None:
            credentials, code, view = result
            self._seated(credentials, code, view)

    async def resume(self, code: str) -> bool:
        """Take back the seat saved for ``code`` (S4): its current view, then its stream.
        False when none is saved, or when its token no longer works (then it is forgotten)."""
        client = self.client
        assert client is not None
        saved = self.seats.get(code) if self.seats is not None else None
        if saved is None:
            self._show_error(texts.ui("no_saved_seat", self.lang, code=code.strip().upper()))
            return False
        try:
            view = await client.view(saved.credentials)
        except grpc.aio.AioRpcError as error:
            if error.code() in (grpc.StatusCode.PERMISSION_DENIED, grpc.StatusCode.NOT_FOUND):
                assert self.seats is not None
                self.seats.forget(saved.code)
            self._show_error(self._error_text(error))
            return False
        self._seated(saved.credentials, saved.code, view)
        self.set_status(texts.ui("resumed", self.lang, seat=saved.seat + 1, code=saved.code))
        return True

    def _show_error(self, message: str) -> None:
        screen = self.screen
        if isinstance(screen, StartScreen):
            screen.show_error(message)
        else:
            self.set_status(message)

    async def join_table(self, code: str, name: str) -> None:
        """Join the table with invitation ``code`` and open the lobby (or the game). A seat
        this computer already holds at that table is taken back instead (S4)."""
        client = self.client
        assert client is not None
        held = self.seats is not None and self.seats.get(code) is not None
        if held and await self.resume(code):
            return
        result = await self._command(lambda: client.join_table(code.strip(), name or "Joueur"))
        if result is not None:
            credentials, view = result
            self._seated(credentials, code.strip().upper(), view)

    async def start_game(self) -> None:
        """Start the game (host, four seated, R3)."""
        client, seat = self.client, self.credentials
        assert client is not None and seat is not None
        view = await self._command(lambda: client.start(seat))
        if view is not None:
            self.apply_view(view)

    async def set_target(self, target: int) -> None:
        """Change the target before the start (host, R16)."""
        client, seat = self.client, self.credentials
        assert client is not None and seat is not None
        view = await self._command(lambda: client.set_target(seat, target))
        if view is not None:
            self.apply_view(view)

    async def play(self, move: game_pb2.Move) -> None:
        """Lay a tile (retried with one request id while the gateway is away)."""
        client, seat = self.client, self.credentials
        assert client is not None and seat is not None
        view = await self._command(
            lambda: retry_command(lambda rid: client.play(seat, move, rid), backoff=Backoff())
        )
        if view is not None:
            self.apply_view(view)

    async def pass_turn(self) -> None:
        """Pass (R9), retried with one request id while the gateway is away."""
        client, seat = self.client, self.credentials
        assert client is not None and seat is not None
        view = await self._command(
            lambda: retry_command(lambda rid: client.pass_turn(seat, rid), backoff=Backoff())
        )
        if view is not None:
            self.apply_view(view)
