"""Table-affine routing (issue 22): over a channel to two table-service replicas, every call
about a table reaches the same replica (whose record cache then stays current), calls
without a table reach either, and a table whose replica stops is served by the other."""

from __future__ import annotations

from typing import Any

import grpc
import pytest
from dominos.v1 import gateway_pb2, table_pb2, table_pb2_grpc
from prometheus_client import REGISTRY

from services.common.connections import table_channel
from services.common.service_errors import Reason, reason_of
from services.common.settings import Settings
from services.table.server import create_server
from testing.secrets import SESSION_SECRETS

from .client import rid
from .conftest import table_settings

_REFUSED_VIEWS = "dominos_grpc_client_handling_seconds_count"
_INVALID = {
    "grpc_service": "dominos.v1.TableService",
    "grpc_method": "GetView",
    "grpc_code": "INVALID_ARGUMENT",
}


async def _execute(stub: Any, token: str = "", **command: Any) -> Any:
    response = await stub.Execute(table_pb2.ExecuteRequest(seat_token=token, **command))
    return getattr(response, response.WhichOneof("result"))


async def test_a_tables_calls_reach_one_replica_and_move_when_it_stops(
    redis_server: Any, nats_server: Any, redis_client: Any
) -> None:
    settings = table_settings(redis_server.url_for("table"), nats_server.url_for("table"))
    replicas = [await create_server(settings) for _ in range(2)]
    target = "ipv4:" + ",".join(f"127.0.0.1:{port}" for _, port in replicas)
    channel = table_channel(
        Settings(table_service_addr=target, caller_credential=SESSION_SECRETS.gateway_credential)
    )
    stub = table_pb2_grpc.TableServiceStub(channel)
    try:
        tables = []
        for _ in range(8):
            created = await _execute(
                stub, create_table=gateway_pb2.CreateTableRequest(request_id=rid(), host_name="A")
            )
            tables.append((created.table_id, created.seat_token, created.view.version))
        apps = [server.app for server, _ in replicas]
        owners: dict[str, int] = {}
        for table_id, token, created_version in tables:
            for points in (150, 200, 250):  # three lobby changes
                await _execute(
                    stub,
                    token,
                    set_target=gateway_pb2.SetTargetRequest(
                        request_id=rid(), table_id=table_id, target=points
                    ),
                )
            view = await stub.GetView(table_pb2.GetViewRequest(table_id=table_id, seat_token=token))
            # One replica wrote all three changes: its cached record is the table's version.
            current = [
                app
                for app in apps
                if (r := app.cache.get(table_id)) and r.version == view.view.version
            ]
            assert len(current) == 1, table_id
            # ...and no other replica saw any of them: the other one holds at most the
            # create (which went to any replica), never a version in between.
            others = [app.cache.get(table_id) for app in apps if app is not current[0]]
            assert all(r is None or r.version == created_version for r in others), table_id
            owners[table_id] = apps.index(current[0])
        assert set(owners.values()) == {0, 1}  # 8 tables over 2 replicas: both own some
        # A malformed id (a control character, any length) routes like a create and is
        # answered by a replica: never a call the channel cannot send.
        timed = REGISTRY.get_sample_value(_REFUSED_VIEWS, _INVALID) or 0.0
        for malformed in ("\x1f", "x" * 8000):
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                await stub.GetView(table_pb2.GetViewRequest(table_id=malformed, seat_token=token))
            assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
            assert reason_of(refused.value) == Reason.ID_MALFORMED
        # Each call was timed by its status code (the channel's own timing, no interceptor).
        assert REGISTRY.get_sample_value(_REFUSED_VIEWS, _INVALID) == timed + 2
        # The replica of the first table stops: its calls go to the other one.
        table_id, token, _ = tables[0]
        owner = owners[table_id]
        stopped = replicas.pop(owner)
        await stopped[0].stop()
        answer = await _execute(
            stub,
            token,
            set_target=gateway_pb2.SetTargetRequest(
                request_id=rid(), table_id=table_id, target=300
            ),
        )
        assert answer.view.version > 0
        other = apps[1 - owner].cache.get(table_id)
        assert other is not None and other.version == answer.view.version
    finally:
        await channel.close()
        for server, _ in replicas:
            await server.stop()
