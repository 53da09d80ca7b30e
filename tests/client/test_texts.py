"""The reference client's words (services/client/texts.py): passes (R10), summaries (D1, R12-R14),
countdown (R11), header (R16), hand (R8, R9), in French and English."""

from __future__ import annotations

import pytest
from dominos.v1 import game_pb2

from services.client import texts

NAMES = ("Ann", "Bob", "Cid", "Dee")


def make_view(**fields: object) -> game_pb2.TableView:
    """A four-seat view for seat 0 (Ann, host) in PHASE_PLAYING, with ``fields`` set."""
    view = game_pb2.TableView(
        table_id="t1",
        version=7,
        phase=game_pb2.PHASE_PLAYING,
        target=150,
        your_seat=0,
        round_number=2,
        opener_seat=1,
    )
    for seat, name in enumerate(NAMES):
        view.seats.add(
            seat=seat,
            occupied=True,
            name=name,
            team=game_pb2.TEAM_A if seat % 2 == 0 else game_pb2.TEAM_B,
            host=seat == 0,
            tile_count=5,
            connected=True,
        )
    for name, value in fields.items():
        if name == "passes":
            for seat, numbers in value.items():  # type: ignore[attr-defined]
                view.seats[seat].passed_on.extend(numbers)
        else:
            setattr(view, name, value)
    return view


def summary_view(
    outcome: int, scoring: int, points: int, a_pips: int, b_pips: int, **extra: object
) -> game_pb2.TableView:
    view = make_view(phase=game_pb2.PHASE_ROUND_OVER, score_team_a=40, score_team_b=25)
    view.last_round.CopyFrom(
        game_pb2.RoundSummary(
            round_number=2,
            outcome=outcome,  # type: ignore[arg-type]
            scoring_team=scoring,  # type: ignore[arg-type]
            points=points,
            team_a_pips=a_pips,
            team_b_pips=b_pips,
            tie_rule_applied=outcome == game_pb2.ROUND_OUTCOME_BLOCKED_TIE,
            opener_seat=1,
            **extra,  # type: ignore[arg-type]
        )
    )
    return view


# -- passes in words (R10) ------------------------------------------------------------------


def test_one_number_in_words() -> None:
    assert texts.passes_in_words([5], "fr") == "A passé sur cinq"
    assert texts.passes_in_words([5], "en") == "Passed on five"


def test_two_numbers_read_like_the_faq_highest_first() -> None:
    # The view lists them ascending; the FAQ says « A passé sur cinq et deux ».
    assert texts.passes_in_words([2, 5], "fr") == "A passé sur cinq et deux"
    assert texts.passes_in_words([2, 5], "en") == "Passed on five and two"


def test_several_numbers_with_commas_and_a_final_and() -> None:
    assert texts.passes_in_words([0, 2, 5, 6], "fr") == "A passé sur six, cinq, deux et blanc"
    assert texts.passes_in_words([0, 2, 5, 6], "en") == "Passed on six, five, two and blank"


def test_no_pass_says_nothing_and_repeats_are_said_once() -> None:
    assert texts.passes_in_words([], "fr") == ""
    assert texts.passes_in_words([3, 3], "en") == "Passed on three"


@pytest.mark.parametrize(
    ("lang", "words"),
    [
        ("fr", ["blanc", "un", "deux", "trois", "quatre", "cinq", "six"]),
        ("en", ["blank", "one", "two", "three", "four", "five", "six"]),
    ],
)
def test_every_number_has_its_word(lang: texts.Lang, words: list[str]) -> None:
    assert [texts.number_word(n, lang) for n in range(7)] == words


