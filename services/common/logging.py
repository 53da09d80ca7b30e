"""Structured logging: one JSON object per line on stdout, with secrets redacted.

:func:`configure_logging` is called once by each entry point. Afterwards every record, whether
it comes from a structlog logger (:func:`get_logger`) or from a library using the standard
``logging`` module (grpc, nats, redis), is written to stdout as a single JSON object with at
least these keys:

- ``event``: a stable, dotted event name such as ``"table.command_applied"`` (for records of
  standard-library loggers, their message);
- ``level``: ``debug``, ``info``, ``warning``, ``error`` or ``critical``;
- ``timestamp``: ISO 8601 in UTC (``2025-01-01T12:00:00.123456Z``);
- ``service``: the service name given to :func:`configure_logging`;
- ``logger``: the logger name;
- every key bound with :func:`structlog.contextvars.bind_contextvars` (or the
  :func:`bound_context` helper) in the current task, e.g. ``table_id``, ``seat``,
  ``request_id``, ``version``, plus the keyword arguments of the call.

Exceptions are rendered as a structured ``exception`` list (type, value, frames), without the
frames' local variables (they could hold secrets).

Redaction (:func:`redact_processor`): the value of any key named ``seat_token``, ``token``,
``authorization``, ``hand``, ``hands`` or ``state``, or ending in ``_token`` (case-insensitive),
is replaced by ``"[redacted]"``, at any depth inside dicts, lists and tuples. Hidden tiles and
secrets therefore never reach a log line even when a whole structure is logged by mistake.

Bounding (:func:`bound_processor`, after redaction): every string that reaches a line, in the
event, the bound context, the keyword arguments and the rendered exception, at any depth, is
made safe, so a client-sized value can never make a line large or forge one:

- control characters (C0, DEL, C1), Unicode line/paragraph separators and bidirectional
  overrides are escaped (``\\n``, ``\\x1b``, ``\\u2028``);
- a string longer than :data:`MAX_VALUE_CHARS` characters (:data:`MAX_EVENT_CHARS` for
  ``event``, :data:`MAX_TRACE_CHARS` inside ``exception``) is cut there and marked with its
  original length: ``"abc...[truncated, 60000 chars]"``; dict keys are bounded the same way;
- bytes become their bounded ``repr``; other non-JSON values their bounded ``str``;
- a list, tuple or dict keeps its first :data:`MAX_ITEMS` items, then a marker
  ``"...[+N items]"``; structures nested deeper than :data:`MAX_DEPTH` become bounded strings.

Values bound to the context should still be validated first (a raw client field is bounded
here, but a validated one is more useful): bind a marker such as :data:`INVALID` otherwise.
"""

from __future__ import annotations

import contextlib
import itertools
import logging as stdlib_logging
import re
import sys
import threading
from collections.abc import Iterator, Mapping
from typing import Any, Final, TextIO

import structlog
from structlog.tracebacks import ExceptionDictTransformer
from structlog.typing import EventDict, Processor, WrappedLogger

__all__ = [
    "INVALID",
    "MAX_DEPTH",
    "MAX_EVENT_CHARS",
    "MAX_ITEMS",
    "MAX_TRACE_CHARS",
    "MAX_VALUE_CHARS",
    "REDACTED",
    "REDACTED_KEYS",
    "bound_context",
    "bound_processor",
    "bounded",
    "configure_logging",
    "get_logger",
    "redact",
    "redact_processor",
    "safe_text",
]

REDACTED: Final = "[redacted]"
REDACTED_KEYS: Final = frozenset({"seat_token", "token", "authorization", "hand", "hands", "state"})
_REDACTED_SUFFIX: Final = "_token"

_LEVELS: Final = {
    "debug": stdlib_logging.DEBUG,
    "info": stdlib_logging.INFO,
    "warning": stdlib_logging.WARNING,
    "error": stdlib_logging.ERROR,
    "critical": stdlib_logging.CRITICAL,
}

_write_lock = threading.Lock()


def _is_secret_key(key: object) -> bool:
    name = str(key).lower()
    return name in REDACTED_KEYS or name.endswith(_REDACTED_SUFFIX)


def redact(value: Any) -> Any:
    """A copy of ``value`` with secret keys' values replaced by ``"[redacted]"``.

    Walks mappings, lists and tuples recursively; other values are returned unchanged (the
    input is never mutated).
    """
    if isinstance(value, Mapping):
        return {k: REDACTED if _is_secret_key(k) else redact(v) for k, v in value.items()}
    if isinstance(value, list):
        return [redact(item) for item in value]
    if isinstance(value, tuple):
        return tuple(redact(item) for item in value)
    return value


def redact_processor(logger: WrappedLogger, method_name: str, event_dict: EventDict) -> EventDict:
    """structlog processor applying :func:`redact` to every key of the event."""
    for key in list(event_dict):
        event_dict[key] = REDACTED if _is_secret_key(key) else redact(event_dict[key])
    return event_dict


