"""The web edge's API requests read within bounds before the Connect library sees them.

For every call of the public API, :class:`RequestGuard`:

1. names the client: its address (after a trusted proxy's ``X-Forwarded-For``) and, for the
   per-connection budgets, its connection, or the browser's ``X-Dominos-Client`` instance id
   when it sends one (behind a proxy, where every browser shares the proxy's connections, a
   request without one counts as a connection of its own);
2. refuses beyond ``DOMINOS_WEB_MAX_REQUESTS`` requests at once (UNAVAILABLE);
3. reads the body, refusing it (RESOURCE_EXHAUSTED / REQUEST_TOO_LARGE) as soon as its
   ``Content-Length``, an envelope's declared length or the bytes read pass the limit, and
   its decompressed message as soon as the inflater's output does;
4. checks that it holds exactly one message of the method's type in the declared codec
   (INVALID_ARGUMENT / REQUEST_MALFORMED otherwise, with a generic message);
5. hands the library that message uncompressed.

Each refusal is counted in the RPC metrics like the servicer's own (``dominos_grpc_server_*``,
its status code) and in ``dominos_gateway_web_requests_refused_total``.
"""

from __future__ import annotations

import ipaddress
import itertools
import re
import struct
import zlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

import grpc
from google.protobuf import json_format, message_factory
from google.protobuf.message import Message
from starlette.types import ASGIApp as App
from starlette.types import Message as AsgiMessage
from starlette.types import Receive, Scope, Send

from services.common.grpc_metrics import SERVER_STREAM, UNARY, count_refused
from services.common.service_errors import Reason, ServiceError
from services.gateway import metrics
from services.gateway.web.answers import Protocol, answer
from services.gateway.web.api import SERVICE
from services.gateway.web.protocol import Networks, trusted

__all__ = ["CLIENT_HEADER", "RequestGuard"]

#: The header a browser tab sends its random instance id in (8-64 of ``A-Z a-z 0-9 _ -``).
CLIENT_HEADER: Final = "x-dominos-client"
_INSTANCE: Final = re.compile(rb"[A-Za-z0-9_-]{8,64}")
#: Room a compressed or enveloped body may take over its message's limit.
_FRAMING_SLACK: Final = 1024
_COMPRESSED: Final = 0x01


@dataclass(frozen=True, slots=True)
class _Method:
    name: str
    input: type[Message]
    kind: str


class _Gone(Exception):
    """The client went away before its request was read."""


def _methods() -> dict[str, _Method]:
    return {
        f"/{SERVICE.full_name}/{method.name}": _Method(
            method.name,
            message_factory.GetMessageClass(method.input_type),
            SERVER_STREAM if method.server_streaming else UNARY,
        )
        for method in SERVICE.methods
    }


def _framing(content_type: bytes) -> tuple[Protocol, str] | None:
    """The protocol and codec of a content type, or None for one the edge does not serve
    (``application/grpc`` needs HTTP trailers, ``grpc-web-text`` base64 framing)."""
    value = content_type.split(b";", 1)[0].strip().lower().decode("latin-1")
    if value in ("application/proto", "application/json"):
        return Protocol.CONNECT_UNARY, value.removeprefix("application/")
    if value in ("application/connect+proto", "application/connect+json"):
        return Protocol.CONNECT_STREAM, value.removeprefix("application/connect+")
    if value in ("application/grpc-web", "application/grpc-web+proto"):
        return Protocol.GRPC_WEB, "proto"
    if value == "application/grpc-web+json":
        return Protocol.GRPC_WEB, "json"
    return None


def _malformed(message: str) -> ServiceError:
    return ServiceError(grpc.StatusCode.INVALID_ARGUMENT, Reason.REQUEST_MALFORMED, message)


def _too_large(limit: int) -> ServiceError:
    return ServiceError(
        grpc.StatusCode.RESOURCE_EXHAUSTED,
        Reason.REQUEST_TOO_LARGE,
        f"the request is larger than {limit} bytes",
        metadata={"limit_bytes": str(limit)},
    )


