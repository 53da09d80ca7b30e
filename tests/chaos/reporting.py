"""The chaos report (figures of every chaos test of the session) and the long-set switch."""

from __future__ import annotations

import os
from typing import Any

LONG_ENV = "DOMINOS_CHAOS_LONG"

#: Section → figures; printed and saved as JSON by ``conftest.pytest_terminal_summary``.
REPORT: dict[str, dict[str, Any]] = {}


def long_enabled() -> bool:
    """Whether the long chaos set runs (``DOMINOS_CHAOS_LONG=1``)."""
    return os.environ.get(LONG_ENV) == "1"


def report(section: str, **values: Any) -> None:
    """Add (or update) a section of the session's chaos report."""
    REPORT.setdefault(section, {}).update(values)
