"""Tournament of the computer players: every pairing of two levels, in every table layout.

For each layout (a preset at a seat count, with teams or each for themselves) and each
pairing of two distinct levels (beginner-solid, solid-strong, beginner-strong), ``--games``
whole games are played with :func:`services.robots.tournament.play_game`: at four seats in
teams one level holds a team (seats 0 and 2), the other the other team; at two seats one
level a seat. Games come in pairs on the same deal seed with the levels' places swapped
(game ``2k`` has the higher level at seat 0 / team A, game ``2k + 1`` the lower one): a
duplicate format, so the luck of the deal and of opening cancels within the pair. The seed
of game ``i`` is derived from the layout, the pairing and ``i // 2``: a run is reproducible.

Printed, one line per layout and pairing: the games, the wins of the higher level, its win
rate with the 95 % Wilson score interval, and whether it is significant (the interval's
lower bound above 0.5). The pairs make the games negatively correlated, so the interval,
computed as for independent games, is conservative. Then the total time and games per
second, the mean cost of one decision per level (timed on a sample of games in this
process), and a verdict: every pairing must show the higher level significantly stronger;
the exit code is 1 otherwise.

Usage: ``python -m bench.bots_bench [--games N] [--workers K] [--json PATH]``
(defaults: 2,000 games per pairing, one worker process per core).
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from collections import defaultdict
from collections.abc import Iterator
from multiprocessing import Pool
from pathlib import Path
from typing import Any, NamedTuple

from bench.common import write_json
from services.robots.chance import Chance
from services.robots.levels import Level, decide
from services.robots.observation import Decision, Observation
from services.robots.tournament import derive, play_game
from services.rules import RuleSet, preset

#: The seed every game's seed derives from.
BENCH_SEED = 2024
#: Games per task handed to a worker.
CHUNK = 50
#: Games per layout and pairing timed for the cost of a decision.
COST_GAMES = 12
Z95 = 1.959963984540054


class Layout(NamedTuple):
    """A table layout of the tournament: a label and its rule set."""

    label: str
    rules: RuleSet


LAYOUTS = (
    Layout("classic 4 teams", preset("classic")),
    Layout("app 4 teams", preset("app", seats=4, hand_size=7, teams=True)),
    Layout("site 4 teams", preset("site", seats=4, teams=True)),
    Layout("web_draw 2", preset("web_draw", seats=2)),
    Layout("web_block 2", preset("web_block", seats=2)),
    Layout("web_fives 2", preset("web_fives", seats=2)),
    Layout("family_draw 2", preset("family_draw", seats=2)),
    Layout("site 2", preset("site", seats=2)),
)
#: ``(lower, higher)``: the higher level must win significantly.
PAIRINGS = (
    (Level.BEGINNER, Level.SOLID),
    (Level.SOLID, Level.STRONG),
    (Level.BEGINNER, Level.STRONG),
)


def seats_of(rules: RuleSet, first: Level, second: Level) -> tuple[Level, ...]:
    """The level of each seat: ``first`` at seat 0 (team A: seats 0 and 2), ``second`` at
    the others (team B), alternating round the table."""
    return tuple(first if seat % 2 == 0 else second for seat in range(rules.seats))


def game_seed(layout: int, pairing: int, game: int) -> int:
    """The seed of game ``game`` of a layout and pairing: shared by a duplicate pair."""
    lower, higher = PAIRINGS[pairing]
    return derive(BENCH_SEED, LAYOUTS[layout].label, lower.name, higher.name, game // 2)


def higher_wins(layout: int, pairing: int, game: int) -> bool:
    """Play one game of the tournament; whether the higher level won it."""
    rules = LAYOUTS[layout].rules
    lower, higher = PAIRINGS[pairing]
    higher_first = game % 2 == 0
    first, second = (higher, lower) if higher_first else (lower, higher)
    result = play_game(rules, seats_of(rules, first, second), game_seed(layout, pairing, game))
    return result.winner == (0 if higher_first else 1)


def _chunk(task: tuple[int, int, int, int]) -> tuple[int, int, int, int]:
    layout, pairing, start, stop = task
    wins = sum(higher_wins(layout, pairing, game) for game in range(start, stop))
    return layout, pairing, wins, stop - start


def _tasks(games: int) -> Iterator[tuple[int, int, int, int]]:
    for layout in range(len(LAYOUTS)):
        for pairing in range(len(PAIRINGS)):
            for start in range(0, games, CHUNK):
                yield layout, pairing, start, min(start + CHUNK, games)


def wilson(wins: int, games: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a win rate ``wins / games`` (95 % by default)."""
    if games == 0:
        return 0.0, 1.0
    rate = wins / games
    scale = 1 + z * z / games
    center = (rate + z * z / (2 * games)) / scale
    half = z * math.sqrt(rate * (1 - rate) / games + z * z / (4 * games * games)) / scale
    return center - half, center + half


