"""Logging: JSON lines on stdout, context bindings, redaction of secrets and hidden tiles,
bounded and escaped values."""

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
    MAX_DEPTH,
    MAX_EVENT_CHARS,
    MAX_ITEMS,
    MAX_TRACE_CHARS,
    MAX_VALUE_CHARS,
    REDACTED,
    bound_context,
    bounded,
    configure_logging,
    get_logger,
    redact,
    safe_text,
)
from testing.logs import logging_restored


@pytest.fixture(autouse=True)
def _restore_logging() -> Iterator[None]:
    with logging_restored():
        yield


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
    # Still one line per record; the newline inside a value is escaped (bound_processor).
    assert records[0]["note"] == "multi\\nline text"


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


# -- bounding: client-sized values never make a line large or forge one -------------------

HOSTILE = '\n\r\t\x00\x1b[31m{"event":"forged"}\u2028\u202e' + "x" * 60_000


def test_long_values_are_truncated_at_any_depth_with_their_original_length(
    capsys: pytest.CaptureFixture[str],
) -> None:
    configure_logging("info", "table")
    big = "y" * 60_000
    with bound_context(table_id=big):
        get_logger("x").info(
            "table.command_rejected",
            request_id=big,
            nested={"list": [big, {"deep": big}], big: 1},
            short="t-1",
        )
    out = capsys.readouterr().out
    assert len(out) < 2_000
    (record,) = [json.loads(line) for line in out.splitlines()]
    marked = "y" * MAX_VALUE_CHARS + "...[truncated, 60000 chars]"
    assert record["table_id"] == marked
    assert record["request_id"] == marked
    assert record["nested"] == {"list": [marked, {"deep": marked}], marked: 1}
    assert record["short"] == "t-1"


def test_control_characters_are_escaped_so_no_line_can_be_forged(
    capsys: pytest.CaptureFixture[str],
) -> None:
    configure_logging("info", "table")
    get_logger("x").info("x", name="a\nb\x1b[2Jc\x00d\u2028e\u202ef\x85g\x7fh\ti\rj")
    out = capsys.readouterr().out
    (line,) = out.splitlines()
    (record,) = [json.loads(line)]
    assert record["name"] == "a\\nb\\x1b[2Jc\\x00d\\u2028e\\u202ef\\x85g\\x7fh\\ti\\rj"
    assert not any(ord(c) < 0x20 or 0x7F <= ord(c) <= 0x9F for c in record["name"])


def test_safe_text() -> None:
    assert safe_text("t-1") == "t-1"
    assert safe_text("a" * MAX_VALUE_CHARS) == "a" * MAX_VALUE_CHARS
    assert safe_text("abcdef", 3) == "abc...[truncated, 6 chars]"
    assert safe_text("\n", 3) == "\\n"
    assert safe_text("ab\x1b", 3) == "ab...[truncated, 3 chars]"  # no half escape
    assert safe_text("a\x1bb", 5) == "a\\x1b...[truncated, 3 chars]"
    assert safe_text("a\x1bb", 6) == "a\\x1bb"
    # Whatever the input, the output is bounded (escapes included).
    for text in (HOSTILE, "\x00" * 10_000, "\u2028" * 10_000):
        assert len(safe_text(text)) <= MAX_VALUE_CHARS + len("...[truncated, 60000 chars]")


def test_bounded_values() -> None:
    assert bounded(None) is None
    assert bounded(7) == 7 and bounded(True) is True and bounded(1.5) == 1.5
    assert bounded(b"ab\x00") == "b'ab\\x00'"
    assert bounded(b"z" * 1000) == repr(b"z" * 1000)[:MAX_VALUE_CHARS] + (
        "...[truncated, 1000 bytes]"
    )
    assert bounded(list(range(100))) == [*range(MAX_ITEMS), f"...[+{100 - MAX_ITEMS} items]"]
    many = bounded({f"k{i}": i for i in range(100)})
    assert len(many) == MAX_ITEMS + 1 and many["..."] == f"[+{100 - MAX_ITEMS} items]"
    deep: Any = "leaf"
    for _ in range(20):
        deep = [deep]
    flattened = bounded(deep)
    for _ in range(MAX_DEPTH):
        flattened = flattened[0]
    assert isinstance(flattened, str) and len(flattened) <= MAX_VALUE_CHARS + 40

    assert bounded(2**64 - 1) == 2**64 - 1
    assert bounded(10**60_000) == f"<int of {(10**60_000).bit_length()} bits>"
    assert bounded({("a", "b"): 1, 3: 2, None: 3}) == {"('a', 'b')": 1, 3: 2, None: 3}

    class Client:
        def __str__(self) -> str:
            return "\x1b" + "c" * 10_000

    assert bounded(Client()).startswith("\\x1bccc")
    assert bounded(Client()).endswith("...[truncated, 10001 chars]")


def test_the_event_and_library_messages_are_bounded(capsys: pytest.CaptureFixture[str]) -> None:
    configure_logging("info", "table")
    get_logger("x").info("e" * 10_000)
    logging.getLogger("grpc._server").warning("bad call %s", HOSTILE)
    first, second = lines_of(capsys)
    assert first["event"] == "e" * MAX_EVENT_CHARS + "...[truncated, 10000 chars]"
    assert second["event"].startswith("bad call \\n\\r\\t\\x00\\x1b[31m")
    assert second["event"].endswith(f"...[truncated, {len(HOSTILE) + 9} chars]")
    assert len(second["event"]) <= MAX_EVENT_CHARS + 30
    assert second["logger"] == "grpc._server"


def test_exceptions_of_client_values_are_bounded(capsys: pytest.CaptureFixture[str]) -> None:
    configure_logging("info", "table")
    try:
        raise ValueError(HOSTILE)
    except ValueError:
        get_logger("x").exception("table.crashed")
    try:
        raise KeyError(HOSTILE)
    except KeyError:
        logging.getLogger("lib").exception("library failed")
    out = capsys.readouterr().out
    assert len(out) < 8_000
    for record in [json.loads(line) for line in out.splitlines()]:
        (exception,) = record["exception"]
        assert exception["exc_type"] in ("ValueError", "KeyError")
        assert exception["exc_value"].endswith("chars]")
        assert len(exception["exc_value"]) <= MAX_TRACE_CHARS + 30
        assert exception["frames"][-1]["name"].startswith("test_exceptions")


def test_secrets_are_redacted_before_keys_are_bounded(
    capsys: pytest.CaptureFixture[str],
) -> None:
    configure_logging("info", "gateway")
    long_key = "k" * 200 + "_token"
    get_logger("x").info("x", **{long_key: "secret-1"}, nested={long_key: "secret-2"})
    out = capsys.readouterr().out
    assert "secret-" not in out
    (record,) = [json.loads(line) for line in out.splitlines()]
    key = "k" * MAX_VALUE_CHARS + "...[truncated, 206 chars]"
    assert record[key] == REDACTED
    assert record["nested"] == {key: REDACTED}


def test_a_flood_of_huge_values_writes_bounded_lines(capsys: pytest.CaptureFixture[str]) -> None:
    configure_logging("info", "table")
    log = get_logger("x")
    for _ in range(100):
        with bound_context(table_id=HOSTILE, request_id=HOSTILE):
            log.info("table.command_rejected", reason="ID_MALFORMED", code=HOSTILE)
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert len(lines) == 100
    assert max(len(line) for line in lines) < 3 * (MAX_VALUE_CHARS + 40) + 300
