"""The score lines: target (R16), round and both teams' scores, with the players' names
(:func:`header_text`) or short enough for 80 columns, your team first (:func:`score_line`)."""

from __future__ import annotations

from dominos.v1 import game_pb2

from services.client.teams import seat_team, team_label, team_members
from services.client.texts import Lang

__all__ = ["header_text", "score_line"]


def header_text(view: game_pb2.TableView, lang: Lang) -> str:
    """Target (R16), round and both teams' scores with their players."""
    a, b = game_pb2.TEAM_A, game_pb2.TEAM_B
    target = "Objectif" if lang == "fr" else "Target"
    round_word = "Manche" if lang == "fr" else "Round"
    parts = [f"{target} {view.target}"]
    if view.round_number:
        parts.append(f"{round_word} {view.round_number}")
    parts.append(
        f"{team_label(a, lang, capital=True)} ({team_members(view, a, lang)}) {view.score_team_a}"
    )
    parts.append(
        f"{team_label(b, lang, capital=True)} ({team_members(view, b, lang)}) {view.score_team_b}"
    )
    return " · ".join(parts)


def score_line(view: game_pb2.TableView, lang: Lang) -> str:
    """The header of the table, short enough for 80 columns: target (R16), round, both
    teams' scores, yours first named: ``"Objectif 100 · Manche 2 · Nous (A) 35 · Eux (B) 20"``."""
    target = "Objectif" if lang == "fr" else "Target"
    round_word = "Manche" if lang == "fr" else "Round"
    parts = [f"{target} {view.target}"]
    if view.round_number:
        parts.append(f"{round_word} {view.round_number}")
    mine = seat_team(view.your_seat)
    scores = {game_pb2.TEAM_A: view.score_team_a, game_pb2.TEAM_B: view.score_team_b}
    for team in sorted(scores, key=lambda t: t != mine):
        label = team_label(team, lang, capital=True)
        who = ("nous" if lang == "fr" else "us") if team == mine else None
        parts.append(f"{label}{f' ({who})' if who else ''} {scores[team]}")
    return " · ".join(parts)
