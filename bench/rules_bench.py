"""Benchmark of the rules engine against a peer, measured side by side in one run, one core.

The peer is the pure-Python ``dominoes`` library (abw333/dominoes, a bench-only dependency),
whose ``Game`` is one round and ``Series`` a game to a target. Both sides play random legal
moves. Printed: the median cost of computing the legal moves and of applying one move, random
rounds per second and complete random games to 100 per second, with the ratio ours / peer
(> 1 means we are faster). The peer's rules differ in details (it scores all four hands and
gives 0 on a blocked tie, it mutates its state in place, it skips passes inside
``make_move``); ours keep every state immutable and replayable.

Usage: ``python -m bench.rules_bench [--seconds S] [--json PATH]``.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import dominoes

from services.rules import (
    Create,
    Expire,
    Join,
    Pass,
    Phase,
    Play,
    Start,
    TableState,
    apply,
    create,
    legal_moves,
)

_perf_ns = time.perf_counter_ns
PLAYING, ROUND_OVER, FINISHED = Phase.PLAYING, Phase.ROUND_OVER, Phase.FINISHED


def _seated_table(seed: int, target: int = 100) -> TableState:
    state = create(Create("bench", "A", target), 0).state
    for name in ("B", "C", "D"):
        state = apply(state, Join(name), 0).state
    return apply(state, Start(0, seed), 0).state


# --- ours ------------------------------------------------------------------------------------


class _OursRounds:
    """Plays random games and stops after each round, so a round includes its deal (D1)."""

    def __init__(self) -> None:
        self.state = _seated_table(0)
        self.games = 0

    def __call__(self, rng: random.Random, seed: int) -> int:
        state = self.state
        if state.phase is FINISHED:
            self.games += 1
            state = _seated_table(seed)
        elif state.phase is ROUND_OVER:
            state = apply(state, Expire(state.turn_number), state.deadline_ms).state
        state, moves = _play_round(state, rng)
        self.state = state
        return moves


def _play_round(state: TableState, rng: random.Random) -> tuple[TableState, int]:
    """Random legal moves until the round is over; the state then and the number of moves."""
    moves = 0
    now = state.deadline_ms
    rand = rng.random
    while state.phase is PLAYING:
        rnd = state.round
        assert rnd is not None
        seat = rnd.turn
        options = legal_moves(state, seat)
        if options:
            state = apply(state, options[int(rand() * len(options))], now).state
        else:
            state = apply(state, Pass(seat), now).state
        moves += 1
    return state, moves


def ours_game(rng: random.Random, seed: int) -> int:
    """Play one random game to 100; return the number of rounds."""
    state, _ = _play_round(_seated_table(seed), rng)
    while state.phase is ROUND_OVER:
        state = apply(state, Expire(state.turn_number), state.deadline_ms).state
        state, _ = _play_round(state, rng)
    assert state.round is not None
    return state.round.number


def ours_step_costs(rng: random.Random, rounds: int) -> tuple[list[int], list[int]]:
    """Per-call nanoseconds of ``legal_moves`` and of ``apply`` over random rounds."""
    legal_ns: list[int] = []
    apply_ns: list[int] = []
    for r in range(rounds):
        state = _seated_table(r)
        while state.phase is PLAYING:
            assert state.round is not None
            seat = state.round.turn
            t0 = _perf_ns()
            options = legal_moves(state, seat)
            t1 = _perf_ns()
            if options:
                command: Play | Pass = options[int(rng.random() * len(options))]
            else:
                command = Pass(seat)
            t2 = _perf_ns()
            state = apply(state, command, 0).state
            t3 = _perf_ns()
            legal_ns.append(t1 - t0)
            apply_ns.append(t3 - t2)
    return legal_ns, apply_ns


# --- the peer --------------------------------------------------------------------------------


def peer_round(rng: random.Random, seed: int) -> int:
    """One random round of the peer (``dominoes.Game``); return the number of moves."""
    random.seed(seed)
    game = dominoes.Game.new(starting_domino=dominoes.Domino(6, 6))
    moves = 1
    while game.result is None:
        options = game.valid_moves
        game.make_move(*options[int(rng.random() * len(options))])
        moves += 1
    return moves


def peer_game(rng: random.Random, seed: int) -> int:
    """One random game to 100 of the peer (``dominoes.Series``); return the number of rounds."""
    random.seed(seed)
    series = dominoes.Series(target_score=100)
    game = series.games[-1]
    while True:
        while game.result is None:
            options = game.valid_moves
            game.make_move(*options[int(rng.random() * len(options))])
        nxt = series.next_game()
        if nxt is None:
            return len(series.games)
        game = nxt


def peer_step_costs(rng: random.Random, rounds: int) -> tuple[list[int], list[int]]:
    """Per-call nanoseconds of the peer's legal-move computation and of ``make_move``."""
    legal_ns: list[int] = []
    apply_ns: list[int] = []
    for r in range(rounds):
        random.seed(r)
        game = dominoes.Game.new(starting_domino=dominoes.Domino(6, 6))
        while game.result is None:
            t0 = _perf_ns()
            game._update_valid_moves()
            t1 = _perf_ns()
            options = game.valid_moves
            move = options[int(rng.random() * len(options))]
            t2 = _perf_ns()
            game.make_move(*move)
            t3 = _perf_ns()
            legal_ns.append(t1 - t0)
            apply_ns.append(t3 - t2)
    return legal_ns, apply_ns


