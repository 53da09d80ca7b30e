"""Reconnection helpers of the client (services/client/stream.py): backoff and retried commands."""

from __future__ import annotations

from typing import Any, cast

import grpc
import pytest
from dominos.v1 import game_pb2, gateway_pb2
from google.protobuf import any_pb2, duration_pb2
from google.rpc import error_details_pb2, status_pb2

from services.client.api import SeatCredentials
from services.client.stream import (
    Backoff,
    StreamEvent,
    StreamFatal,
    ViewStream,
    error_reason,
    retry_command,
)


def rpc_error(
    code: grpc.StatusCode, reason: str | None = None, *, retry_after_s: float | None = None
) -> grpc.aio.AioRpcError:
    trailing: list[tuple[str, bytes]] = []
    if reason is not None:
        detail = any_pb2.Any()
        detail.Pack(error_details_pb2.ErrorInfo(reason=reason, domain="dominos.v1"))
        details = [detail]
        if retry_after_s is not None:
            delay = duration_pb2.Duration()
            delay.FromMilliseconds(int(retry_after_s * 1000))
            retry = any_pb2.Any()
            retry.Pack(error_details_pb2.RetryInfo(retry_delay=delay))
            details.append(retry)
        status = status_pb2.Status(code=code.value[0], message="no", details=details)
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


class _Watch:
    """A view stream that yields ``views`` then fails with ``error`` (or ends)."""

    def __init__(self, views: list[game_pb2.TableView], error: BaseException | None) -> None:
        self.views, self.error = views, error

    def __aiter__(self) -> _Watch:
        return self

    async def __anext__(self) -> gateway_pb2.WatchTableResponse:
        if self.views:
            return gateway_pb2.WatchTableResponse(view=self.views.pop(0))
        if self.error is not None:
            raise self.error
        raise StopAsyncIteration

    def cancel(self) -> bool:
        return True


class _Client:
    """Hands out the scripted streams, one per ``watch``."""

    def __init__(self, streams: list[_Watch]) -> None:
        self.streams = streams

    def watch(self, seat: SeatCredentials) -> _Watch:
        return self.streams.pop(0)


SEAT = SeatCredentials("t" * 22, 1, "token")


async def test_a_replaced_stream_is_not_reopened() -> None:
    replaced = rpc_error(grpc.StatusCode.ABORTED, "STREAM_REPLACED")
    client = _Client([_Watch([game_pb2.TableView(version=3)], replaced)])
    stream = ViewStream(cast(Any, client), SEAT, lambda _view: None)
    with pytest.raises(StreamFatal) as fatal:
        await stream.run()
    assert fatal.value.reason == "STREAM_REPLACED"
    assert stream.streams_opened == 1


async def test_a_lost_stream_is_reopened_and_a_limit_waits_its_retry_delay() -> None:
    limited = rpc_error(grpc.StatusCode.RESOURCE_EXHAUSTED, "RATE_LIMITED", retry_after_s=0.05)
    done = game_pb2.TableView(version=9, phase=game_pb2.PHASE_FINISHED)
    client = _Client([_Watch([], limited), _Watch([done], None)])
    events: list[StreamEvent] = []
    stream = ViewStream(
        cast(Any, client), SEAT, lambda _view: None, events.append, backoff=Backoff(initial=0.001)
    )
    assert await stream.run() == done
    lost = [event for event in events if event.kind == "lost"]
    assert len(lost) == 1 and lost[0].retry_in is not None and lost[0].retry_in >= 0.05
    assert stream.streams_opened == 2