def test_the_seat_line_shows_team_tiles_and_passes_in_words() -> None:
    view = make_view(passes={1: [2, 5]}, turn_seat=1)
    assert texts.seat_line(view, 1, "fr") == (
        "▶ Bob (équipe B) · 5 dominos · A passé sur cinq et deux"
    )
    assert texts.seat_line(view, 1, "en") == "▶ Bob (team B) · 5 tiles · Passed on five and two"
    assert texts.seat_line(view, 0, "fr") == "  Ann (équipe A, hôte, vous) · 5 dominos"
    view.seats[3].connected = False
    assert "déconnecté" in texts.seat_line(view, 3, "fr")


def test_a_pass_as_last_action_is_said_in_words() -> None:
    view = make_view()
    view.last_action.CopyFrom(
        game_pb2.LastAction(
            kind=game_pb2.ACTION_KIND_PASSED,
            seat=3,
            passed_on=[2, 5],
            auto_play=game_pb2.AUTO_PLAY_CAUSE_TIMEOUT,
        )
    )
    assert texts.last_action_text(view, "fr") == (
        "Dee a passé sur cinq et deux (temps écoulé : joué par la table)."
    )
    assert texts.last_action_text(view, "en") == (
        "Dee passed on five and two (time out: the table played)."
    )


# -- header, chain, hand --------------------------------------------------------------------


def test_header_shows_target_round_and_both_scores() -> None:
    view = make_view(score_team_a=35, score_team_b=20)
    assert texts.header_text(view, "fr") == (
        "Objectif 150 · Manche 2 · Équipe A (Ann et Cid) 35 · Équipe B (Bob et Dee) 20"
    )
    assert texts.header_text(view, "en") == (
        "Target 150 · Round 2 · Team A (Ann and Cid) 35 · Team B (Bob and Dee) 20"
    )


def test_chain_and_its_two_ends() -> None:
    view = make_view(left_end=6, right_end=1)
    view.chain.add(left=6, right=6, seat=0)
    view.chain.add(left=6, right=1, seat=1)
    assert texts.chain_text(view, "en") == "[6|6][6|1]"
    assert texts.ends_text(view, "fr") == "Bout gauche : 6 · bout droit : 1"
    assert texts.ends_text(view, "en") == "Left end: 6 · right end: 1"
    assert texts.ends_text(make_view(), "en") == ""
    assert "first tile may be any tile" in texts.chain_text(make_view(), "en")


def test_hand_items_carry_the_legal_ends() -> None:
    view = make_view(turn_seat=0, left_end=6, right_end=1)
    view.hand.add(low=0, high=3)
    view.hand.add(low=1, high=6)
    view.hand.add(low=4, high=5)
    view.legal_moves.add(tile=game_pb2.Tile(low=1, high=6), end=game_pb2.END_LEFT)
    view.legal_moves.add(tile=game_pb2.Tile(low=1, high=6), end=game_pb2.END_RIGHT)
    items = texts.hand_items(view)
    assert [(i.text, i.playable) for i in items] == [
        ("[0|3]", False),
        ("[1|6]", True),
        ("[4|5]", False),
    ]
    assert items[1].ends == (game_pb2.END_LEFT, game_pb2.END_RIGHT)


# -- countdown (R11) ------------------------------------------------------------------------


def test_countdown_uses_the_server_clock_and_the_local_elapsed_time() -> None:
    view = make_view(server_time_ms=1_000_000, turn_deadline_ms=1_030_000)
    # The client clock is far off; only the elapsed time since receipt matters.
    assert texts.remaining_seconds(view, received_at=500.0, now=500.0) == 30.0
    assert texts.remaining_seconds(view, received_at=500.0, now=512.5) == 17.5
    assert texts.remaining_seconds(view, received_at=500.0, now=600.0) == 0.0
    assert texts.remaining_seconds(make_view(), received_at=0.0, now=0.0) is None


@pytest.mark.parametrize(
    ("seconds", "shown"),
    [(45.0, "45 s"), (27.2, "28 s"), (0.4, "1 s"), (0.0, "0 s"), (60.0, "1:00"), (65.0, "1:05")],
)
def test_countdown_format(seconds: float, shown: str) -> None:
    assert texts.format_countdown(seconds) == shown


