"""What one client may hold on a gateway: connections and view streams per client address,
view streams per seat token.

gRPC gives a server no hook when a connection opens or closes, only the peer of each call
(``ipv4:203.0.113.7:51234``: one address and port per connection). So a connection counts
exactly while it has a call in progress (a closed connection's calls end with it, so it is
never counted after it closed); a call on a connection the address may not open any more is
refused with RESOURCE_EXHAUSTED / RATE_LIMITED (``limit`` = ``connections_per_address``) and a
``RetryInfo`` of a second. A connection between calls costs a few KB until the server's idle
timer (``grpc.max_connection_idle_ms``) closes it. The web door counts its open connections
itself (:mod:`services.gateway.web.protocol`); its calls count here too, each browser's
connection (or, behind a proxy, its instance id) as one peer.

View streams: at most ``streams_per_address`` open from one address (refused beyond:
``streams_per_address``), and at most ``streams_per_seat`` per seat token: a newer stream of
the same token ends the oldest, which its client sees as ABORTED / STREAM_REPLACED (a client
that reopens its stream after a lost connection never waits for the old one to time out).

All counts are this gateway's own: a client spread over G gateways holds up to G times as
much, which the per-address arithmetic in the README accounts for.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import Final

import grpc

from services.common.peers import client_address
from services.common.service_errors import Limit, Reason, ServiceError, rate_limited
from services.gateway.hub import Watcher

__all__ = ["Admission", "StreamSlot"]

#: When a refused connection may try again (a slot frees as soon as a call ends).
_RETRY_S: Final = 1.0


@dataclass(slots=True)
class _Address:
    #: Calls in progress per connection (peer) of the address.
    connections: dict[str, int] = field(default_factory=dict)
    streams: int = 0


@dataclass(slots=True)
class StreamSlot:
    """An open view stream's place: release it when the stream ends."""

    address: str
    seat_key: Hashable
    watcher: Watcher


def replaced() -> ServiceError:
    """The end of a stream that a newer stream of the same seat token replaced."""
    return ServiceError(
        grpc.StatusCode.ABORTED,
        Reason.STREAM_REPLACED,
        "a newer view stream of this seat token replaced this one",
    )


class Admission:
    """The caps of one gateway process (0 turns a per-address cap off)."""

    def __init__(
        self,
        *,
        connections_per_address: int,
        streams_per_address: int,
        streams_per_seat: int,
    ) -> None:
        self.connections_per_address = connections_per_address
        self.streams_per_address = streams_per_address
        self.streams_per_seat = max(1, streams_per_seat)
        self._addresses: dict[str, _Address] = {}
        self._seats: dict[Hashable, list[Watcher]] = {}

    # -- connections ------------------------------------------------------------------------

    def call_started(self, peer: str) -> None:
        """Admit a call of ``peer``'s connection, or refuse it (ServiceError)."""
        address = client_address(peer)
        entry = self._addresses.get(address)
        if entry is None:
            entry = self._addresses[address] = _Address()
        calls = entry.connections.get(peer)
        if calls is None:
            cap = self.connections_per_address
            if cap and len(entry.connections) >= cap:
                if not entry.connections and not entry.streams:
                    del self._addresses[address]
                raise rate_limited(
                    Limit.CONNECTIONS_PER_ADDRESS,
                    "too many connections from this address; reuse one connection",
                    _RETRY_S,
                )
            calls = 0
        entry.connections[peer] = calls + 1

    def call_ended(self, peer: str) -> None:
        """A call of ``peer`` ended: its connection counts no more once it has none."""
        address = client_address(peer)
        entry = self._addresses.get(address)
        calls = entry.connections.get(peer) if entry is not None else None
        if entry is None or calls is None:
            return
        if calls > 1:
            entry.connections[peer] = calls - 1
            return
        del entry.connections[peer]
        if not entry.connections and not entry.streams:
            del self._addresses[address]

    def connections(self, address: str) -> int:
        """The connections of ``address`` counted now."""
        entry = self._addresses.get(address)
        return len(entry.connections) if entry is not None else 0

    # -- view streams -----------------------------------------------------------------------

    def open_stream(self, peer: str, seat_key: Hashable, watcher: Watcher) -> StreamSlot:
        """Admit a view stream of ``peer`` for the seat token ``seat_key``: refused beyond the
        address's cap; beyond the seat's, the oldest stream of the seat is closed
        (its watcher raises ``WatcherClosed("replaced")``)."""
        address = client_address(peer)
        entry = self._addresses.setdefault(address, _Address())
        if self.streams_per_address and entry.streams >= self.streams_per_address:
            raise rate_limited(
                Limit.STREAMS_PER_ADDRESS,
                "too many view streams from this address; close some first",
                1.0,
            )
        entry.streams += 1
        streams = self._seats.setdefault(seat_key, [])
        while len(streams) >= self.streams_per_seat:
            streams.pop(0).close("replaced")
        streams.append(watcher)
        return StreamSlot(address, seat_key, watcher)

    def close_stream(self, slot: StreamSlot) -> None:
        """The stream of ``slot`` ended."""
        entry = self._addresses.get(slot.address)
        if entry is not None:
            entry.streams = max(0, entry.streams - 1)
            if not entry.streams and not entry.connections:
                del self._addresses[slot.address]
        streams = self._seats.get(slot.seat_key)
        if streams is not None:
            if slot.watcher in streams:
                streams.remove(slot.watcher)
            if not streams:
                del self._seats[slot.seat_key]

    def close_all(self, reason: str) -> int:
        """Close every open stream's watcher (their streams end with ``reason``); how many."""
        closed = 0
        for watchers in self._seats.values():
            for watcher in watchers:
                watcher.close(reason)
                closed += 1
        return closed

    def streams(self, address: str) -> int:
        """The view streams of ``address`` open now."""
        entry = self._addresses.get(address)
        return entry.streams if entry is not None else 0
