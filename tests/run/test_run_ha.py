"""``make run-ha`` (``python -m services.client.run --ha``): two replicas of each service, each
under a keeper; a demo game on the second gateway survives SIGKILL of the first table, timer
and gateway replicas' service processes, each of them comes back SERVING on its own port with
a new pid, and Ctrl-C (SIGINT) leaves no process behind.

The launcher runs as in ``tests/run/test_make_run.py`` (whose helpers this reuses): a clean
environment, every port a free one, the data in a temporary directory.
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

from services.client.run import (
    HA_PORTS,
    PORTS,
    PROCFILE,
    PROCFILE_HA,
    ROOT,
    grpc_serving,
    listener_pids,
)
from testing.servers import free_port
from testing.waiting import wait_until
from tests.run.test_make_run import (
    DEMO,
    LAUNCHER,
    clean_env,
    cmdline,
    descendants,
    interrupt_and_check_nothing_left,
    state,
)

#: The replicas of ``make run-ha``: name -> the variable of its gRPC port.
REPLICAS = {
    "table1": "DOMINOS_RUN_TABLE_PORT",
    "table2": "DOMINOS_RUN_TABLE2_PORT",
    "timer1": "DOMINOS_RUN_TIMER_PORT",
    "timer2": "DOMINOS_RUN_TIMER2_PORT",
    "bots1": "DOMINOS_RUN_BOTS_PORT",
    "bots2": "DOMINOS_RUN_BOTS2_PORT",
    "gateway1": "DOMINOS_RUN_GATEWAY_PORT",
    "gateway2": "DOMINOS_RUN_GATEWAY2_PORT",
}
KILLED = ("table1", "gateway1", "timer1")
SERVERS = ("redis-server", "nats-server")

#: The variables naming a service's own ports (the second replica's: NAME2, default + 10).
OWN_PORTS = {
    "table": ("TABLE",),
    "timer": ("TIMER",),
    "bots": ("BOTS",),
    "gateway": ("GATEWAY", "WEB"),
}


def text(path: Path) -> str:
    """A log file's text so far (UTF-8; the demo's lines have a middle dot)."""
    return path.read_text(encoding="utf-8", errors="replace")


def lines_of(output: str, names: set[str], last: int = 60) -> str:
    """The keepers' lines and the last ``last`` lines ``names``' processes wrote (honcho
    prefixes each line with its process name): what a failure needs, where the whole log
    would be cut short."""
    keepers = [line for line in output.splitlines() if re.search(r"\bkeeper \w+:", line)]
    own = [
        line
        for line in output.splitlines()
        if any(re.match(rf"\S+ {re.escape(name)}\.1 +\|", line) for name in names)
    ]
    return "\n".join([*keepers, f"--- {', '.join(sorted(names))}:", *own[-last:]])


def service_module(pid: int) -> str | None:
    """``services.table`` when ``pid`` is a service's own process (``python -m
    services.table``: not its keeper, whose arguments name it too), else None."""
    words = cmdline(pid).split()
    if len(words) >= 3 and words[1] == "-m" and words[2].startswith("services."):
        return words[2]
    return None


def service_pid(port: int, module: str) -> int | None:
    """The pid of the ``module`` process listening on ``port``, or None (none, or another)."""
    pids = listener_pids(port)
    if len(pids) == 1 and service_module(pids[0]) == module:
        return pids[0]
    return None


@pytest.fixture
def ports() -> dict[str, int]:
    """A free port for every variable of ``make run-ha``, all different."""
    chosen: dict[str, int] = {}
    for spec in (*PORTS, *HA_PORTS):
        port = free_port()
        while port in chosen.values():
            port = free_port()
        chosen[spec.variable] = port
    return chosen


@pytest.fixture
def launcher_log(tmp_path: Path) -> Iterator[Path]:
    yield tmp_path / "launcher.log"


def test_run_ha_survives_killed_replicas_and_sigint_stops_every_process(
    tmp_path: Path, ports: dict[str, int], launcher_log: Path
) -> None:
    started = time.monotonic()
    env = clean_env(tmp_path, ports)
    run_dir = tmp_path / "run"
    address = {name: f"127.0.0.1:{ports[variable]}" for name, variable in REPLICAS.items()}
    module = {name: f"services.{name[:-1]}" for name in REPLICAS}
    with launcher_log.open("wb") as log:
        launcher = subprocess.Popen(
            [*LAUNCHER, "--ha"],
            cwd=ROOT,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    seen: dict[int, str] = {}
    demo: subprocess.Popen[bytes] | None = None
    try:

        def collect() -> bool:
            """Remember every process below the launcher; true once two of every service
            (their own processes, not their keepers), Redis and NATS are seen."""
            assert launcher.poll() is None, text(launcher_log)
            for pid in descendants(launcher.pid):
                seen.setdefault(pid, cmdline(pid))
            modules = [service_module(pid) for pid in seen]
            return all(modules.count(f"services.{name}") >= 2 for name in OWN_PORTS) and all(
                any(name in line for line in seen.values()) for name in SERVERS
            )

        def all_serving() -> bool:
            assert launcher.poll() is None, text(launcher_log)
            return all(grpc_serving(target) for target in address.values())

        wait_until(all_serving, timeout=40, interval=0.1, message="every replica SERVING")
        wait_until(lambda: "Dominos is up" in text(launcher_log), timeout=10)
        wait_until(collect, timeout=10, interval=0.05, message="every process seen")
        announced = text(launcher_log)
        for name, target in address.items():
            kill = rf"kill -9 \$\(cat {re.escape(str(run_dir))}/pids/{name}\.pid\)"
            assert re.search(rf"{name} +{target} +pid \d+ +{kill}", announced), announced
        web1, web2 = ports["DOMINOS_RUN_WEB_PORT"], ports["DOMINOS_RUN_WEB2_PORT"]
        assert f"http://127.0.0.1:{web1}/   http://127.0.0.1:{web2}/" in announced

        # Each keeper's pid file names its service's own process, the one on its port.
        before: dict[str, int] = {}
        for name, variable in REPLICAS.items():
            pid = service_pid(ports[variable], module[name])
            assert pid is not None, (name, listener_pids(ports[variable]))
            assert int((run_dir / "pids" / f"{name}.pid").read_text()) == pid
            before[name] = pid

        demo_log = tmp_path / "demo.log"
        with demo_log.open("wb") as out:
            demo = subprocess.Popen(
                [*DEMO, "--gateway", address["gateway2"], "--target", "200", "--seed", "11",
                 "--timeout", "40"],
                cwd=ROOT,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
            )  # fmt: skip
        wait_until(
            lambda: re.search(r"^Round 1 · ", text(demo_log), re.M),
            timeout=20,
            interval=0.02,
            message="the demo's first round",
        )
        assert demo.poll() is None, "the game was over before the kills: " + text(demo_log)
        for name in KILLED:
            os.kill(before[name], signal.SIGKILL)

        assert demo.wait(timeout=45) == 0, text(demo_log)
        played = text(demo_log)
        assert re.search(r"^Team [AB] \(.+\) wins the game, \d+ to \d+\.$", played, re.M)

        # Every killed replica is back: SERVING on its port, as a new process, that its
        # keeper said it started (and its pid file names); the others were never restarted.
        for name in KILLED:
            port = ports[REPLICAS[name]]

            def back(name: str = name, port: int = port) -> int | None:
                pid = service_pid(port, module[name])
                if pid is None or pid == before[name] or not grpc_serving(address[name]):
                    return None
                return pid

            pid = wait_until(back, timeout=20, interval=0.1, message=f"{name} back")
            assert state(before[name]) in (None, "Z")
            assert int((run_dir / "pids" / f"{name}.pid").read_text()) == pid
            assert re.search(
                rf"keeper {name}: pid {before[name]} was killed by SIGKILL after [\d.]+ s; "
                rf"started it again as pid {pid} \(restart 1\)",
                text(launcher_log),
            ), text(launcher_log)
        for name in set(REPLICAS) - set(KILLED):
            assert service_pid(ports[REPLICAS[name]], module[name]) == before[name], name
        assert " stopped (rc=" not in text(launcher_log)  # honcho stopped nothing
        collect()

        output = interrupt_and_check_nothing_left(launcher, seen, ports, launcher_log)
        # Only the killed replicas were restarted, once each (none while stopping).
        restarted = re.findall(r"keeper (\w+): pid \d+ ", output)
        assert sorted(restarted) == sorted(KILLED), lines_of(output, set(restarted) - set(KILLED))
        assert not list((run_dir / "pids").glob("*.pid"))  # each keeper removed its pid file
        assert time.monotonic() - started < 60
    finally:
        if demo is not None and demo.poll() is None:
            demo.kill()
            demo.wait(10)
        if launcher.poll() is None:
            for pid in descendants(launcher.pid):  # restarted ones included
                seen.setdefault(pid, cmdline(pid))
            launcher.kill()
            launcher.wait(10)
        for pid, line in seen.items():
            if state(pid) not in (None, "Z") and cmdline(pid) == line:
                os.kill(pid, signal.SIGKILL)


def test_a_taken_port_of_the_second_replicas_is_named_and_nothing_starts(
    tmp_path: Path, ports: dict[str, int]
) -> None:
    port = ports["DOMINOS_RUN_TABLE2_PORT"]
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as holder:
        holder.bind(("127.0.0.1", port))
        holder.listen()
        result = subprocess.run(
            [*LAUNCHER, "--ha"],
            cwd=ROOT,
            env=clean_env(tmp_path, ports),
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
    assert result.returncode == 2, result.stdout + result.stderr
    assert f"port {port} (table 2 gRPC) is already in use by pid {os.getpid()}: " in result.stderr
    assert f"DOMINOS_RUN_TABLE2_PORT={port + 100} make run-ha" in result.stderr
    assert not (tmp_path / "run").exists()


def _procfile(path: Path) -> dict[str, str]:
    """``{name: command}`` of a Procfile, in order."""
    entries: dict[str, str] = {}
    for line in path.read_text().splitlines():
        match = re.match(r"^([a-z0-9]+): (.*)$", line)
        if match:
            entries[match[1]] = match[2]
    return entries


def _keeper(name: str) -> str:
    return (
        f"exec python -m services.client.keeper --name {name} "
        f"--pidfile ${{DOMINOS_RUN_DIR:-.run}}/pids/{name}.pid -- "
    )


def _second_replica(command: str, service: str) -> str:
    names = "|".join(OWN_PORTS[service])

    def renamed(match: re.Match[str]) -> str:
        return f"${{DOMINOS_RUN_{match[1]}2_{match[2]}:-{int(match[3]) + 10}}}"

    return re.sub(rf"\$\{{DOMINOS_RUN_({names})_((?:METRICS_)?PORT):-(\d+)\}}", renamed, command)


def test_the_ha_procfile_is_the_procfile_twice_under_keepers() -> None:
    """Each line of Procfile.ha is the Procfile's under a keeper (replica 2 with its own
    ports, both table replicas as the table target), so the two cannot drift apart."""
    plain, ha = _procfile(PROCFILE), _procfile(PROCFILE_HA)
    assert list(ha) == [
        "redis", "nats", "table1", "table2", "timer1", "timer2", "bots1", "bots2",
        "gateway1", "gateway2", "ready",
    ]  # fmt: skip
    table = "127.0.0.1:${DOMINOS_RUN_TABLE_PORT:-50052}"
    both = f"ipv4:{table},127.0.0.1:${{DOMINOS_RUN_TABLE2_PORT:-50062}}"
    for name in ("redis", "nats"):
        assert ha[name] == _keeper(name) + plain[name].removeprefix("exec ")
    for service in OWN_PORTS:
        first = plain[service].removeprefix("exec ").replace(table, both)
        assert ha[f"{service}1"] == _keeper(f"{service}1") + first
        assert ha[f"{service}2"] == _keeper(f"{service}2") + _second_replica(first, service)
    text = PROCFILE_HA.read_text()
    for spec in (*PORTS, *HA_PORTS):
        defaults = set(re.findall(rf"\$\{{{spec.variable}:-(\d+)\}}", text))
        assert defaults == {str(spec.default)}, spec.variable
    for name, variable in REPLICAS.items():
        assert f" --replica {name}=127.0.0.1:${{{variable}:-" in ha["ready"]


# -- the keeper alone -----------------------------------------------------------------------

KEEPER = [sys.executable, "-m", "services.client.keeper"]


def _pid_in(pidfile: Path) -> int:
    """The pid in ``pidfile``, or 0 (none yet, or gone)."""
    try:
        return int(pidfile.read_text())
    except (OSError, ValueError):
        return 0


def test_the_keeper_restarts_its_command_and_stops_it_on_sigterm(tmp_path: Path) -> None:
    pidfile = tmp_path / "pids" / "sleeper.pid"
    options = ["--name", "sleeper", "--pidfile", str(pidfile), "--delay", "0.2"]
    keeper = subprocess.Popen(
        [*KEEPER, *options, "--", "sleep", "60"],
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        first = wait_until(lambda: _pid_in(pidfile), timeout=10, message="first pid")
        assert cmdline(first) == "sleep 60"
        os.kill(first, signal.SIGKILL)

        def restarted() -> int:
            pid = _pid_in(pidfile)
            return pid if pid != first else 0

        second = wait_until(restarted, timeout=10, message="restarted")
        assert cmdline(second) == "sleep 60"
        keeper.send_signal(signal.SIGTERM)
        assert keeper.wait(timeout=10) == 128 + signal.SIGTERM  # sleep ended by the SIGTERM
        assert keeper.stderr is not None
        said = keeper.stderr.read()
        line = (
            rf"keeper sleeper: pid {first} was killed by SIGKILL after \d+\.\d s; "
            rf"started it again as pid {second} \(restart 1\)\n"
        )
        assert re.fullmatch(line, said), said
        assert state(second) is None
        assert not pidfile.exists()
    finally:
        if keeper.poll() is None:
            os.killpg(keeper.pid, signal.SIGKILL)
            keeper.wait(10)


def test_a_stop_signal_during_the_delay_ends_the_keeper_at_once(tmp_path: Path) -> None:
    pidfile = tmp_path / "quitter.pid"
    keeper = subprocess.Popen(
        [*KEEPER, "--pidfile", str(pidfile), "--delay", "30", "--", "sh", "-c", "exit 3"],
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        child = wait_until(lambda: _pid_in(pidfile), timeout=10, message="the child's pid")
        wait_until(lambda: state(child) is None, timeout=10, message="the child ended")
        stopped = time.monotonic()
        keeper.send_signal(signal.SIGINT)
        assert keeper.wait(timeout=10) == 3  # the command's status, not restarted
        assert time.monotonic() - stopped < 5  # not after the 30 s delay
        assert keeper.stderr is not None
        assert keeper.stderr.read() == ""
    finally:
        if keeper.poll() is None:
            os.killpg(keeper.pid, signal.SIGKILL)
            keeper.wait(10)


def test_a_command_that_cannot_run_is_not_retried(tmp_path: Path) -> None:
    result = subprocess.run(
        [*KEEPER, "--name", "ghost", "--", str(tmp_path / "no-such-program")],
        capture_output=True,
        text=True,
        timeout=20,
        check=False,
    )
    assert result.returncode == 127
    assert result.stderr.startswith("keeper ghost: cannot run ")
    assert result.stderr.endswith("No such file or directory; giving up\n")
