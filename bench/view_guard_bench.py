"""The cost of the gateway's trust checks per view (issue 13), beside the view itself.

Per table version a gateway now (a) checks that the event follows the version its feed holds
(once per event, shared by the table's streams) and (b) per stream, checks that the seat's
holder is still the stream's token before projecting the view. This measures, in one
process, on states of a real game in play: the follow check, the holder check, and the
projection plus serialisation of the view they guard (``table_view``), in ns per call.

    python -m bench.view_guard_bench [--views 200000]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

from dominos.v1 import gateway_pb2

from services.common import credentials
from services.common.projection import table_view
from services.common.published import seat_holders
from services.rules import Create, Join, Start, TableState, apply, create
from testing.stats import percentile

BATCH = 100


def _table() -> TableState:
    state = create(Create("bench-table-id-0000000", "Ana", 100), 0).state
    for name in ("Bo", "Cy", "Di"):
        state = apply(state, Join(name), 0).state
    return apply(state, Start(0, 0x5EED), 0).state


def _timed(calls: int, body: Callable[[], object]) -> list[int]:
    """ns per call, measured over batches of ``BATCH`` calls."""
    samples = []
    for _ in range(calls // BATCH):
        started = time.perf_counter_ns()
        for _ in range(BATCH):
            body()
        samples.append((time.perf_counter_ns() - started) // BATCH)
    return sorted(samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--views", type=int, default=200_000)
    args = parser.parse_args()
    state = _table()
    digests = [credentials.token_digest(f"{'k' * 42}{seat}") for seat in range(4)]
    holders = seat_holders(state, lambda seat: digests[seat])
    mine = credentials.token_holder(f"{'k' * 42}1")
    held = 41

    def follow() -> bool:
        return not (held == 0 or state.version != held + 1)

    def holder() -> bool:
        return bool(holders) and credentials.holder_of(holders, 1) != mine

    def view() -> bytes:
        return gateway_pb2.WatchTableResponse(
            view=table_view(state, 1, 1_700_000_000_000)
        ).SerializeToString()

    print(f"{'ns per view':<34}{'p50':>8}{'p99':>8}")
    results = {}
    for name, body in (
        ("follow check (per event)", follow),
        ("holder check (per stream)", holder),
        ("view: project + serialise", view),
    ):
        samples = _timed(args.views, body)
        results[name] = percentile(samples, 50)
        print(f"{name:<34}{results[name]:>8}{percentile(samples, 99):>8}")
    share = results["holder check (per stream)"] / results["view: project + serialise"]
    print(f"holder check / view: {share:.1%}")


if __name__ == "__main__":
    main()
