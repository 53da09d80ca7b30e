"""The score lines: target (R16), round, the stock's size (rule sets with one) and the scores:
both teams', or every player's without teams, with the players' names (:func:`header_text`)
or short enough for 80 columns, yours first (:func:`score_line`)."""

from __future__ import annotations

from dominos.v1 import game_pb2

from services.client.rule_sets import has_stock, has_teams, seat_count, side_scores
from services.client.teams import seat_name, seat_team, team_label, team_members
from services.client.texts import Lang

__all__ = ["SCORE_WIDTH", "header_text", "score_line", "stock_text"]

SCORE_WIDTH = 76
"""Columns the score line may take (80 less the screen's and the header's padding)."""


def stock_text(view: game_pb2.TableView, lang: Lang) -> str:
    """The stock's size (``"Pioche 14"`` / ``"Stock 14"``) for rule sets with one, else
    ``""``."""
    if not has_stock(view.rules):
        return ""
    return f"{'Pioche' if lang == 'fr' else 'Stock'} {view.stock_size}"


def _head(view: game_pb2.TableView, lang: Lang) -> list[str]:
    target = "Objectif" if lang == "fr" else "Target"
    round_word = "Manche" if lang == "fr" else "Round"
    parts = [f"{target} {view.target}"]
    if view.round_number:
        parts.append(f"{round_word} {view.round_number}")
    stock = stock_text(view, lang)
    if stock and view.phase != game_pb2.PHASE_WAITING:
        parts.append(stock)
    return parts


def _each_for_themselves(view: game_pb2.TableView, lang: Lang, width: int) -> str:
    """Target, round, stock and every seat's score, yours first (``Vous 12``), the names
    shortened as much as needed to fit ``width``."""
    scores = side_scores(view)
    seats = seat_count(view)
    order = [(view.your_seat + i) % seats for i in range(seats)]
    you = "Vous" if lang == "fr" else "You"
    head = _head(view, lang)
    line = ""
    for room in (24, 12, 9, 7, 5, 3):
        parts = list(head)
        for seat in order:
            score = scores[seat] if seat < len(scores) else 0
            name = you if seat == view.your_seat else seat_name(view, seat)
            if len(name) > room:
                name = name[: room - 1] + "…"
            parts.append(f"{name} {score}")
        line = " · ".join(parts)
        if len(line) <= width:
            break
    return line


def header_text(view: game_pb2.TableView, lang: Lang) -> str:
    """Target (R16), round and both teams' scores with their players (each player's score
    without teams)."""
    if not has_teams(view):
        return _each_for_themselves(view, lang, 1000)
    a, b = game_pb2.TEAM_A, game_pb2.TEAM_B
    parts = _head(view, lang)
    parts.append(
        f"{team_label(a, lang, capital=True)} ({team_members(view, a, lang)}) {view.score_team_a}"
    )
    parts.append(
        f"{team_label(b, lang, capital=True)} ({team_members(view, b, lang)}) {view.score_team_b}"
    )
    return " · ".join(parts)


def score_line(view: game_pb2.TableView, lang: Lang) -> str:
    """The header of the table, short enough for 80 columns: target (R16), round, both
    teams' scores, yours first named: ``"Objectif 100 · Manche 2 · Équipe A (nous) 35 ·
    Équipe B 20"``; with a stock its size; without teams every player's score, yours first:
    ``"Objectif 100 · Manche 2 · Pioche 4 · Vous 12 · Ben 30 · Chloé 5"``."""
    if not has_teams(view):
        return _each_for_themselves(view, lang, SCORE_WIDTH)
    parts = _head(view, lang)
    mine = seat_team(view.your_seat)
    scores = {game_pb2.TEAM_A: view.score_team_a, game_pb2.TEAM_B: view.score_team_b}
    for team in sorted(scores, key=lambda t: t != mine):
        label = team_label(team, lang, capital=True)
        who = ("nous" if lang == "fr" else "us") if team == mine else None
        parts.append(f"{label}{f' ({who})' if who else ''} {scores[team]}")
    return " · ".join(parts)
