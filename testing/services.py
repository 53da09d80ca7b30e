"""Our own services as real processes (``python -m services.<name>``), for tests that need
several replicas, kills, freezes and restarts, and for the benchmarks.

Every blocking method here (starting, stopping, pausing) blocks the calling thread; async
tests call them through ``asyncio.to_thread`` so that their clients keep running meanwhile.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Mapping
from pathlib import Path

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from services.common.cluster_auth.secrets import ClusterSecrets
from testing import limits
from testing.procfs import all_threads_stopped, any_thread_stopped, rss_mb
from testing.secrets import SESSION_SECRETS
from testing.servers import free_port
from testing.waiting import wait_until

ROOT = Path(__file__).resolve().parents[1]


class ServiceProcess:
    """One service process with its environment; ``start`` waits until health says SERVING."""

    def __init__(
        self,
        module: str,
        env: Mapping[str, str],
        *,
        port: int | None = None,
        metrics: bool = False,
        secrets: ClusterSecrets = SESSION_SECRETS,
        web_port: int | None = None,
    ) -> None:
        self.module = module
        self.port = port or free_port()
        self.metrics_port = free_port() if metrics else -1
        #: A gateway's web edge (Connect and gRPC-Web) listens too, on a port of its own.
        self.web_port = (web_port or free_port()) if module.endswith(".gateway") else -1
        self.env = {
            **os.environ,
            "DOMINOS_GRPC_HOST": "127.0.0.1",
            "DOMINOS_GRPC_PORT": str(self.port),
            "DOMINOS_METRICS_PORT": str(self.metrics_port),
            "DOMINOS_WEB_HOST": "127.0.0.1",
            "DOMINOS_WEB_PORT": str(self.web_port),
            "DOMINOS_SHUTDOWN_GRACE_SECONDS": "1",
            "DOMINOS_SHUTDOWN_DRAIN_SECONDS": "0.3",
            # The service's own secrets, as in production (no development defaults).
            **secrets.secret_env(module.rpartition(".")[2]),
            # Every test client is 127.0.0.1: per-address budgets off unless a test sets them.
            **limits.BY_SERVICE.get(module.rpartition(".")[2], {}),
            **env,
        }
        self.log_path = Path(
            tempfile.mkstemp(prefix=f"{module.replace('.', '-')}-", suffix=".log")[1]
        )
        self.process: subprocess.Popen[bytes] | None = None

    def scrape(self) -> str:
        """The process's Prometheus metrics page (``metrics=True`` processes only)."""
        with urllib.request.urlopen(
            f"http://127.0.0.1:{self.metrics_port}/metrics", timeout=5
        ) as r:
            return str(r.read().decode())

    @property
    def web_url(self) -> str:
        """``http://127.0.0.1:port`` of a gateway's web edge (the same across restarts)."""
        return f"http://127.0.0.1:{self.web_port}"

    @property
    def address(self) -> str:
        """``127.0.0.1:port`` (the same across restarts)."""
        return f"127.0.0.1:{self.port}"

    @property
    def role(self) -> str:
        """The service: ``table``, ``timer`` or ``gateway``."""
        return self.module.rpartition(".")[2]

    @property
    def pid(self) -> int:
        """The current process id (started processes only)."""
        assert self.process is not None
        return self.process.pid

    @property
    def alive(self) -> bool:
        """Whether the process runs (frozen included)."""
        return self.process is not None and self.process.poll() is None

    def start(self, timeout: float = 15.0) -> ServiceProcess:
        """Launch the process and wait until its gRPC health check answers SERVING."""
        with self.log_path.open("ab") as log:
            self.process = subprocess.Popen(
                [sys.executable, "-m", self.module],
                cwd=ROOT,
                env=self.env,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        self.wait_serving(timeout)
        return self

    def wait_serving(self, timeout: float) -> None:
        """Poll the health service until SERVING (raises with the log tail on failure)."""
        deadline = time.monotonic() + timeout
        with grpc.insecure_channel(self.address) as channel:
            stub = health_pb2_grpc.HealthStub(channel)
            while time.monotonic() < deadline:
                if self.process is not None and self.process.poll() is not None:
                    break
                try:
                    reply = stub.Check(health_pb2.HealthCheckRequest(), timeout=0.5)
                    if reply.status == health_pb2.HealthCheckResponse.SERVING:
                        return
                except grpc.RpcError:
                    pass
                time.sleep(0.05)
        raise RuntimeError(f"{self.module} did not become healthy:\n{self.log_tail()}")

    def log_tail(self, lines: int = 40) -> str:
        """The end of the process's output."""
        return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])

    def restart(self, timeout: float = 20.0) -> ServiceProcess:
        """Start again on the same port with the same environment (and log); waits for
        SERVING. The previous process must have ended (killed or stopped)."""
        return self.start(timeout)

    def pause(self) -> None:
        """SIGSTOP (the process freezes: its port accepts connections, nothing answers);
        returns once every thread stopped."""
        pid = self._signal(signal.SIGSTOP)
        wait_until(lambda: all_threads_stopped(pid), timeout=5)

    def resume(self) -> None:
        """SIGCONT; returns once no thread is stopped."""
        pid = self._signal(signal.SIGCONT)
        wait_until(lambda: not any_thread_stopped(pid), timeout=5)

    def _signal(self, signum: signal.Signals) -> int:
        assert self.process is not None
        self.process.send_signal(signum)
        return self.process.pid

    def rss_mb(self) -> float:
        """Resident memory in MB (0 when not running)."""
        return rss_mb(self.pid) if self.alive else 0.0

    def kill(self) -> None:
        """SIGKILL (no clean-up at all, a frozen process dies too) and reap."""
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(10)

    def stop(self, timeout: float = 15.0) -> int | None:
        """SIGTERM, wait for the graceful exit; returns the exit code."""
        if self.process is None:
            return None
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)
        return self.process.returncode
