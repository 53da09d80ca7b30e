"""The question asked before quitting while a seat is held (see
:meth:`services.client.app.DominosApp.action_request_quit`)."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen

from services.client.widgets import Plain

__all__ = ["ConfirmQuit"]


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
