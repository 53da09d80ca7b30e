"""Rule sets in words (services/client/rule_sets.py and the sentences built on it): every
playable preset named and described in both languages, refused choices as sentences, the
summaries of every scoring rule, draws (how many, never which), the seats around the player
at two and three seats, per-seat scores, the CLI's rule flags; never a rule id."""

from __future__ import annotations

import pytest
from dominos.v1 import game_pb2

from services.client import texts
from services.client.cli import parser, rule_choice
from services.client.journal import Journal, history_lines
from services.client.last_action import last_action_text
from services.client.lobby import lobby_lines
from services.client.rule_sets import (
    PLAYABLE,
    PRESETS,
    choice_of,
    preset_name,
    rules_invalid_text,
    rules_lines,
    target_invalid_text,
)
from services.client.scores import SCORE_WIDTH, score_line
from services.client.seating import relative_seats, seat_facts
from services.client.summaries import round_line, round_summary_lines, winner_text
from tests.client.views import LONG_NAMES, RULE_ID, ruled_summary, ruled_view

DOMINO = game_pb2.ROUND_OUTCOME_DOMINO
BLOCKED = game_pb2.ROUND_OUTCOME_BLOCKED
TIE = game_pb2.ROUND_OUTCOME_BLOCKED_TIE

#: (preset, seats, extra choice, French description, English description)
DESCRIPTIONS = [
    (
        "classic", 4, {},
        "Jeu : Classique · 4 joueurs en deux équipes · 7 dominos chacun · sans pioche",
        "Game: Classic · 4 players in two teams · 7 tiles each · no stock",
    ),
    (
        "family_draw", 3, {},
        "Jeu : Pioche en famille · 3 joueurs, chacun pour soi · 5 dominos chacun · avec pioche",
        "Game: Family draw · 3 players, each for themselves · 5 tiles each · with a stock",
    ),
    (
        "web_draw", 2, {},
        "Jeu : Pioche · 2 joueurs, face à face · 7 dominos chacun · avec pioche",
        "Game: Draw game · 2 players, one against one · 7 tiles each · with a stock",
    ),
    (
        "web_block", 3, {},
        "Jeu : Bloqué · 3 joueurs, chacun pour soi · 7 dominos chacun · sans pioche "
        "(7 dominos mis de côté)",
        "Game: Block game · 3 players, each for themselves · 7 tiles each · no stock "
        "(7 tiles set aside)",
    ),
    (
        "app", 4, {},
        "Jeu : Jeu de l'appli · 4 joueurs en deux équipes · 7 dominos chacun · sans pioche",
        "Game: App game · 4 players in two teams · 7 tiles each · no stock",
    ),
    (
        "site", 4, {"teams": False},
        "Jeu : Jeu du site · 4 joueurs, chacun pour soi · 7 dominos chacun · sans pioche",
        "Game: Site game · 4 players, each for themselves · 7 tiles each · no stock",
    ),
]  # fmt: skip


@pytest.mark.parametrize(("name", "seats", "choice", "fr", "en"), DESCRIPTIONS)
def test_the_lobby_describes_every_playable_preset_in_both_languages(
    name: str, seats: int, choice: dict[str, object], fr: str, en: str
) -> None:
    view = ruled_view(name, seats, game_pb2.PHASE_WAITING, **choice)  # type: ignore[arg-type]
    assert rules_lines(view, "fr")[0] == fr
    assert rules_lines(view, "en")[0] == en
    for lang in texts.LANGS:
        lines = lobby_lines(view, "ABCDE23456", lang)
        assert not any(RULE_ID.search(line) for line in lines)
        assert not any(name in line for line in lines if "_" in name)  # no preset id


def test_the_target_line_gives_the_range_or_says_it_is_fixed() -> None:
    assert rules_lines(ruled_view("family_draw", 3), "fr")[1] == (
        "Objectif : 100 points (fixé par ce jeu)"
    )
    site = ruled_view("site", 2, turn_seconds=30)
    assert (
        rules_lines(site, "en")[1] == "Target: 100 points (50 to 300, in steps of 50) · 30 s a turn"
    )
    assert rules_lines(ruled_view("app", 2), "fr")[1] == (
        "Objectif : 100 points (de 50 à 150, par 50)"
    )


