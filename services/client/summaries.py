"""The ends of rounds and of the game in words: the round's summary (D1) says how it ended and
why the scoring side (a team, or a player without teams) scored what, by the table's rule set
(R12-R14 for the default game; every other hand, the partner's included; the others' total,
minus its own; every tile left; a tie nobody wins, or won by the opener's side), spelling out
the tie rule when it applied; one line per round for the demo's log; the winner (R17, a team
or a player), and under all fives a game ended by a play in the middle of a round; a game
ended by consent (the friendly end: unscored); the status of a closed table."""

from __future__ import annotations

from dominos.v1 import game_pb2

from services.client.elision import de
from services.client.fives import ended_by_play_text, is_fives, rounding_text
from services.client.rule_sets import (
    count_word,
    has_stock,
    has_teams,
    seat_count,
    side_label,
    side_members,
    side_scores,
)
from services.client.teams import seat_name, seat_team, team_label, team_members
from services.client.texts import Lang, ui
from services.client.tiles import tile_text
from services.client.words import join_words

__all__ = [
    "ended_by_play_text",
    "phase_text",
    "round_line",
    "round_summary_lines",
    "unscored_text",
    "winner_text",
]


def _teams(view: game_pb2.TableView) -> bool:
    return has_teams(view)


def _outcome_line(view: game_pb2.TableView, summary: game_pb2.RoundSummary, lang: Lang) -> str:
    number = summary.round_number
    teams = _teams(view)
    if summary.outcome == game_pb2.ROUND_OUTCOME_DOMINO:
        seat = summary.domino_seat
        who = seat_name(view, seat)
        if teams:
            who += f" ({team_label(seat_team(seat), lang)})"
        if lang == "fr":
            return f"Manche {number} : domino ! {who} a posé son dernier domino."
        return f"Round {number}: domino! {who} laid their last tile."
    count = count_word(seat_count(view), lang)
    stock = has_stock(view.rules)
    if lang == "fr":
        empty = "la pioche vide, " if stock else ""
        head = f"Manche {number} : bloquée, {empty}les {count} joueurs ont passé l'un après l'autre"
        level = ", égalité parfaite." if teams else ", les plus légers à égalité."
    else:
        empty = "the stock empty, " if stock else ""
        head = f"Round {number}: blocked, {empty}the {count} players passed one after another"
        level = ", a perfect tie." if teams else ", the lightest level."
    return head + (level if _is_tie(summary) else ".")


def _is_tie(summary: game_pb2.RoundSummary) -> bool:
    return summary.tie_rule_applied or summary.outcome == game_pb2.ROUND_OUTCOME_BLOCKED_TIE


def _scoring_side(view: game_pb2.TableView, summary: game_pb2.RoundSummary) -> int | None:
    """The side that scored, None when nobody did."""
    if summary.HasField("scoring_side"):
        return summary.scoring_side
    if _teams(view) and summary.scoring_team != game_pb2.TEAM_UNSPECIFIED:
        return 0 if summary.scoring_team == game_pb2.TEAM_A else 1
    return None


def _side_pips(view: game_pb2.TableView, summary: game_pb2.RoundSummary) -> list[int]:
    """The points left in each side's hands, index = side."""
    if summary.side_pips:
        return list(summary.side_pips)
    if _teams(view):
        return [summary.team_a_pips, summary.team_b_pips]
    return [_hand_points(summary, seat) for seat in range(seat_count(view))]


def _classic_scoring(view: game_pb2.TableView) -> bool:
    """Whether the round scores as the default game (R12-R14): in teams, a domino scores
    the opponents' hands, a blocked round the other team's total, a tie the last placer."""
    rules = view.rules
    return _teams(view) and (
        rules.domino_score in (game_pb2.DOMINO_SCORE_UNSPECIFIED, game_pb2.DOMINO_SCORE_OPPONENTS)
        and rules.blocked_score
        in (game_pb2.BLOCKED_SCORE_UNSPECIFIED, game_pb2.BLOCKED_SCORE_OTHERS_TOTAL)
        and rules.blocked_tie
        in (game_pb2.BLOCKED_TIE_UNSPECIFIED, game_pb2.BLOCKED_TIE_LAST_PLACER)
    )


