"""The reference terminal client of Dominos, built on textual (``dominos play``).

Three screens, keyboard-driven, laid out to fit an 80 x 24 terminal:

- **start** (:class:`StartScreen`): your name; create a table choosing its target (50 to 500
  in steps of 50), or join one with an invitation code; below, the unfinished games this
  computer holds a seat at (``seats.json``, :mod:`services.client.seats`): ``↑``/``↓`` then
  ``Enter`` takes one back. A seat that no longer works (table gone, game over, seat freed)
  is forgotten when tried, and a sentence says so.
- **lobby** (:class:`LobbyScreen`): the invitation code, the seated players, the target (the
  host changes it with ``+``/``-``), and *Start* for the host, enabled only with four seated;
  ``S`` before that says why it cannot start.
- **game** (:class:`GameScreen`): the table drawn around the player: the score line on top,
  the partner across (north), the opponents left (west, who plays before you) and right
  (east, who plays after you), you at the bottom (south), each with name, team, tiles left,
  "away" and their passes in words; ``▶`` marks whose turn it is. In the middle the chain,
  wrapped between tiles (never inside one), doubles drawn across, the newest tile
  highlighted, and its two open ends. Below: your hand (``*`` and green: playable, ``>``:
  selected), whose turn it is with the seconds left, the *Pass* button (enabled only when
  nothing fits), a message line, the last action. Between rounds the round's summary takes
  the middle; ``H`` swaps it for the history (the rounds played with their scores, the moves
  of this round). When it becomes your turn the terminal bell rings and the turn line
  flashes.

Keys on the game screen: ``←``/``→`` or ``1``-``7`` select a tile; ``L`` (or ``G``) lays it on
the left end, ``R`` (or ``D``) on the right end, ``Enter`` on its only possible end; ``P``
passes; ``H`` shows or hides the history; ``Q`` (or ``Ctrl+C``) quits.

Quitting (``Q``, or ``Ctrl+C`` anywhere, the start screen included) asks first when a seat is
held: mid-game it says the seat stays yours, the table plays it meanwhile, and the exact
``dominos play --resume CODE`` that takes it back (printed again on exit); in the lobby it
leaves the table (``LeaveTable``: the seat is freed and forgotten), and warns the host that
leaving closes the table for everyone. A second ``Ctrl+C`` answers yes.

Every refusal is shown as a sentence of the chosen language, chosen from its machine-readable
reason (:func:`services.client.texts.error_text`), never the server's raw text. All the words
come from :mod:`services.client.texts` (pure, unit-tested); this module only lays them out,
as plain text: names, codes and the server's messages are text, never markup (see
:class:`Plain`). The seat's view stream is a :class:`~services.client.stream.ViewStream`:
when the gateway restarts, the client reconnects with its seat token (backoff) and resumes
from the new stream's first view; commands are retried with the same request id meanwhile.
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
from textual.content import Content
from textual.css.query import NoMatches
from textual.screen import ModalScreen, Screen
from textual.widgets import Button, Input, Label, OptionList, Select, Static
from textual.widgets.option_list import Option

from services.client import texts
from services.client.api import DEFAULT_GATEWAY, DominosClient, SeatCredentials
from services.client.seats import SavedSeat, SeatStore
from services.client.stream import (
    Backoff,
    StreamEvent,
    StreamFatal,
    ViewStream,
    error_reason,
    retry_command,
)
from services.client.texts import Lang
from services.common.service_errors import retry_delay_of

__all__ = [
    "SIDE_WIDTH",
    "TARGETS",
    "ConfirmQuit",
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

SIDE_WIDTH: Final = 16
"""Columns of the west and east seats on the game screen (the chain gets the rest)."""

HISTORY_LINES: Final = 11
"""Lines of the history panel (with its key line and border it takes the table's place)."""

FLASH_SECONDS: Final = 0.8
"""How long the turn line flashes when it becomes your turn."""

#: Reasons after which a saved seat is worth nothing (the table or the seat is gone).
_GONE_REASONS: Final = frozenset({"TOKEN_INVALID", "TABLE_NOT_FOUND", "GAME_OVER"})


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


def _my_turn(view: game_pb2.TableView | None) -> bool:
    return (
        view is not None
        and view.phase == game_pb2.PHASE_PLAYING
        and view.HasField("turn_seat")
        and view.turn_seat == view.your_seat
    )


def _game_state(view: game_pb2.TableView) -> tuple[int, ...]:
    """What a message next to the Pass button is about: once it changes (a move, a pass, a
    new round), an old message such as "not your turn" is stale."""
    turn = view.turn_seat if view.HasField("turn_seat") else -1
    return (view.phase, view.round_number, turn, len(view.chain), view.consecutive_passes)


class Plain(Static):
    """A :class:`Static` that shows its text as typed, never parsed as markup.

    Names are text, never markup: player names, the invitation code, table ids and the
    server's error messages reach the screen through these widgets, and any of them may hold
    square brackets. Parsed as textual markup, a name ``[/]`` raises ``MarkupError`` (the
    client crashes on every redraw), ``[@click=app.quit]Bob[/]`` becomes a link running an
    action, ``[reverse]X`` or ``[$error]X`` restyles the rest of the line. Every widget of
    this app that shows changing text is a ``Plain`` (labels and buttons show fixed words
    only), so no string from outside is ever read as markup; styled content is passed as a
    ``rich.text.Text`` whose styles are set by code (the hand, the chain). Escaping with
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


class ConfirmQuit(ModalScreen[bool]):
    """Asks before quitting: ``question``, then ``O``/``Y``/``Enter`` (yes) or
    ``N``/``Escape`` (no). Dismissed with the answer."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("o,y,enter", "answer(True)", "Yes"),
        Binding("n,escape", "answer(False)", "No"),
    ]

    def __init__(self, question: str, keys: str) -> None:
        super().__init__()
        self.question = question
        self.keys = keys

    def compose(self) -> ComposeResult:
        """The question and its keys."""
        with Vertical(id="confirm"):
            yield Plain(self.question, id="question")
            yield Plain(self.keys, id="confirm-keys")

    def action_answer(self, yes: bool) -> None:
        """Close with the answer."""
        self.dismiss(yes)


