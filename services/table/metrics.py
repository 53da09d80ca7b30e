"""The table service's Prometheus metrics (no table id or player ever in a label)."""

from __future__ import annotations

import typing
from typing import Final

from prometheus_client import Counter, Gauge

from services.common.service_errors import TABLE_LIMITS
from services.rules import AutoCause, Command, Outcome, Transition
from services.rules.events import GameEnded, Passed, RoundEnded, TileLaid

COMMANDS_APPLIED = Counter(
    "dominos_table_commands_applied_total",
    "Commands that changed a table, by command.",
    ["command"],
)
COMMANDS_REJECTED = Counter(
    "dominos_table_commands_rejected_total",
    "Commands refused (nothing changed), by command and machine-readable reason.",
    ["command", "reason"],
)
ROUNDS_ENDED = Counter(
    "dominos_rounds_ended_total",
    "Rounds ended, by outcome (domino, blocked, blocked_tie).",
    ["outcome"],
)
GAMES_FINISHED = Counter("dominos_games_finished_total", "Games that reached their target.")
AUTO_PLAYS = Counter(
    "dominos_auto_plays_total",
    "Turns the table played for a seat, by cause (timeout, away) and action (play, pass).",
    ["cause", "action"],
)
CAS_CONFLICTS = Counter(
    "dominos_table_cas_conflicts_total",
    "Commits that lost the compare-and-set race to another writer and were retried.",
)
RECORD_CACHE = Counter(
    "dominos_table_record_cache_total",
    "Command loops by where their table came from: hit (this replica's last record of it),"
    " miss (read from Redis), stale (a hit another writer had overtaken: read again).",
    ["result"],
)
#: Its children, looked up once (a command's loop counts one of them).
CACHE_HIT, CACHE_MISS, CACHE_STALE = (RECORD_CACHE.labels(r) for r in ("hit", "miss", "stale"))
OUTBOX_REPUBLISHED = Counter(
    "dominos_table_outbox_republished_total",
    "Events the outbox relay published after their writer failed to (crash, bus outage).",
)
PUBLISH_FAILURES = Counter(
    "dominos_table_publish_failures_total",
    "Events whose publication after commit failed (left to the relay).",
)
TIMERS_HANDLED = Counter(
    "dominos_table_timer_expiries_total",
    "timer.expired messages handled, by whether they changed the table (acted, stale).",
    ["result"],
)
RATE_LIMITED = Counter(
    "dominos_table_rate_limited_total",
    "Requests refused because a budget was spent (RATE_LIMITED), by the limit (issue 15).",
    ["limit"],
)
#: Every limit's series exists from the start (a first burst shows in rate()).
for _limit in TABLE_LIMITS:
    RATE_LIMITED.labels(_limit)
OUTBOX_TABLES = Gauge(
    "dominos_table_outbox_tables",
    "Tables whose outbox holds events not yet acknowledged by NATS, cluster-wide (a commit's "
    "events wait there for milliseconds; a stuck bus makes them pile up).",
)
OUTBOX_OLDEST = Gauge(
    "dominos_table_outbox_oldest_seconds",
    "How long the oldest unpublished outbox has waited, cluster-wide (0: none waits).",
)
TABLES = Gauge(
    "dominos_tables",
    "Live tables by phase (waiting, playing, round_over, finished, closed), cluster-wide.",
    ["phase"],
)

_OUTCOMES = {
    Outcome.DOMINO: "domino",
    Outcome.BLOCKED: "blocked",
    Outcome.BLOCKED_TIE: "blocked_tie",
}
_CAUSES = {AutoCause.TIMEOUT: "timeout", AutoCause.AWAY: "away"}

#: Every label set we know in advance exists from the start at 0, so the first round ended,
#: auto-play or timer expiry shows in rate()/increase() (a series born at 1 would be counted
#: from its second increment only).
for _outcome in _OUTCOMES.values():
    ROUNDS_ENDED.labels(_outcome)
for _cause in _CAUSES.values():
    for _action in ("play", "pass"):
        AUTO_PLAYS.labels(_cause, _action)
for _result in ("acted", "stale"):
    TIMERS_HANDLED.labels(_result)
#: Every command type's series too, bound once (a command is counted without a label lookup):
#: DominosTablesStuck reads increase() of the sum, which a series born at its first command
#: would hide for a scrape or two.
_APPLIED_BY_TYPE: Final = {
    _command: COMMANDS_APPLIED.labels(_command.__name__) for _command in typing.get_args(Command)
}


def record_applied(command: Command, transition: Transition) -> None:
    """Count one accepted command and what it caused (rounds, games, auto-plays)."""
    _APPLIED_BY_TYPE[type(command)].inc()
    for event in transition.events:
        if isinstance(event, RoundEnded):
            ROUNDS_ENDED.labels(_OUTCOMES[event.result.outcome]).inc()
        elif isinstance(event, GameEnded):
            GAMES_FINISHED.inc()
        elif isinstance(event, (TileLaid, Passed)) and event.auto is not AutoCause.NONE:
            action = "play" if isinstance(event, TileLaid) else "pass"
            AUTO_PLAYS.labels(_CAUSES[event.auto], action).inc()


ROBOT_MOVES = Counter(
    "dominos_table_robot_moves_total",
    "Robots' moves applied through RobotService.RobotAct, by move (issue 20).",
    ["move"],
)
ROBOT_TURNS_PUBLISHED = Counter(
    "dominos_table_robot_turns_published_total",
    "Robots' turns announced to the bots service (issue 20).",
)
for _move in ("play_tile", "pass", "draw_tile"):
    ROBOT_MOVES.labels(_move)
