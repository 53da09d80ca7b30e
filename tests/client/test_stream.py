"""Reconnection helpers of the client (services/client/stream.py): backoff and retried commands."""

from __future__ import annotations

import grpc
import pytest
from google.protobuf import any_pb2
from google.rpc import error_details_pb2, status_pb2

from services.client.stream import Backoff, error_reason, retry_command


def rpc_error(code: grpc.StatusCode, reason: str | None = None) -> grpc.aio.AioRpcError:
    trailing: list[tuple[str, bytes]] = []
    if reason is not None:
        detail = any_pb2.Any()
        detail.Pack(error_details_pb2.ErrorInfo(reason=reason, domain="dominos.v1"))
        status = status_pb2.Status(code=code.value[0], message="no", details=[detail])
        trailing.append(("grpc-status-details-bin", status.SerializeToString()))
    return grpc.aio.AioRpcError(
        code, grpc.aio.Metadata(), grpc.aio.Metadata(*trailing), details="no"
    )


def test_backoff_doubles_up_to_its_maximum_and_resets() -> None:
    backoff = Backoff(initial=0.5, factor=2.0, maximum=3.0, jitter=0.0)
    assert [backoff.next_delay() for _ in range(5)] == [0.5, 1.0, 2.0, 3.0, 3.0]
    backoff.reset()
    assert backoff.next_delay() == 0.5


def test_backoff_jitter_stays_within_its_fraction() -> None:
    backoff = Backoff(initial=1.0, factor=1.0, maximum=1.0, jitter=0.2)
    delays = [backoff.next_delay() for _ in range(200)]
    assert all(0.8 <= d <= 1.2 for d in delays)
    assert len(set(delays)) > 1


def test_error_reason_reads_the_error_info() -> None:
    assert error_reason(rpc_error(grpc.StatusCode.FAILED_PRECONDITION, "MUST_PLAY")) == (
        "MUST_PLAY"
    )
    assert error_reason(rpc_error(grpc.StatusCode.UNAVAILABLE)) is None


async def test_a_command_is_retried_with_one_request_id_while_the_gateway_is_away() -> None:
    seen: list[str] = []

    async def command(rid: str) -> str:
        seen.append(rid)
        if len(seen) < 3:
            raise rpc_error(grpc.StatusCode.UNAVAILABLE)
        return "done"

    fast = Backoff(initial=0.001, maximum=0.001, jitter=0.0)
    assert await retry_command(command, backoff=fast) == "done"
    assert len(seen) == 3 and len(set(seen)) == 1


async def test_a_refused_command_is_not_retried() -> None:
    calls = 0

    async def command(rid: str) -> str:
        nonlocal calls
        calls += 1
        raise rpc_error(grpc.StatusCode.FAILED_PRECONDITION, "NOT_YOUR_TURN")

    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await retry_command(command, backoff=Backoff(initial=0.001, jitter=0.0))
    assert calls == 1
    assert error_reason(caught.value) == "NOT_YOUR_TURN"