# --- harness ---------------------------------------------------------------------------------


def throughput(play: Callable[[random.Random, int], int], seconds: float) -> float:
    """Calls of ``play`` per second over about ``seconds`` (after a short warm-up)."""
    rng = random.Random(7)
    for seed in range(50):
        play(rng, seed)
    count = 0
    start = time.perf_counter()
    deadline = start + seconds
    while True:
        for _ in range(20):
            play(rng, count)
            count += 1
        now = time.perf_counter()
        if now >= deadline:
            return count / (now - start)


def rounds_per_game(play: Callable[[random.Random, int], int], games: int = 400) -> float:
    """Mean number of rounds in a random game to 100 (the rules differ, so this does too)."""
    rng = random.Random(5)
    return statistics.fmean(play(rng, seed) for seed in range(games))


def run(seconds: float) -> dict[str, Any]:
    """Measure both sides; return the figures."""
    rng = random.Random(11)
    ours_legal, ours_apply = ours_step_costs(rng, 3000)
    peer_legal, peer_apply = peer_step_costs(rng, 3000)
    figures: dict[str, Any] = {
        "legal_moves_median_us": {
            "ours": statistics.median(ours_legal) / 1000,
            "peer": statistics.median(peer_legal) / 1000,
        },
        "apply_median_us": {
            "ours": statistics.median(ours_apply) / 1000,
            "peer": statistics.median(peer_apply) / 1000,
        },
        "move_median_us": {
            "ours": statistics.median(a + b for a, b in zip(ours_legal, ours_apply, strict=True))
            / 1000,
            "peer": statistics.median(peer_apply) / 1000,
        },
        "rounds_per_second": {
            "ours": throughput(_OursRounds(), seconds),
            "peer": throughput(peer_round, seconds),
        },
        "games_to_100_per_second": {
            "ours": throughput(ours_game, seconds),
            "peer": throughput(peer_game, seconds),
        },
        "rounds_per_game_to_100": {
            "ours": rounds_per_game(ours_game),
            "peer": rounds_per_game(peer_game),
        },
    }
    return figures


def print_table(figures: dict[str, Any]) -> None:
    """One line per figure: ours, the peer's, and the ratio (> 1 means we are better)."""
    print(f"{'figure':28} {'ours':>12} {'peer':>12} {'ours vs peer':>14}")
    for name, pair in figures.items():
        ours, peer = pair["ours"], pair["peer"]
        lower_is_better = name.endswith("_us") or name.startswith("rounds_per_game")
        ratio = peer / ours if lower_is_better else ours / peer
        print(f"{name:28} {ours:12.2f} {peer:12.2f} {ratio:13.2f}x")
    print("(move = legal moves + apply for us; the peer computes its moves inside make_move)")
    print(
        "(a game to 100 has more rounds with our rules: a domino scores only the opponents'"
        " hands, R12; the peer scores all four)"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="per throughput figure")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args(argv)
    figures = run(args.seconds)
    print_table(figures)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(figures, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
