"""The web edge's HTTP/1.1 connections: uvicorn's httptools protocol with the bounds it lacks.

uvicorn reads a request head of any size, keeps a connection that never completes a request
for ever, and tells nothing of its connections. :class:`EdgeProtocol` adds, per connection:

- a cap on the open connections of one client address (``DOMINOS_CONNECTIONS_PER_ADDRESS``):
  a connection beyond it is closed as soon as it opens; a connection counts from its accept to
  its close, never after (connections from a trusted proxy are not counted here: the browsers
  behind it are, per request, by the gateway's admission);
- a head size limit (``DOMINOS_WEB_MAX_HEAD_BYTES``): the bytes that arrive while a request
  line and headers are read are counted, and a head still unfinished past the limit is
  answered 431 and closed (the rest is never read);
- a head deadline (``DOMINOS_WEB_HEAD_TIMEOUT_SECONDS``) from the connection's opening, or from
  the first byte of a later request's head: 408 and closed when missed, so a silent or
  dribbling client holds a connection for that long at most;
- a body deadline (``DOMINOS_WEB_BODY_TIMEOUT_SECONDS``) from the end of the head;
- between requests, the idle timeout (``DOMINOS_MAX_CONNECTION_IDLE_SECONDS``), which bytes
  that start no request (stray line breaks) do not reset.

Every close for a bound is counted in ``dominos_gateway_web_connections_closed_total``.
"""

from __future__ import annotations

import asyncio
import ipaddress
from dataclasses import dataclass
from typing import Any, ClassVar, Final

import httptools
from uvicorn.protocols.http.httptools_impl import STATUS_LINE, HttpToolsProtocol

from services.common.peers import client_address
from services.gateway import metrics

__all__ = [
    "EdgeLimits",
    "EdgeProtocol",
    "Networks",
    "OpenConnections",
    "address_of",
    "edge_protocol",
    "networks",
    "trusted",
]

Networks = tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...]


def networks(spec: str) -> Networks:
    """The comma-separated addresses and CIDR networks of ``spec`` (validated by settings)."""
    return tuple(
        ipaddress.ip_network(part.strip(), strict=False) for part in spec.split(",") if part
    )


def trusted(host: str, proxies: Networks) -> bool:
    """Whether ``host`` (an IP address) is one of ``proxies``."""
    if not proxies:
        return False
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return any(address in network for network in proxies)


def address_of(host: str) -> str:
    """The address a budget counts for a client host: ``ipv4:203.0.113.7``, or an IPv6 /64."""
    peer = f"ipv6:[{host}]:0" if ":" in host else f"ipv4:{host}:0"
    return client_address(peer)


@dataclass(frozen=True, slots=True)
class EdgeLimits:
    """What one web connection may take (see the module docstring)."""

    max_head_bytes: int
    head_timeout_s: float
    body_timeout_s: float
    idle_s: float
    trusted_proxies: Networks = ()