def _why_line(view: game_pb2.TableView, summary: game_pb2.RoundSummary, lang: Lang) -> str:
    teams_domino = (
        summary.outcome == game_pb2.ROUND_OUTCOME_DOMINO
        and _teams(view)
        and view.rules.domino_score != game_pb2.DOMINO_SCORE_ALL_OTHERS
    )
    if not teams_domino and not _classic_scoring(view):
        return _why_line_of_rules(view, summary, lang)
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


def _others(view: game_pb2.TableView, summary: game_pb2.RoundSummary, seat: int, lang: Lang) -> str:
    """The other hands a domino scores, with their points: ``"Ana 10 + Chloé 13"``."""
    rules = view.rules
    if _teams(view) and rules.domino_score != game_pb2.DOMINO_SCORE_ALL_OTHERS:
        seats = [s for s in range(seat_count(view)) if s % 2 != seat % 2]
    else:
        seats = [s for s in range(seat_count(view)) if s != seat]
    return " + ".join(f"{seat_name(view, s)} {_hand_points(summary, s)}" for s in seats)


def _domino_why(view: game_pb2.TableView, summary: game_pb2.RoundSummary, lang: Lang) -> str:
    side = _scoring_side(view, summary)
    seat = summary.domino_seat
    scorer = side_label(view, side if side is not None else seat, lang, capital=True)
    pts = _points(summary.points, lang)
    detail = _others(view, summary, seat, lang)
    fr = lang == "fr"
    if _teams(view):  # every other hand, the partner's included
        if fr:
            return (
                f"{de_capital(scorer)} marque {pts} : ce qui reste dans toutes les autres "
                f"mains, celle du partenaire comprise ({detail})."
            )
        return (
            f"{scorer} scores {pts}: what is left in every other hand, the partner's included "
            f"({detail})."
        )
    if seat_count(view) == 2:
        if fr:
            return f"{scorer} marque {pts} : ce qui reste dans la main de l'adversaire ({detail})."
        return f"{scorer} scores {pts}: what is left in the opponent's hand ({detail})."
    if fr:
        return f"{scorer} marque {pts} : ce qui reste dans les mains des autres joueurs ({detail})."
    return f"{scorer} scores {pts}: what is left in the other players' hands ({detail})."


def de_capital(label: str) -> str:
    """``"Équipe A"`` → ``"L'équipe A"`` (a team as a sentence's subject); a name as it is."""
    if label.startswith("Équipe "):
        return "L'" + label[0].lower() + label[1:]
    return label


def _score_phrase(view: game_pb2.TableView, own: int, others: int, points: int, lang: Lang) -> str:
    """What the scoring side of a blocked round scores, by the rule set: the others' total,
    the others' total minus its own, or every tile left."""
    rule = view.rules.blocked_score
    pts = _points(points, lang)
    fr = lang == "fr"
    teams = _teams(view)
    if rule == game_pb2.BLOCKED_SCORE_OTHERS_MINUS_OWN:
        if fr:
            return f"le total des autres moins le sien : {others} - {own} = {pts}"
        return f"the others' total minus its own: {others} - {own} = {pts}"
    if rule == game_pb2.BLOCKED_SCORE_ALL_TILES:
        if fr:
            return f"tous les points restants, les siens compris : {others} + {own} = {pts}"
        return f"every point left, its own included: {others} + {own} = {pts}"
    if teams:
        return f"le total de l'autre : {pts}" if fr else f"the other team's total: {pts}"
    return f"le total des autres : {pts}" if fr else f"the others' total: {pts}"