def _busy() -> ServiceError:
    return ServiceError(
        grpc.StatusCode.UNAVAILABLE,
        Reason.UNAVAILABLE,
        "this gateway serves as many web requests as it may; retry",
        retry_after_s=1.0,
    )


class _Reader:
    """One request's body, bounded (see the module docstring)."""

    def __init__(self, protocol: Protocol, headers: Mapping[bytes, bytes], limit: int) -> None:
        self.protocol = protocol
        self.headers = headers
        self.limit = limit
        self.body_limit = limit + _FRAMING_SLACK

    async def read(self, receive: Receive) -> bytes:
        """The body; refused past its bounds."""
        declared = self.headers.get(b"content-length")
        if declared is not None:
            if not declared.isdigit():
                raise _malformed("invalid content-length")
            if int(declared) > self.body_limit:
                raise _too_large(self.limit)
        body = bytearray()
        enveloped = self.protocol is not Protocol.CONNECT_UNARY
        while True:
            message = await receive()
            if message["type"] != "http.request":
                raise _Gone
            body += message.get("body", b"")
            if len(body) > self.body_limit:
                raise _too_large(self.limit)
            if enveloped and len(body) >= 5 and struct.unpack(">I", body[1:5])[0] > self.body_limit:
                raise _too_large(self.limit)
            if not message.get("more_body", False):
                return bytes(body)

    def message(self, body: bytes) -> bytes:
        """The one message ``body`` holds, uncompressed."""
        if self.protocol is Protocol.CONNECT_UNARY:
            return self._inflate(body, self.headers.get(b"content-encoding", b"identity"))
        if len(body) < 5:
            raise _malformed("truncated envelope")
        flags, length = struct.unpack(">BI", body[:5])
        if len(body) != 5 + length:
            raise _malformed("a request holds exactly one whole message")
        if flags & ~_COMPRESSED:
            raise _malformed("invalid envelope flags")
        payload = body[5:]
        if not flags & _COMPRESSED:
            return self._inflate(payload, b"identity")
        name = (
            b"connect-content-encoding"
            if self.protocol is Protocol.CONNECT_STREAM
            else b"grpc-encoding"
        )
        encoding = self.headers.get(name, b"identity")
        if encoding.lower() == b"identity":
            raise _malformed("a compressed message without an encoding")
        return self._inflate(payload, encoding)

    def _inflate(self, data: bytes, encoding: bytes) -> bytes:
        encoding = encoding.strip().lower()
        if encoding == b"identity" or not data:
            if len(data) > self.limit:
                raise _too_large(self.limit)
            return data
        if encoding != b"gzip":
            raise _malformed("unsupported content encoding (identity and gzip are)")
        inflater = zlib.decompressobj(wbits=31)
        try:
            out = inflater.decompress(data, self.limit + 1)
        except zlib.error:
            raise _malformed("invalid gzip data") from None
        if len(out) > self.limit:
            raise _too_large(self.limit)
        if not inflater.eof or inflater.unused_data:
            raise _malformed("invalid gzip data")
        return out


def _check(method: _Method, codec: str, message: bytes) -> None:
    """Refuse ``message`` unless it decodes as the method's request type."""
    try:
        if codec == "json":
            json_format.Parse(message, method.input())
        else:
            method.input.FromString(message)
    except Exception:
        raise _malformed(f"not a {method.input.DESCRIPTOR.full_name} in {codec}") from None


def _rebuilt(
    protocol: Protocol, headers: list[tuple[bytes, bytes]], message: bytes
) -> tuple[list[tuple[bytes, bytes]], bytes]:
    """The headers and body that carry ``message`` uncompressed."""
    dropped = {
        b"content-length",
        b"content-encoding",
        b"connect-content-encoding",
        b"grpc-encoding",
    }
    kept = [(name, value) for name, value in headers if name not in dropped]
    if protocol is Protocol.CONNECT_UNARY:
        return kept, message
    return kept, struct.pack(">BI", 0, len(message)) + message


