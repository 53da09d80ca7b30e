"""The lobby screen: the invitation code, the rule set in words, the host's options (robots,
the friendly end), the seated players, the target (the host changes it with ``+``/``-``
within the rule set's range), and *Start* for the host, enabled only once every seat of the
rule set (``RuleSet.seats``) is taken; ``S`` before that says why it cannot start. When the
host chose robots for the empty seats (``fill_empty_seats``), *Start* works at once and says
robots will take the empty seats."""

from __future__ import annotations

from typing import ClassVar

from dominos.v1 import game_pb2
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.css.query import NoMatches
from textual.widgets import Button

from services.client import texts
from services.client.base_screen import DominosScreen
from services.client.lobby import lobby_lines
from services.client.robots import robots_label
from services.client.rule_sets import count_word, seat_count
from services.client.texts import Lang
from services.client.widgets import Plain

__all__ = ["LobbyScreen"]


class LobbyScreen(DominosScreen):
    """Before the start: code, rules, options, seats, target; *Start* for the host with every
    seat taken (or at once with robots for the empty seats)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("s", "start", "Start"),
        Binding("plus,equals_sign", "target(1)", "+"),
        Binding("minus", "target(-1)", "-"),
        Binding("q", "app.request_quit", "Quit"),
    ]

    _seated = -1
    #: The message shown under the keys (kept while the screen is not mounted yet).
    _said = ""

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
        self.query_one("#message", Plain).update(self._said)

    def _redraw(self) -> None:
        """The lobby from the app's newest view; a message about the seats (why Start does
        not start) is cleared when someone joins or leaves."""
        app = self.dominos
        view = self.shown_view()
        if view is None:
            return
        lang = app.lang
        self.query_one("#lobby", Plain).update("\n".join(lobby_lines(view, app.code, lang)))
        seated = sum(1 for s in view.seats if s.occupied)
        if seated != self._seated:
            if self._seated >= 0:
                self.say("")
            self._seated = seated
        host = view.your_seat == 0
        total = seat_count(view)
        start = self.query_one("#start", Button)
        start.display = host  # only the host starts (R3)
        start.disabled = not (host and (seated >= total or view.options.fill_empty_seats))
        self.query_one("#lobby-hint", Plain).update(_hint(view, host, total, lang))
        self.query_one("#status", Plain).update(app.status)

    def say(self, message: str) -> None:
        """Show a one-line message under the keys (once mounted, when said before)."""
        self._said = message
        try:
            self.query_one("#message", Plain).update(message)
        except NoMatches:
            return

    async def on_button_pressed(self, event: Button.Pressed) -> None:
        """Start."""
        if event.button.id == "start":
            await self.action_start()

    async def action_start(self) -> None:
        """Start the game (host, every seat taken, or robots for the empty seats); otherwise
        say why it cannot start yet."""
        app = self.dominos
        view = app.view
        if view is None:
            return
        seated = sum(1 for s in view.seats if s.occupied)
        total = seat_count(view)
        if view.your_seat != 0:
            self.say(texts.ui("start_host_only", app.lang))
        elif view.options.fill_empty_seats:  # robots take the empty seats
            app.send(app.start_game())
        elif seated < total and total == 4:
            self.say(texts.ui("start_needs_four", app.lang, n=seated))
        elif seated < total:
            word = count_word(total, app.lang)
            self.say(texts.ui("start_needs_n", app.lang, n=seated, total=total, word=word))
        else:
            app.send(app.start_game())

    async def action_target(self, delta: int) -> None:
        """Change the target by ``delta`` steps within the rule set's range (50..500 by 50
        for the default game; host, before the start)."""
        app = self.dominos
        view = app.view
        if view is not None and view.your_seat == 0:
            rules = view.rules
            low, high = rules.min_target or 50, rules.max_target or 500
            step = rules.target_step or 50
            target = min(high, max(low, view.target + delta * step))
            if target != view.target:
                app.send(app.set_target(target))


def _hint(view: game_pb2.TableView, host: bool, total: int, lang: Lang) -> str:
    """The keys of the lobby: the host's (+/- only when the target can change), or what a
    guest waits for; with robots for the empty seats, that the host may start now."""
    fill = view.options.fill_empty_seats
    seated = sum(1 for s in view.seats if s.occupied)
    if fill and seated < total:
        if not host:
            return texts.ui("lobby_guest_fill", lang)
        keys = texts.ui("lobby_host_keys_fill", lang, robots=robots_label(fill, lang))
        if view.rules.min_target < view.rules.max_target or not view.rules.seats:
            keys = f"{texts.ui('lobby_target_key', lang)} · {keys}"
        return keys
    if total == 4 and (not view.rules.seats or view.rules.min_target < view.rules.max_target):
        return texts.ui("lobby_host_keys" if host else "lobby_guest", lang)
    word = count_word(total, lang)
    if not host:
        return texts.ui("lobby_guest_n", lang, word=word)
    adjustable = view.rules.min_target < view.rules.max_target
    key = "lobby_host_keys_target_n" if adjustable else "lobby_host_keys_n"
    return texts.ui(key, lang, word=word)
