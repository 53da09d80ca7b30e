"""What a command's commits leave to do once the command is answered (issue 22).

A commit is durable once Redis took it: its event waits in the table's outbox, and the relay
publishes whatever a replica did not. Publishing it on NATS (and waiting for JetStream's
acknowledgement) before answering put a NATS round trip on every move's path, and the
gateway's watchers then waited for the bus's copy. A command on a stream
(``TableService/ExecuteStream``) is answered first instead, with its event attached
(``ExecuteStreamResponse.event``), and its publications run right after the answer is
written, before the stream's next command is read: one command's work at a time per stream,
so nothing piles up behind a slow NATS, and a table's events still go out in version order
(an event left in the outbox goes out, in order, before any newer one of its table).

:data:`COMMAND_FOLLOWUPS` holds the :class:`Followups` of the command in hand, in the task of
the stream's handler; a commit made anywhere else (a unary ``Execute``, a timer's expiry, a
robot's move) finds none and publishes before returning, as before.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from typing import Final

__all__ = ["COMMAND_FOLLOWUPS", "Followups"]


class Followups:
    """The work a command's commits left for after its answer, and its last event."""

    __slots__ = ("event", "work")

    def __init__(self) -> None:
        #: The serialised ``TableEvent`` of the command's last commit (b"" when none).
        self.event = b""
        self.work: list[Callable[[], Awaitable[None]]] = []

    def defer(self, event: bytes, work: Callable[[], Awaitable[None]]) -> None:
        """A commit of ``event``: ``work`` (its publications) runs after the answer."""
        self.event = event
        self.work.append(work)

    async def run(self) -> None:
        """Run the deferred work in commit order (each one handles its own failures)."""
        work, self.work = self.work, []
        for item in work:
            await item()


#: The command in hand's followups, in the task of a stream's handler only.
COMMAND_FOLLOWUPS: Final[ContextVar[Followups | None]] = ContextVar(
    "dominos_followups", default=None
)
