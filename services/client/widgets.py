"""Plain text on screen: :class:`Plain`, the widget that never reads its text as markup, and
the text a widget or the whole screen shows (for tests, logs and reports)."""

from __future__ import annotations

import io
from typing import Any

from rich.console import Console
from rich.text import Text
from textual.app import App
from textual.widgets import Static

__all__ = ["Plain", "screen_text", "widget_text"]


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