class StartScreen(DominosScreen):
    """Create a table (name, target), join one (name, invitation code), or take back a seat
    held at an unfinished game (the list below, from the seat store)."""

    def __init__(self, lang: Lang, name: str) -> None:
        super().__init__()
        self.lang = lang
        self.player_name = name

    def compose(self) -> ComposeResult:
        """The form, then the held seats."""
        lang = self.lang
        with Vertical(id="start-form"):
            yield Label(texts.ui("title", lang), id="title")
            yield Label(texts.ui("your_name", lang))
            yield Input(value=self.player_name, max_length=24, id="name")
            yield Label(texts.ui("target", lang))
            with Horizontal(classes="row"):
                yield Select(
                    [(str(t), t) for t in TARGETS], value=100, allow_blank=False, id="target"
                )
                yield Button(texts.ui("create", lang), id="create", variant="primary")
            yield Label(texts.ui("code", lang))
            with Horizontal(classes="row"):
                yield Input(max_length=16, id="code")
                yield Button(texts.ui("join", lang), id="join")
            yield Plain(texts.ui("saved_title", lang), id="saved-title")
            yield OptionList(id="saved")
            yield Plain(texts.ui("start_keys", lang), id="start-keys")
            yield Plain("", id="error")

    def on_mount(self) -> None:
        """List the held seats."""
        self.ready = True
        self.refresh_saved()

    def refresh_saved(self) -> None:
        """Redraw the list of held seats from the store (hidden when there are none)."""
        try:
            listing = self.query_one("#saved", OptionList)
        except NoMatches:
            return
        store = self.dominos.seats
        saved = store.all() if store is not None else []
        now = time.time()
        listing.set_options(
            Option(Content(self._seat_text(seat, now)), id=seat.code) for seat in saved
        )
        listing.display = bool(saved)
        self.query_one("#saved-title", Plain).display = bool(saved)

    def _seat_text(self, seat: SavedSeat, now: float) -> str:
        age = now - seat.saved_at
        return texts.saved_seat_text(seat.code, seat.name, seat.seat, age, self.lang)

    async def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        """Enter on a held seat takes it back."""
        if event.option.id:
            app = self.dominos
            app.send(app.resume(event.option.id))

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
        """Say why creating, joining or resuming failed."""
        self.query_one("#error", Plain).update(message)


