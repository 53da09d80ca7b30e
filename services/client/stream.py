"""A seat's view stream that survives a gateway restart, and commands that survive one too.

:class:`ViewStream` keeps a ``WatchTable`` stream open for one seat. When the stream breaks
(the gateway restarts, the network drops), it waits a backoff delay and opens a new stream
with the same seat token (D7, S4); the new stream's first view is the round where it stands,
so the client simply resumes from it. Views never go back: a view older than the newest one
delivered is dropped. The stream ends for good when the table is over (the gateway ends the
stream after the ``PHASE_FINISHED`` / ``PHASE_CLOSED`` view) or on an error no retry can
fix (bad token, table gone), which :meth:`ViewStream.run` raises as :class:`StreamFatal`.

:func:`retry_command` runs a command with one request id across retries, so a command sent
while the gateway restarts acts exactly once (the contract's idempotency, gateway.proto).
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Final, Literal, TypeVar

import grpc
from dominos.v1 import game_pb2

from services.client.api import DominosClient, SeatCredentials, request_id
from services.common.service_errors import Reason, reason_of, retry_delay_of

__all__ = [
    "FATAL_CODES",
    "RETRYABLE_CODES",
    "Backoff",
    "StreamEvent",
    "StreamFatal",
    "ViewStream",
    "error_reason",
    "retry_command",
]

T = TypeVar("T")

FATAL_CODES: Final = frozenset(
    {
        grpc.StatusCode.UNAUTHENTICATED,
        grpc.StatusCode.PERMISSION_DENIED,
        grpc.StatusCode.NOT_FOUND,
        grpc.StatusCode.INVALID_ARGUMENT,
    }
)
"""Stream errors a reconnection cannot fix: the token or the table is not (any more) valid."""

RETRYABLE_CODES: Final = frozenset(
    {grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED, grpc.StatusCode.UNKNOWN}
)
"""Command errors worth retrying with the same request id (the gateway is away)."""

_DONE_PHASES: Final = (game_pb2.PHASE_FINISHED, game_pb2.PHASE_CLOSED)


def error_reason(error: grpc.RpcError) -> str | None:
    """The contract's machine-readable reason (``ErrorInfo.reason``, e.g. ``"MUST_PLAY"``) of
    a failed call, or None when it carried none."""
    return reason_of(error)


@dataclass
class Backoff:
    """Exponential backoff: ``initial``, then multiplied by ``factor`` per failure up to
    ``maximum``, each delay spread by plus or minus ``jitter`` (a fraction) so the clients of
    a restarted gateway don't all come back at the same instant. :meth:`reset` after a
    success."""

    initial: float = 0.2
    factor: float = 2.0
    maximum: float = 5.0
    jitter: float = 0.2
    _next: float = 0.0

    def next_delay(self) -> float:
        """The delay to wait before the next attempt."""
        base = self._next or self.initial
        self._next = min(self.maximum, base * self.factor)
        spread = base * self.jitter
        return max(0.0, base + random.uniform(-spread, spread))

    def reset(self) -> None:
        """Start again from ``initial``."""
        self._next = 0.0


@dataclass(frozen=True)
class StreamEvent:
    """What happened to the stream: ``connected`` (a stream delivered its first view),
    ``lost`` (it broke; a new one is tried in ``retry_in`` seconds), ``ended`` (the table is
    over, no more views)."""

    kind: Literal["connected", "lost", "ended"]
    detail: str = ""
    retry_in: float | None = None


class StreamFatal(Exception):
    """The stream cannot be reopened: ``code`` and ``reason`` say why (e.g. TOKEN_INVALID)."""

    def __init__(self, code: grpc.StatusCode, reason: str | None, details: str) -> None:
        super().__init__(f"{code.name} {reason or ''}: {details}".strip())
        self.code = code
        self.reason = reason


class ViewStream:
    """Watches one seat's views through ``client``, reconnecting with backoff.

    ``on_view(view)`` is called for every view, in version order; ``on_event(event)`` for
    every :class:`StreamEvent`. Both are plain callables run on the event loop.
    """

    def __init__(
        self,
        client: DominosClient,
        seat: SeatCredentials,
        on_view: Callable[[game_pb2.TableView], None],
        on_event: Callable[[StreamEvent], None] | None = None,
        *,
        backoff: Backoff | None = None,
    ) -> None:
        self.client = client
        self.seat = seat
        self.on_view = on_view
        self.on_event = on_event or (lambda _event: None)
        self.backoff = backoff or Backoff()
        self.last: game_pb2.TableView | None = None
        self.streams_opened = 0

    def _deliver(self, view: game_pb2.TableView) -> None:
        if self.last is not None and view.version < self.last.version:
            return
        self.last = view
        self.on_view(view)

    async def run(self) -> game_pb2.TableView | None:
        """Watch until the table is over; returns the last view. Raises
        :class:`StreamFatal` when the gateway refuses the seat or the table is gone."""
        while True:
            call = self.client.watch(self.seat)
            self.streams_opened += 1
            first = True
            retry_after = 0.0
            try:
                async for message in call:
                    if first:
                        first = False
                        self.backoff.reset()
                        self.on_event(StreamEvent("connected"))
                    self._deliver(message.view)
                detail = "stream ended"
            except grpc.aio.AioRpcError as error:
                reason = error_reason(error)
                # A newer stream of this seat's token replaced this one: it is not reopened.
                if error.code() in FATAL_CODES or reason == Reason.STREAM_REPLACED:
                    raise StreamFatal(error.code(), reason, error.details() or "") from error
                detail = f"{error.code().name}: {error.details() or ''}".strip()
                retry_after = retry_delay_of(error) or 0.0  # a limit says when, e.g. connections
            finally:
                call.cancel()
            if self.last is not None and self.last.phase in _DONE_PHASES:
                self.on_event(StreamEvent("ended"))
                return self.last
            delay = max(self.backoff.next_delay(), retry_after)
            self.on_event(StreamEvent("lost", detail, delay))
            await asyncio.sleep(delay)


async def retry_command(
    command: Callable[[str], Awaitable[T]],
    *,
    attempts: int = 6,
    backoff: Backoff | None = None,
) -> T:
    """Run ``command(request_id)`` with one request id, retrying while the gateway is away
    (:data:`RETRYABLE_CODES`) up to ``attempts`` times; the command acts at most once.
    Other errors propagate at once."""
    rid = request_id()
    wait = backoff or Backoff()
    for attempt in range(attempts):
        try:
            return await command(rid)
        except grpc.aio.AioRpcError as error:
            if error.code() not in RETRYABLE_CODES or attempt == attempts - 1:
                raise
        await asyncio.sleep(wait.next_delay())
    raise AssertionError("unreachable")  # pragma: no cover