class OpenConnections:
    """The open web connections of each client address, capped (0: no cap)."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self._open: dict[str, int] = {}

    def admit(self, address: str) -> bool:
        """Count a new connection of ``address``; False (not counted) beyond the cap."""
        count = self._open.get(address, 0)
        if self.cap and count >= self.cap:
            return False
        self._open[address] = count + 1
        return True

    def release(self, address: str) -> None:
        """A counted connection of ``address`` closed."""
        count = self._open.get(address, 0) - 1
        if count > 0:
            self._open[address] = count
        else:
            self._open.pop(address, None)

    def of(self, address: str) -> int:
        """The open connections of ``address``."""
        return self._open.get(address, 0)

    def total(self) -> int:
        """Every counted open connection."""
        return sum(self._open.values())


class _HeadTooLarge(Exception):
    """The request head passed the limit (raised inside the parser's callbacks)."""


_IDLE: Final = "idle"
_HEAD_TIMEOUT: Final = "head_timeout"
_BODY_TIMEOUT: Final = "body_timeout"


class EdgeProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol with the bounds of the module docstring; subclassed per
    edge by :func:`edge_protocol`, which sets its limits and its connection counts."""

    limits: ClassVar[EdgeLimits]
    open_connections: ClassVar[OpenConnections]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._address: str | None = None
        self._deadline: asyncio.TimerHandle | None = None
        self._deadline_reason = ""
        self._head_bytes = 0
        self._reading_head = True

    # -- connection ---------------------------------------------------------------------

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        host = self.client[0] if self.client else ""
        if host and not trusted(host, self.limits.trusted_proxies):
            address = address_of(host)
            if not self.open_connections.admit(address):
                metrics.REFUSED.labels("connections_per_address").inc()
                metrics.WEB_CONNECTIONS_CLOSED.labels("connections_per_address").inc()
                transport.abort()
                return
            self._address = address
        self._arm(self.limits.head_timeout_s, _HEAD_TIMEOUT)

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        if self._address is not None:
            self.open_connections.release(self._address)
            self._address = None
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        # Unlike uvicorn's, data alone does not end the idle timer: a request's head does.
        # The parser keeps a header's bytes until the header ends, so a head is measured by
        # what arrives while it is read: past the limit and still unfinished, it is refused
        # (at most one read beyond the limit is ever held).
        if self._reading_head:
            self._head_bytes += len(data)
        try:
            self.parser.feed_data(data)
            if self._reading_head and self._head_bytes > self.limits.max_head_bytes:
                raise _HeadTooLarge
        except _HeadTooLarge:
            metrics.WEB_CONNECTIONS_CLOSED.labels("head_too_large").inc()
            self._answer_and_close(431, "request head too large\n")
        except httptools.HttpParserCallbackError:
            self._answer_and_close(400, "invalid HTTP request\n")
        except httptools.HttpParserUpgrade:
            self._answer_and_close(400, "no protocol upgrade here\n")
        except httptools.HttpParserError:
            metrics.WEB_CONNECTIONS_CLOSED.labels("malformed_http").inc()
            self._answer_and_close(400, "invalid HTTP request\n")

    # -- parser callbacks ---------------------------------------------------------------

    def on_message_begin(self) -> None:
        self._unset_keepalive_if_required()
        if self._deadline_reason != _HEAD_TIMEOUT:  # the first head's deadline runs from the open
            self._arm(self.limits.head_timeout_s, _HEAD_TIMEOUT)
        super().on_message_begin()

    def on_headers_complete(self) -> None:
        self._reading_head = False
        self._head_bytes = 0
        self._arm(self.limits.body_timeout_s, _BODY_TIMEOUT)
        super().on_headers_complete()

    def on_message_complete(self) -> None:
        self._disarm()
        self._reading_head = True  # what comes next is the next request's head
        super().on_message_complete()

    def timeout_keep_alive_handler(self) -> None:
        if not self.transport.is_closing():
            metrics.WEB_CONNECTIONS_CLOSED.labels(_IDLE).inc()
        super().timeout_keep_alive_handler()

    # -- bounds -------------------------------------------------------------------------

    def _arm(self, seconds: float, reason: str) -> None:
        self._disarm()
        self._deadline_reason = reason
        self._deadline = self.loop.call_later(seconds, self._expired, reason)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None
            self._deadline_reason = ""

    def _expired(self, reason: str) -> None:
        self._deadline = None
        self._deadline_reason = ""
        if self.transport.is_closing():
            return
        metrics.WEB_CONNECTIONS_CLOSED.labels(reason).inc()
        if reason == _HEAD_TIMEOUT:
            self._answer_and_close(408, "request head not received in time\n")
        else:
            self.transport.close()

    def _answer_and_close(self, status: int, text: str) -> None:
        """Answer ``status`` (unless a response is under way) and close the connection."""
        self._disarm()
        if self.transport.is_closing():
            return
        if self.cycle is None or self.cycle.response_complete or not self.cycle.response_started:
            body = text.encode()
            self.transport.write(
                b"".join(
                    (
                        STATUS_LINE[status],
                        b"content-type: text/plain; charset=utf-8\r\n",
                        b"content-length: %d\r\n" % len(body),
                        b"connection: close\r\n\r\n",
                        body,
                    )
                )
            )
        if self.cycle is not None and not self.cycle.response_complete:
            self.cycle.disconnected = True
            self.cycle.message_event.set()
        self.transport.close()


def edge_protocol(limits: EdgeLimits, open_connections: OpenConnections) -> type[EdgeProtocol]:
    """The protocol class of one web edge (uvicorn builds one instance per connection)."""
    return type(
        "BoundEdgeProtocol",
        (EdgeProtocol,),
        {"limits": limits, "open_connections": open_connections},
    )
