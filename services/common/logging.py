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
"""

from __future__ import annotations

import contextlib
import logging as stdlib_logging
import sys
import threading
from collections.abc import Iterator, Mapping
from typing import Any, Final, TextIO

import structlog
from structlog.tracebacks import ExceptionDictTransformer
from structlog.typing import EventDict, Processor, WrappedLogger

__all__ = [
    "REDACTED",
    "REDACTED_KEYS",
    "bound_context",
    "configure_logging",
    "get_logger",
    "redact",
    "redact_processor",
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
