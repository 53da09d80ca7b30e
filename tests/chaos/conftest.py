"""The chaos suite: faults, bad input and attacks against a cluster of real processes.

Two sets:

- the **short** set (every test without a marker) runs with ``make test``;
- the **long** set (``@pytest.mark.chaos_long``) runs with ``make test-chaos`` and is skipped
  unless ``DOMINOS_CHAOS_LONG=1``.

Every test that measures something adds a row to the session's chaos report
(``reporting.report``), printed at the end of the run and written as JSON next to the pytest
temporary files (``chaos-report.json``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from .reporting import LONG_ENV, REPORT, long_enabled

_REPORT_PATH: list[Path] = []


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        f"chaos_long: long chaos test, run by `make test-chaos` (skipped unless {LONG_ENV}=1)",
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if long_enabled():
        return
    skip = pytest.mark.skip(reason=f"long chaos test: set {LONG_ENV}=1 (make test-chaos)")
    for item in items:
        if "chaos_long" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="session", autouse=True)
def chaos_report(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The session's chaos report (saved as JSON and printed when the session ends)."""
    _REPORT_PATH.append(tmp_path_factory.getbasetemp() / "chaos-report.json")
    return REPORT


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if not REPORT:
        return
    path = _REPORT_PATH[-1] if _REPORT_PATH else None
    if path is not None:
        path.write_text(json.dumps(REPORT, indent=2, sort_keys=True, default=str))
    terminalreporter.section(f"chaos report ({path})")
    for section, values in sorted(REPORT.items()):
        terminalreporter.write_line(f"[{section}]")
        for key, value in sorted(values.items()):
            terminalreporter.write_line(f"  {key}: {value}")
