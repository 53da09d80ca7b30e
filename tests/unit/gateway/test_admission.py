"""What one client may hold on a gateway: connections and streams per address, streams per
seat token (pure logic)."""

from __future__ import annotations

import pytest

from services.common.service_errors import ServiceError
from services.gateway.admission import Admission
from services.gateway.hub import Watcher, WatcherClosed


def admission(**caps: int) -> Admission:
    settings = {"connections_per_address": 0, "streams_per_address": 0, "streams_per_seat": 4}
    return Admission(**{**settings, **caps})


def peer(port: int, host: str = "203.0.113.7") -> str:
    return f"ipv4:{host}:{port}"


def test_an_address_may_open_so_many_connections_and_calls_on_them_are_free() -> None:
    gate = admission(connections_per_address=3)
    for port in (1, 2, 3):
        gate.call_started(peer(port))
    for _ in range(100):  # more calls on admitted connections are never refused
        gate.call_started(peer(2))
    with pytest.raises(ServiceError) as refused:
        gate.call_started(peer(4))
    assert refused.value.reason == "RATE_LIMITED"
    assert refused.value.metadata == {"limit": "connections_per_address"}
    assert refused.value.retry_after_s == 1
    gate.call_started(peer(1, host="198.51.100.1"))  # another address: its own count


def test_a_connection_counts_while_it_has_a_call_in_progress_and_never_after() -> None:
    gate = admission(connections_per_address=2)
    gate.call_started(peer(1))
    gate.call_started(peer(1))
    gate.call_started(peer(2))
    gate.call_ended(peer(1))
    with pytest.raises(ServiceError):  # peer 1 still has a call
        gate.call_started(peer(3))
    gate.call_ended(peer(1))
    gate.call_started(peer(3))  # peer 1 has none: it no longer counts, at once
    assert gate.connections("ipv4:203.0.113.7") == 2


def test_many_one_shot_connections_never_lock_the_address_out() -> None:
    gate = admission(connections_per_address=2)
    for port in range(1, 1000):
        gate.call_started(peer(port))
        gate.call_ended(peer(port))
    gate.call_started(peer(5000))
    gate.call_started(peer(5001))
    assert gate.connections("ipv4:203.0.113.7") == 2


def test_an_ipv6_client_counts_by_its_64() -> None:
    gate = admission(connections_per_address=1)
    gate.call_started("ipv6:[2001:db8::1]:1000")
    with pytest.raises(ServiceError):
        gate.call_started("ipv6:[2001:db8::ffff:2]:1000")


def test_an_address_with_nothing_in_progress_is_forgotten() -> None:
    gate = admission(connections_per_address=1)
    for i in range(100):
        gate.call_started(peer(1, host=f"198.51.100.{i}"))
        gate.call_ended(peer(1, host=f"198.51.100.{i}"))
    with pytest.raises(ServiceError):
        gate.call_started(peer(1))
        gate.call_started(peer(2))
    slot = gate.open_stream(peer(1), ("t", 0), Watcher("t", 0))
    gate.call_ended(peer(1))
    gate.close_stream(slot)
    assert gate._addresses == {}


def test_streams_per_address_are_capped() -> None:
    gate = admission(streams_per_address=2)
    slots = [gate.open_stream(peer(1), ("t", seat), Watcher("t", seat)) for seat in (0, 1)]
    with pytest.raises(ServiceError) as refused:
        gate.open_stream(peer(2), ("t", 2), Watcher("t", 2))
    assert refused.value.metadata == {"limit": "streams_per_address"}
    gate.close_stream(slots[0])
    gate.open_stream(peer(2), ("t", 2), Watcher("t", 2))
    assert gate.streams("ipv4:203.0.113.7") == 2


async def test_a_newer_stream_of_a_seat_token_replaces_its_oldest() -> None:
    gate = admission(streams_per_seat=2)
    watchers = [Watcher("t", 1) for _ in range(3)]
    slots = [gate.open_stream(peer(i), ("t", 1, b"holder"), w) for i, w in enumerate(watchers)]
    with pytest.raises(WatcherClosed, match="replaced"):
        await watchers[0].next()
    assert not watchers[1].closed and not watchers[2].closed
    # Another token of the same seat (a new occupant) is not the same seat token.
    gate.open_stream(peer(9), ("t", 1, b"other"), Watcher("t", 1))
    assert not watchers[1].closed
    for slot in slots:
        gate.close_stream(slot)
    assert gate._seats.keys() == {("t", 1, b"other")}