class RequestGuard:
    """The bounds of the module docstring, in front of the Connect application ``app``."""

    def __init__(
        self,
        app: App,
        *,
        max_message_bytes: int,
        max_requests: int,
        trusted_proxies: Networks = (),
    ) -> None:
        self._app = app
        self._methods = _methods()
        self._limit = max_message_bytes
        self._max_requests = max_requests
        self._proxies = trusted_proxies
        self._active = 0
        self._requests = itertools.count(1)

    @property
    def active(self) -> int:
        """Requests being served now."""
        return self._active

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        method = self._methods.get(scope["path"])
        if method is None:
            await self._app(scope, receive, send)  # the library's 404
            return
        headers: dict[bytes, bytes] = {}
        for name, value in scope["headers"]:
            headers.setdefault(name, value)
        scope = {**scope, "client": self._client(scope, headers)}
        framing = _framing(headers.get(b"content-type", b""))
        protocol, codec = framing or (Protocol.CONNECT_UNARY, "json")
        if self._active >= self._max_requests:
            await self._refuse(send, method, protocol, codec, _busy(), "busy")
            return
        self._active += 1
        try:
            await self._serve(scope, receive, send, method, framing, headers)
        finally:
            self._active -= 1

    async def _serve(
        self,
        scope: Scope,
        receive: Receive,
        send: Send,
        method: _Method,
        framing: tuple[Protocol, str] | None,
        headers: Mapping[bytes, bytes],
    ) -> None:
        protocol, codec = framing or (Protocol.CONNECT_UNARY, "json")
        try:
            if scope["method"] != "POST":
                raise _malformed("the API takes POST requests")
            if framing is None:
                raise _malformed("unsupported content type (Connect or gRPC-Web, proto or json)")
            reader = _Reader(protocol, headers, self._limit)
            message = reader.message(await reader.read(receive))
            _check(method, codec, message)
        except _Gone:
            return
        except ServiceError as error:
            reason = (
                "request_too_large"
                if error.reason is Reason.REQUEST_TOO_LARGE
                else "request_malformed"
            )
            await self._refuse(send, method, protocol, codec, error, reason)
            return
        new_headers, body = _rebuilt(protocol, scope["headers"], message)
        replayed = False

        async def replay() -> AsgiMessage:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self._app({**scope, "headers": new_headers}, replay, send)

    def _client(self, scope: Scope, headers: Mapping[bytes, bytes]) -> tuple[str, str]:
        """``(address, connection)`` as the budgets count them (see the module docstring)."""
        host, port = scope.get("client") or ("", 0)
        proxied = trusted(host, self._proxies)
        if proxied:
            host = _forwarded_for(headers.get(b"x-forwarded-for", b"")) or host
        instance = headers.get(CLIENT_HEADER.encode(), b"")
        if _INSTANCE.fullmatch(instance):
            return host, f"c{instance.decode()}"
        if proxied:
            return host, f"r{next(self._requests)}"
        return host, str(port)

    async def _refuse(
        self,
        send: Send,
        method: _Method,
        protocol: Protocol,
        codec: str,
        error: ServiceError,
        reason: str,
    ) -> None:
        count_refused(SERVICE.full_name, method.name, method.kind, error.code.name)
        metrics.WEB_REQUESTS_REFUSED.labels(reason).inc()
        label = "grpc_web" if protocol is Protocol.GRPC_WEB else "connect"
        metrics.WEB_CALLS.labels(label, method.name).inc()
        status, headers, body = answer(protocol, codec, error)
        headers.append((b"content-length", str(len(body)).encode()))
        if error.reason is Reason.REQUEST_TOO_LARGE:
            headers.append((b"connection", b"close"))  # the rest of the body is never read
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": body})


def _forwarded_for(value: bytes) -> str:
    """The address the trusted proxy added last to ``X-Forwarded-For`` ('' if none is valid)."""
    last = value.decode("latin-1").rsplit(",", 1)[-1].strip()
    try:
        address = ipaddress.ip_address(last.strip("[]"))
    except ValueError:
        return ""
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return str(address.ipv4_mapped)
    return str(address)