def test_turn_text_says_whose_turn_with_the_seconds_left() -> None:
    view = make_view(turn_seat=0)
    assert texts.turn_text(view, 12.0, "fr") == "À vous de jouer — 12 s"
    assert texts.turn_text(view, 12.0, "en") == "Your turn — 12 s"
    view.turn_seat = 1
    assert texts.turn_text(view, 3.1, "fr") == "Au tour de Bob — 4 s"
    assert texts.turn_text(view, 3.1, "en") == "Bob's turn — 4 s"
    between = make_view(phase=game_pb2.PHASE_ROUND_OVER)
    assert texts.turn_text(between, 8.0, "fr") == "Manche suivante dans 8 s."


# -- round summaries (D1) -------------------------------------------------------------------


def test_domino_summary_says_who_and_why_in_both_languages() -> None:
    view = summary_view(game_pb2.ROUND_OUTCOME_DOMINO, game_pb2.TEAM_B, 23, 23, 4, domino_seat=3)
    view.last_round.hands.add(seat=0, tiles=[game_pb2.Tile(low=6, high=6)], points=12)
    view.last_round.hands.add(seat=1, tiles=[game_pb2.Tile(low=0, high=4)], points=4)
    view.last_round.hands.add(seat=2, tiles=[game_pb2.Tile(low=5, high=6)], points=11)
    view.last_round.hands.add(seat=3, tiles=[], points=0)
    fr = texts.round_summary_lines(view, "fr")
    assert fr[0] == "Manche 2 : domino ! Dee (équipe B) a posé son dernier domino."
    assert fr[1] == (
        "L'équipe B marque 23 points : ce qui reste dans les mains des deux adversaires "
        "(Ann 12 + Cid 11). La main du partenaire ne compte pas."
    )
    assert fr[2] == "Mains restantes : Ann [6|6] (12) ; Bob [0|4] (4) ; Cid [5|6] (11) ; Dee — (0)"
    assert fr[3] == "Score : A 40 · B 25"
    en = texts.round_summary_lines(view, "en")
    assert en[0] == "Round 2: domino! Dee (team B) laid their last tile."
    assert en[1].startswith("Team B scores 23 points: what is left in both opponents' hands")
    assert not any("tie" in line.lower() for line in en)


def test_blocked_summary_says_the_lighter_team_scores_the_other_total() -> None:
    view = summary_view(game_pb2.ROUND_OUTCOME_BLOCKED, game_pb2.TEAM_A, 31, 18, 31)
    fr = texts.round_summary_lines(view, "fr")
    assert fr[0] == "Manche 2 : bloquée, les quatre joueurs ont passé l'un après l'autre."
    assert fr[1] == (
        "Points en main : équipe A 18, équipe B 31. L'équipe la plus légère, l'équipe A, "
        "marque le total de l'autre : 31 points."
    )
    en = texts.round_summary_lines(view, "en")
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
    fr = texts.round_summary_lines(view, "fr")
    assert fr[0] == (
        "Manche 2 : bloquée, les quatre joueurs ont passé l'un après l'autre, égalité parfaite."
    )
    assert fr[1] == (
        "Chaque équipe a 20 points en main, égalité parfaite : la manche revient à l'équipe "
        "qui a posé le dernier domino, l'équipe B, qui marque le total de l'autre équipe : "
        "20 points."
    )
    en = texts.round_summary_lines(view, "en")
    assert en[1] == (
        "Each team holds 20 points, a perfect tie: the round goes to the team that laid the "
        "last tile, team B, which scores the other team's total: 20 points."
    )


