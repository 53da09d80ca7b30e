"""Commands to the table service on one stream per table (issue 22).

A unary gRPC call costs a ``grpc.aio`` client and server ~10 times the CPU of one message
on an open stream (a call is created, its headers and trailers written and parsed, its
metadata checked, a task started on each side; a stream message is one frame each way:
~275 µs against ~45 µs for a round trip of both processes on one core, grpcio 1.85). The
gateway forwards every move of a player, so it sends a table's commands on one
``TableService/ExecuteStream`` per table instead: :class:`CommandStreams` is called like the
table channel's ``Execute`` (``await streams(request, timeout=...)``, the reply or the
call's ``grpc.aio.AioRpcError``) and

- opens a table's stream with its first command, with the table's ``dominos-table`` header
  (so the stream goes where that table's unary calls go: table-affine routing) and the
  caller's credential (checked once, when the stream opens);
- numbers each command (``seq``) and matches the outcomes to them: a refusal becomes the
  same ``AioRpcError`` (code, message, rich details) a unary call would have raised, so the
  caller's retries and relaying are unchanged;
- fails the commands still waiting when their stream ends (a draining or dead replica, a
  connection closed for age) with ``UNAVAILABLE`` (or the stream's own failure), which the
  gateway retries with the same request id (safe: Execute is idempotent by it); the next
  command opens a new stream;
- half-closes a stream unused for ``idle_s``;
- sends a command unary when the table service does not serve ``ExecuteStream``
  (``UNIMPLEMENTED``: a replica of an earlier release during a rolling upgrade), and every
  command for the next minute.

Only tables ``wanted(table_id)`` says yes to get a stream (the gateway: tables one of its
clients watches; a stream per table id a client merely names would let a client open
streams at will), at most ``max_streams`` at once; every other command (create, join by
code, a table nobody watches here) is a unary ``Execute``.

Each command is timed in ``dominos_grpc_client_handling_seconds{grpc_method="ExecuteStream"}``
by its outcome's status code, as the unary calls are under their method.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Callable
from typing import Any, Final

import grpc
from dominos.v1 import table_pb2

from services.common.caller_auth import METADATA_KEY
from services.common.grpc_metrics import ClientTimer
from services.common.service_errors import DETAILS_KEY
from services.common.table_routing import TABLE_HEADER, table_of
from services.rules.binary import varint

__all__ = ["EXECUTE_STREAM", "CommandStreams"]

#: The table service's command stream.
EXECUTE_STREAM: Final = "/dominos.v1.TableService/ExecuteStream"
_SERVICE, _METHOD = "dominos.v1.TableService", "ExecuteStream"
_CODES: Final = {code.value[0]: code for code in grpc.StatusCode}
#: How long commands go unary after the table service answered a stream UNIMPLEMENTED.
UNIMPLEMENTED_BACKOFF_S: Final = 60.0
#: The tags of ``ExecuteStreamRequest.seq`` (varint) and ``ExecuteStreamRequest.request`` (bytes).
_FRAME_SEQ: Final = b"\x08"
_FRAME_REQUEST: Final = b"\x12"


def _identity(data: bytes) -> bytes:
    return data


def _failure(code: grpc.StatusCode, message: str, status: bytes = b"") -> grpc.aio.AioRpcError:
    """The error a unary Execute would have raised with this status."""
    trailing = grpc.aio.Metadata((DETAILS_KEY, status)) if status else grpc.aio.Metadata()
    return grpc.aio.AioRpcError(code, grpc.aio.Metadata(), trailing, message)


class _TableStream:
    """One table's open ``ExecuteStream``: the commands sent and not yet answered, by seq."""

    __slots__ = (
        "call",
        "closing",
        "ended",
        "pending",
        "reader",
        "seq",
        "table_id",
        "used",
        "writing",
    )

    def __init__(self, call: Any, table_id: str, now: float) -> None:
        self.call = call
        self.table_id = table_id
        self.pending: dict[int, asyncio.Future[table_pb2.ExecuteStreamResponse]] = {}
        self.seq = itertools.count(1)
        self.used = now
        #: Half-closed for idleness: takes no new command.
        self.closing = False
        #: The stream is over: its reader has failed what was pending.
        self.ended = False
        #: One write at a time on a call.
        self.writing = asyncio.Lock()
        self.reader: asyncio.Task[None] | None = None

    def end(self, error: grpc.aio.AioRpcError) -> None:
        """The stream is over: every command still waiting fails with ``error``."""
        self.ended = True
        for future in self.pending.values():
            if not future.done():
                future.set_exception(error)
        self.pending.clear()


