"""The browser client's own unit tests and type check (``clients/web``: ``npm test`` runs
``tsc --noEmit`` and vitest on the pure parts: texts and French elision, reasons to
sentences, the chain's layout, the view model, saved seats, retries and the view stream
against an in-memory Connect server). ``make test`` installs and builds the client first
(``make web-client``: ``npm ci``, ``npm run build``); Node.js and npm are required: without
them the test fails, it does not skip.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest

from testing.npm import npm_test

ROOT = Path(__file__).resolve().parents[2]
CLIENT = ROOT / "clients" / "web"
NPM_TEST_TIMEOUT_S = 120


def test_web_client_unit_tests(capsys: pytest.CaptureFixture[str]) -> None:
    npm = shutil.which("npm")
    if npm is None:
        pytest.fail("`npm` is not on PATH: clients/web needs Node.js 20+ and npm", pytrace=False)
    if not (CLIENT / "node_modules" / ".bin" / "vitest").exists():
        pytest.fail(
            "clients/web/node_modules is missing: `make web-client` (make test does it first)",
            pytrace=False,
        )
    output = npm_test(npm, CLIENT, {**os.environ, "NO_COLOR": "1", "CI": "1"}, NPM_TEST_TIMEOUT_S)
    tests = re.search(r"Tests\s+(\d+) passed", output)
    assert tests is not None and int(tests.group(1)) > 0, output
    assert not re.search(r"\d+ failed", output), output
    with capsys.disabled():
        print(f"\nweb client unit tests: {tests.group(1)} passed")