def test_round_line_for_the_demo() -> None:
    tie = summary_view(game_pb2.ROUND_OUTCOME_BLOCKED_TIE, game_pb2.TEAM_B, 20, 20, 20)
    assert texts.round_line(tie, "en") == (
        "Round 2 · opened by Bob · blocked, perfect tie (to the team of the last tile) · "
        "Team B +20 · score A 40 · B 25"
    )
    domino = summary_view(game_pb2.ROUND_OUTCOME_DOMINO, game_pb2.TEAM_A, 9, 0, 9, domino_seat=2)
    assert texts.round_line(domino, "fr") == (
        "Manche 2 · ouverte par Bob · domino de Cid · Équipe A +9 · score A 40 · B 25"
    )
    assert texts.round_line(make_view(), "en") == ""


def test_winner_is_said_once_the_game_is_over() -> None:
    view = make_view(
        phase=game_pb2.PHASE_FINISHED, winner=game_pb2.TEAM_B, score_team_a=80, score_team_b=155
    )
    assert texts.winner_text(view, "fr") == "L'équipe B (Bob et Dee) gagne la partie, 155 à 80."
    assert texts.winner_text(view, "en") == "Team B (Bob and Dee) wins the game, 155 to 80."
    assert texts.winner_text(make_view(), "en") == ""


def test_lobby_lines_show_the_code_and_who_is_seated() -> None:
    view = make_view(phase=game_pb2.PHASE_WAITING)
    view.seats[3].occupied = False
    lines = texts.lobby_lines(view, "ABCDE23456", "fr")
    assert lines[0] == "Code d'invitation : ABCDE-23456"  # read out in two groups
    assert "  (place libre)" in lines
    assert lines[-1] == "En attente de joueurs : 3/4 assis."
    assert texts.lobby_lines(make_view(phase=game_pb2.PHASE_WAITING), "X", "en")[-1] == (
        "Four players: the host can start the game."
    )


# -- names are text, never markup ---------------------------------------------------------------


@pytest.mark.parametrize("name", ["[/]", "[@click=app.quit]Bob[/]", "[reverse]X", "[bold", "\\[x]"])
def test_names_and_codes_are_copied_as_typed_into_every_sentence(name: str) -> None:
    # The words are plain text: nothing is escaped here (a name shows exactly as chosen) and
    # the terminal client never reads them as markup.
    view = summary_view(game_pb2.ROUND_OUTCOME_DOMINO, game_pb2.TEAM_B, 9, 9, 0, domino_seat=1)
    view.seats[1].name = name
    view.last_round.hands.add(seat=1, tiles=[], points=0)
    view.turn_seat = 1
    view.last_action.kind = game_pb2.ACTION_KIND_PLAYED
    view.last_action.seat = 1
    view.last_action.move.tile.high = 3
    view.last_action.move.end = game_pb2.END_LEFT
    assert f"Équipe B ({name} et Dee) 25" in texts.header_text(view, "fr")
    assert texts.seat_line(view, 1, "en").startswith(f"  {name} (team B)")
    assert texts.last_action_text(view, "en") == f"{name} laid [0|3] on the left."
    lines = texts.round_summary_lines(view, "en")
    assert lines[0] == f"Round 2: domino! {name} (team B) laid their last tile."
    assert lines[2] == f"Hands left: {name} — (0)"
    assert f"domino by {name}" in texts.round_line(view, "en")
    view.phase = game_pb2.PHASE_PLAYING
    assert texts.turn_text(view, 5.0, "en") == f"{name}'s turn — 5 s"
    view.phase = game_pb2.PHASE_WAITING
    assert texts.lobby_lines(view, name, "en")[0] == f"Invitation code: {name}"
    view.phase, view.winner = game_pb2.PHASE_FINISHED, game_pb2.TEAM_B
    assert texts.winner_text(view, "fr").startswith(f"L'équipe B ({name} et Dee) gagne")


def test_a_refused_name_is_explained_in_both_languages() -> None:
    assert texts.ui("name_taken", "fr").startswith("Ce nom ressemble trop à celui d'un joueur")
    assert texts.ui("name_taken", "en").startswith("That name looks like the name of a player")
    assert "visible" in texts.ui("name_invalid", "fr")
    assert "visible" in texts.ui("name_invalid", "en")
