"""Benchmark of the gateway's presence-lease renewal: how long it holds the event loop.

A gateway renews a lease per open view stream every third of the lease time
(:class:`services.gateway.presence.LeaseKeeper`). This bench starts its own ``redis-server``
(the production users and ACLs), takes ``--leases`` leases (4,000: a gateway streaming to
1,000 tables) on random table ids as the ``gateway`` user, then lets the keeper renew them for
``--periods`` periods of a ``--ttl`` lease (renewed every third of it) while a probe task
sleeps 1 ms again and again and records how late each wake-up is: a renewal that holds the
loop for 4 ms shows as a 4 ms lateness, and every stream of the gateway waits as long.

Printed: the probe's lateness (p50, p99, max) while renewing and, as the reference, over as
long a time with the same leases held and no renewal; the renewal calls per period and the
leases each carried; this process's CPU per 1,000 leases renewed (its CPU while renewing
less its CPU over the reference time).

``python -m bench.lease_bench [--leases 4000] [--ttl 3] [--periods 3]`` (``make bench-leases``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import secrets
import sys
import time
from pathlib import Path
from typing import Any

from services.common.logging import configure_logging
from services.gateway.presence import LeaseKeeper
from testing.connect import service_clients
from testing.leases import RecordedLeases
from testing.secrets import SESSION_SECRETS
from testing.servers import RedisServer
from testing.stats import summary_ms

PROBE_S = 0.001
PROBE_NS = 1_000_000


async def _probe(seconds: float) -> list[int]:
    """Lateness (ns) of every 1 ms sleep's wake-up for ``seconds``."""
    loop = asyncio.get_running_loop()
    late: list[int] = []
    end = loop.time() + seconds
    while loop.time() < end:
        started = time.perf_counter_ns()
        await asyncio.sleep(PROBE_S)
        late.append(max(time.perf_counter_ns() - started - PROBE_NS, 0))
    return late


def _summary(late_ns: list[int]) -> dict[str, float]:
    """The lateness's percentiles and mean in ms (``summary_ms``) and its sample count."""
    return {**summary_ms(late_ns), "n": len(late_ns)}


async def run(url_for: Any, leases: int, ttl_s: float, periods: int) -> dict[str, Any]:
    """Take ``leases`` leases, probe the loop without and then with the keeper renewing."""
    async with service_clients(url_for) as connect:
        counted = RecordedLeases(connect("gateway"))
        keeper = LeaseKeeper(counted, ttl_ms=round(ttl_s * 1000))
        tables = [secrets.token_urlsafe(16) for _ in range(-(-leases // 4))]
        for number in range(leases):
            await keeper.take(tables[number // 4], number % 4, f"gw-bench:{number}")
        period_s = ttl_s / 3
        cpu_before = time.process_time()
        quiet = await _probe(period_s * periods)
        cpu_quiet = time.process_time() - cpu_before
        counted.calls.clear()
        renewing = asyncio.create_task(keeper.run())
        try:
            cpu_before = time.process_time()
            busy = await _probe(period_s * periods)
            cpu_busy = time.process_time() - cpu_before
        finally:
            keeper.stop()
            renewing.cancel()
            await asyncio.gather(renewing, return_exceptions=True)
    calls = [len(leases) for _, leases in counted.calls]
    return {
        "leases": leases,
        "ttl_s": ttl_s,
        "periods": periods,
        "quiet_ms": _summary(quiet),
        "renewing_ms": _summary(busy),
        "renewal_cpu_ms_per_1k_leases": (cpu_busy - cpu_quiet) * 1e6 / max(sum(calls), 1),
        "renew_calls_per_period": len(calls) / periods,
        "leases_per_call_max": max(calls, default=0),
        "leases_renewed_per_period": sum(calls) / periods,
    }


def main(argv: list[str] | None = None) -> int:
    """Parse the options, run with a Redis of our own, print the figures."""
    parser = argparse.ArgumentParser(prog="python -m bench.lease_bench", description=__doc__)
    parser.add_argument("--leases", type=int, default=4000, help="leases held (4000)")
    parser.add_argument("--ttl", type=float, default=3.0, help="lease time, s (3)")
    parser.add_argument("--periods", type=int, default=3, help="renewal periods probed (3)")
    parser.add_argument("--json", type=Path, help="where to write the results")
    args = parser.parse_args(argv)
    configure_logging("warning", "lease-bench", stream=sys.stderr)
    redis_server = RedisServer(secrets=SESSION_SECRETS)
    try:
        redis_server.start()
        results = asyncio.run(run(redis_server.url_for, args.leases, args.ttl, args.periods))
    finally:
        redis_server.cleanup()
    for name in ("quiet_ms", "renewing_ms"):
        figures = results[name]
        print(
            f"loop lateness {name[:-3]:9s} p50 {figures['p50']:.3f}  p99 {figures['p99']:.3f}"
            f"  max {figures['max']:.3f} ms  (n {figures['n']})"
        )
    print(
        f"{results['leases']} leases: {results['renew_calls_per_period']:.0f} renewal calls a"
        f" period, at most {results['leases_per_call_max']} leases each,"
        f" {results['leases_renewed_per_period']:.0f} renewed a period; this process's CPU"
        f" {results['renewal_cpu_ms_per_1k_leases']:.2f} ms per 1,000 leases renewed"
    )
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