MAX_VALUE_CHARS: Final = 128
"""Longest string value (or dict key) written as is; longer ones are truncated and marked."""
MAX_EVENT_CHARS: Final = 256
"""Bound of ``event``: our event names are short, but a library's message may be longer."""
MAX_TRACE_CHARS: Final = 512
"""Bound of each string of a rendered ``exception`` (exception value, file paths) or ``stack``."""
MAX_ITEMS: Final = 64
"""Items of a list, tuple or dict kept (a rendered traceback has at most 50 frames)."""
MAX_DEPTH: Final = 8
"""Nesting below which a structure is rendered as one bounded string."""
INVALID: Final = "<invalid>"
"""What to bind in place of a client value that failed validation."""

_KEY_LIMITS: Final = {
    "event": MAX_EVENT_CHARS,
    "exception": MAX_TRACE_CHARS,
    "stack": MAX_TRACE_CHARS,
}
#: Keys structlog's ProcessorFormatter adds for its own use (a LogRecord, a flag): left alone.
_META_KEYS: Final = frozenset({"_record", "_from_structlog"})
#: C0 controls, DEL, C1 controls, line/paragraph separators, bidirectional overrides.
_UNSAFE: Final = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
_ESCAPES: Final = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(char: str) -> str:
    code = ord(char)
    return _ESCAPES.get(char) or (f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}")


def safe_text(text: str, limit: int = MAX_VALUE_CHARS) -> str:
    """``text`` with unsafe characters escaped (``\\n``, ``\\x1b``, ``\\u2028``), cut after
    ``limit`` characters of output and then marked with its original length:
    ``"abc...[truncated, 60000 chars]"``.

    Only the first ``limit`` characters are looked at, so the cost does not depend on the
    size of ``text``; an escape sequence is never cut in half.
    """
    head = text[:limit]
    if _UNSAFE.search(head) is None:
        if len(text) <= limit:
            return text
        return f"{head}...[truncated, {len(text)} chars]"
    pieces: list[str] = []
    used = 0
    for char in head:
        piece = _escape(char) if _UNSAFE.match(char) else char
        if used + len(piece) > limit:
            break
        pieces.append(piece)
        used += len(piece)
    escaped = "".join(pieces)
    if len(pieces) == len(text):
        return escaped
    return f"{escaped}...[truncated, {len(text)} chars]"


def bounded(value: Any, limit: int = MAX_VALUE_CHARS, *, depth: int = 0) -> Any:
    """A JSON-ready copy of ``value`` whose strings are :func:`safe_text` with ``limit`` and
    whose containers keep at most :data:`MAX_ITEMS` items (see the module docstring).

    ``None``, booleans, floats and integers of up to 64 bits are returned unchanged; the
    input is never mutated.
    """
    if value is None or isinstance(value, (bool, float)):
        return value
    if isinstance(value, int):
        # Past 64 bits an int is client text in disguise (and past ~4300 digits unprintable).
        return value if -(2**64) < value < 2**64 else f"<int of {value.bit_length()} bits>"
    if isinstance(value, str):
        return safe_text(value, limit)
    if isinstance(value, (bytes, bytearray, memoryview)):
        rendered = repr(bytes(value[:limit]))  # printable ASCII only
        if len(value) <= limit and len(rendered) <= limit:
            return rendered
        return f"{rendered[:limit]}...[truncated, {len(value)} bytes]"
    if depth >= MAX_DEPTH:
        return safe_text(str(value), limit)
    if isinstance(value, Mapping):
        items = list(itertools.islice(value.items(), MAX_ITEMS + 1))
        bounded_map = {
            _bounded_key(key): bounded(item, limit, depth=depth + 1)
            for key, item in items[:MAX_ITEMS]
        }
        if len(items) > MAX_ITEMS:
            bounded_map["..."] = f"[+{len(value) - MAX_ITEMS} items]"
        return bounded_map
    if isinstance(value, (list, tuple)):
        bounded_list = [bounded(item, limit, depth=depth + 1) for item in value[:MAX_ITEMS]]
        if len(value) > MAX_ITEMS:
            bounded_list.append(f"...[+{len(value) - MAX_ITEMS} items]")
        return bounded_list
    return safe_text(str(value), limit)


def _bounded_key(key: Any) -> Any:
    """A dict key: a bounded string, or a JSON scalar (keys must stay hashable)."""
    if key is None or isinstance(key, (bool, float)):
        return key
    if isinstance(key, int):
        return bounded(key)
    return safe_text(key if isinstance(key, str) else str(key))


def bound_processor(logger: WrappedLogger, method_name: str, event_dict: EventDict) -> EventDict:
    """structlog processor applying :func:`bounded` to every key and value of the event
    (``event`` and ``exception`` with their larger bounds)."""
    result: EventDict = {}
    for key, value in event_dict.items():
        if key in _META_KEYS:
            result[key] = value
        else:
            result[_bounded_key(key)] = bounded(value, _KEY_LIMITS.get(key, MAX_VALUE_CHARS))
    return result


_FIRST_KEYS: Final = ("timestamp", "level", "service", "logger", "event")


