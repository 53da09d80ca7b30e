"""The ends of rounds and of the game in words: the round's summary (D1) says how it ended and
why the scoring team scored (R12, R13), spelling out the tie rule (R14) when it applied; one
line per round for the demo's log; the winner (R17); the status of a closed table."""

from __future__ import annotations

from dominos.v1 import game_pb2

from services.client.elision import de
from services.client.teams import seat_name, seat_team, team_label, team_members
from services.client.texts import Lang, ui
from services.client.tiles import tile_text

__all__ = ["phase_text", "round_line", "round_summary_lines", "winner_text"]


def _outcome_line(view: game_pb2.TableView, summary: game_pb2.RoundSummary, lang: Lang) -> str:
    number = summary.round_number
    if summary.outcome == game_pb2.ROUND_OUTCOME_DOMINO:
        seat = summary.domino_seat
        who = f"{seat_name(view, seat)} ({team_label(seat_team(seat), lang)})"
        if lang == "fr":
            return f"Manche {number} : domino ! {who} a posé son dernier domino."
        return f"Round {number}: domino! {who} laid their last tile."
    if lang == "fr":
        head = f"Manche {number} : bloquée, les quatre joueurs ont passé l'un après l'autre"
        tail = ", égalité parfaite." if _is_tie(summary) else "."
    else:
        head = f"Round {number}: blocked, the four players passed one after another"
        tail = ", a perfect tie." if _is_tie(summary) else "."
    return head + tail


def _is_tie(summary: game_pb2.RoundSummary) -> bool:
    return summary.tie_rule_applied or summary.outcome == game_pb2.ROUND_OUTCOME_BLOCKED_TIE


def _why_line(view: game_pb2.TableView, summary: game_pb2.RoundSummary, lang: Lang) -> str:
    scorer = team_label(summary.scoring_team, lang)
    scorer_cap = team_label(summary.scoring_team, lang, capital=True)
    points = summary.points
    pts = _points(points, lang)
    if summary.outcome == game_pb2.ROUND_OUTCOME_DOMINO:
        opponents = (1, 3) if summary.scoring_team == game_pb2.TEAM_A else (0, 2)
        detail = " + ".join(f"{seat_name(view, s)} {_hand_points(summary, s)}" for s in opponents)
        if lang == "fr":
            return (
                f"L'{scorer} marque {pts} : ce qui reste dans les mains des deux "
                f"adversaires ({detail}). La main du partenaire ne compte pas."
            )
        return (
            f"{scorer_cap} scores {pts}: what is left in both opponents' hands "
            f"({detail}). The partner's tiles do not count."
        )
    a, b = summary.team_a_pips, summary.team_b_pips
    if _is_tie(summary):
        if lang == "fr":
            return (
                f"Chaque équipe a {_points(a, lang)} en main, égalité parfaite : la manche "
                f"revient à l'équipe qui a posé le dernier domino, l'{scorer}, qui marque "
                f"le total de l'autre équipe : {pts}."
            )
        return (
            f"Each team holds {_points(a, lang)}, a perfect tie: the round goes to the team "
            f"that laid the last tile, {scorer}, which scores the other team's total: {pts}."
        )
    if lang == "fr":
        return (
            f"Points en main : équipe A {a}, équipe B {b}. L'équipe la plus légère, "
            f"l'{scorer}, marque le total de l'autre : {pts}."
        )
    return (
        f"Points in hand: team A {a}, team B {b}. The lighter team, {scorer}, scores the "
        f"other team's total: {pts}."
    )


def _points(points: int, lang: Lang) -> str:
    if lang == "fr":
        return f"{points} point{'s' if points > 1 else ''}"
    return f"{points} point{'s' if points != 1 else ''}"


def _hand_points(summary: game_pb2.RoundSummary, seat: int) -> int:
    for hand in summary.hands:
        if hand.seat == seat:
            return int(hand.points)
    return 0


def _hands_line(view: game_pb2.TableView, summary: game_pb2.RoundSummary, lang: Lang) -> str:
    parts = []
    for hand in sorted(summary.hands, key=lambda h: h.seat):
        tiles = " ".join(tile_text(t.low, t.high) for t in hand.tiles) or "—"
        parts.append(f"{seat_name(view, hand.seat)} {tiles} ({hand.points})")
    if lang == "fr":
        return "Mains restantes : " + " ; ".join(parts)
    return "Hands left: " + "; ".join(parts)


def round_summary_lines(view: game_pb2.TableView, lang: Lang) -> list[str]:
    """The end-of-round summary (D1) of ``view.last_round``: how it ended, who scored how
    many points and why (R12, R13), the tie rule spelled out when it applied (R14), the hands
    left, the scores; ``[]`` when the view carries no summary."""
    if not view.HasField("last_round"):
        return []
    summary = view.last_round
    lines = [_outcome_line(view, summary, lang), _why_line(view, summary, lang)]
    if summary.hands:
        lines.append(_hands_line(view, summary, lang))
    colon = " : " if lang == "fr" else ": "
    lines.append(f"Score{colon}A {view.score_team_a} · B {view.score_team_b}")
    return lines


def round_line(view: game_pb2.TableView, lang: Lang) -> str:
    """One line per finished round, for the demo's log: number, opener, how it ended, the
    scoring team and points, the scores."""
    if not view.HasField("last_round"):
        return ""
    s = view.last_round
    opener = seat_name(view, s.opener_seat)
    if s.outcome == game_pb2.ROUND_OUTCOME_DOMINO:
        how = (
            f"domino {de(seat_name(view, s.domino_seat))}"
            if lang == "fr"
            else f"domino by {seat_name(view, s.domino_seat)}"
        )
    elif _is_tie(s):
        how = (
            "bloquée, égalité parfaite (au dernier domino posé)"
            if lang == "fr"
            else "blocked, perfect tie (to the team of the last tile)"
        )
    else:
        how = "bloquée" if lang == "fr" else "blocked"
    scorer = team_label(s.scoring_team, lang, capital=True)
    if lang == "fr":
        return (
            f"Manche {s.round_number} · ouverte par {opener} · {how} · {scorer} "
            f"+{s.points} · score A {view.score_team_a} · B {view.score_team_b}"
        )
    return (
        f"Round {s.round_number} · opened by {opener} · {how} · {scorer} +{s.points} · "
        f"score A {view.score_team_a} · B {view.score_team_b}"
    )


def winner_text(view: game_pb2.TableView, lang: Lang) -> str:
    """The winner (R17) once the game is over: ``"L'équipe A (Ann et Cid) gagne la partie,
    105 à 80."``; ``""`` before."""
    if view.phase != game_pb2.PHASE_FINISHED or view.winner == game_pb2.TEAM_UNSPECIFIED:
        return ""
    a, b = view.score_team_a, view.score_team_b
    high, low = (a, b) if view.winner == game_pb2.TEAM_A else (b, a)
    members = team_members(view, view.winner, lang)
    if lang == "fr":
        return f"L'{team_label(view.winner, lang)} ({members}) gagne la partie, {high} à {low}."
    return (
        f"{team_label(view.winner, lang, capital=True)} ({members}) wins the game, {high} to {low}."
    )


def phase_text(view: game_pb2.TableView, lang: Lang) -> str:
    """A short status for phases without a turn: closed table, game over."""
    if view.phase == game_pb2.PHASE_CLOSED:
        return ui("closed", lang)
    if view.phase == game_pb2.PHASE_FINISHED:
        return winner_text(view, lang)
    return ""
