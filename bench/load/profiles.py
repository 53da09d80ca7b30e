"""Flame graphs of the services under load (issue 22): ``python -m bench.load ... --profile
DIR`` runs py-spy on the gateway and the table service over the last step's recorded time
and writes ``DIR/<scenario>-<process>.svg`` (an interactive flame graph: open it in a
browser); ``bench/profiles/`` holds the committed ones.

py-spy samples from outside (``--nonblocking``: the process is never paused), 100 times a
second (``--profile-rate``), native frames off: what the Python code costs, C extensions
(grpc, protobuf) shown as the Python call that entered them.
"""

from __future__ import annotations

import asyncio
import shutil
import sys
from pathlib import Path

from bench.load.config import Config

__all__ = ["PROFILED", "finish_profiles", "start_profiles"]

#: The processes profiled.
PROFILED = ("gateway", "table")
#: The file name's extension of each py-spy format.
EXTENSIONS = {"flamegraph": "svg", "raw": "txt", "speedscope": "json"}


def _py_spy() -> str:
    found = shutil.which("py-spy") or str(Path(sys.executable).parent / "py-spy")
    if not Path(found).exists():
        raise RuntimeError("py-spy is missing: pip install -e '.[bench]'")
    return found


async def start_profiles(
    config: Config, tables: int, pids: dict[str, int]
) -> list[asyncio.subprocess.Process]:
    """py-spy on each :data:`PROFILED` process for the recorded seconds, when ``--profile``
    was given and this is the last step."""
    if config.profile_dir is None or tables != config.steps[-1]:
        return []
    config.profile_dir.mkdir(parents=True, exist_ok=True)
    binary = _py_spy()
    started = []
    extension = EXTENSIONS[config.profile_format]
    for name in PROFILED:
        out = config.profile_dir / f"{config.scenario}-{name}.{extension}"
        command = [binary, "record", "--pid", str(pids[name]), "--nonblocking"]
        command += ["--duration", str(int(config.seconds)), "--rate", str(config.profile_rate_hz)]
        command += ["--format", config.profile_format, "--output", str(out)]
        started.append(
            await asyncio.create_subprocess_exec(
                *command, stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL
            )
        )
    return started


async def finish_profiles(profilers: list[asyncio.subprocess.Process]) -> None:
    """Wait for the profilers to write their files."""
    for profiler in profilers:
        await asyncio.wait_for(profiler.wait(), timeout=60)
