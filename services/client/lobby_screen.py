"""The lobby screen: the invitation code, the seated players, the target (the host changes it
with ``+``/``-``), and *Start* for the host, enabled only with four seated; ``S`` before that
says why it cannot start."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.widgets import Button

from services.client import texts
from services.client.base_screen import DominosScreen
from services.client.lobby import lobby_lines
from services.client.widgets import Plain

__all__ = ["LobbyScreen"]


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
        self.query_one("#lobby", Plain).update("\n".join(lobby_lines(view, app.code, lang)))
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
