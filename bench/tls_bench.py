"""The latency cost of TLS on the play path: the table service with plain-text Redis and NATS
beside the same service with both over TLS, in one run.

Two pairs of servers run side by side, both with the production users and permissions
(``services.common.cluster_auth``): a plain pair (``redis://``, ``nats://``) and a TLS pair
(``rediss://``, ``tls://``, certificates made for the run by ``openssl``, the servers'
certificates verified by the services as in production: ``DOMINOS_REDIS_CA_FILE``,
``DOMINOS_NATS_CA_FILE``). The table bench's measured loop (:func:`bench.table_bench.run`:
random legal moves over real tables, one command in flight) runs against each in turn,
``--rounds`` times, alternating which goes first, so that both see the same machine. Each
command's ``t_rpc`` (send → answer: load, commit script, publish, all on the service's
Redis and NATS connections) and ``t_event`` (send → its event at a subscriber that also
speaks TLS in TLS mode) are pooled per mode.

    python -m bench.tls_bench [--plays 1500] [--rounds 3] [--json PATH]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from bench.common import write_json
from bench.table_bench import Config, run
from services.common.cluster_auth.nats import TlsFiles
from services.common.logging import configure_logging
from testing.certificates import make_certificates
from testing.secrets import SESSION_SECRETS
from testing.servers import ManagedServer, NatsServer, RedisServer, nats_binary
from testing.stats import PERCENTILES, summary_ms

MODES = ("plain", "tls")


def _servers(tls: TlsFiles | None) -> tuple[RedisServer, NatsServer]:
    return (
        RedisServer(secrets=SESSION_SECRETS, tls=tls),
        NatsServer(binary=nats_binary(), secrets=SESSION_SECRETS, tls=tls),
    )


async def _measure(
    config: Config, rounds: int, servers: dict[str, tuple[RedisServer, NatsServer]], ca: str
) -> dict[str, dict[str, list[int]]]:
    pooled: dict[str, dict[str, list[int]]] = {
        mode: {"rpc_ns": [], "event_ns": []} for mode in MODES
    }
    for k in range(rounds):
        for mode in MODES if k % 2 == 0 else reversed(MODES):
            redis, nats = servers[mode]
            results = await run(
                config,
                redis.url_for("table"),
                nats.url_for("table"),
                nats.url_for("admin"),
                redis.url_for("admin"),
                tls_ca_file=ca if mode == "tls" else "",
            )
            for key in ("rpc_ns", "event_ns"):
                pooled[mode][key] += results["samples"][key]
    return pooled


def report(pooled: dict[str, dict[str, list[int]]]) -> dict[str, Any]:
    """Per mode and latency, the percentiles (ms); and the p50 cost of TLS."""
    figures: dict[str, Any] = {
        mode: {key: summary_ms(samples) for key, samples in pooled[mode].items()} for mode in MODES
    }
    figures["tls_cost_p50_ms"] = {
        key: figures["tls"][key]["p50"] - figures["plain"][key]["p50"]
        for key in ("rpc_ns", "event_ns")
    }
    return figures


def print_report(figures: dict[str, Any], commands: int) -> None:
    """The table quoted in notes."""
    head = "".join(f"{name:>9}" for name, _ in PERCENTILES)
    print(f"table service, {commands} commands per mode, Redis and NATS plain vs TLS")
    print(f"{'latency (ms)':28}{head}")
    for key, label in (("rpc_ns", "t_rpc"), ("event_ns", "t_event")):
        for mode in MODES:
            row = "".join(f"{figures[mode][key][name]:9.3f}" for name, _ in PERCENTILES)
            print(f"{label + ' ' + mode:28}{row}")
    cost = figures["tls_cost_p50_ms"]
    print(f"TLS cost at p50: t_rpc {cost['rpc_ns']:+.3f} ms, t_event {cost['event_ns']:+.3f} ms")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--plays", type=int, default=1500, help="commands per mode and round")
    parser.add_argument("--rounds", type=int, default=3, help="alternations of the two modes")
    parser.add_argument("--tables", type=int, default=10)
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args(argv)
    if min(args.plays, args.rounds, args.tables) < 1:
        parser.error("--plays, --rounds and --tables must be positive")
    configure_logging("warning", "tls-bench", stream=sys.stderr)
    config = Config(args.plays, 100, args.tables, 1, 10, 1, False)
    started: list[ManagedServer] = []
    with tempfile.TemporaryDirectory(prefix="dominos-tls-bench-") as directory:
        certificates = make_certificates(Path(directory))
        # The bench's own observers (event subscriber, floor) trust the run's CA this way;
        # the service is configured with the CA files, as in production.
        os.environ["SSL_CERT_FILE"] = str(certificates.ca)
        tls = TlsFiles(certificates.server_cert, certificates.server_key, certificates.ca)
        servers = {"plain": _servers(None), "tls": _servers(tls)}
        try:
            for redis, nats in servers.values():
                for managed in (redis, nats):
                    managed.start()
                    started.append(managed)
            pooled = asyncio.run(_measure(config, args.rounds, servers, str(certificates.ca)))
        finally:
            for server in started:
                server.cleanup()
    figures = report(pooled)
    print_report(figures, len(pooled["plain"]["rpc_ns"]))
    write_json(args.json, figures)
    return 0


if __name__ == "__main__":
    sys.exit(main())
