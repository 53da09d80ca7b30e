"""The base of the Dominos app's screens (start, lobby, game)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from dominos.v1 import game_pb2
from textual.css.query import NoMatches
from textual.screen import Screen

if TYPE_CHECKING:
    from services.client.app import DominosApp

__all__ = ["DominosScreen"]


class DominosScreen(Screen[None]):
    """A screen of the Dominos app: typed access to the app and its newest view."""

    ready = False  # composed and mounted (``is_mounted`` turns true only after on_mount)

    @property
    def dominos(self) -> DominosApp:
        """The app this screen belongs to."""
        from services.client.app import DominosApp  # noqa: PLC0415 (the app imports the screens)

        app = self.app
        assert isinstance(app, DominosApp)
        return app

    def shown_view(self) -> game_pb2.TableView | None:
        """The app's newest view, once the screen can show it (None before)."""
        return self.dominos.view if self.ready else None

    def refresh_view(self) -> None:
        """Redraw from the app's newest view (:meth:`_redraw`); nothing while the screen's
        widgets are not there: a view can arrive while screens are switched or the app
        closes."""
        try:
            self._redraw()
        except NoMatches:
            return

    def _redraw(self) -> None:
        """Draw the app's newest view (a screen that shows views overrides it)."""
