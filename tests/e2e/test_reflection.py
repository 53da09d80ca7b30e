"""The gateway's public reflection describes the public contract only (issue 14), on
``grpc.reflection.v1`` and ``v1alpha``: the internal ``table.proto`` and ``events.proto``
are not served, by service list, file name or symbol."""

from __future__ import annotations

from typing import Any

import grpc
import pytest
from google.protobuf import descriptor_pb2
from grpc_reflection.v1alpha import reflection_pb2

from .conftest import E2ECluster

PATHS = {
    "v1": "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo",
    "v1alpha": "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo",
}


async def _ask(channel: grpc.aio.Channel, path: str, **request: Any) -> Any:
    call = channel.stream_stream(
        path,
        request_serializer=reflection_pb2.ServerReflectionRequest.SerializeToString,
        response_deserializer=reflection_pb2.ServerReflectionResponse.FromString,
    )(iter([reflection_pb2.ServerReflectionRequest(**request)]), timeout=5)
    responses = [response async for response in call]
    assert len(responses) == 1
    return responses[0]


def _files(response: Any) -> set[str]:
    names = set()
    for raw in response.file_descriptor_response.file_descriptor_proto:
        names.add(descriptor_pb2.FileDescriptorProto.FromString(raw).name)
    return names


@pytest.mark.parametrize("version", sorted(PATHS))
async def test_the_gateway_reflects_only_the_public_contract(e2e: E2ECluster, version: str) -> None:
    path = PATHS[version]
    async with grpc.aio.insecure_channel(e2e.gateways[0].address) as channel:
        listed = await _ask(channel, path, list_services="")
        names = {s.name for s in listed.list_services_response.service}
        assert "dominos.v1.DominosService" in names
        assert not any("TableService" in name for name in names)
        public = await _ask(channel, path, file_containing_symbol="dominos.v1.DominosService")
        files = _files(public)
        assert {"dominos/v1/gateway.proto", "dominos/v1/game.proto"} <= files
        assert not files & {"dominos/v1/table.proto", "dominos/v1/events.proto"}
        for request in (
            {"file_by_filename": "dominos/v1/table.proto"},
            {"file_by_filename": "dominos/v1/events.proto"},
            {"file_containing_symbol": "dominos.v1.TableService"},
            {"file_containing_symbol": "dominos.v1.TableEvent"},
        ):
            answer = await _ask(channel, path, **request)
            assert answer.error_response.error_code == grpc.StatusCode.NOT_FOUND.value[0]
            assert not _files(answer)
