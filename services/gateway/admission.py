"""What one client may hold on a gateway (issue 15): connections and view streams per client
address, view streams per seat token.

gRPC gives a server no hook when a connection opens, only the peer of each call
(``ipv4:203.0.113.7:51234``: one address and port per connection). So a connection counts
from its first call, while it has a call open, and for ``idle_s`` after its last call ends
(the server also closes a connection idle that long: ``grpc.max_connection_idle_ms``). A call
on a connection the address may not open any more is refused with RESOURCE_EXHAUSTED /
RATE_LIMITED (``limit`` = ``connections_per_address``) and a ``RetryInfo`` of when a slot
frees at the latest. Idle connections that never call cost a few KB each until the idle
timer closes them; an accept-time cap per address belongs to the load balancer in front.

View streams: at most ``streams_per_address`` open from one address (refused beyond:
``streams_per_address``), and at most ``streams_per_seat`` per seat token: a newer stream of
the same token ends the oldest, which its client sees as ABORTED / STREAM_REPLACED (a client
that reopens its stream after a lost connection never waits for the old one to time out).

All counts are this gateway's own: a client spread over G gateways holds up to G times as
much, which the per-address arithmetic in the README accounts for.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import Final

import grpc

from services.common.peers import client_address
from services.common.service_errors import Limit, Reason, ServiceError, rate_limited
from services.gateway.hub import Watcher

__all__ = ["Admission", "StreamSlot"]

#: Sweep every address's idle connections after this many admitted calls.
_SWEEP_EVERY: Final = 4096


@dataclass(slots=True)
class _Connection:
    calls: int = 0
    last_call_end: float = 0.0


@dataclass(slots=True)
class _Address:
    connections: dict[str, _Connection] = field(default_factory=dict)
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
        idle_s: float,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.connections_per_address = connections_per_address
        self.streams_per_address = streams_per_address
        self.streams_per_seat = max(1, streams_per_seat)
        self.idle_s = idle_s
        self.clock = clock
        self._addresses: dict[str, _Address] = {}
        self._seats: dict[Hashable, list[Watcher]] = {}
        self._admitted = 0

    # -- connections ------------------------------------------------------------------------

    def call_started(self, peer: str) -> None:
        """Admit a call of ``peer``'s connection, or refuse it (ServiceError)."""
        address = client_address(peer)
        entry = self._addresses.get(address)
        if entry is None:
            entry = self._addresses[address] = _Address()
        connection = entry.connections.get(peer)
        if connection is None:
            if (
                self.connections_per_address
                and len(entry.connections) >= self.connections_per_address
            ):
                retry_s = self._prune(entry, self.clock())
                if len(entry.connections) >= self.connections_per_address:
                    raise rate_limited(
                        Limit.CONNECTIONS_PER_ADDRESS,
                        "too many connections from this address; reuse one connection",
                        retry_s,
                    )
            connection = entry.connections[peer] = _Connection()
        connection.calls += 1
        self._admitted += 1
        if self._admitted % _SWEEP_EVERY == 0:
            self.sweep()

    def call_ended(self, peer: str) -> None:
        """A call of ``peer`` ended (the connection stays counted for ``idle_s``)."""
        entry = self._addresses.get(client_address(peer))
        connection = entry.connections.get(peer) if entry is not None else None
        if connection is None:
            return
        connection.calls = max(0, connection.calls - 1)
        connection.last_call_end = self.clock()

    def _prune(self, entry: _Address, now: float) -> float:
        """Forget the address's connections idle for ``idle_s``; the seconds until the next
        idle one would be forgotten (``idle_s`` when none is idle)."""
        soonest = self.idle_s
        for peer, connection in list(entry.connections.items()):
            if connection.calls:
                continue
            left = connection.last_call_end + self.idle_s - now
            if left <= 0:
                del entry.connections[peer]
            else:
                soonest = min(soonest, left)
        return soonest

    def sweep(self) -> None:
        """Forget idle connections and addresses with nothing left (bounded memory)."""
        now = self.clock()
        for address, entry in list(self._addresses.items()):
            self._prune(entry, now)
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
