"""The cost of a version's views on the table service (issue 22): ``view_parts``, the public
part every stream of the table shares and each seat's own part, computed once per command.

The states are those of random four-seat games (seed 000's rules), in play order, so each
version differs from the last as in a real game (one seat's tile count, the chain, the
turn). Every pass starts with the kept serialised entries (seat entries, rule sets, hands)
emptied, as after a restart; each state is timed on its own, in µs, and the percentiles
printed.

    python -m bench.views_bench [--games 40] [--passes 3]
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Callable

from services.common import projection
from services.common.projection import public_view_bytes, seat_part_bytes, view_parts
from services.rules import (
    Create,
    Join,
    Pass,
    Phase,
    Start,
    TableState,
    apply,
    create,
    legal_moves,
)
from testing.stats import percentile


def _game(seed: int) -> list[TableState]:
    """Every state of a random round at a seated table, in order."""
    rng = random.Random(seed)
    state = create(Create("bench-table-id-0000000", "Ana", 100), 0).state
    for name in ("Bo", "Cy", "Di"):
        state = apply(state, Join(name), 0).state
    state = apply(state, Start(0, seed), 0).state
    states = []
    while state.phase is Phase.PLAYING and state.round is not None:
        seat = state.round.turn
        options = legal_moves(state, seat)
        move = options[rng.randrange(len(options))] if options else Pass(seat)
        state = apply(state, move, state.deadline_ms).state
        states.append(state)
    return states


def _timed(states: list[TableState], body: Callable[[TableState], object]) -> list[float]:
    """µs per state of ``body(state)``, one sample per state, over one pass in play order."""
    samples = []
    for state in states:
        started = time.perf_counter_ns()
        body(state)
        samples.append((time.perf_counter_ns() - started) / 1000)
    return samples


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--games", type=int, default=40)
    parser.add_argument("--passes", type=int, default=3)
    args = parser.parse_args()
    states = [state for seed in range(args.games) for state in _game(seed)]
    bodies = {
        "view_parts (public + 4 seats)": view_parts,
        "public part": public_view_bytes,
        "4 seats' own parts": lambda state: [seat_part_bytes(state, s) for s in range(4)],
    }
    print(f"{len(states)} versions of {args.games} games, {args.passes} passes")
    print(f"{'µs per version':<32}{'p50':>8}{'p90':>8}{'p99':>8}")
    for name, body in bodies.items():
        samples: list[float] = []
        for _ in range(args.passes):
            projection._SEAT_ENTRIES.clear()
            projection._RULES_BYTES.clear()
            projection._HAND_BYTES.clear()
            samples += _timed(states, body)
        samples.sort()
        print(
            f"{name:<32}{percentile(samples, 50):>8.1f}"
            f"{percentile(samples, 90):>8.1f}{percentile(samples, 99):>8.1f}"
        )


if __name__ == "__main__":
    main()