def _blocked_head(
    view: game_pb2.TableView, summary: game_pb2.RoundSummary, pips: list[int], lang: Lang
) -> str:
    """The points each side held, and who is level on the fewest after a tie."""
    fr = lang == "fr"
    lightest = min(pips) if pips else 0
    if _teams(view) and _is_tie(summary):
        each = _points(lightest, lang)
        return (
            f"Chaque équipe a {each} en main, égalité" if fr else f"Each team holds {each}, a tie"
        )
    listed = ", ".join(f"{side_label(view, i, lang)} {p}" for i, p in enumerate(pips))
    head = f"Points en main : {listed}." if fr else f"Points in hand: {listed}."
    if not _is_tie(summary):
        return head
    level = [i for i, p in enumerate(pips) if p == lightest]
    names = join_words([side_label(view, i, lang) for i in level], lang)
    if len(level) == len(pips):
        return head + (f" {names} ont autant de points" if fr else f" {names} hold as many points")
    if fr:
        return f"{head} {names} ont le moins de points, à égalité"
    return f"{head} {names} are level on the fewest points"


def _tie_rule(view: game_pb2.TableView, lang: Lang) -> str:
    """Who wins a blocked round whose lightest sides are level, in words."""
    if view.rules.blocked_tie == game_pb2.BLOCKED_TIE_HAND_OR_NEAREST:
        if lang == "fr":
            return (
                "la manche revient à qui a ouvert la manche, sinon au plus proche après lui "
                "dans l'ordre du jeu"
            )
        return "the round goes to whoever opened it, else to the nearest after them in turn order"
    if lang == "fr":
        return "la manche revient à qui a posé le dernier domino"
    return "the round goes to whoever laid the last tile"


def _blocked_why(view: game_pb2.TableView, summary: game_pb2.RoundSummary, lang: Lang) -> str:
    fr = lang == "fr"
    teams = _teams(view)
    pips = _side_pips(view, summary)
    side = _scoring_side(view, summary)
    head = _blocked_head(view, summary, pips, lang)
    if side is None:  # a tie nobody wins
        return f"{head} : personne ne marque." if fr else f"{head}: nobody scores."
    own = pips[side] if side < len(pips) else 0
    phrase = _score_phrase(view, own, sum(pips) - own, summary.points, lang)
    scorer = side_label(view, side, lang)
    if _is_tie(summary):
        why = _tie_rule(view, lang)
        if fr:
            who = f"l'{scorer}" if teams else scorer
            return f"{head} : {why}, {who}, qui marque {phrase}."
        return f"{head}: {why}, {scorer}, which scores {phrase}."
    if teams:
        if fr:
            return f"{head} L'équipe la plus légère, l'{scorer}, marque {phrase}."
        return f"{head} The lighter team, {scorer}, scores {phrase}."
    if fr:
        return f"{head} Le joueur le plus léger, {scorer}, marque {phrase}."
    return f"{head} The lightest player, {scorer}, scores {phrase}."


