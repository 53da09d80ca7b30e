"""A client can read what it talks to (issue 17): the server's release, the contract's
package and the connection rules it should configure itself with, from any gateway, without a
seat token."""

from __future__ import annotations

from typing import Any

import grpc
from dominos.v1 import gateway_pb2, gateway_pb2_grpc

from services.common.grpc_server import MIN_CLIENT_PING_INTERVAL_MS
from services.common.metrics import package_version

from .conftest import E2ECluster


async def test_any_gateway_says_its_release_and_the_contracts_rules(e2e: E2ECluster) -> None:
    for gateway in e2e.gateways[:2]:
        async with grpc.aio.insecure_channel(gateway.address) as channel:
            stub: Any = gateway_pb2_grpc.DominosServiceStub(channel)
            info = await stub.GetServerInfo(gateway_pb2.GetServerInfoRequest(), timeout=5)
        assert info.server_version == package_version() != "unknown"
        assert info.contract == "dominos.v1"
        assert info.min_ping_interval_ms == MIN_CLIENT_PING_INTERVAL_MS
        assert info.streams_per_seat == 1000  # the test clusters' setting (testing.limits)
