"""``npm test`` of one of the repository's TypeScript clients, as a test step."""

from __future__ import annotations

import subprocess
from collections.abc import Mapping
from pathlib import Path

__all__ = ["npm_test"]


def npm_test(npm: str, cwd: Path, env: Mapping[str, str], timeout_s: float) -> str:
    """Run ``npm test`` in ``cwd``; its whole output. Fails (AssertionError, with the
    output) when it exits non-zero."""
    result = subprocess.run(
        [npm, "test"],
        cwd=cwd,
        env=dict(env),
        capture_output=True,
        text=True,
        timeout=timeout_s,
        check=False,
    )
    output = result.stdout + result.stderr
    assert result.returncode == 0, f"npm test failed (exit {result.returncode}):\n{output}"
    return output
