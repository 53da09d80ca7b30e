"""The reference terminal client of Dominos, built on textual (``dominos play``).

Three screens, keyboard-driven, laid out to fit an 80 x 24 terminal:

- **start** (:class:`~services.client.start_screen.StartScreen`): your name; create a table
  (choosing its game, its seats and its target, and with the games that offer them robots
  for the empty seats and for a player who drops, the friendly end at the site's game) or
  join one; take back a seat held at an unfinished game; open the **practice** screen
  (:class:`~services.client.practice_screen.PracticeScreen`: play alone against robots at
  once).
- **lobby** (:class:`~services.client.lobby_screen.LobbyScreen`): the invitation code, the
  rule set and the options in words, the seated players, the target; *Start* for the host,
  once every seat of the rule set is taken (at once when robots take the empty seats).
- **game** (:class:`~services.client.game_screen.GameScreen`): the table drawn around the
  player (two, three or four seats, robots shown as such), the chain, the hand, *Pass*,
  *Draw* (rule sets with a stock), the friendly-end vote, the summaries and the history.

Quitting (``Q``, or ``Ctrl+C`` anywhere, the start screen included) asks first when a seat is
held (:class:`~services.client.confirm_quit.ConfirmQuit`): mid-game it says the seat stays
yours, the table plays it meanwhile, and the exact ``dominos play --resume CODE`` that takes it
back (printed again on exit); in the lobby it leaves the table (``LeaveTable``: the seat is
freed and forgotten), and warns the host that leaving closes the table for everyone. A second
``Ctrl+C`` answers yes.

Every refusal is shown as a sentence of the chosen language, chosen from its machine-readable
reason (:func:`services.client.refusals.error_text`), never the server's raw text. All the
words come from the client's pure, unit-tested word modules (see :mod:`services.client.texts`);
the screens only lay them out, as plain text: names, codes and the server's messages are text,
never markup (see :class:`services.client.widgets.Plain`). The seat's view stream is a
:class:`~services.client.stream.ViewStream`: when the gateway restarts, the client reconnects
with its seat token (backoff) and resumes from the new stream's first view; commands are
retried with the same request id meanwhile.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Awaitable, Callable
from typing import ClassVar, Final, TypeVar

import grpc
from dominos.v1 import game_pb2
from google.rpc import error_details_pb2
from rich.text import Text
from textual.app import App
from textual.binding import Binding, BindingType
from textual.screen import Screen

from services.client import held_seats, texts
from services.client.api import DEFAULT_GATEWAY, DominosClient, SeatCredentials
from services.client.confirm_quit import ConfirmQuit
from services.client.game_screen import SIDE_WIDTH, GameScreen
from services.client.journal import Journal
from services.client.lobby import code_text
from services.client.lobby_screen import LobbyScreen
from services.client.practice_screen import PracticeScreen
from services.client.refusals import error_text
from services.client.robots import RETURN_SECONDS, a_robot, duration_text
from services.client.rule_sets import preset_info, rules_invalid_text, target_invalid_text
from services.client.seats import SavedSeat, SeatStore
from services.client.start_screen import StartScreen
from services.client.stream import (
    Backoff,
    StreamEvent,
    StreamFatal,
    ViewStream,
    error_reason,
    retry_command,
)
from services.client.texts import Lang
from services.client.widgets import Plain
from services.common.service_errors import retry_delay_of, status_of

__all__ = ["DominosApp"]

T = TypeVar("T")

#: Reasons after which a saved seat is worth nothing (the table or the seat is gone, or a
#: robot kept it for good).
_GONE_REASONS: Final = frozenset({"TOKEN_INVALID", "TABLE_NOT_FOUND", "GAME_OVER", "ROBOT_SEAT"})

#: Phases with nothing left to come back to: a saved seat is forgotten.
_OVER: Final = (game_pb2.PHASE_FINISHED, game_pb2.PHASE_CLOSED)


def field_of(error: grpc.RpcError) -> str:
    """The field a RULES_INVALID refusal names (``ErrorInfo.metadata["field"]``), or ``""``."""
    status = status_of(error)
    for detail in status.details if status is not None else ():
        info = error_details_pb2.ErrorInfo()
        if detail.Unpack(info):
            return str(info.metadata.get("field", ""))
    return ""


class DominosApp(App[None]):
    """The terminal client. Give ``create_target`` to create a table at once, ``join_code`` to
    join one at once, ``resume_code`` to take back a held seat, none to open the start
    screen. ``connect=False`` builds the app without a gateway (to show crafted views, e.g.
    in tests)."""

    TITLE = "Dominos"
    ENABLE_COMMAND_PALETTE = False
    CSS = f"""
    Screen {{ padding: 0 1; }}
    #start-form, #practice-form {{ width: 78; height: auto; }}
    #options {{ height: auto; }}
    .options-row {{ height: 1; }}
    #fill, #replace {{ width: 38; }}
    #fill {{ margin: 0 1 0 0; }}
    #friendly {{ width: 24; }}
    #level {{ width: 18; }}
    #practice-keys {{ color: $text-muted; }}
    #vote {{ height: auto; color: $accent; }}
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
    #moves {{ color: $success; }}
    #south {{ text-style: bold; }}
    #actions {{ height: 1; }}
    #turn {{ width: auto; text-style: bold; color: $warning; padding: 0 2 0 0; }}
    #turn.flash {{ background: $warning; color: $background; }}
    #pass, #draw {{ height: 1; min-width: 12; border: none; }}
    #draw {{ margin: 0 0 0 1; }}
    #rules-row {{ height: 3; }}
    #preset {{ width: 26; }}
    #seats {{ width: 16; }}
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
        create_rules: game_pb2.RuleChoice | None = None,
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
        #: The rule set of ``create_target``'s table (None: the default game).
        self.create_rules = create_rules
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
        self.journal = Journal()
        #: The sentence printed once the app has exited (how to come back), if any.
        self.farewell = ""
        self.stream: ViewStream | None = None
        self.start_screen: StartScreen | None = None
        self.lobby_screen = LobbyScreen()
        self.game_screen = GameScreen()
        self._wanted: Screen[None] | None = None
        #: The preset of the table being created (for a refused target's sentence).
        self._creating = 0

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
            await self.create_table(self.player_name, self.create_target, self.create_rules)

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
            self.set_status(error_text(error.reason, error.code.name, self.lang))

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
        return held_seats.resume_command(self.code, gateway)

    def quit_question(self) -> str | None:
        """What to ask before quitting, or None when nothing is held (quit at once): in the
        lobby, that the seat is freed (and, to the host, that the table closes); mid-game,
        that the seat stays theirs, auto-played, and how to come back."""
        view = self.view
        if self.credentials is None or view is None or view.phase in _OVER:
            return None
        if view.phase == game_pb2.PHASE_WAITING:
            return texts.ui("quit_lobby_host" if view.your_seat == 0 else "quit_lobby", self.lang)
        return self._away_text("quit_game")

    def _away_text(self, key: str) -> str:
        """What happens to the seat while away (``quit_game`` or ``come_back``): the table
        plays it; with ``replace_disconnected`` a robot does, and keeps it unless its player
        comes back in time."""
        view, command = self.view, self.resume_command()
        level = view.options.replace_disconnected if view is not None else 0
        if not level or view is None:
            return texts.ui(key, self.lang, command=command)
        robot = a_robot(level, self.lang, capital=True)
        back = duration_text(view.options.return_seconds or RETURN_SECONDS)
        return texts.ui(f"{key}_robot", self.lang, robot=robot, time=back, command=command)

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
            self.farewell = self._away_text("come_back")
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
        """The sentence for a failed call, from its reason (and code), in the app's language:
        a refused rule choice says which choice (``metadata["field"]``), a refused target the
        range of the table's game."""
        reason = error_reason(error)
        if reason == "RULES_INVALID":
            sentence = rules_invalid_text(field_of(error), self.lang)
            if sentence is not None:
                return sentence
        if reason == "TARGET_INVALID":
            preset = self.view.rules.preset if self.view is not None else self._creating
            if preset:
                return target_invalid_text(preset_info(preset), self.lang)
        return error_text(reason, error.code().name, self.lang, retry_after=retry_delay_of(error))

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
        elif isinstance(screen, (StartScreen, PracticeScreen)):
            screen.show_error(message)
        else:
            self.set_status(message)

    async def create_table(
        self,
        name: str,
        target: int,
        rules: game_pb2.RuleChoice | None = None,
        options: game_pb2.TableOptions | None = None,
    ) -> None:
        """Create a table as host (seat 0) with ``target``, the rule set ``rules`` (None:
        the default game) and the host's ``options`` (None: none), and open the lobby."""
        client = self.client
        assert client is not None
        self._creating = rules.preset if rules is not None else 0
        result = await self._command(
            lambda: client.create_table(name or "Hôte", target, rules, options)
        )
        if result is not None:
            credentials, code, view = result
            self._seated(credentials, code, view)

    def open_practice(self, name: str) -> None:
        """Open the practice screen (``name``: the player's, from the start screen)."""
        self.push_screen(PracticeScreen(self.lang, name or self.player_name))

    async def create_practice(
        self,
        name: str,
        target: int,
        rules: game_pb2.RuleChoice,
        options: game_pb2.TableOptions,
    ) -> None:
        """Create a practice table (``options.practice``: robots in every other seat), start
        it at once and open the game: no lobby, no invitation. Should the start be refused,
        the lobby opens with the refusal (every seat is taken: *Start* works there)."""
        client = self.client
        assert client is not None
        self._creating = rules.preset
        result = await self._command(
            lambda: client.create_table(name or "Hôte", target, rules, options)
        )
        if result is None:
            return
        credentials, code, view = result
        refusal = ""
        try:
            view = await client.start(credentials)
        except grpc.aio.AioRpcError as error:
            refusal = self._error_text(error)
        if isinstance(self.screen, PracticeScreen):
            await self.pop_screen()
        self._seated(credentials, code, view)
        if refusal:
            self.lobby_screen.say(refusal)

    async def resume(self, code: str) -> bool:
        """Take back the seat saved for ``code`` (S4): its current view, then its stream.
        False when none is saved, or when it is stale (table gone, game over, seat freed, a
        robot kept it): then it is forgotten and a sentence says so."""
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
                robot = error_reason(error) == "ROBOT_SEAT"  # a robot kept it: say so
                self._forget_stale(saved, self._error_text(error) if robot else None)
            else:
                self._show_error(self._error_text(error))
            return False
        if view.phase in _OVER:
            self._forget_stale(saved)
            return False
        self._seated(saved.credentials, saved.code, view)
        self.set_status(texts.ui("resumed", self.lang, seat=saved.seat + 1, code=saved.code))
        return True

    def _forget_stale(self, saved: SavedSeat, why: str | None = None) -> None:
        assert self.seats is not None
        self.seats.forget(saved.code)
        forgotten = texts.ui("seat_forgotten", self.lang, code=code_text(saved.code))
        self._show_error(f"{why} {forgotten}" if why else forgotten)
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

    async def draw_turn(self) -> None:
        """Draw a tile from the stock, retried with one request id while the gateway is
        away."""
        client, seat = self.client, self.credentials
        assert client is not None and seat is not None
        view = await self._command(
            lambda: retry_command(lambda rid: client.draw(seat, rid), backoff=Backoff())
        )
        if view is not None:
            self.apply_view(view)

    async def propose_end(self) -> None:
        """Propose the friendly end (retried with one request id while the gateway is
        away)."""
        client, seat = self.client, self.credentials
        assert client is not None and seat is not None
        view = await self._command(
            lambda: retry_command(lambda rid: client.propose_end(seat, rid), backoff=Backoff())
        )
        if view is not None:
            self.apply_view(view)

    async def answer_end(self, accept: bool) -> None:
        """Accept or refuse the open friendly-end proposal (retried with one request id
        while the gateway is away)."""
        client, seat = self.client, self.credentials
        assert client is not None and seat is not None
        view = await self._command(
            lambda: retry_command(
                lambda rid: client.answer_end(seat, accept, rid), backoff=Backoff()
            )
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