def test_every_preset_has_a_name_in_both_languages_and_fives_is_offered() -> None:
    assert "web_fives" in PLAYABLE and set(PLAYABLE) == set(PRESETS)
    for key in PLAYABLE:
        fr, en = preset_name(PRESETS[key].preset, "fr"), preset_name(PRESETS[key].preset, "en")
        assert fr and en and "_" not in fr + en
    assert texts.ui("RULES_UNAVAILABLE", "fr") == (
        "Ce jeu n'est pas encore disponible : choisissez-en un autre."
    )


def test_the_lobby_counts_the_seats_of_the_rule_set() -> None:
    view = ruled_view("family_draw", 3, game_pb2.PHASE_WAITING)
    view.seats[2].Clear()
    assert lobby_lines(view, "X", "fr")[-1] == "En attente de joueurs : 2/3 assis."
    assert "(équipe" not in "\n".join(lobby_lines(view, "X", "fr"))  # each for themselves
    full = ruled_view("site", 2, game_pb2.PHASE_WAITING)
    assert (
        lobby_lines(full, "X", "en")[-1] == "All two seats are taken: the host can start the game."
    )


@pytest.mark.parametrize(
    "field",
    [
        "preset", "seats", "hand_size", "turn_seconds", "teams", "practice", "fill_empty_seats",
        "replace_disconnected", "return_seconds", "vote_seconds",
    ],
)  # fmt: skip
def test_a_refused_rule_choice_names_the_choice_in_both_languages(field: str) -> None:
    for lang in texts.LANGS:
        sentence = rules_invalid_text(field, lang)
        assert sentence and sentence.endswith(".") and "_" not in sentence
    assert rules_invalid_text("nonsense", "fr") is None


def test_a_refused_target_gives_the_games_range() -> None:
    assert target_invalid_text(PRESETS["site"], "fr") == (
        "L'objectif de ce jeu va de 50 à 300 points, par pas de 50."
    )
    assert target_invalid_text(PRESETS["family_draw"], "en") == (
        "This game's target is fixed at 100 points."
    )


def test_draws_say_how_many_tiles_never_which() -> None:
    view = ruled_view("family_draw", 3)
    view.last_action.kind = game_pb2.ACTION_KIND_DREW
    view.last_action.seat = 1
    view.last_action.drawn = 2
    assert last_action_text(view, "fr") == "Bob a pioché 2 dominos."
    assert last_action_text(view, "en") == "Bob drew 2 tiles."
    view.last_action.drawn = 1
    view.last_action.auto_play = game_pb2.AUTO_PLAY_CAUSE_TIMEOUT
    assert (
        last_action_text(view, "fr") == "Bob a pioché un domino (temps écoulé : joué par la table)."
    )


def test_the_history_counts_a_seats_draws_in_a_row_together() -> None:
    journal = Journal()
    for version in (8, 9, 10):
        view = ruled_view("web_draw", 2)
        view.version = version
        view.last_action.kind = game_pb2.ACTION_KIND_DREW
        view.last_action.seat = 1
        view.last_action.drawn = 1
        journal.record(view)
    assert journal.shown_action(view).drawn == 3
    lines = history_lines(journal, view, "fr", 11)
    assert "Bob a pioché 3 dominos." in lines


def test_opponents_sit_across_at_two_seats_and_on_both_sides_at_three() -> None:
    assert relative_seats(1, 2) == {"south": 1, "north": 0}
    assert relative_seats(0, 3) == {"south": 0, "east": 1, "west": 2}
    assert relative_seats(2, 3) == {"south": 2, "east": 0, "west": 1}


def test_each_for_themselves_every_seat_shows_its_own_score_and_no_team() -> None:
    view = ruled_view("family_draw", 3)
    assert seat_facts(view, 1, "fr") == ["Bob", "4 dominos", "score : 30"]
    assert seat_facts(view, 0, "en") == ["Ann (you)", "4 tiles", "score: 12"]
    assert score_line(view, "fr") == "Objectif 100 · Manche 3 · Pioche 6 · Vous 12 · Bob 30 · Cid 5"
    long = ruled_view("web_draw", 4, names=LONG_NAMES)
    for lang in texts.LANGS:
        line = score_line(long, lang)
        assert len(line) <= SCORE_WIDTH, line
        assert line.endswith(" 41")


