"""Round and game ends in words (services/client/summaries.py): summaries (D1, R12-R14),
the demo's round line, the winner (R17), a game ended by consent (unscored)."""

from __future__ import annotations

from dominos.v1 import game_pb2

from services.client.summaries import (
    phase_text,
    round_line,
    round_summary_lines,
    unscored_text,
    winner_text,
)
from tests.client.views import make_view, summary_view


def test_domino_summary_says_who_and_why_in_both_languages() -> None:
    view = summary_view(game_pb2.ROUND_OUTCOME_DOMINO, game_pb2.TEAM_B, 23, 23, 4, domino_seat=3)
    view.last_round.hands.add(seat=0, tiles=[game_pb2.Tile(low=6, high=6)], points=12)
    view.last_round.hands.add(seat=1, tiles=[game_pb2.Tile(low=0, high=4)], points=4)
    view.last_round.hands.add(seat=2, tiles=[game_pb2.Tile(low=5, high=6)], points=11)
    view.last_round.hands.add(seat=3, tiles=[], points=0)
    fr = round_summary_lines(view, "fr")
    assert fr[0] == "Manche 2 : domino ! Dee (équipe B) a posé son dernier domino."
    assert fr[1] == (
        "L'équipe B marque 23 points : ce qui reste dans les mains des deux adversaires "
        "(Ann 12 + Cid 11). La main du partenaire ne compte pas."
    )
    assert fr[2] == "Mains restantes : Ann [6|6] (12) ; Bob [0|4] (4) ; Cid [5|6] (11) ; Dee — (0)"
    assert fr[3] == "Score : A 40 · B 25"
    en = round_summary_lines(view, "en")
    assert en[0] == "Round 2: domino! Dee (team B) laid their last tile."
    assert en[1].startswith("Team B scores 23 points: what is left in both opponents' hands")
    assert not any("tie" in line.lower() for line in en)


def test_blocked_summary_says_the_lighter_team_scores_the_other_total() -> None:
    view = summary_view(game_pb2.ROUND_OUTCOME_BLOCKED, game_pb2.TEAM_A, 31, 18, 31)
    fr = round_summary_lines(view, "fr")
    assert fr[0] == "Manche 2 : bloquée, les quatre joueurs ont passé l'un après l'autre."
    assert fr[1] == (
        "Points en main : équipe A 18, équipe B 31. L'équipe la plus légère, l'équipe A, "
        "marque le total de l'autre : 31 points."
    )
    en = round_summary_lines(view, "en")
    assert en[0] == "Round 2: blocked, the four players passed one after another."
    assert en[1] == (
        "Points in hand: team A 18, team B 31. The lighter team, team A, scores the other "
        "team's total: 31 points."
    )
    assert not any("égalité" in line for line in fr)


def test_blocked_tie_summary_spells_out_the_tie_rule() -> None:
    view = summary_view(
        game_pb2.ROUND_OUTCOME_BLOCKED_TIE,
        game_pb2.TEAM_B,
        20,
        20,
        20,
        last_tile_team=game_pb2.TEAM_B,
    )
    fr = round_summary_lines(view, "fr")
    assert fr[0] == (
        "Manche 2 : bloquée, les quatre joueurs ont passé l'un après l'autre, égalité parfaite."
    )
    assert fr[1] == (
        "Chaque équipe a 20 points en main, égalité parfaite : la manche revient à l'équipe "
        "qui a posé le dernier domino, l'équipe B, qui marque le total de l'autre équipe : "
        "20 points."
    )
    en = round_summary_lines(view, "en")
    assert en[1] == (
        "Each team holds 20 points, a perfect tie: the round goes to the team that laid the "
        "last tile, team B, which scores the other team's total: 20 points."
    )


def test_round_line_for_the_demo() -> None:
    tie = summary_view(game_pb2.ROUND_OUTCOME_BLOCKED_TIE, game_pb2.TEAM_B, 20, 20, 20)
    assert round_line(tie, "en") == (
        "Round 2 · opened by Bob · blocked, perfect tie (to the team of the last tile) · "
        "Team B +20 · score A 40 · B 25"
    )
    domino = summary_view(game_pb2.ROUND_OUTCOME_DOMINO, game_pb2.TEAM_A, 9, 0, 9, domino_seat=2)
    assert round_line(domino, "fr") == (
        "Manche 2 · ouverte par Bob · domino de Cid · Équipe A +9 · score A 40 · B 25"
    )
    assert round_line(make_view(), "en") == ""


def test_winner_is_said_once_the_game_is_over() -> None:
    view = make_view(
        phase=game_pb2.PHASE_FINISHED, winner=game_pb2.TEAM_B, score_team_a=80, score_team_b=155
    )
    assert winner_text(view, "fr") == "L'équipe B (Bob et Dee) gagne la partie, 155 à 80."
    assert winner_text(view, "en") == "Team B (Bob and Dee) wins the game, 155 to 80."
    assert winner_text(make_view(), "en") == ""


def test_a_game_ended_by_consent_says_so_unscored_with_the_scores_as_they_stood() -> None:
    view = make_view(phase=game_pb2.PHASE_FINISHED, score_team_a=40, score_team_b=25)
    view.unscored = True
    assert winner_text(view, "fr") == ""  # nobody won
    assert unscored_text(view, "fr") == (
        "La partie s'est arrêtée d'un commun accord : elle ne compte pas, sans vainqueur. "
        "Score : A 40 · B 25"
    )
    assert phase_text(view, "en") == (
        "The game ended by consent: it counts for nothing, nobody won. Score: A 40 · B 25"
    )
    view.unscored = False
    assert unscored_text(view, "fr") == ""
