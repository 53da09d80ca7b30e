"""The web edge's ASGI application: routes, static files, CORS and response headers.

- ``/dominos.v1.DominosService/<Method>``: the public API (Connect, unary and server streaming,
  binary or JSON; gRPC-Web), served by the ``connect-python`` library over
  :class:`~services.gateway.web.api.WebApi`, each request first read within bounds by
  :class:`~services.gateway.web.guard.RequestGuard`: a message larger than 64 KiB is refused
  (RESOURCE_EXHAUSTED), as on the gRPC door, before it is read or inflated whole.
- ``/healthz``: 200 while the gateway serves, 503 from the moment it drains (for the Ingress'
  or load balancer's health check; Kubernetes probes use the gRPC health service).
- anything else, ``GET``/``HEAD`` only: the web client's files from ``DOMINOS_WEB_ROOT``
  (``/`` is ``index.html``; 404 when the edge serves no files). Never a path outside it.

Every response carries ``X-Content-Type-Options: nosniff`` and ``Referrer-Policy:
no-referrer``; the client's pages also a Content-Security-Policy that lets them load and call
their own origin only, and may not be framed. ``index.html`` is never cached, the built
assets (content-hashed names under ``/assets/``) for a year. Calls from other origins are
refused by the browser unless ``DOMINOS_WEB_ALLOWED_ORIGINS`` lists them (CORS).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

from dominos.v1.gateway_connect import DominosServiceASGIApplication
from starlette.exceptions import HTTPException
from starlette.middleware.cors import CORSMiddleware
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp as App
from starlette.types import Message, Receive, Scope, Send

from services.gateway.web.api import SERVICE, WebApi
from services.gateway.web.guard import CLIENT_HEADER, RequestGuard
from services.gateway.web.protocol import Networks

__all__ = ["API_PREFIX", "MAX_REQUEST_BYTES", "web_app"]

API_PREFIX: Final = f"/{SERVICE.full_name}/"
MAX_REQUEST_BYTES: Final = 64 * 1024

#: What the browser may send and read across origins (Connect's and gRPC-Web's headers).
CORS_ALLOWED_HEADERS: Final = (
    "authorization",
    "content-type",
    "connect-protocol-version",
    "connect-timeout-ms",
    "connect-content-encoding",
    "connect-accept-encoding",
    "grpc-timeout",
    "x-grpc-web",
    "x-user-agent",
    CLIENT_HEADER,
)
CORS_EXPOSED_HEADERS: Final = (
    "grpc-status",
    "grpc-message",
    "grpc-status-details-bin",
    "connect-content-encoding",
)

_COMMON_HEADERS: Final = (
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
)
_PAGE_HEADERS: Final = (
    (
        b"content-security-policy",
        b"default-src 'self'; connect-src 'self'; img-src 'self' data:; "
        b"style-src 'self' 'unsafe-inline'; base-uri 'none'; form-action 'none'; "
        b"frame-ancestors 'none'",
    ),
    (b"x-frame-options", b"DENY"),
)
_NO_CACHE: Final = ((b"cache-control", b"no-cache"),)
_IMMUTABLE: Final = ((b"cache-control", b"public, max-age=31536000, immutable"),)


def _with_headers(send: Send, extra: tuple[tuple[bytes, bytes], ...]) -> Send:
    async def sending(message: Message) -> None:
        if message["type"] == "http.response.start":
            message = {**message, "headers": [*message.get("headers", ()), *extra]}
        await send(message)

    return sending


async def _plain(send: Send, status: int, body: bytes, *, allow: bytes = b"") -> None:
    headers = [(b"content-type", b"text/plain; charset=utf-8"), *_COMMON_HEADERS]
    if allow:
        headers.append((b"allow", allow))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def _until_disconnect(app: App, scope: Scope, receive: Receive, send: Send) -> None:
    """Run ``app`` on one request, cancelled when the client goes away: HTTP/1.1 has no other
    way to end a response early, so a browser closing a view stream closes its connection,
    and the call (a stream's presence, its caps) ends with it as a gRPC call does. The
    request's body is the app's to read; from its end on, ``receive`` only reports the
    disconnection."""
    body_read = asyncio.Event()

    async def receiving() -> Message:
        message = await receive()
        if message["type"] != "http.request" or not message.get("more_body", False):
            body_read.set()
        return message

    async def serve() -> None:
        await app(scope, receiving, send)

    call = asyncio.create_task(serve())
    gone = False

    async def watch() -> None:
        nonlocal gone
        await body_read.wait()
        while (await receive())["type"] != "http.disconnect":
            pass
        gone = True
        call.cancel()

    watcher = asyncio.create_task(watch())
    try:
        await call
    except (asyncio.CancelledError, Exception):
        if not gone:
            raise  # our own cancellation (the server stops), or a failure, not a client leaving
        # The client went away: the library ends the call with CANCELED, which the RPC
        # metrics count; it is no error of the gateway's.
    finally:
        watcher.cancel()


class _Router:
    """API, health and files (see the module docstring)."""

    def __init__(self, api: App, files: App | None, serving: Callable[[], bool]) -> None:
        self._api = api
        self._files = files
        self._serving = serving

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return  # no lifespan, no websockets
        path: str = scope["path"]
        if path.startswith(API_PREFIX):
            await _until_disconnect(self._api, scope, receive, _with_headers(send, _COMMON_HEADERS))
            return
        if path == "/healthz":
            up = self._serving()
            await _plain(send, 200 if up else 503, b"ok\n" if up else b"draining\n")
            return
        if scope["method"] not in ("GET", "HEAD"):
            await _plain(send, 405, b"method not allowed\n", allow=b"GET, HEAD")
            return
        if self._files is None:
            await _plain(send, 404, b"not found\n")
            return
        cache = _IMMUTABLE if path.startswith("/assets/") else _NO_CACHE
        headers = (*_COMMON_HEADERS, *_PAGE_HEADERS, *cache)
        try:
            await self._files(scope, receive, _with_headers(send, headers))
        except HTTPException as error:  # no such file (or outside the root): nothing sent yet
            await _plain(send, error.status_code, f"{error.detail}\n".lower().encode())


def web_app(
    servicer: Any,
    *,
    root: str = "",
    allowed_origins: tuple[str, ...] = (),
    serving: Callable[[], bool] = lambda: True,
    max_requests: int = 10_000,
    trusted_proxies: Networks = (),
) -> App:
    """The edge's application over the gateway's ``servicer``; files from ``root`` (a
    directory, or ``''`` for none: a missing directory raises ``RuntimeError`` at start)."""
    service: Any = WebApi(servicer)  # the stubs' DominosService, method by method
    api: App = RequestGuard(
        DominosServiceASGIApplication(service, read_max_bytes=MAX_REQUEST_BYTES),
        max_message_bytes=MAX_REQUEST_BYTES,
        max_requests=max_requests,
        trusted_proxies=trusted_proxies,
    )
    files: App | None = None
    if root:
        if not Path(root).is_dir():
            raise RuntimeError(f"DOMINOS_WEB_ROOT {root!r} is not a directory")
        files = StaticFiles(directory=root, html=True)
    app: App = _Router(api, files, serving)
    if allowed_origins:
        app = CORSMiddleware(
            app,
            allow_origins=allowed_origins,
            allow_methods=("GET", "POST"),
            allow_headers=CORS_ALLOWED_HEADERS,
            expose_headers=CORS_EXPOSED_HEADERS,
            max_age=3600,
        )
    return app