def _order_keys(logger: WrappedLogger, method_name: str, event_dict: EventDict) -> EventDict:
    """Put the fixed keys first so lines are easy to scan; other keys keep their order."""
    ordered = {k: event_dict[k] for k in _FIRST_KEYS if k in event_dict}
    ordered.update((k, v) for k, v in event_dict.items() if k not in ordered)
    return ordered


class _ServiceAdder:
    """Processor adding ``service`` (unless the event already names one)."""

    def __init__(self, service: str) -> None:
        self._service = service

    def __call__(self, logger: WrappedLogger, method_name: str, event_dict: EventDict) -> EventDict:
        event_dict.setdefault("service", self._service)
        return event_dict


class _LineWriter:
    """structlog logger writing each rendered line to a stream, looked up at write time.

    Resolving ``sys.stdout`` on every write (when no stream was given) keeps output correct
    when stdout is replaced after configuration, e.g. by pytest's capture. ``name`` is the
    logger name given to :func:`get_logger`.
    """

    def __init__(self, stream: TextIO | None, name: str = "") -> None:
        self._stream = stream
        self.name = name

    def msg(self, message: str) -> None:
        stream = self._stream if self._stream is not None else sys.stdout
        with _write_lock:
            stream.write(message + "\n")
            stream.flush()

    log = debug = info = warn = warning = error = critical = exception = fatal = msg


class _LineWriterFactory:
    def __init__(self, stream: TextIO | None) -> None:
        self._stream = stream

    def __call__(self, *args: Any) -> _LineWriter:
        return _LineWriter(self._stream, str(args[0]) if args else "")


def _add_logger_name(logger: WrappedLogger, method_name: str, event_dict: EventDict) -> EventDict:
    """``logger``: the standard-library record's name, or the name given to get_logger."""
    record = event_dict.get("_record")
    name = record.name if record is not None else getattr(logger, "name", "")
    if name:
        event_dict.setdefault("logger", name)
    return event_dict


class _StdoutHandler(stdlib_logging.Handler):
    """Standard-library handler writing formatted records like :class:`_LineWriter`."""

    def __init__(self, stream: TextIO | None) -> None:
        super().__init__()
        self._writer = _LineWriter(stream)

    def emit(self, record: stdlib_logging.LogRecord) -> None:
        try:
            self._writer.msg(self.format(record))
        except Exception:
            self.handleError(record)


def configure_logging(level: str, service: str, *, stream: TextIO | None = None) -> None:
    """Route structlog and standard-library logging to JSON lines on ``stream`` (default stdout).

    ``level`` is one of ``debug``, ``info``, ``warning``, ``error``, ``critical``
    (case-insensitive; anything else raises ``ValueError``); records below it are dropped.
    ``service`` is added to every record. Safe to call again (tests, re-configuration): the
    previous configuration is replaced, and the root logger's handlers are replaced too.
    """
    try:
        level_no = _LEVELS[level.strip().lower()]
    except KeyError:
        raise ValueError(
            f"unknown log level {level!r}; expected one of {', '.join(_LEVELS)}"
        ) from None

    shared: list[Processor] = [
        structlog.contextvars.merge_contextvars,
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True, key="timestamp"),
        _ServiceAdder(service),
        _add_logger_name,
    ]
    finishing: list[Processor] = [
        structlog.processors.StackInfoRenderer(),
        # Locals are never rendered: a frame's locals may hold tokens or hands.
        structlog.processors.ExceptionRenderer(ExceptionDictTransformer(show_locals=False)),
        redact_processor,
        bound_processor,
        _order_keys,
    ]
    structlog.configure(
        processors=[
            *shared,
            *finishing,
            structlog.processors.JSONRenderer(default=str),
        ],
        wrapper_class=structlog.make_filtering_bound_logger(level_no),
        context_class=dict,
        logger_factory=_LineWriterFactory(stream),
        cache_logger_on_first_use=False,
    )

    formatter = structlog.stdlib.ProcessorFormatter(
        foreign_pre_chain=[*shared, *finishing],
        processors=[
            structlog.stdlib.ProcessorFormatter.remove_processors_meta,
            structlog.processors.JSONRenderer(default=str),
        ],
    )
    handler = _StdoutHandler(stream)
    handler.setFormatter(formatter)
    root = stdlib_logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level_no)


def get_logger(name: str) -> Any:
    """A structlog logger whose records carry ``logger=name``.

    Lazy: safe to create at import time (``log = get_logger(__name__)``) before
    :func:`configure_logging` runs; every call uses the configuration current at that moment.
    Use stable dotted event names: ``log.info("table.command_applied", version=7)``. Typed
    ``Any`` because structlog's bound loggers are dynamic.
    """
    return structlog.get_logger(name)


@contextlib.contextmanager
def bound_context(**values: Any) -> Iterator[None]:
    """Bind ``values`` to the log context of the current task for the ``with`` block.

    Restores the previous values of those keys afterwards (nested blocks compose).
    """
    tokens = structlog.contextvars.bind_contextvars(**values)
    try:
        yield
    finally:
        structlog.contextvars.reset_contextvars(**tokens)
