"""``make run`` (``python -m services.client.run``): the whole cluster in the foreground, a demo
game against it, and Ctrl-C (SIGINT) that leaves no process behind.

The launcher runs in a clean environment (no DOMINOS_* variable of the caller) with every
port overridden to a free one and its data in a temporary directory, exactly as
``make run`` would run it otherwise.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from services.client.run import PORTS, ROOT, grpc_serving
from tests.support.servers import free_port, port_is_free
from tests.support.waiting import wait_until

LAUNCHER = [sys.executable, "-m", "services.client.run"]
DEMO = [sys.executable, "-m", "services.client.cli", "demo"]
SERVICES = ("redis-server", "nats-server", "services.table", "services.timer", "services.gateway")


def clean_env(tmp_path: Path, ports: dict[str, int]) -> dict[str, str]:
    """The caller's environment without DOMINOS_* variables, plus the ports and short timers."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("DOMINOS_")}
    env.update({variable: str(port) for variable, port in ports.items()})
    env.update(
        {
            "PATH": f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}",
            "DOMINOS_RUN_DIR": str(tmp_path / "run"),
            "DOMINOS_TURN_SECONDS": "5",
            "DOMINOS_ROUND_BREAK_SECONDS": "0.2",
            "DOMINOS_LOG_LEVEL": "warning",
        }
    )
    return env


def cmdline(pid: int) -> str:
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return ""
    return " ".join(p.decode(errors="replace") for p in raw.split(b"\0") if p)


def state(pid: int) -> str | None:
    """The process state letter, or None when the process is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return text[text.rindex(")") + 2]


def descendants(root: int) -> set[int]:
    """Every live process below ``root`` (through /proc parent links)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            text = (entry / "stat").read_text()
        except OSError:
            continue
        parent = int(text[text.rindex(")") + 2 :].split()[1])
        children.setdefault(parent, []).append(int(entry.name))
    found: set[int] = set()
    todo = [root]
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


@pytest.fixture
def ports() -> dict[str, int]:
    return {spec.variable: free_port() for spec in PORTS}


@pytest.fixture
def launcher_log(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "launcher.log"
    yield path


def test_make_run_serves_a_demo_game_and_sigint_stops_every_process(
    tmp_path: Path, ports: dict[str, int], launcher_log: Path
) -> None:
    started = time.monotonic()
    env = clean_env(tmp_path, ports)
    gateway = f"127.0.0.1:{ports['DOMINOS_RUN_GATEWAY_PORT']}"
    with launcher_log.open("wb") as log:
        launcher = subprocess.Popen(
            LAUNCHER,
            cwd=ROOT,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    seen: dict[int, str] = {}
    try:

        def collect() -> bool:
            """Remember every process below the launcher; true once all services are."""
            assert launcher.poll() is None, launcher_log.read_text()
            for pid in descendants(launcher.pid):
                seen.setdefault(pid, cmdline(pid))
            return all(any(name in line for line in seen.values()) for name in SERVICES)

        wait_until(lambda: grpc_serving(gateway), timeout=30, interval=0.1)
        wait_until(collect, timeout=10, interval=0.05, message="every service process seen")
        assert (tmp_path / "run" / "redis").is_dir() and (tmp_path / "run" / "nats").is_dir()

        demo = subprocess.run(
            [*DEMO, "--gateway", gateway, "--target", "50", "--seed", "11", "--timeout", "30"],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=40,
            check=False,
        )
        assert demo.returncode == 0, demo.stdout + demo.stderr
        assert "never fill seats of real tables (S2" in demo.stderr
        assert re.search(r"^Round 1 · opened by Demo-\d · ", demo.stdout, re.MULTILINE)
        assert re.search(r"^Team [AB] \(.+\) wins the game, \d+ to \d+\.$", demo.stdout, re.M)
        collect()

        launcher.send_signal(signal.SIGINT)
        launcher.wait(timeout=20)
        # Nothing left: every process seen below the launcher is gone (or a zombie
        # waiting for its reaper), and every port is free again.
        wait_until(
            lambda: all(state(pid) in (None, "Z") for pid in seen),
            timeout=10,
            message="every process gone",
        )
        for variable, port in ports.items():
            assert port_is_free(port), f"{variable} {port} still taken"
        output = launcher_log.read_text()
        assert "SIGINT received" in output
        for name in ("redis", "nats", "table", "timer", "gateway"):
            assert re.search(rf"{name}\.1 +\| ", output) or f"{name}.1 stopped" in output
        assert time.monotonic() - started < 60
    finally:
        if launcher.poll() is None:
            launcher.kill()
            launcher.wait(10)
        for pid, line in seen.items():
            if state(pid) not in (None, "Z") and cmdline(pid) == line:
                os.kill(pid, signal.SIGKILL)


def test_a_taken_port_is_named_with_its_process_and_nothing_starts(
    tmp_path: Path, ports: dict[str, int]
) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as holder:
        holder.bind(("127.0.0.1", ports["DOMINOS_RUN_REDIS_PORT"]))
        holder.listen()
        result = subprocess.run(
            LAUNCHER,
            cwd=ROOT,
            env=clean_env(tmp_path, ports),
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
    assert result.returncode == 2, result.stdout + result.stderr
    port = ports["DOMINOS_RUN_REDIS_PORT"]
    assert f"port {port} (redis) is already in use by pid {os.getpid()}: " in result.stderr
    assert f"DOMINOS_RUN_REDIS_PORT={port + 100} make run" in result.stderr
    assert not (tmp_path / "run").exists()


def test_the_procfile_defaults_are_the_launcher_defaults() -> None:
    procfile = (ROOT / "Procfile").read_text()
    for spec in PORTS:
        defaults = set(re.findall(rf"\$\{{{spec.variable}:-(\d+)\}}", procfile))
        assert defaults == {str(spec.default)}, spec.variable
    names = re.findall(r"^([a-z]+):", procfile, re.MULTILINE)
    assert names == ["redis", "nats", "table", "timer", "gateway", "ready"]
