"""The bots service's Prometheus metrics (every label set is created at import)."""

from __future__ import annotations

from typing import Final

from prometheus_client import Counter, Gauge, Histogram

from services.robots.levels import Level

#: What became of a robot's turn taken from the queue.
OUTCOMES: Final = ("moved", "stale", "late", "refused", "failed")

TURNS = Counter(
    "dominos_bots_turns_total",
    "Robots' turns taken from the queue, by outcome: moved, stale (the table moved on), late "
    "(its clock had run out), refused (the table refused the move), failed (the table "
    "service did not answer; retried while the clock runs).",
    ["outcome"],
)
MOVES = Counter(
    "dominos_bots_moves_total",
    "Moves robots made, by level and move.",
    ["level", "move"],
)
DECISION_SECONDS = Histogram(
    "dominos_bots_decision_seconds",
    "Time a robot takes to decide from its view (CPU, not the think time), by level.",
    ["level"],
    buckets=(0.0001, 0.0002, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.05),
)
TURN_SECONDS = Histogram(
    "dominos_bots_turn_seconds",
    "From the version that gave a robot its turn to its move being applied (think time included).",
    buckets=(0.25, 0.5, 1, 1.5, 2, 2.5, 3, 4, 5, 10),
)
IN_PROGRESS = Gauge("dominos_bots_turns_in_progress", "Robots' turns being thought about now.")

for _outcome in OUTCOMES:
    TURNS.labels(_outcome)
for _level in Level:
    DECISION_SECONDS.labels(_level.name.lower())
    for _move in ("play_tile", "draw_tile", "pass"):
        MOVES.labels(_level.name.lower(), _move)
