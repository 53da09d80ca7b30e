"""The audit of a game after chaos: its command log replayed against everything else.

For one table, :func:`audit_game` reads the hash from Redis (the truth) and checks:

- **no gap**: the log opens with Create at version 1 and every entry is accepted by the
  rules and adds exactly one version; the stored state and version are the log replayed;
- **no fork**: every view any client received is exactly ``table_view`` of the replayed
  state at that version for that seat (so two clients that saw a version saw the same
  scores, chain, turn...), and no client saw a version the log does not have;
- **scores**: every round's result, recomputed independently from the replayed hands
  (domino: the opponents' pips; blocked: the lighter team scores the heavier's total, the
  last layer's team on a tie), equals the engine's ``RoundEnded`` and ``score_round``; the
  final scores are the sum of the rounds;
- **auto-play once**: no two Expire entries name the same turn number, and every expiry of
  a turn played the documented auto-play;
- **no leak** (S6): no view of a live round shows a tile of another seat's hand;
- **acknowledged means durable**: every command a client got OK for is in the log at the
  version its answer carried.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any

from dominos.v1 import game_pb2

from services.common.projection import table_view
from services.rules import (
    Create,
    Expire,
    Outcome,
    Pass,
    Phase,
    Play,
    RuleError,
    Start,
    TableState,
    apply,
    auto_play_choice,
    create,
    score_round,
)
from services.rules.events import Passed, RoundEnded, TileLaid
from services.rules.tiles import points, tile_index, tiles_of
from testing.chaos_players import ChaosPlayer

from .tables import aread_fields, log_of, state_of, version_of


@dataclass
class GameAudit:
    """What the audit of one table found."""

    table_id: str
    exists: bool = True
    phase: str = ""
    version: int = 0
    rounds: int = 0
    expiries: int = 0
    gaps: list[str] = field(default_factory=list)
    forks: list[str] = field(default_factory=list)
    score_errors: list[str] = field(default_factory=list)
    double_auto_plays: int = 0
    wrong_auto_plays: list[str] = field(default_factory=list)
    leaks: int = 0
    views_checked: int = 0
    acks: int = 0
    acks_lost: list[Any] = field(default_factory=list)
    order_violations: list[str] = field(default_factory=list)
    unexpected_statuses: list[str] = field(default_factory=list)

    @property
    def finished(self) -> bool:
        return self.phase == "FINISHED"

    def problems(self, *, lost_allowed: bool = False) -> list[str]:
        """Every broken invariant (``lost_allowed``: Redis lost data; forks follow)."""
        found = [f"table {self.table_id} lost"] if not self.exists else []
        found += self.gaps + self.score_errors + self.wrong_auto_plays
        found += self.order_violations + self.unexpected_statuses
        if self.double_auto_plays:
            found.append(f"{self.double_auto_plays} turns auto-played twice")
        if self.leaks:
            found.append(f"{self.leaks} views leaked another seat's tile")
        if not lost_allowed:
            found += self.forks + [f"acknowledged but lost: {a}" for a in self.acks_lost]
        return [f"{self.table_id}: {p}" for p in found]


def _expected_result(rnd: Any, outcome: Outcome) -> tuple[Outcome, int, int]:
    """``(outcome, scoring team, points)`` of an ended round, computed from its hands alone."""
    pips = [points(hand) for hand in rnd.hands]
    teams = (pips[0] + pips[2], pips[1] + pips[3])
    if outcome is Outcome.DOMINO:
        scorer = rnd.last_layer & 1
    elif teams[0] != teams[1]:
        scorer = 0 if teams[0] < teams[1] else 1
    else:
        outcome, scorer = Outcome.BLOCKED_TIE, rnd.last_layer & 1
    return outcome, scorer, teams[1 - scorer]


def _shown(view: game_pb2.TableView) -> set[int]:
    """Every tile a view shows outside the chain."""
    shown = {tile_index(t.low, t.high) for t in view.hand}
    shown |= {tile_index(m.tile.low, m.tile.high) for m in view.legal_moves}
    shown |= {tile_index(t.low, t.high) for h in view.last_round.hands for t in h.tiles}
    return shown


async def audit_game(redis: Any, table_id: str, players: list[ChaosPlayer]) -> GameAudit:
    """Audit one table (see the module docstring)."""
    audit = GameAudit(table_id)
    for player in players:
        audit.order_violations += [f"{player.name}: {v}" for v in player.order_violations]
        audit.unexpected_statuses += [f"{player.name}: {u}" for u in player.stats.unexpected]
    fields = await aread_fields(redis, table_id)
    stored = state_of(fields)
    if stored is None:
        audit.exists = False
        return audit
    entries = log_of(fields)
    audit.phase, audit.version = stored.phase.name, version_of(fields)
    first, at = entries[0]
    if not isinstance(first, Create):
        audit.gaps.append("the log does not open with Create")
        return audit
    state = create(first, at).state
    states: dict[int, TableState] = {state.version: state}
    turns: Counter[int] = Counter()
    totals = [0, 0]
    for index, (command, at_ms) in enumerate(entries[1:], start=2):
        try:
            transition = apply(state, command, at_ms)
        except RuleError as error:
            audit.gaps.append(f"entry {index} ({command}) refused by the rules: {error.reason}")
            return audit
        after = transition.state
        if after.version != state.version + 1:
            audit.gaps.append(f"entry {index} went from v{state.version} to v{after.version}")
        if isinstance(command, Expire):
            turns[command.turn_number] += 1
            audit.expiries += 1
            if state.phase is Phase.PLAYING:
                choice = auto_play_choice(state)
                acted = transition.events[0]
                did = (
                    Play(acted.seat, acted.tile, acted.end)
                    if isinstance(acted, TileLaid)
                    else Pass(acted.seat)
                    if isinstance(acted, Passed)
                    else None
                )
                if did != choice:
                    audit.wrong_auto_plays.append(f"v{after.version}: {did} instead of {choice}")
        for event in transition.events:
            if isinstance(event, RoundEnded):
                audit.rounds += 1
                result, rnd = event.result, after.round
                assert rnd is not None
                expected = _expected_result(rnd, result.outcome)
                if result.outcome is Outcome.DOMINO and rnd.hands[rnd.last_layer]:
                    audit.score_errors.append(f"round {result.number}: domino with tiles left")
                if result.outcome is not Outcome.DOMINO and rnd.passes != 4:
                    audit.score_errors.append(f"round {result.number}: blocked without 4 passes")
                if (result.outcome, result.scoring_team, result.points) != expected:
                    audit.score_errors.append(f"round {result.number}: {result} != {expected}")
                base = Outcome.DOMINO if result.outcome is Outcome.DOMINO else Outcome.BLOCKED
                if score_round(rnd, base) != result:
                    audit.score_errors.append(f"round {result.number}: score_round disagrees")
                totals[result.scoring_team] += result.points
        if tuple(totals) != after.scores:
            audit.score_errors.append(f"v{after.version}: scores {after.scores} != {totals}")
            totals = list(after.scores)
        state = after
        states[state.version] = state
    if state != stored or audit.version != stored.version:
        audit.forks.append(f"stored v{audit.version} is not the log replayed (v{state.version})")
    if stored.phase is Phase.FINISHED and max(stored.scores) < stored.target:
        audit.score_errors.append(f"finished at {stored.scores} under the target")
    audit.double_auto_plays = sum(n - 1 for n in turns.values() if n > 1)
    _audit_views(audit, states, players)
    _audit_acks(audit, entries, players)
    return audit


def _audit_views(
    audit: GameAudit, states: dict[int, TableState], players: list[ChaosPlayer]
) -> None:
    public: dict[int, set[tuple[Any, ...]]] = defaultdict(set)
    for player in players:
        seat = player.seat
        for view in player.views:
            audit.views_checked += 1
            public[view.version].add(
                (
                    view.score_team_a,
                    view.score_team_b,
                    len(view.chain),
                    view.turn_seat if view.HasField("turn_seat") else -1,
                    view.phase,
                    view.round_number,
                )
            )
            truth = states.get(view.version)
            if truth is None:
                audit.forks.append(f"{player.name} saw v{view.version}, not in the log")
                continue
            if view != table_view(truth, seat, view.server_time_ms):
                audit.forks.append(f"{player.name}'s v{view.version} differs from the log's")
            if truth.phase is Phase.PLAYING and truth.round is not None:
                others = {t for s in range(4) if s != seat for t in tiles_of(truth.round.hands[s])}
                if _shown(view) & others:
                    audit.leaks += 1
    for version, seen in public.items():
        if len(seen) > 1:
            audit.forks.append(f"v{version} seen with different public fields: {seen}")


def _audit_acks(audit: GameAudit, entries: list[Any], players: list[ChaosPlayer]) -> None:
    for player in players:
        for ack in player.acks:
            audit.acks += 1
            logged = entries[ack.version - 1][0] if 0 < ack.version <= len(entries) else None
            if isinstance(ack.command, Start):
                kept = isinstance(logged, Start) and logged.seat == ack.command.seat
            else:
                kept = logged == ack.command
            if not kept:
                audit.acks_lost.append(ack)


def summary(audits: list[GameAudit]) -> dict[str, Any]:
    """The figures of a set of audits, for the chaos report."""
    return {
        "games": len(audits),
        "games_finished": sum(a.finished for a in audits),
        "tables_lost": sum(not a.exists for a in audits),
        "gaps": sum(len(a.gaps) for a in audits),
        "forks": sum(len(a.forks) for a in audits),
        "score_errors": sum(len(a.score_errors) for a in audits),
        "double_auto_plays": sum(a.double_auto_plays for a in audits),
        "wrong_auto_plays": sum(len(a.wrong_auto_plays) for a in audits),
        "tiles_leaked": sum(a.leaks for a in audits),
        "views_checked": sum(a.views_checked for a in audits),
        "rounds": sum(a.rounds for a in audits),
        "expiries": sum(a.expiries for a in audits),
        "acks": sum(a.acks for a in audits),
        "acks_lost": sum(len(a.acks_lost) for a in audits),
        "stream_order_violations": sum(len(a.order_violations) for a in audits),
        "unexpected_statuses": sum(len(a.unexpected_statuses) for a in audits),
    }