class LobbyScreen(DominosScreen):
    """Before the start: code, seats, target; *Start* for the host with four seated (R3)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("s", "start", "Start"),
        Binding("plus,equals_sign", "target(50)", "+50"),
        Binding("minus", "target(-50)", "-50"),
        Binding("q", "app.request_quit", "Quit"),
    ]

    _seated = -1

    def compose(self) -> ComposeResult:
        """Lobby text, start button, host keys, message, status."""
        app = self.dominos
        yield Plain("", id="lobby")
        yield Button(texts.ui("start", app.lang), id="start", disabled=True, variant="primary")
        yield Plain("", id="lobby-hint")
        yield Plain("", id="message")
        yield Plain("", id="status")

    def on_mount(self) -> None:
        """Show the newest view."""
        self.ready = True
        self.refresh_view()

    def refresh_view(self) -> None:
        """Redraw from the app's newest view; a message about the seats (why Start does not
        start) is cleared when someone joins or leaves."""
        app = self.dominos
        view = self.shown_view()
        if view is None:
            return
        lang = app.lang
        self.query_one("#lobby", Plain).update("\n".join(texts.lobby_lines(view, app.code, lang)))
        seated = sum(1 for s in view.seats if s.occupied)
        if seated != self._seated:
            self._seated = seated
            self.say("")
        host = view.your_seat == 0
        start = self.query_one("#start", Button)
        start.display = host  # only the host starts (R3)
        start.disabled = not (host and seated == 4)
        self.query_one("#lobby-hint", Plain).update(
            texts.ui("lobby_host_keys" if host else "lobby_guest", lang)
        )
        self.query_one("#status", Plain).update(app.status)

    def say(self, message: str) -> None:
        """Show a one-line message under the keys."""
        self.query_one("#message", Plain).update(message)

    async def on_button_pressed(self, event: Button.Pressed) -> None:
        """Start."""
        if event.button.id == "start":
            await self.action_start()

    async def action_start(self) -> None:
        """Start the game (host, four seated); otherwise say why it cannot start yet."""
        app = self.dominos
        view = app.view
        if view is None:
            return
        seated = sum(1 for s in view.seats if s.occupied)
        if view.your_seat != 0:
            self.say(texts.ui("start_host_only", app.lang))
        elif seated < 4:
            self.say(texts.ui("start_needs_four", app.lang, n=seated))
        else:
            app.send(app.start_game())

    async def action_target(self, delta: int) -> None:
        """Change the target by ``delta`` within 50..500 (host, before the start)."""
        app = self.dominos
        if app.view is not None and app.view.your_seat == 0:
            target = min(500, max(50, app.view.target + delta))
            if target != app.view.target:
                app.send(app.set_target(target))


class GameScreen(DominosScreen):
    """The game: the table around the player, the chain, the hand, Pass, the summaries and
    the history (see the module docstring)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("left", "move(-1)", "←", show=False),
        Binding("right", "move(1)", "→", show=False),
        *[Binding(str(i), f"select({i - 1})", str(i), show=False) for i in range(1, 8)],
        Binding("l,g", "play('left')", "Left"),
        Binding("r,d", "play('right')", "Right"),
        Binding("enter", "play('any')", "Play"),
        Binding("p", "pass_turn", "Pass"),
        Binding("h", "toggle_history", "History"),
        Binding("q", "app.request_quit", "Quit"),
    ]

    selected: int = 0
    history_shown = False
    _state: tuple[int, ...] = ()
    _was_my_turn = False

    def compose(self) -> ComposeResult:
        """The game's widgets."""
        app = self.dominos
        lang = app.lang
        yield Plain("", id="header")
        yield Plain("", id="north")
        with Horizontal(id="middle"):
            yield Plain("", id="west")
            with Vertical(id="center"):
                yield Plain("", id="chain")
                yield Plain("", id="ends")
            yield Plain("", id="east")
        yield Plain("", id="summary")
        yield Plain("", id="history")
        yield Plain("", id="south")
        yield Plain("", id="hand")
        with Horizontal(id="actions"):
            yield Plain("", id="turn")
            yield Button(texts.ui("pass", lang), id="pass", disabled=True)
        yield Plain("", id="message")
        yield Plain("", id="last-action")
        yield Plain(texts.ui("keys", lang), id="keys")
        yield Plain("", id="status")

    def on_mount(self) -> None:
        """Show the newest view and tick the countdown."""
        self.ready = True
        self.query_one("#pass", Button).can_focus = False
        self.query_one("#history", Plain).display = False
        self.refresh_view()
        self.set_interval(0.2, self.tick)

    def on_resize(self) -> None:
        """Wrap the chain again for the new width."""
        self.refresh_view()

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
        state = _game_state(view)
        if state != self._state:
            self._state = state
            self.say("")  # "not your turn" and the like are about the state before
        self.query_one("#header", Plain).update(texts.score_line(view, lang))
        self._draw_seats(view)
        self._draw_chain(view)
        self.query_one("#last-action", Plain).update(texts.last_action_text(view, lang))
        items = self._items()
        if items and not (0 <= self.selected < len(items) and items[self.selected].playable):
            playable = [i.index for i in items if i.playable]
            self.selected = playable[0] if playable else min(self.selected, len(items) - 1)
        self._draw_hand(items)
        self.query_one("#pass", Button).disabled = not view.can_pass
        self._draw_middle(view)
        self.query_one("#status", Plain).update(app.status)
        self.tick()
        mine = _my_turn(view)
        if mine and not self._was_my_turn:
            self.your_turn()
        self._was_my_turn = mine

    def _draw_seats(self, view: game_pb2.TableView) -> None:
        lang = self.dominos.lang
        around = texts.relative_seats(view.your_seat)
        self.query_one("#north", Plain).update(texts.seat_strip(view, around["north"], lang))
        self.query_one("#south", Plain).update(texts.seat_strip(view, around["south"], lang))
        for side in ("west", "east"):
            lines = texts.seat_column(view, around[side], lang, SIDE_WIDTH - 1)
            self.query_one(f"#{side}", Plain).update("\n".join(lines))

    def chain_width(self) -> int:
        """Columns the chain may use: the screen less its padding and the two side seats."""
        return max(12, self.app.size.width - 2 - 2 * SIDE_WIDTH - 2)

    def _draw_chain(self, view: game_pb2.TableView) -> None:
        app = self.dominos
        chain = [(p.left, p.right) for p in view.chain]
        newest = texts.newest_index(view, app.journal.newest_play())
        drawing = texts.chain_drawing(chain, self.chain_width(), newest)
        if not drawing.rows:
            text = Text(texts.ui("empty_chain", app.lang))
        else:
            text = Text("\n".join(drawing.rows))
            starts = [0]
            for line in drawing.rows:
                starts.append(starts[-1] + len(line) + 1)
            for row, begin, end in drawing.newest:
                text.stylize("bold black on yellow", starts[row] + begin, starts[row] + end)
        self.query_one("#chain", Plain).update(text)
        self.query_one("#ends", Plain).update(texts.ends_text(view, app.lang))

    def _draw_middle(self, view: game_pb2.TableView) -> None:
        """The chain and side seats while a round is in play; the round's summary (and the
        winner) between rounds and at the end; the history instead when asked."""
        lang = self.dominos.lang
        lines = texts.round_summary_lines(view, lang)
        winner = texts.winner_text(view, lang)
        if winner:
            lines.append(winner)
        elif view.phase == game_pb2.PHASE_CLOSED:
            lines.append(texts.phase_text(view, lang))
        summary = self.query_one("#summary", Plain)
        summary.update("\n".join(lines))
        history = self.query_one("#history", Plain)
        if self.history_shown:
            rows = texts.history_lines(self.dominos.journal, view, lang, HISTORY_LINES)
            width = max(10, self.app.size.width - 6)  # inside the padding and the border
            rows = [row if len(row) <= width else row[: width - 1] + "…" for row in rows]
            history.update("\n".join([*rows, texts.ui("history_keys", lang)]))
        history.display = self.history_shown
        summary.display = bool(lines) and not self.history_shown
        self.query_one("#middle").display = not (self.history_shown or lines)

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

    def your_turn(self) -> None:
        """It just became your turn: ring the terminal bell and flash the turn line."""
        self.app.bell()
        turn = self.query_one("#turn", Plain)
        turn.add_class("flash")
        self.set_timer(FLASH_SECONDS, lambda: turn.remove_class("flash"))

    def tick(self) -> None:
        """Redraw whose turn it is and the seconds left (R11)."""
        app = self.dominos
        view = self.shown_view()
        if view is None:
            return
        left = texts.remaining_seconds(view, app.received_at, time.monotonic())
        self.query_one("#turn", Plain).update(texts.turn_text(view, left, app.lang))

    def say(self, message: str) -> None:
        """Show a one-line message under the Pass button."""
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

    def action_toggle_history(self) -> None:
        """Show or hide the history (rounds played, this round's moves)."""
        self.history_shown = not self.history_shown
        self.refresh_view()

    def _not_now(self) -> str | None:
        """Why no move can be made now (no round in play, another seat's turn), or None."""
        view = self.dominos.view
        if view is None or view.phase != game_pb2.PHASE_PLAYING:
            return texts.ui("round_not_in_play", self.dominos.lang)
        if not _my_turn(view):
            return texts.ui("not_your_turn", self.dominos.lang)
        return None

    async def action_play(self, end: str) -> None:
        """Lay the selected tile on ``end`` (``left``, ``right``, or ``any``: its only end).
        Out of turn it says so and sends nothing."""
        app = self.dominos
        items = self._items()
        refusal = self._not_now()
        if refusal is not None:
            self.say(refusal)
            return
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
            refusal = self._not_now()
            self.say(refusal or texts.ui("must_play", app.lang))
            return
        self.say("")
        app.send(app.pass_turn())

    async def on_button_pressed(self, event: Button.Pressed) -> None:
        """The Pass button."""
        if event.button.id == "pass":
            await self.action_pass_turn()


