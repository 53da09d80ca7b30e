"""The address a client's failed joins are counted by (D6)."""

from __future__ import annotations

import pytest

from services.common.peers import client_address


@pytest.mark.parametrize(
    ("peer", "counted_as"),
    [
        ("ipv4:203.0.113.7:5123", "ipv4:203.0.113.7"),
        ("ipv4:203.0.113.7:1", "ipv4:203.0.113.7"),
        # One /64 is one client: its 2^64 addresses share one budget.
        ("ipv6:[2001:db8:1:2:aaaa::1]:443", "ipv6:[2001:db8:1:2::]/64"),
        ("ipv6:[2001:db8:1:2:ffff:ffff:ffff:ffff]:9", "ipv6:[2001:db8:1:2::]/64"),
        ("ipv6:[2001:db8:1:3::1]:443", "ipv6:[2001:db8:1:3::]/64"),
        ("ipv6:[::1]:50051", "ipv6:[::]/64"),
        ("ipv6:[fe80::1%eth0]:50051", "ipv6:[fe80::]/64"),
        # An IPv4 client through a dual-stack socket is still an IPv4 client.
        ("ipv6:[::ffff:203.0.113.7]:5123", "ipv4:203.0.113.7"),
        # Anything else is counted as given (unix sockets, unparseable peers).
        ("unix:/tmp/gw.sock", "unix:/tmp/gw.sock"),
        ("ipv6:[not-an-address]:1", "ipv6:[not-an-address]:1"),
    ],
)
def test_d6_failed_joins_are_counted_per_ipv4_address_and_per_ipv6_64(
    peer: str, counted_as: str
) -> None:
    assert client_address(peer) == counted_as
