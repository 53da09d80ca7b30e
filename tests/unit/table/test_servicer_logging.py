"""What the table servicer logs: validated context only, and rejection lines sampled while the
metric counts every rejection."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import grpc
import pytest
import structlog
from dominos.v1 import gateway_pb2, table_pb2
from prometheus_client import REGISTRY

from services.common import requests
from services.common.log_sampling import LogSampler
from services.common.logging import INVALID, REDACTED, configure_logging
from services.common.service_errors import Reason, ServiceError, invalid
from services.table import servicer
from testing.logs import logging_restored

VALID_TABLE = "A" * 22
VALID_RID = "r-" + "0123456789abcdef" * 2
HOSTILE = "\n\x1b[31m" + "x" * 60_000


_NOT_FOUND = ServiceError(grpc.StatusCode.NOT_FOUND, Reason.TABLE_NOT_FOUND, "no such table")


class Aborted(Exception):
    pass


class Context:
    def peer(self) -> str:
        return "ipv4:127.0.0.1:5000"

    async def abort(self, code: Any, message: str, trailing: Any) -> None:
        raise Aborted(code, message)


class App:
    """Validates like the real application, then refuses (no Redis needed); remembers the log
    context of each call it got."""

    def __init__(self) -> None:
        self.contexts: list[dict[str, Any]] = []

    def _seen(self) -> None:
        self.contexts.append(dict(structlog.contextvars.get_contextvars()))

    async def execute_serialized(self, request: Any, token: str, client: Any) -> bytes:
        return bytes(await self.execute(request, token, client))

    async def execute(self, request: Any, token: str, client: Any) -> Any:
        if isinstance(request, gateway_pb2.CreateTableRequest):
            raise invalid(Reason.NAME_INVALID, "a name has 1 to 24 characters")
        requests.request_id(request.request_id)
        requests.table_id(request.table_id)
        raise ServiceError(grpc.StatusCode.FAILED_PRECONDITION, Reason.NOT_YOUR_TURN, "wait")

    async def set_presence(self, table_id: str, token: str, connected: bool) -> int:
        self._seen()
        requests.table_id(table_id)
        raise _NOT_FOUND

    async def view(self, table_id: str, token: str) -> Any:
        self._seen()
        requests.table_id(table_id)
        raise _NOT_FOUND

    async def snapshot(self, table_id: str) -> Any:
        self._seen()
        requests.table_id(table_id)
        raise _NOT_FOUND


class Clock:
    now = 0.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture(autouse=True)
def _logging() -> Iterator[None]:
    with logging_restored():
        configure_logging("info", "table")
        yield


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    clock = Clock()
    monkeypatch.setattr(servicer, "_SAMPLED", LogSampler(rate=1.0, burst=2, clock=clock))
    return clock


def records(capsys: pytest.CaptureFixture[str]) -> list[dict[str, Any]]:
    return [json.loads(line) for line in capsys.readouterr().out.splitlines()]


def rejected(command: str, reason: str) -> float:
    value = REGISTRY.get_sample_value(
        "dominos_table_commands_rejected_total", {"command": command, "reason": reason}
    )
    return value or 0.0


async def execute(service: servicer.TableServicer, **command: Any) -> None:
    with pytest.raises(Aborted):
        await service.Execute(table_pb2.ExecuteRequest(seat_token="t" * 43, **command), Context())


async def test_only_validated_ids_are_bound_to_the_log_context(
    capsys: pytest.CaptureFixture[str], clock: Clock
) -> None:
    service = servicer.TableServicer(App())  # type: ignore[arg-type]
    await execute(
        service, play_tile=gateway_pb2.PlayTileRequest(request_id=HOSTILE, table_id=HOSTILE)
    )
    await execute(
        service, **{"pass": gateway_pb2.PassRequest(request_id=VALID_RID, table_id=VALID_TABLE)}
    )
    await execute(
        service, create_table=gateway_pb2.CreateTableRequest(request_id=VALID_RID, host_name="")
    )
    out = capsys.readouterr().out
    assert "xxxx" not in out and "\\x1b" not in out
    first, second, third = [json.loads(line) for line in out.splitlines()]
    assert first["event"] == "table.command_rejected"
    assert (first["command"], first["table_id"], first["request_id"]) == (
        "play_tile",
        INVALID,
        INVALID,
    )
    assert first["reason"] == "REQUEST_ID_MALFORMED"
    assert (second["table_id"], second["request_id"]) == (VALID_TABLE, VALID_RID)
    # A create's or join's request id proves the seat on a retry: never logged.
    assert third["command"] == "create_table"
    assert third["request_id"] == REDACTED
    assert "table_id" not in third


async def test_rejection_lines_are_sampled_but_every_rejection_is_counted(
    capsys: pytest.CaptureFixture[str], clock: Clock
) -> None:
    service = servicer.TableServicer(App())  # type: ignore[arg-type]
    before = rejected("pass", "ID_MALFORMED")
    bad = {"pass": gateway_pb2.PassRequest(request_id=VALID_RID, table_id=HOSTILE)}
    for _ in range(50):
        await execute(service, **bad)
    assert rejected("pass", "ID_MALFORMED") - before == 50
    lines = records(capsys)
    assert len(lines) == 2  # the burst
    assert all("suppressed" not in line for line in lines)
    clock.now += 1.0
    await execute(service, **bad)
    (line,) = records(capsys)
    assert (line["reason"], line["suppressed"]) == ("ID_MALFORMED", 48)


async def test_presence_view_and_snapshot_bind_only_a_valid_table_id(
    capsys: pytest.CaptureFixture[str],
) -> None:
    app = App()
    service = servicer.TableServicer(app)  # type: ignore[arg-type]
    calls: list[tuple[Any, Any]] = [
        (service.SetPresence, table_pb2.SetPresenceRequest(table_id=HOSTILE)),
        (service.GetView, table_pb2.GetViewRequest(table_id=HOSTILE)),
        (service.GetSnapshot, table_pb2.GetSnapshotRequest(table_id=HOSTILE)),
        (service.GetView, table_pb2.GetViewRequest(table_id=VALID_TABLE)),
    ]
    for call, request in calls:
        with pytest.raises(Aborted):
            await call(request, Context())
    assert app.contexts == [
        {"command": "set_presence", "table_id": INVALID},
        {"command": "get_view", "table_id": INVALID},
        {"command": "get_snapshot", "table_id": INVALID},
        {"command": "get_view", "table_id": VALID_TABLE},
    ]
    assert capsys.readouterr().out == ""