SUMMARIES = [
    # (preset, seats, choice, outcome, points, pips, scoring side, domino seat, fr, en)
    (
        "family_draw", 3, {}, DOMINO, 23, [0, 10, 13], 0, 0,
        "Ann marque 23 points : ce qui reste dans les mains des autres joueurs (Bob 10 + Cid 13).",
        "Ann scores 23 points: what is left in the other players' hands (Bob 10 + Cid 13).",
    ),
    (
        "site", 2, {}, DOMINO, 10, [10, 0], 1, 1,
        "Bob marque 10 points : ce qui reste dans la main de l'adversaire (Ann 10).",
        "Bob scores 10 points: what is left in the opponent's hand (Ann 10).",
    ),
    (
        "site", 4, {"teams": True}, DOMINO, 25, [0, 10, 8, 7], 0, 0,
        "L'équipe A marque 25 points : ce qui reste dans toutes les autres mains, celle du "
        "partenaire comprise (Bob 10 + Cid 8 + Dee 7).",
        "Team A scores 25 points: what is left in every other hand, the partner's included "
        "(Bob 10 + Cid 8 + Dee 7).",
    ),
    (
        "app", 4, {}, DOMINO, 17, [0, 10, 8, 7], 0, 0,
        "L'équipe A marque 17 points : ce qui reste dans les mains des deux adversaires "
        "(Bob 10 + Dee 7). La main du partenaire ne compte pas.",
        "Team A scores 17 points: what is left in both opponents' hands (Bob 10 + Dee 7). The "
        "partner's tiles do not count.",
    ),
    (
        "family_draw", 3, {}, BLOCKED, 23, [3, 10, 13], 0, None,
        "Points en main : Ann 3, Bob 10, Cid 13. Le joueur le plus léger, Ann, marque le total "
        "des autres : 23 points.",
        "Points in hand: Ann 3, Bob 10, Cid 13. The lightest player, Ann, scores the others' "
        "total: 23 points.",
    ),
    (
        "web_draw", 3, {}, BLOCKED, 20, [3, 10, 13], 0, None,
        "Points en main : Ann 3, Bob 10, Cid 13. Le joueur le plus léger, Ann, marque le total "
        "des autres moins le sien : 23 - 3 = 20 points.",
        "Points in hand: Ann 3, Bob 10, Cid 13. The lightest player, Ann, scores the others' "
        "total minus its own: 23 - 3 = 20 points.",
    ),
    (
        "app", 3, {}, BLOCKED, 26, [3, 10, 13], 0, None,
        "Points en main : Ann 3, Bob 10, Cid 13. Le joueur le plus léger, Ann, marque tous les "
        "points restants, les siens compris : 23 + 3 = 26 points.",
        "Points in hand: Ann 3, Bob 10, Cid 13. The lightest player, Ann, scores every point "
        "left, its own included: 23 + 3 = 26 points.",
    ),
    (
        "app", 4, {}, BLOCKED, 26, [3, 10, 5, 8], 0, None,
        "Points en main : équipe A 8, équipe B 18. L'équipe la plus légère, l'équipe A, marque "
        "tous les points restants, les siens compris : 18 + 8 = 26 points.",
        "Points in hand: team A 8, team B 18. The lighter team, team A, scores every point "
        "left, its own included: 18 + 8 = 26 points.",
    ),
    (
        "family_draw", 3, {}, TIE, 0, [5, 5, 13], None, None,
        "Points en main : Ann 5, Bob 5, Cid 13. Ann et Bob ont le moins de points, à égalité : "
        "personne ne marque.",
        "Points in hand: Ann 5, Bob 5, Cid 13. Ann and Bob are level on the fewest points: "
        "nobody scores.",
    ),
    (
        "web_block", 2, {}, TIE, 0, [5, 5], None, None,
        "Points en main : Ann 5, Bob 5. Ann et Bob ont autant de points : personne ne marque.",
        "Points in hand: Ann 5, Bob 5. Ann and Bob hold as many points: nobody scores.",
    ),
    (
        "app", 4, {}, TIE, 0, [5, 5, 5, 5], None, None,
        "Chaque équipe a 10 points en main, égalité : personne ne marque.",
        "Each team holds 10 points, a tie: nobody scores.",
    ),
    (
        "site", 3, {}, TIE, 18, [5, 5, 13], 1, None,
        "Points en main : Ann 5, Bob 5, Cid 13. Ann et Bob ont le moins de points, à égalité : "
        "la manche revient à qui a ouvert la manche, sinon au plus proche après lui dans "
        "l'ordre du jeu, Bob, qui marque le total des autres : 18 points.",
        "Points in hand: Ann 5, Bob 5, Cid 13. Ann and Bob are level on the fewest points: the "
        "round goes to whoever opened it, else to the nearest after them in turn order, Bob, "
        "which scores the others' total: 18 points.",
    ),
    (
        "site", 4, {"teams": True}, TIE, 10, [5, 5, 5, 5], 1, None,
        "Chaque équipe a 10 points en main, égalité : la manche revient à qui a ouvert la "
        "manche, sinon au plus proche après lui dans l'ordre du jeu, l'équipe B, qui marque "
        "le total de l'autre : 10 points.",
        "Each team holds 10 points, a tie: the round goes to whoever opened it, else to the "
        "nearest after them in turn order, team B, which scores the other team's total: 10 "
        "points.",
    ),
]  # fmt: skip


