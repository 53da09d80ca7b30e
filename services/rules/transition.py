"""What applying a command returns: the next state and the events it produced."""

from __future__ import annotations

from typing import NamedTuple

from .events import Event
from .state import TableState


class Transition(NamedTuple):
    """The state after a command and the events it produced.

    ``state is`` the input state (and ``events`` is empty) when the command changed nothing,
    e.g. a presence already recorded.
    """

    state: TableState
    events: tuple[Event, ...]
