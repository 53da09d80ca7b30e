"""A local Redis Cluster of three primaries, for the tests that run the store on one.

Each node is a :class:`~testing.servers.RedisServer` started with ``--cluster-enabled yes``
and the cluster's production ACL users; ``redis-cli --cluster create`` then divides the
16,384 slots between the three (no replicas), as an operator would. :meth:`url_for` gives a
service's URL to one node (the client discovers the others); the services connect to it with
``DOMINOS_REDIS_CLUSTER=1``.
"""

from __future__ import annotations

import contextlib
import subprocess
from pathlib import Path
from typing import Self

from services.common.cluster_auth.secrets import ClusterSecrets

from .servers import (
    RedisServer,
    claim_port,
    ephemeral_port_floor,
    find_binary,
    free_port,
    port_is_free,
)
from .waiting import wait_until

__all__ = ["RedisClusterServers"]

#: A node's own arguments: cluster mode, its config file in its data dir, 2 s to fail over.
CLUSTER_ARGS = (
    "--cluster-enabled", "yes",
    "--cluster-config-file", "nodes.conf",
    "--cluster-node-timeout", "2000",
)  # fmt: skip
#: The cluster bus of a node listens on its port + 10000.
BUS_OFFSET = 10_000


def _cluster_port() -> int:
    """A free port whose cluster bus port is free too, both below the ephemeral range.

    The bus port is claimed as well, so no other server of the session is given it before
    this node binds it.
    """
    while True:
        port = free_port(below=ephemeral_port_floor() - BUS_OFFSET)
        bus = port + BUS_OFFSET
        if bus < 65_536 and port_is_free(bus) and claim_port(bus):
            return port


class RedisClusterServers:
    """Three primaries forming one Redis Cluster, with the services' ACL users."""

    def __init__(self, secrets: ClusterSecrets, data_dir: Path, primaries: int = 3) -> None:
        self.secrets = secrets
        self.nodes = [
            RedisServer(
                port=_cluster_port(),
                data_dir=data_dir / f"node{i}",
                secrets=secrets,
                extra_args=CLUSTER_ARGS,
            )
            for i in range(primaries)
        ]

    def url_for(self, identity: str, node: int = 0) -> str:
        """The URL ``identity`` connects with, naming one node."""
        return self.nodes[node].url_for(identity)

    def _cli(self, *args: str, node: int = 0, timeout: float = 30.0) -> str:
        password = self.secrets.redis_passwords["admin"]
        first = self.nodes[node]
        command = [
            find_binary("redis-cli"),
            "--no-auth-warning",
            "--user", "admin", "--pass", password,
            "-h", first.host, "-p", str(first.port),
            *args,
        ]  # fmt: skip
        done = subprocess.run(command, check=False, capture_output=True, text=True, timeout=timeout)
        if done.returncode != 0:
            raise RuntimeError(f"redis-cli {' '.join(args)}: {done.stdout}{done.stderr}")
        return done.stdout

    def cluster_info(self, node: int) -> dict[str, str]:
        """``CLUSTER INFO`` of a node."""
        lines = self._cli("cluster", "info", node=node).splitlines()
        return dict(line.strip().split(":", 1) for line in lines if ":" in line)

    def start(self, timeout: float = 30.0) -> Self:
        """Start the nodes, create the cluster, wait until every node reports it ``ok``."""
        for node in self.nodes:
            node.start()
        self._cli(
            "--cluster", "create",
            *(f"{node.host}:{node.port}" for node in self.nodes),
            "--cluster-replicas", "0", "--cluster-yes",
        )  # fmt: skip
        wait_until(
            lambda: all(
                self.cluster_info(i).get("cluster_state") == "ok" for i in range(len(self.nodes))
            ),
            timeout=timeout,
            interval=0.2,
        )
        return self

    def stop(self) -> None:
        """Stop every node."""
        for node in self.nodes:
            with contextlib.suppress(Exception):
                node.stop()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()