def _why_line_of_rules(view: game_pb2.TableView, summary: game_pb2.RoundSummary, lang: Lang) -> str:
    """Who scored what and why under the table's rule set (other than the default game's)."""
    if summary.outcome == game_pb2.ROUND_OUTCOME_DOMINO:
        return _domino_why(view, summary, lang)
    return _blocked_why(view, summary, lang)


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
    left, the scores; under all fives the points before and after rounding to the nearest 5
    ("18 arrondis à 20"); ``[]`` when the view carries no summary."""
    if not view.HasField("last_round"):
        return []
    summary = view.last_round
    why = _why_line(view, summary, lang)
    if is_fives(view) and _scoring_side(view, summary) is not None:
        label = "Arrondi au 5 le plus proche" if lang == "fr" else "Rounded to the nearest 5"
        colon = " : " if lang == "fr" else ": "
        why += f" {label}{colon}{rounding_text(summary, lang)}."
    lines = [_outcome_line(view, summary, lang), why]
    if summary.hands:
        lines.append(_hands_line(view, summary, lang))
    lines.append(_scores_text(view, lang))
    return lines


def _scores_text(view: game_pb2.TableView, lang: Lang) -> str:
    """``"Score : A 40 · B 25"`` with teams, ``"Scores : Ann 12 · Bob 30 · Cid 5"`` without."""
    colon = " : " if lang == "fr" else ": "
    if _teams(view):
        a, b = side_scores(view)[:2]
        return f"Score{colon}A {a} · B {b}"
    listed = " · ".join(f"{seat_name(view, i)} {p}" for i, p in enumerate(side_scores(view)))
    return f"Scores{colon}{listed}"


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
    elif _is_tie(s) and not _classic_scoring(view):
        how = "bloquée, égalité" if lang == "fr" else "blocked, a tie"
    elif _is_tie(s):
        how = (
            "bloquée, égalité parfaite (au dernier domino posé)"
            if lang == "fr"
            else "blocked, perfect tie (to the team of the last tile)"
        )
    else:
        how = "bloquée" if lang == "fr" else "blocked"
    side = _scoring_side(view, s)
    if side is None:
        scored = "personne ne marque" if lang == "fr" else "nobody scores"
    else:
        scored = f"{side_label(view, side, lang, capital=True)} +{s.points}"
        if is_fives(view):
            scored += f" ({rounding_text(s, lang)})"
    if _teams(view):
        a, b = side_scores(view)[:2]
        scores = f"score A {a} · B {b}"
    else:
        scores = "scores " + " · ".join(
            f"{seat_name(view, i)} {p}" for i, p in enumerate(side_scores(view))
        )
    if lang == "fr":
        return f"Manche {s.round_number} · ouverte par {opener} · {how} · {scored} · {scores}"
    return f"Round {s.round_number} · opened by {opener} · {how} · {scored} · {scores}"


def winner_text(view: game_pb2.TableView, lang: Lang) -> str:
    """The winner (R17) once the game is over: ``"L'équipe A (Ann et Cid) gagne la partie,
    105 à 80."``; without teams the winning player and the others' scores: ``"Ben gagne la
    partie avec 105 points (Ana 80, Chloé 40)."``; ``""`` before."""
    if view.phase != game_pb2.PHASE_FINISHED:
        return ""
    if not _teams(view):
        if not view.HasField("winner_side"):
            return ""
        scores = side_scores(view)
        side = view.winner_side
        won = scores[side] if side < len(scores) else 0
        rest = ", ".join(f"{seat_name(view, i)} {p}" for i, p in enumerate(scores) if i != side)
        name = side_members(view, side, lang)
        if lang == "fr":
            return f"{name} gagne la partie avec {_points(won, lang)} ({rest})."
        return f"{name} wins the game with {_points(won, lang)} ({rest})."
    if view.winner == game_pb2.TEAM_UNSPECIFIED:
        return ""
    a, b = view.score_team_a, view.score_team_b
    high, low = (a, b) if view.winner == game_pb2.TEAM_A else (b, a)
    members = team_members(view, view.winner, lang)
    if lang == "fr":
        return f"L'{team_label(view.winner, lang)} ({members}) gagne la partie, {high} à {low}."
    return (
        f"{team_label(view.winner, lang, capital=True)} ({members}) wins the game, {high} to {low}."
    )


def unscored_text(view: game_pb2.TableView, lang: Lang) -> str:
    """A game ended by consent (the friendly end, ``unscored``): nobody won, it counts for
    nothing, the scores as they stood: ``"La partie s'est arrêtée d'un commun accord : elle
    ne compte pas, sans vainqueur. Score : A 40 · B 25"``; ``""`` for any other game."""
    if view.phase != game_pb2.PHASE_FINISHED or not view.unscored:
        return ""
    return f"{ui('unscored', lang)} {_scores_text(view, lang)}"


def phase_text(view: game_pb2.TableView, lang: Lang) -> str:
    """A short status for phases without a turn: closed table, game over (won, or ended by
    consent)."""
    if view.phase == game_pb2.PHASE_CLOSED:
        return ui("closed", lang)
    if view.phase == game_pb2.PHASE_FINISHED:
        return unscored_text(view, lang) or winner_text(view, lang)
    return ""
