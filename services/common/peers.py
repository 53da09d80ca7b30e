"""Client addresses as the budgets count them (D6, issue 15).

gRPC names a peer ``ipv4:203.0.113.7:5123`` or ``ipv6:[2001:db8::1]:5123``. A budget of an
address counts the address without its port; an IPv6 client counts by its /64 (one host or
site usually holds a whole /64, so counting single addresses would multiply its budget by
2^64); an IPv4 client mapped into IPv6 counts as IPv4.
"""

from __future__ import annotations

import functools
import ipaddress

__all__ = ["client_address"]


@functools.lru_cache(maxsize=16_384)
def client_address(peer: str) -> str:
    """``ipv4:203.0.113.7:5123`` → ``ipv4:203.0.113.7``; ``ipv6:[2001:db8::1]:5123`` →
    ``ipv6:[2001:db8::]/64``; anything else unchanged. Remembered per peer (a gateway asks
    for it at admission and again to forward the call)."""
    if peer.startswith("ipv6:["):
        host = peer[len("ipv6:[") : peer.index("]")] if "]" in peer else ""
        try:
            address = ipaddress.IPv6Address(host.split("%", 1)[0])
        except ValueError:
            return peer
        if address.ipv4_mapped is not None:
            return f"ipv4:{address.ipv4_mapped}"
        network = ipaddress.IPv6Network((address, 64), strict=False)
        return f"ipv6:[{network.network_address}]/64"
    if peer.startswith("ipv4:"):
        return peer.rsplit(":", 1)[0]
    return peer