@pytest.mark.parametrize(
    ("name", "seats", "choice", "outcome", "points", "pips", "side", "domino", "fr", "en"),
    SUMMARIES,
)
def test_round_summaries_say_who_scored_what_and_why_for_every_scoring_rule(
    name: str,
    seats: int,
    choice: dict[str, object],
    outcome: int,
    points: int,
    pips: list[int],
    side: int | None,
    domino: int | None,
    fr: str,
    en: str,
) -> None:
    def view() -> game_pb2.TableView:
        shown = ruled_view(name, seats, **choice)  # type: ignore[arg-type]
        return ruled_summary(shown, outcome, points, pips, side, domino)

    fr_lines = round_summary_lines(view(), "fr")
    en_lines = round_summary_lines(view(), "en")
    assert fr_lines[1] == fr
    assert en_lines[1] == en
    for line in fr_lines + en_lines + [round_line(view(), "fr"), round_line(view(), "en")]:
        assert not RULE_ID.search(line), line
        assert "_" not in line, line
    if outcome == BLOCKED and seats == 3:
        assert "les trois joueurs ont passé" in fr_lines[0]
    if not view().rules.teams:
        assert fr_lines[-1].startswith("Scores : Ann 12 · Bob 30")


def test_the_winner_is_a_player_without_teams_and_a_team_with() -> None:
    view = ruled_view("family_draw", 3, game_pb2.PHASE_FINISHED)
    view.winner_side = 1
    assert winner_text(view, "fr") == "Bob gagne la partie avec 30 points (Ann 12, Cid 5)."
    assert winner_text(view, "en") == "Bob wins the game with 30 points (Ann 12, Cid 5)."
    teams = ruled_view("site", 4, game_pb2.PHASE_FINISHED, teams=True)
    teams.winner_side = 1
    teams.winner = game_pb2.TEAM_B
    assert winner_text(teams, "fr") == "L'équipe B (Bob et Dee) gagne la partie, 30 à 12."


def test_the_cli_rule_flags_make_the_rule_choice() -> None:
    args = parser().parse_args(
        ["play", "--preset", "site", "--seats", "4", "--no-teams", "--turn-seconds", "30"]
    )
    choice = rule_choice(args)
    assert choice is not None
    assert choice.preset == game_pb2.PRESET_SITE and choice.seats == 4
    assert choice.HasField("teams") and not choice.teams and choice.turn_seconds == 30
    assert rule_choice(parser().parse_args(["play", "--create"])) is None  # the default game
    app = parser().parse_args(["play", "--preset", "app", "--hand-size", "5", "--teams"])
    assert rule_choice(app) == choice_of("app", hand_size=5, teams=True)
    fives = rule_choice(parser().parse_args(["play", "--preset", "web_fives", "--seats", "2"]))
    assert fives == choice_of("web_fives", seats=2)
    with pytest.raises(SystemExit):
        parser().parse_args(["play", "--preset", "all_fives"])
