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
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from services.client.run import PORTS, ROOT, grpc_serving, secrets_path
from services.common.cluster_auth.secrets import ClusterSecrets
from services.common.settings import Settings
from testing.servers import free_port, port_is_free
from testing.waiting import wait_until

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
            # The web client's build is the browser test's (tests/web); here a page of ours.
            "DOMINOS_RUN_WEB_ROOT": str(web_root(tmp_path)),
        }
    )
    return env


def web_root(tmp_path: Path) -> Path:
    root = tmp_path / "web"
    root.mkdir(exist_ok=True)
    (root / "index.html").write_text("<!doctype html><title>Dominos web</title>")
    return root


def web_page(port: int) -> bytes:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=5) as response:
        return bytes(response.read())


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


def listeners(port: int) -> set[str]:
    """The local addresses of every listening TCP socket on ``port`` (IPv4 and IPv6, from
    /proc/net: the whole network namespace, whoever owns the socket)."""
    found: set[str] = set()
    for table in ("tcp", "tcp6"):
        path = Path("/proc/net") / table
        if not path.exists():
            continue
        for line in path.read_text().splitlines()[1:]:
            fields = line.split()
            local, status = fields[1], fields[3]
            address, _, hex_port = local.partition(":")
            if status != "0A" or int(hex_port, 16) != port:  # 0A: LISTEN
                continue
            if len(address) == 8:
                found.add(socket.inet_ntop(socket.AF_INET, bytes.fromhex(address)[::-1]))
            else:
                words = bytes.fromhex(address)
                raw = b"".join(words[i : i + 4][::-1] for i in range(0, 16, 4))
                found.add(socket.inet_ntop(socket.AF_INET6, raw))
    return found


def redis_answer(port: int, command: bytes) -> bytes:
    """The first line Redis answers an anonymous ``command`` with."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.sendall(command)
        return sock.recv(4096).split(b"\r\n")[0]


def nats_refuses_anonymous(port: int) -> bool:
    """An anonymous NATS CONNECT is answered ``-ERR 'Authorization Violation'``."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.settimeout(5)
        data = b""
        while b"\r\n" not in data:
            data += sock.recv(4096)  # INFO {...}
        sock.sendall(b'CONNECT {"verbose":false,"pedantic":false}\r\nPING\r\n')
        answer = b""
        while b"\r\n" not in answer:
            chunk = sock.recv(4096)
            if not chunk:
                break
            answer += chunk
    return b"Authorization Violation" in answer


def check_local_security(run_dir: Path, ports: dict[str, int]) -> None:
    """``make run`` runs with production security (issue 14): random secrets of its own,
    kept private; Redis and NATS refuse anonymous clients; metrics only on 127.0.0.1."""
    path = secrets_path(run_dir)
    assert path.stat().st_mode & 0o777 == 0o600
    secrets = ClusterSecrets.from_json(path.read_text())
    assert secrets.token_secret != Settings().token_secret  # not the built-in value
    assert len(secrets.token_secret) >= 32
    for acl in (run_dir / "redis" / "users.acl", run_dir / "nats.conf"):
        assert acl.stat().st_mode & 0o777 == 0o600
    redis = ports["DOMINOS_RUN_REDIS_PORT"]
    assert redis_answer(redis, b"PING\r\n").startswith(b"-NOAUTH")
    assert redis_answer(redis, b"AUTH default nopass\r\n").startswith(b"-WRONGPASS")
    assert nats_refuses_anonymous(ports["DOMINOS_RUN_NATS_PORT"])
    for name in ("GATEWAY", "TABLE", "TIMER"):
        port = ports[f"DOMINOS_RUN_{name}_METRICS_PORT"]

        def listening(port: int = port) -> bool:
            return bool(listeners(port))

        wait_until(listening, timeout=10, message=f"{name} metrics")
        assert listeners(port) == {"127.0.0.1"}, (name, listeners(port))


def interrupt_and_check_nothing_left(
    launcher: subprocess.Popen[bytes], seen: dict[int, str], ports: dict[str, int], log: Path
) -> str:
    """SIGINT to the launcher (Ctrl-C), then: every process seen below it is gone (or a
    zombie waiting for its reaper), every port is free again, and its log says it got the
    signal. Returns the log."""
    launcher.send_signal(signal.SIGINT)
    launcher.wait(timeout=20)
    wait_until(
        lambda: all(state(pid) in (None, "Z") for pid in seen),
        timeout=10,
        message="every process gone",
    )
    for variable, port in ports.items():
        assert port_is_free(port), f"{variable} {port} still taken"
    output = log.read_text(errors="replace")
    assert "SIGINT received" in output
    return output


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
        check_local_security(tmp_path / "run", ports)
        web = ports["DOMINOS_RUN_WEB_PORT"]
        assert b"<title>Dominos web</title>" in web_page(web)
        assert listeners(web) == {"127.0.0.1"}

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

        output = interrupt_and_check_nothing_left(launcher, seen, ports, launcher_log)
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
    assert names == ["redis", "nats", "table", "timer", "bots", "gateway", "ready"]
