"""Logging: JSON lines on stdout, context bindings, redaction of secrets and hidden tiles."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
import structlog

from services.common.logging import (
    REDACTED,
    bound_context,
    configure_logging,
    get_logger,
    redact,
)


@pytest.fixture(autouse=True)
def _restore_logging() -> Iterator[None]:
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    structlog.contextvars.clear_contextvars()
    yield
    structlog.contextvars.clear_contextvars()
    structlog.reset_defaults()
    for handler in list(root.handlers):
        root.removeHandler(handler)
    for handler in handlers:
        root.addHandler(handler)
    root.setLevel(level)


def lines_of(capsys: pytest.CaptureFixture[str]) -> list[dict[str, Any]]:
    out = capsys.readouterr().out
    assert out.endswith("\n")
    return [json.loads(line) for line in out.splitlines()]


def test_one_json_object_per_line_with_standard_keys(capsys: pytest.CaptureFixture[str]) -> None:
    configure_logging("info", "table")
    log = get_logger("services.table.servicer")
    log.info("table.command_applied", version=7, note="multi\nline text")
    log.warning("table.version_conflict", expected=3)
    log.error("table.publish_failed")

    records = lines_of(capsys)
    assert [r["event"] for r in records] == [
        "table.command_applied",
        "table.version_conflict",
        "table.publish_failed",
    ]
    assert [r["level"] for r in records] == ["info", "warning", "error"]
    for record in records:
        assert record["service"] == "table"
        assert record["logger"] == "services.table.servicer"
        assert record["timestamp"].endswith("Z")
        stamp = datetime.fromisoformat(record["timestamp"].replace("Z", "+00:00"))
        assert stamp.utcoffset() is not None
        assert abs((datetime.now(UTC) - stamp).total_seconds()) < 60
    assert records[0]["version"] == 7
    assert records[0]["note"] == "multi\nline text"


def test_level_filtering(capsys: pytest.CaptureFixture[str]) -> None:
    configure_logging("warning", "gateway")
    log = get_logger("x")
    log.debug("dropped.debug")
    log.info("dropped.info")
    log.warning("kept.warning")
    assert [r["event"] for r in lines_of(capsys)] == ["kept.warning"]

    configure_logging("DEBUG", "gateway")
    get_logger("x").debug("kept.debug")
    assert [r["event"] for r in lines_of(capsys)] == ["kept.debug"]


def test_unknown_level_is_rejected() -> None:
    with pytest.raises(ValueError, match="verbose"):
        configure_logging("verbose", "table")


def test_context_bindings_appear(capsys: pytest.CaptureFixture[str]) -> None:
    configure_logging("info", "table")
    log = get_logger("x")
    structlog.contextvars.bind_contextvars(table_id="t-1", seat=2, request_id="r-9", version=4)
    log.info("table.command_applied")
    structlog.contextvars.clear_contextvars()
    with bound_context(table_id="t-2"):
        with bound_context(seat=3):
            log.info("inner")
        log.info("outer")
    log.info("unbound")

    first, inner, outer, unbound = lines_of(capsys)
    assert (first["table_id"], first["seat"], first["request_id"], first["version"]) == (
        "t-1",
        2,
        "r-9",
        4,
    )
    assert (inner["table_id"], inner["seat"]) == ("t-2", 3)
    assert outer["table_id"] == "t-2"
    assert "seat" not in outer
    assert "table_id" not in unbound


async def test_bindings_are_per_task(capsys: pytest.CaptureFixture[str]) -> None:
    configure_logging("info", "table")
    log = get_logger("x")
    both_bound = asyncio.Barrier(2)

    async def call(table_id: str) -> None:
        structlog.contextvars.bind_contextvars(table_id=table_id)
        await both_bound.wait()
        log.info("call", expected=table_id)

    await asyncio.gather(call("a"), call("b"))
    records = lines_of(capsys)
    assert len(records) == 2
    for record in records:
        assert record["table_id"] == record["expected"]


def test_secrets_and_hidden_tiles_are_redacted_recursively(
    capsys: pytest.CaptureFixture[str],
) -> None:
    configure_logging("info", "gateway")
    structlog.contextvars.bind_contextvars(seat_token="ctx-secret-1")
    get_logger("x").info(
        "gateway.join",
        token="secret-2",
        Authorization="Bearer secret-3",
        hand=[[6, 6], [1, 2]],
        state={"hands": "secret-4"},
        table={
            "id": "t-1",
            "hands": [[[0, 0]]],
            "seats": [{"seat": 0, "seat_token": "secret-5", "name": "ana"}],
            "nested": ({"refresh_token": "secret-6", "STATE": "secret-7"},),
        },
        players=[{"hand": "secret-8", "seat": 1}],
    )
    out = capsys.readouterr().out
    for secret in ("secret-", "[6, 6]", "[[0, 0]]"):
        assert secret not in out
    (record,) = [json.loads(line) for line in out.splitlines()]
    assert record["seat_token"] == REDACTED
    assert record["token"] == REDACTED
    assert record["Authorization"] == REDACTED
    assert record["hand"] == REDACTED
    assert record["state"] == REDACTED
    assert record["table"] == {
        "id": "t-1",
        "hands": REDACTED,
        "seats": [{"seat": 0, "seat_token": REDACTED, "name": "ana"}],
        "nested": [{"refresh_token": REDACTED, "STATE": REDACTED}],
    }
    assert record["players"] == [{"hand": REDACTED, "seat": 1}]


def test_redact_does_not_mutate_its_input() -> None:
    value = {"a": [{"token": "x"}], "b": 1}
    assert redact(value) == {"a": [{"token": REDACTED}], "b": 1}
    assert value == {"a": [{"token": "x"}], "b": 1}


def test_standard_library_records_become_json_lines(capsys: pytest.CaptureFixture[str]) -> None:
    configure_logging("info", "timer")
    structlog.contextvars.bind_contextvars(table_id="t-3")
    logging.getLogger("nats.aio.client").warning("reconnecting to %s", "nats://x")
    logging.getLogger("noisy").debug("dropped")
    (record,) = lines_of(capsys)
    assert record["event"] == "reconnecting to nats://x"
    assert record["level"] == "warning"
    assert record["logger"] == "nats.aio.client"
    assert record["service"] == "timer"
    assert record["table_id"] == "t-3"


def test_exceptions_are_structured_without_locals(capsys: pytest.CaptureFixture[str]) -> None:
    configure_logging("info", "table")

    def failing(seat_token: str) -> None:
        raise RuntimeError("boom")

    try:
        failing("secret-local")
    except RuntimeError:
        get_logger("x").exception("table.crashed")
    out = capsys.readouterr().out
    assert "secret-local" not in out
    (record,) = [json.loads(line) for line in out.splitlines()]
    assert record["level"] == "error"
    assert record["exception"][0]["exc_type"] == "RuntimeError"
    assert record["exception"][0]["exc_value"] == "boom"


def test_loggers_created_before_configuration_follow_it(
    capsys: pytest.CaptureFixture[str],
) -> None:
    early = get_logger("services.early")  # module-level loggers are created at import time
    configure_logging("info", "table")
    early.info("early.event")
    (record,) = lines_of(capsys)
    assert record["logger"] == "services.early"
    assert record["service"] == "table"
