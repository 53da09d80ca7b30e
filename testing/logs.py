"""Test helper: put the process's logging back as it was after a test configured it."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager

import structlog


@contextmanager
def logging_restored() -> Iterator[None]:
    """Run the body, then restore the root handlers and level and reset structlog (its
    defaults and context variables), whatever the body configured."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    structlog.contextvars.clear_contextvars()
    try:
        yield
    finally:
        structlog.contextvars.clear_contextvars()
        structlog.reset_defaults()
        for handler in list(root.handlers):
            root.removeHandler(handler)
        for handler in handlers:
            root.addHandler(handler)
        root.setLevel(level)