class DominosApp(App[None]):
    """The terminal client. Give ``create_target`` to create a table at once, ``join_code`` to
    join one at once, ``resume_code`` to take back a held seat, none to open the start
    screen. ``connect=False`` builds the app without a gateway (to show crafted views, e.g.
    in tests)."""

    TITLE = "Dominos"
    ENABLE_COMMAND_PALETTE = False
    CSS = f"""
    Screen {{ padding: 0 1; }}
    #start-form {{ width: 78; height: auto; }}
    #title {{ text-style: bold; }}
    .row {{ height: 3; }}
    #target {{ width: 16; }}
    #code {{ width: 24; }}
    #saved {{ height: auto; max-height: 5; }}
    #header {{ background: $primary; color: $text; text-style: bold; padding: 0 1; }}
    #north {{ text-align: center; }}
    #middle {{ height: auto; }}
    #west, #east {{ width: {SIDE_WIDTH}; }}
    #east {{ padding: 0 0 0 1; }}
    #center {{ width: 1fr; height: auto; padding: 0 1; }}
    #ends {{ color: $text-muted; }}
    #south {{ text-style: bold; }}
    #actions {{ height: 1; }}
    #turn {{ width: auto; text-style: bold; color: $warning; padding: 0 2 0 0; }}
    #turn.flash {{ background: $warning; color: $background; }}
    #pass {{ height: 1; min-width: 12; border: none; }}
    #message {{ height: auto; max-height: 2; color: $warning; }}
    #summary, #history {{ border: round $accent; padding: 0 1; height: auto; }}
    #keys {{ color: $text-muted; }}
    #start-keys {{ color: $text-muted; }}
    #status {{ color: $text-muted; }}
    #error {{ color: $error; }}
    ConfirmQuit {{ align: center middle; }}
    #confirm {{ width: 76; height: auto; border: thick $warning; padding: 1 2;
               background: $surface; }}
    #confirm-keys {{ color: $text-muted; margin: 1 0 0 0; }}
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        # priority: inputs and screens bind Ctrl+C to "copy"; here it always quits.
        Binding("ctrl+c", "request_quit", "Quit", show=False, priority=True),
    ]

    def __init__(
        self,
        gateway: str = DEFAULT_GATEWAY,
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
        #: What this client saw of the game: the round's moves, the rounds played.
        self.journal = texts.Journal()
        #: The sentence printed once the app has exited (how to come back), if any.
        self.farewell = ""
        self.stream: ViewStream | None = None
        self.start_screen: StartScreen | None = None
        self.lobby_screen = LobbyScreen()
        self.game_screen = GameScreen()
        self._wanted: Screen[None] | None = None

    async def on_mount(self) -> None:
        """Open the start screen, or create/join/resume at once as asked."""
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
        self.journal.record(view)
        if view.phase in _OVER and self.seats is not None and self.code:
            self.seats.forget(self.code)  # nothing left to come back to
        wanted: Screen[None] = (
            self.lobby_screen if view.phase == game_pb2.PHASE_WAITING else self.game_screen
        )
        if self._wanted is not wanted:
            self._wanted = wanted
            if isinstance(self.screen, ConfirmQuit):
                self.pop_screen()  # the question was about the screen that is going away
            if self.screen is not wanted:
                self.switch_screen(wanted)
        if isinstance(wanted, (LobbyScreen, GameScreen)):
            wanted.refresh_view()

    def set_status(self, status: str) -> None:
        """Show a connection status line on the lobby and game screens."""
        self.status = status
        self.status_log.append(status)
        for screen in (self.lobby_screen, self.game_screen):
            for widget in screen.query("#status").results(Plain):
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
            if error.reason in _GONE_REASONS and self.seats is not None:
                self.seats.forget(self.code)  # the seat was freed: the token is worth nothing
            self.set_status(texts.error_text(error.reason, error.code.name, self.lang))

    def _seated(self, credentials: SeatCredentials, code: str, view: game_pb2.TableView) -> None:
        self.credentials = credentials
        self.code = code
        if self.seats is not None and view.phase not in _OVER:
            self.seats.save(code, credentials, self.gateway, self.player_name)
        self.apply_view(view)
        self.run_worker(self._watch(), name="view-stream", group="stream", exclusive=True)

    # -- quitting -------------------------------------------------------------------------

    def resume_command(self) -> str:
        """The exact command that takes this seat back."""
        gateway = None if self.gateway == DEFAULT_GATEWAY else self.gateway
        return texts.resume_command(self.code, gateway)

    def quit_question(self) -> str | None:
        """What to ask before quitting, or None when nothing is held (quit at once): in the
        lobby, that the seat is freed (and, to the host, that the table closes); mid-game,
        that the seat stays theirs, auto-played, and how to come back."""
        view = self.view
        if self.credentials is None or view is None or view.phase in _OVER:
            return None
        if view.phase == game_pb2.PHASE_WAITING:
            return texts.ui("quit_lobby_host" if view.your_seat == 0 else "quit_lobby", self.lang)
        return texts.ui("quit_game", self.lang, command=self.resume_command())

    async def action_request_quit(self) -> None:
        """``Q`` or ``Ctrl+C``: quit, after asking when a seat is held (see
        :meth:`quit_question`); ``Ctrl+C`` on the question answers yes."""
        screen = self.screen
        if isinstance(screen, ConfirmQuit):
            screen.dismiss(True)
            return
        question = self.quit_question()
        if question is None:
            self.exit()
            return

        def answered(yes: bool | None) -> None:
            if yes:
                self.run_worker(self._quit(), group="quit", exclusive=True)

        self.push_screen(ConfirmQuit(question, texts.ui("quit_keys", self.lang)), answered)

    async def _quit(self) -> None:
        """Quit for good: in the lobby leave the table first (the seat is freed and
        forgotten; the host's leaving closes the table, LeaveTable); mid-game keep the seat
        and say how to come back."""
        view = self.view
        if view is not None and view.phase == game_pb2.PHASE_WAITING:
            await self._leave()
        else:
            self.farewell = texts.ui("come_back", self.lang, command=self.resume_command())
        self.exit(message=Text(self.farewell) if self.farewell else None)

    async def _leave(self) -> None:
        client, seat = self.client, self.credentials
        assert client is not None and seat is not None
        self.workers.cancel_group(self, "stream")  # its end is expected, not news
        try:
            await client.leave(seat)
        except grpc.aio.AioRpcError as error:
            reason = error_reason(error)
            if reason == "GAME_ALREADY_STARTED":  # started meanwhile: the seat is still ours
                self.farewell = texts.ui("come_back", self.lang, command=self.resume_command())
                return
            if reason not in _GONE_REASONS:
                self.farewell = self._error_text(error)
                return
        if self.seats is not None:
            self.seats.forget(self.code)

    # -- commands -------------------------------------------------------------------------

    def send(self, command: Awaitable[object]) -> None:
        """Run a command in the background (a worker), so the screen keeps counting down
        and answering keys while the command is sent, or retried during a gateway restart."""
        self.run_worker(command, group="commands")

    def _error_text(self, error: grpc.aio.AioRpcError) -> str:
        """The sentence for a failed call, from its reason (and code), in the app's language."""
        return texts.error_text(
            error_reason(error), error.code().name, self.lang, retry_after=retry_delay_of(error)
        )

    async def _command(self, run: Callable[[], Awaitable[T]]) -> T | None:
        """Run a command; show its rejection on the current screen instead of raising."""
        try:
            return await run()
        except grpc.aio.AioRpcError as error:
            self._show_error(self._error_text(error))
            return None

    def _show_error(self, message: str) -> None:
        screen = self.screen
        if isinstance(screen, (GameScreen, LobbyScreen)):
            screen.say(message)
        elif isinstance(screen, StartScreen):
            screen.show_error(message)
        else:
            self.set_status(message)

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
        False when none is saved, or when it is stale (table gone, game over, seat freed):
        then it is forgotten and a sentence says so."""
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
                self._forget_stale(saved)
            else:
                self._show_error(self._error_text(error))
            return False
        if view.phase in _OVER:
            self._forget_stale(saved)
            return False
        self._seated(saved.credentials, saved.code, view)
        self.set_status(texts.ui("resumed", self.lang, seat=saved.seat + 1, code=saved.code))
        return True

    def _forget_stale(self, saved: SavedSeat) -> None:
        assert self.seats is not None
        self.seats.forget(saved.code)
        self._show_error(texts.ui("seat_forgotten", self.lang, code=texts.code_text(saved.code)))
        if self.start_screen is not None:
            self.start_screen.refresh_saved()

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