class CommandStreams:
    """``await streams(request, timeout=...)``: an ``ExecuteRequest`` applied by the table
    service, on its table's stream when it has one or may open one, else by ``unary``."""

    name = _METHOD

    def __init__(
        self,
        channel: grpc.aio.Channel,
        unary: Callable[..., Any],
        *,
        credential: str = "",
        wanted: Callable[[str], bool] = lambda _: True,
        max_streams: int = 10_000,
        idle_s: float = 30.0,
    ) -> None:
        self._open = channel.stream_stream(
            EXECUTE_STREAM,
            request_serializer=_identity,
            response_deserializer=table_pb2.ExecuteStreamResponse.FromString,
        )
        self._unary = unary
        self._credential: tuple[tuple[str, str], ...] = (
            ((METADATA_KEY, credential),) if credential else ()
        )
        self._wanted = wanted
        self.max_streams = max_streams
        self.idle_s = idle_s
        self._streams: dict[str, _TableStream] = {}
        self._timer = ClientTimer(_SERVICE, _METHOD)
        self._sweeper: asyncio.Task[None] | None = None
        #: Until when (loop clock) commands go unary: the service lacked ExecuteStream.
        self._unary_until = 0.0

    @property
    def open_streams(self) -> int:
        """Streams open now."""
        return len(self._streams)

    async def __call__(
        self,
        request: table_pb2.ExecuteRequest,
        *,
        timeout: float | None = None,  # noqa: ASYNC109 (the command's deadline, as grpc's)
    ) -> table_pb2.ExecuteResponse:
        """The table service's answer to ``request``, or the ``AioRpcError`` of its refusal
        (or of the stream's end, or ``DEADLINE_EXCEEDED`` after ``timeout``)."""
        table_id = table_of(request)
        stream = self._streams.get(table_id) if table_id else None
        if stream is None or stream.closing or stream.ended:
            stream = self._stream_for(table_id) if table_id else None
            if stream is None:
                reply: table_pb2.ExecuteResponse = await self._unary(request, timeout=timeout)
                return reply
        try:
            return await self._send(stream, request, timeout)
        except grpc.aio.AioRpcError as error:
            if error.code() != grpc.StatusCode.UNIMPLEMENTED:
                raise
            # A table service of an earlier release (a rolling upgrade): unary for a while.
            self._unary_until = asyncio.get_running_loop().time() + UNIMPLEMENTED_BACKOFF_S
            reply = await self._unary(request, timeout=timeout)
            return reply

    def _stream_for(self, table_id: str) -> _TableStream | None:
        """A new stream for the table, or None when it may not have one."""
        loop = asyncio.get_running_loop()
        if len(self._streams) >= self.max_streams or loop.time() < self._unary_until:
            return None
        if not self._wanted(table_id):
            return None
        call = self._open(metadata=((TABLE_HEADER, table_id), *self._credential))
        stream = _TableStream(call, table_id, loop.time())
        stream.reader = loop.create_task(self._read(stream), name=f"commands-{table_id}")
        self._streams[table_id] = stream
        if self._sweeper is None or self._sweeper.done():
            self._sweeper = loop.create_task(self._sweep(), name="command-streams-sweep")
        return stream

    async def _send(
        self, stream: _TableStream, request: table_pb2.ExecuteRequest, deadline_s: float | None
    ) -> table_pb2.ExecuteResponse:
        loop = asyncio.get_running_loop()
        started = loop.time()
        stream.used = started
        seq = next(stream.seq)
        future: asyncio.Future[table_pb2.ExecuteStreamResponse] = loop.create_future()
        stream.pending[seq] = future
        body = request.SerializeToString()
        frame = _FRAME_SEQ + varint(seq) + _FRAME_REQUEST + varint(len(body)) + body
        expiry = None
        code = "UNKNOWN"
        try:
            try:
                async with stream.writing:
                    await stream.call.write(frame)
            except Exception as error:
                # The stream is over (its reader fails the rest); this command was not sent.
                raise _failure(grpc.StatusCode.UNAVAILABLE, "command stream closed") from error
            if deadline_s is not None:
                expiry = loop.call_later(deadline_s, _expire, future)
            outcome = await future
            if outcome.WhichOneof("outcome") == "response":
                code = "OK"
                response: table_pb2.ExecuteResponse = outcome.response
                return response
            refusal = outcome.refusal
            status = _CODES.get(refusal.code, grpc.StatusCode.UNKNOWN)
            code = status.name
            raise _failure(status, refusal.message, refusal.status)
        except grpc.aio.AioRpcError as error:
            code = error.code().name
            raise
        except asyncio.CancelledError:
            code = "CANCELLED"
            raise
        finally:
            if expiry is not None:
                expiry.cancel()
            stream.pending.pop(seq, None)
            if future.done() and not future.cancelled():
                future.exception()  # seen: the stream's end may have failed it unawaited
            self._timer.observe(code, loop.time() - started)

    async def _read(self, stream: _TableStream) -> None:
        """Match the stream's outcomes to its commands until it ends; then fail the rest."""
        error = _failure(grpc.StatusCode.UNAVAILABLE, "the command stream ended")
        try:
            while True:
                outcome = await stream.call.read()
                if outcome is grpc.aio.EOF:
                    break
                future = stream.pending.get(outcome.seq)
                if future is not None and not future.done():
                    future.set_result(outcome)
        except grpc.aio.AioRpcError as failed:
            error = _failure(failed.code(), failed.details() or "the command stream failed")
        except asyncio.CancelledError:
            stream.call.cancel()
            raise
        finally:
            if self._streams.get(stream.table_id) is stream:
                del self._streams[stream.table_id]
            stream.end(error)

    async def _sweep(self) -> None:
        """Half-close the streams idle for ``idle_s``, while any stream is open."""
        loop = asyncio.get_running_loop()
        while self._streams:
            await asyncio.sleep(self.idle_s / 2)
            now = loop.time()
            for stream in list(self._streams.values()):
                if not stream.pending and now - stream.used >= self.idle_s:
                    self.retire(stream.table_id)

    def retire(self, table_id: str) -> None:
        """Half-close the table's stream (its commands in flight still get their outcomes);
        the table's next command opens a new one."""
        stream = self._streams.pop(table_id, None)
        if stream is None or stream.closing:
            return
        stream.closing = True
        task = asyncio.get_running_loop().create_task(_half_close(stream))
        task.add_done_callback(lambda t: t.cancelled() or t.exception())

    async def close(self) -> None:
        """Cancel every stream (commands waiting fail ``UNAVAILABLE``) and the sweeper."""
        readers = [s.reader for s in self._streams.values() if s.reader is not None]
        if self._sweeper is not None:
            readers.append(self._sweeper)
        for task in readers:
            task.cancel()
        await asyncio.gather(*readers, return_exceptions=True)
        self._streams.clear()


def _expire(future: asyncio.Future[Any]) -> None:
    if not future.done():
        future.set_exception(
            _failure(grpc.StatusCode.DEADLINE_EXCEEDED, "no outcome within the deadline")
        )


async def _half_close(stream: _TableStream) -> None:
    async with stream.writing:
        await stream.call.done_writing()
