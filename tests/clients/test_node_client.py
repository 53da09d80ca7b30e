"""The TypeScript example client (``clients/node``) against a real cluster (issue 17): its own
test suite (``npm test``) plays a complete game through the public gRPC contract, checks the
documented errors come back decoded, and that no seat's stream shows another seat's tiles.

The cluster is the end-to-end tests' (``testing.cluster``, per-address budgets off: every
client here is 127.0.0.1), with a short round break so that a game to 50 takes seconds.
``npm ci`` runs first unless ``node_modules`` was installed from the same lock file, Node.js
and platform (a stamp in ``node_modules``); Node.js and npm are required: without them the
test fails (CI machines have them), it does not skip.
"""

from __future__ import annotations

import hashlib
import os
import platform
import re
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from testing.cluster import ProcessCluster, clock_env
from testing.npm import npm_test

ROOT = Path(__file__).resolve().parents[2]
CLIENT = ROOT / "clients" / "node"
STAMP = CLIENT / "node_modules" / ".dominos-installed"
#: Long turns (the scripted seats act at once; the table must not act for them), a short
#: break between rounds.
CLOCKS = clock_env(turn_s=10, away_s=5, break_s=0.2)
MIN_NODE_MAJOR = 20
NPM_CI_TIMEOUT_S = 180
#: A game to 50 takes a few seconds on this cluster; the client gives up after this.
GAME_TIMEOUT_S = 45
NPM_TEST_TIMEOUT_S = 90
FINISHED = re.compile(r"^game finished: .*\(finished_at_ms=(\d+)\)$", re.MULTILINE)


@pytest.fixture(scope="module")
def cluster() -> Iterator[ProcessCluster]:
    started = ProcessCluster.start(env={**CLOCKS, "DOMINOS_LOG_LEVEL": "info"})
    try:
        yield started
    finally:
        started.stop()


def tool(name: str) -> str:
    """The path of ``name`` on PATH; fails the test (never skips) when it is missing."""
    path = shutil.which(name)
    if path is None:
        pytest.fail(
            f"`{name}` is not on PATH: the Node.js example client (clients/node) needs Node.js "
            "20+ and npm (apt-get install nodejs npm, or https://nodejs.org)",
            pytrace=False,
        )
    return path


def node_tools() -> tuple[str, str, str]:
    """``node``, ``npm`` and the Node.js version; fails the test when they are unfit."""
    node, npm = tool("node"), tool("npm")
    version = subprocess.run(
        [node, "--version"], capture_output=True, text=True, check=True
    ).stdout.strip()
    major = re.match(r"v(\d+)\.", version)
    if major is None or int(major.group(1)) < MIN_NODE_MAJOR:
        pytest.fail(f"clients/node needs Node.js {MIN_NODE_MAJOR}+, found {version}", pytrace=False)
    return node, npm, version


def install_key(node_version: str) -> str:
    """What ``node_modules`` depends on: the manifest, the lock file, Node.js and platform."""
    digest = hashlib.sha256()
    for name in ("package.json", "package-lock.json"):
        digest.update((CLIENT / name).read_bytes())
    digest.update(f"{node_version} {platform.system()} {platform.machine()}".encode())
    return digest.hexdigest()


def npm_ci(npm: str, key: str) -> float | None:
    """Runs ``npm ci`` unless ``node_modules`` is up to date; returns its seconds or None."""
    if STAMP.is_file() and STAMP.read_text().strip() == key:
        return None
    started = time.monotonic()
    result = subprocess.run(
        [npm, "ci", "--no-audit", "--no-fund", "--prefer-offline"],
        cwd=CLIENT,
        capture_output=True,
        text=True,
        timeout=NPM_CI_TIMEOUT_S,
        check=False,
    )
    assert result.returncode == 0, f"npm ci failed:\n{result.stdout}\n{result.stderr}"
    STAMP.write_text(key + "\n")
    return time.monotonic() - started


def test_node_client_plays_a_game(
    request: pytest.FixtureRequest, capsys: pytest.CaptureFixture[str]
) -> None:
    _, npm, node_version = node_tools()  # before the cluster starts
    cluster: ProcessCluster = request.getfixturevalue("cluster")
    started = time.time()
    installed_s = npm_ci(npm, install_key(node_version))
    env = {
        **os.environ,
        "DOMINOS_GATEWAY": cluster.gateway_address,
        "DOMINOS_GAME_TIMEOUT_MS": str(GAME_TIMEOUT_S * 1000),
        "NO_COLOR": "1",
    }
    output = npm_test(npm, CLIENT, env, NPM_TEST_TIMEOUT_S)
    # node:test's closing lines (spec reporter): "<info sign> pass 20", "<info sign> fail 0"; a
    # failed hook counts its tests as cancelled, not failed.
    assert re.search(r"^\S+ fail 0$", output, re.MULTILINE), output
    assert re.search(r"^\S+ cancelled 0$", output, re.MULTILINE), output
    assert re.search(r"^\S+ pass [1-9]\d*$", output, re.MULTILINE), output
    finished = FINISHED.search(output)
    assert finished is not None, f"no finished game reported:\n{output}"
    assert re.search(r"won by TEAM_[AB]\b", finished.group(0)), finished.group(0)
    elapsed_s = int(finished.group(1)) / 1000 - started
    install = "skipped (up to date)" if installed_s is None else f"{installed_s:.1f} s"
    with capsys.disabled():
        print(
            f"\nnode client: npm ci {install}; from npm ci's start to the game finished "
            f"{elapsed_s:.1f} s; {finished.group(0)}"
        )
