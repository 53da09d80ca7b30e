"""Server reflection that describes only what a server serves, on ``grpc.reflection.v1`` and
``grpc.reflection.v1alpha``.

grpcio's reflection answers from the process's whole descriptor pool by default, so a gateway
(which imports the internal ``table.proto`` and ``events.proto`` to talk to the table
service) would hand their descriptors to anyone who asks by file name or symbol. Here the
pool holds only the files of the listed services and their imports.

grpcio-reflection implements ``v1alpha`` only; ``v1`` has the same messages under another
package, and the same bytes on the wire, so the v1alpha servicer also answers at the v1
method path (clients such as grpcurl and Postman try v1 first).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Final

import grpc
from google.protobuf import descriptor_pb2, descriptor_pool
from grpc_reflection.v1alpha import reflection, reflection_pb2

V1ALPHA: Final = reflection.SERVICE_NAME
V1: Final = "grpc.reflection.v1.ServerReflection"


def _add_file(pool: descriptor_pool.DescriptorPool, file: Any, added: set[str]) -> None:
    if file.name in added:
        return
    for dependency in file.dependencies:
        _add_file(pool, dependency, added)
    proto = descriptor_pb2.FileDescriptorProto()
    file.CopyToProto(proto)
    pool.Add(proto)
    added.add(file.name)


def served_pool(service_names: Iterable[str]) -> descriptor_pool.DescriptorPool:
    """A descriptor pool with the files defining ``service_names`` and their imports only."""
    default = descriptor_pool.Default()
    pool = descriptor_pool.DescriptorPool()
    added: set[str] = set()
    for name in service_names:
        try:
            file = default.FindFileContainingSymbol(name)
        except KeyError:
            continue
        _add_file(pool, file, added)
    return pool


def enable(server: Any, service_names: Sequence[str]) -> None:
    """Serve reflection (v1alpha and v1) listing ``service_names`` and both reflection
    services, with descriptors of the listed services' files only."""
    names = (*service_names, V1, V1ALPHA)
    servicer = reflection.aio.ReflectionServicer(names, pool=served_pool(service_names))
    for service in (V1ALPHA, V1):
        handler = grpc.stream_stream_rpc_method_handler(
            servicer.ServerReflectionInfo,
            request_deserializer=reflection_pb2.ServerReflectionRequest.FromString,
            response_serializer=reflection_pb2.ServerReflectionResponse.SerializeToString,
        )
        server.add_generic_rpc_handlers(
            (grpc.method_handlers_generic_handler(service, {"ServerReflectionInfo": handler}),)
        )
