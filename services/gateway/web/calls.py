"""A call that came over the web edge, as the gateway's servicer sees it.

:class:`WebCall` is the part of ``grpc.aio.ServicerContext`` that
:class:`~services.gateway.servicer.GatewayServicer` uses (``peer``, ``invocation_metadata``,
``abort``, ``write``, ``cancelled``, ``done``, ``code``), over a Connect or gRPC-Web request
of the ``connect-python`` library. So a browser's call runs the very code a gRPC client's
does: the same token check, caps, budgets, forwarding, logs and metrics. ``abort`` raises the
equivalent :class:`connectrpc.errors.ConnectError`, carrying the same ``google.rpc`` details
(``ErrorInfo``, ``RetryInfo``, ``BadRequest``); ``write`` hands a stream's messages to the
HTTP response through a queue of one (a slow browser slows its own stream only: the hub
gives a stream that fell behind the newest version, never a backlog).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from typing import Any, NoReturn

import grpc
from connectrpc.code import Code
from connectrpc.errors import ConnectError
from connectrpc.request import RequestContext
from dominos.v1 import gateway_pb2
from google.rpc import status_pb2

from services.common.service_errors import DETAILS_KEY

__all__ = ["WebCall", "connect_code", "grpc_peer"]

#: gRPC status code → Connect code (the names are the same but for CANCELLED).
_CODES = {code: Code[code.name] for code in grpc.StatusCode if code.name in Code.__members__}
_CODES[grpc.StatusCode.CANCELLED] = Code.CANCELED


def connect_code(code: grpc.StatusCode) -> Code:
    """The Connect code of a gRPC status code (UNKNOWN for OK, which never ends in error)."""
    return _CODES.get(code, Code.UNKNOWN)


def grpc_peer(client_address: str | None) -> str:
    """An HTTP client's ``host:port`` (as the ASGI server gives it, after the trusted proxies'
    ``X-Forwarded-For``) in gRPC's peer form, which the gateway's caps and budgets count:
    ``ipv4:203.0.113.7:5123``, ``ipv6:[2001:db8::1]:5123``; ``''`` when unknown."""
    if not client_address:
        return ""
    host, _, port = client_address.rpartition(":")
    if not host:
        return ""
    if ":" in host:
        return f"ipv6:[{host.strip('[]')}]:{port}"
    return f"ipv4:{host}:{port}"


class WebCall:
    """One web call seen as a gRPC servicer context (see the module docstring)."""

    __slots__ = ("_code", "_context", "_done", "_metadata", "_peer", "_queue")

    def __init__(self, context: RequestContext[Any, Any], *, stream: bool = False) -> None:
        self._context = context
        self._peer = grpc_peer(context.client_address())
        self._metadata = tuple(
            (key.lower(), value) for key, value in context.request_headers().allitems()
        )
        self._code: grpc.StatusCode | None = None
        self._done = False
        self._queue: asyncio.Queue[Any] | None = asyncio.Queue(maxsize=1) if stream else None

    def peer(self) -> str:
        """The client's address in gRPC's peer form."""
        return self._peer

    def invocation_metadata(self) -> Sequence[tuple[str, str]]:
        """The request's headers, names in lower case (``authorization`` among them)."""
        return self._metadata

    def code(self) -> grpc.StatusCode | None:
        """The status the call was aborted with, if it was."""
        return self._code

    def cancelled(self) -> bool:
        """Whether the client went away (its stream ended before the servicer's)."""
        return self._done

    def done(self) -> bool:
        """Whether the call is over."""
        return self._done

    def finish(self) -> None:
        """The HTTP exchange is over (answered, or the client went away)."""
        self._done = True

    async def abort(
        self,
        code: grpc.StatusCode,
        details: str = "",
        trailing_metadata: Sequence[tuple[str, str | bytes]] = (),
    ) -> NoReturn:
        """End the call with ``code``: raises the equivalent :class:`ConnectError`, with the
        ``google.rpc.Status`` details of ``trailing_metadata`` when it holds them."""
        self._code = code
        extra: list[Any] = []
        for key, value in trailing_metadata:
            if key == DETAILS_KEY and isinstance(value, bytes):
                status = status_pb2.Status()
                status.ParseFromString(value)
                extra.extend(status.details)
        raise ConnectError(connect_code(code), details, extra)

    async def write(self, message: Any) -> None:
        """Send one message of a server stream (waits while the previous one is unsent)."""
        if self._queue is None:
            raise RuntimeError("write() on a unary web call")
        if isinstance(message, bytes):  # a view stream's pre-serialised view
            message = gateway_pb2.WatchTableResponse.FromString(message)
        await self._queue.put(message)

    async def messages(self, producer: asyncio.Task[Any]) -> AsyncIterator[Any]:
        """The messages ``producer`` (the servicer's stream method) writes, until it ends;
        then its outcome: nothing when it returned, its :class:`ConnectError` when it
        aborted."""
        queue = self._queue
        if queue is None:
            raise RuntimeError("messages() of a unary web call")
        while True:
            getter = asyncio.ensure_future(queue.get())
            await asyncio.wait((getter, producer), return_when=asyncio.FIRST_COMPLETED)
            if getter.done():
                yield getter.result()
                continue
            getter.cancel()
            while not queue.empty():
                yield queue.get_nowait()
            producer.result()
            return
