"""Refusals the web edge answers by itself, in the caller's protocol.

A :class:`~services.common.service_errors.ServiceError` becomes what a Connect or gRPC-Web
client reads as that status, with the same ``google.rpc`` details (``ErrorInfo``,
``RetryInfo``) the servicer's own refusals carry:

- Connect unary: the HTTP status of the code and the JSON error body;
- Connect streaming: HTTP 200 and one end-of-stream envelope holding the error;
- gRPC-Web: HTTP 200, "trailers-only": ``grpc-status``, ``grpc-message`` and
  ``grpc-status-details-bin`` as headers, no body.
"""

from __future__ import annotations

import base64
import json
import struct
import urllib.parse
from enum import StrEnum

from connectrpc._protocol import ConnectWireError
from connectrpc.code import Code

from services.common.service_errors import ServiceError
from services.gateway.web.calls import connect_code

__all__ = ["Protocol", "answer"]

Headers = list[tuple[bytes, bytes]]

#: Flag of the Connect envelope that ends a stream.
_END_STREAM = 0x02


class Protocol(StrEnum):
    """How a web request is framed."""

    CONNECT_UNARY = "connect"
    CONNECT_STREAM = "connect_stream"
    GRPC_WEB = "grpc_web"


def _wire(error: ServiceError) -> ConnectWireError:
    code: Code = connect_code(error.code)
    return ConnectWireError(code, error.message, list(error.status().details))


def answer(protocol: Protocol, codec: str, error: ServiceError) -> tuple[int, Headers, bytes]:
    """The HTTP status, headers and body that carry ``error`` to a client of ``protocol``
    (``codec``: ``proto`` or ``json``)."""
    if protocol is Protocol.CONNECT_UNARY:
        wire = _wire(error)
        return (
            wire.to_http_status().code,
            [(b"content-type", b"application/json")],
            wire.to_json_bytes(),
        )
    if protocol is Protocol.CONNECT_STREAM:
        payload = json.dumps({"error": _wire(error).to_dict()}).encode()
        return (
            200,
            [(b"content-type", f"application/connect+{codec}".encode())],
            struct.pack(">BI", _END_STREAM, len(payload)) + payload,
        )
    details = base64.b64encode(error.status().SerializeToString())
    return (
        200,
        [
            (b"content-type", f"application/grpc-web+{codec}".encode()),
            (b"grpc-status", str(error.code.value[0]).encode()),
            (b"grpc-message", urllib.parse.quote(error.message, safe=" ").encode()),
            (b"grpc-status-details-bin", details),
        ],
        b"",
    )