def decision_costs(games: int = COST_GAMES) -> dict[str, float]:
    """The mean microseconds of one decision per level, over ``games`` games of every
    layout and pairing played in this process."""
    spent: dict[Level, list[int]] = defaultdict(lambda: [0, 0])

    def timed(level: Level, observation: Observation, chance: Chance) -> Decision:
        start = time.perf_counter_ns()
        decision = decide(level, observation, chance)
        cost = spent[level]
        cost[0] += time.perf_counter_ns() - start
        cost[1] += 1
        return decision

    for layout in LAYOUTS:
        for p, (lower, higher) in enumerate(PAIRINGS):
            for game in range(games):
                first, second = (higher, lower) if game % 2 == 0 else (lower, higher)
                seats = seats_of(layout.rules, first, second)
                play_game(layout.rules, seats, derive(BENCH_SEED, "cost", p, game), timed)
    return {level.name.lower(): spent[level][0] / spent[level][1] / 1000 for level in Level}


def run(games: int, workers: int) -> dict[str, Any]:
    """Play the tournament on ``workers`` processes; return its figures."""
    wins: dict[tuple[int, int], list[int]] = defaultdict(lambda: [0, 0])
    start = time.perf_counter()
    with Pool(workers) as pool:
        for layout, pairing, won, played in pool.imap_unordered(_chunk, _tasks(games)):
            wins[layout, pairing][0] += won
            wins[layout, pairing][1] += played
    seconds = time.perf_counter() - start
    rows = []
    for layout in range(len(LAYOUTS)):
        for pairing, (lower, higher) in enumerate(PAIRINGS):
            won, played = wins[layout, pairing]
            low, high = wilson(won, played)
            rows.append(
                {
                    "layout": LAYOUTS[layout].label,
                    "higher": higher.name.lower(),
                    "lower": lower.name.lower(),
                    "games": played,
                    "higher_wins": won,
                    "win_rate": won / played,
                    "ci95": [low, high],
                    "significant": low > 0.5,
                }
            )
    total = len(rows) * games
    return {
        "games_per_pairing": games,
        "workers": workers,
        "seconds": seconds,
        "games_per_second": total / seconds,
        "rows": rows,
        "decision_us": decision_costs(),
    }


def print_table(figures: dict[str, Any]) -> bool:
    """Print the figures; whether every pairing is significant."""
    print(
        f"{'layout':16} {'pairing':18} {'games':>6} {'wins':>6} {'rate':>6} "
        f"{'95% CI':>15}  significant"
    )
    for row in figures["rows"]:
        low, high = row["ci95"]
        pairing = f"{row['higher']} > {row['lower']}"
        significant = "yes" if row["significant"] else "NO"
        print(
            f"{row['layout']:16} {pairing:18} {row['games']:6} {row['higher_wins']:6} "
            f"{row['win_rate']:6.3f} [{low:.3f}, {high:.3f}]  {significant}"
        )
    total = len(figures["rows"]) * figures["games_per_pairing"]
    print(
        f"{total} games in {figures['seconds']:.1f} s on {figures['workers']} workers "
        f"({figures['games_per_second']:.1f} games/s)"
    )
    costs = ", ".join(f"{name} {us:.1f} us" for name, us in figures["decision_us"].items())
    print(f"mean decision: {costs}")
    failed = [row for row in figures["rows"] if not row["significant"]]
    if failed:
        names = "; ".join(f"{r['layout']}: {r['higher']} > {r['lower']}" for r in failed)
        print(f"VERDICT: not significant in {len(failed)} pairing(s): {names}")
    else:
        print(
            "VERDICT: strong > solid > beginner, significantly (95 %), in every layout "
            f"({len(figures['rows'])} pairings)"
        )
    return not failed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=2000, help="games per pairing (2000)")
    parser.add_argument(
        "--workers", type=int, default=os.cpu_count() or 1, help="processes (one per core)"
    )
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args(argv)
    if args.games < 1 or args.workers < 1:
        parser.error("--games and --workers must be positive")
    figures = run(args.games, args.workers)
    ok = print_table(figures)
    write_json(args.json, figures)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
