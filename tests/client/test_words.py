"""The terminal client's new words and layout helpers (services/client/texts.py), pure logic:
French elision, a sentence for every error reason, no rule ids on screen, the table around
the player, the chain wrapped between tiles with doubles across, the history, held seats."""

from __future__ import annotations

import re

import pytest
from dominos.v1 import game_pb2

from services.client import texts
from services.common.service_errors import Reason
from tests.client.test_texts import make_view

RULE_ID = re.compile(r"\([RSD]\d+\)")


# -- French elision ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("Ana", "d'Ana"),
        ("Éric", "d'Éric"),
        ("Ève", "d'Ève"),
        ("Hugo", "d'Hugo"),
        ("Olivier", "d'Olivier"),
        ("Ursule", "d'Ursule"),
        ("îlot", "d'îlot"),
        ("Œdipe", "d'Œdipe"),
        ("Chloé", "de Chloé"),
        ("Bot1", "de Bot1"),
        ("[/]", "de [/]"),
        ("2Pac", "de 2Pac"),
    ],
)
def test_de_is_elided_before_a_vowel_accented_or_not_and_before_h(name: str, expected: str) -> None:
    assert texts.de(name) == expected


def test_elide_keeps_the_capital_and_leaves_particles_without_a_final_e() -> None:
    assert texts.elide("De", "Ana") == "D'Ana"
    assert texts.elide("que", "Éric") == "qu'Éric"
    assert texts.elide("à", "Ana") == "à Ana"
    assert not texts.elides("")


def test_whose_turn_reads_au_tour_d_before_a_vowel_and_au_tour_de_otherwise() -> None:
    view = make_view(turn_seat=1, server_time_ms=1000, turn_deadline_ms=5000)
    view.seats[1].name = "Ana"
    assert texts.turn_text(view, 3.1, "fr") == "Au tour d'Ana — 4 s"
    view.seats[1].name = "Éric"
    assert texts.turn_text(view, None, "fr") == "Au tour d'Éric"
    view.seats[1].name = "Chloé"
    assert texts.turn_text(view, None, "fr") == "Au tour de Chloé"


# -- errors -----------------------------------------------------------------------------------


@pytest.mark.parametrize("reason", list(Reason))
def test_every_error_reason_has_its_sentence_in_both_languages(reason: Reason) -> None:
    french = texts.error_text(reason.value, "FAILED_PRECONDITION", "fr", retry_after=2.2)
    english = texts.error_text(reason.value, "FAILED_PRECONDITION", "en", retry_after=2.2)
    assert french and english and french != english
    for sentence in (french, english):
        assert reason.value not in sentence and "FAILED_PRECONDITION" not in sentence
        assert sentence.endswith((".", "?")), sentence
        assert not RULE_ID.search(sentence)


def test_game_reasons_are_told_apart_and_a_rate_limit_says_how_long_to_wait() -> None:
    assert texts.error_text("NOT_YOUR_TURN", "FAILED_PRECONDITION", "fr") == (
        "Ce n'est pas votre tour."
    )
    assert texts.error_text("CODE_NOT_FOUND", "NOT_FOUND", "fr") == (
        "Aucune table ouverte n'a ce code : vérifiez-le."
    )
    assert texts.error_text("RATE_LIMITED", "RESOURCE_EXHAUSTED", "en", retry_after=2.2) == (
        "Too many requests: try again in 3 s."
    )
    assert "1 s" in texts.error_text("RATE_LIMITED", "RESOURCE_EXHAUSTED", "fr")


@pytest.mark.parametrize(
    ("reason", "code"),
    [(None, "UNAVAILABLE"), (None, "DEADLINE_EXCEEDED"), ("UNAVAILABLE", "UNAVAILABLE")],
)
def test_connection_failures_say_the_server_does_not_answer(reason: str | None, code: str) -> None:
    assert texts.error_text(reason, code, "fr").startswith("Le serveur ne répond pas")
    assert texts.error_text(reason, code, "en").startswith("The server does not answer")


def test_an_unknown_reason_or_code_gets_a_sentence_by_its_code_never_the_raw_text() -> None:
    assert texts.error_key("SOMETHING_NEW", "FAILED_PRECONDITION") == "unexpected"
    assert texts.error_key(None, "CANCELLED") == "cancelled"
    assert texts.error_key(None, "UNIMPLEMENTED") == "client_bug"
    assert texts.error_key("TOKEN_MISSING", "UNAUTHENTICATED") == "client_bug"
    assert texts.error_text(None, "INTERNAL", "fr") == texts.ui("unexpected", "fr")


# -- no rule ids on screen --------------------------------------------------------------------


def test_no_interface_string_shows_a_rule_id() -> None:
    for key in texts._UI:
        for lang in texts.LANGS:
            sentence = texts.ui(key, lang)
            assert not RULE_ID.search(sentence), (key, lang, sentence)


def test_no_sentence_built_from_a_view_shows_a_rule_id() -> None:
    view = make_view(turn_seat=0, passes={1: [2, 5]}, server_time_ms=1, turn_deadline_ms=9)
    view.chain.add(left=5, right=2, seat=1)
    for lang in texts.LANGS:
        shown = [
            texts.score_line(view, lang),
            texts.turn_text(view, 3, lang),
            *texts.lobby_lines(view, "ABCDE23456", lang),
            *(texts.seat_strip(view, seat, lang) for seat in range(4)),
            texts.ends_text(view, lang),
        ]
        assert not [line for line in shown if RULE_ID.search(line)]


# -- the table around the player --------------------------------------------------------------


def test_the_partner_sits_across_and_the_next_player_on_the_right() -> None:
    assert texts.relative_seats(0) == {"south": 0, "east": 1, "north": 2, "west": 3}
    assert texts.relative_seats(3) == {"south": 3, "east": 0, "north": 1, "west": 2}


def test_a_seat_shows_name_team_tiles_away_turn_and_passes_in_words() -> None:
    view = make_view(turn_seat=1, passes={1: [2, 5]}, your_seat=3)
    view.seats[1].connected = False
    assert texts.seat_facts(view, 1, "fr") == [
        "▶ Bob (B, partenaire)",
        "5 dominos",
        "absent",
        "à son tour",
        "A passé sur cinq et deux",
    ]
    assert texts.seat_strip(view, 3, "en") == "Dee (B, you) · 5 tiles"
    assert texts.seat_strip(view, 0, "en") == "Ann (A) · 5 tiles"


def test_a_side_column_wraps_between_words_and_cuts_only_a_word_too_long() -> None:
    view = make_view(passes={3: [2, 4, 5, 6]})
    view.seats[3].name = "Dominique-Alexandre"
    column = texts.seat_column(view, 3, "fr", 15)
    assert all(len(line) <= 15 for line in column)
    assert " ".join(column[-3:]) == "A passé sur six, cinq, quatre et deux"


# -- the chain ----------------------------------------------------------------------------------


def test_the_chain_wraps_between_tiles_never_inside_one() -> None:
    chain = [(6, 3), (3, 1), (1, 5), (5, 2), (2, 0), (0, 4)]
    drawing = texts.chain_drawing(chain, width=17)
    assert drawing.rows == ["[6|3] [3|1] [1|5]", "[5|2] [2|0] [0|4]"]
    assert texts.chain_drawing(chain, width=16).rows == [
        "[6|3] [3|1]",
        "[1|5] [5|2]",
        "[2|0] [0|4]",
    ]


def test_a_double_stands_across_the_chain_over_three_rows() -> None:
    drawing = texts.chain_drawing([(6, 3), (3, 3), (3, 1)], width=40)
    assert drawing.rows == [
        "      ┌3┐",
        "[6|3] ├─┤ [3|1]",
        "      └3┘",
    ]


def test_the_newest_tile_is_marked_on_every_row_it_covers() -> None:
    drawing = texts.chain_drawing([(6, 3), (3, 3), (3, 1)], width=40, newest=1)
    assert drawing.newest == [(0, 6, 9), (1, 6, 9), (2, 6, 9)]
    plain = texts.chain_drawing([(6, 3), (3, 1)], width=40, newest=1)
    assert plain.newest == [(0, 6, 11)]
    assert plain.rows[0][6:11] == "[3|1]"


def test_the_newest_tile_is_found_at_the_end_it_was_laid_on() -> None:
    view = make_view()
    for low, high in ((6, 3), (3, 1), (1, 5)):
        view.chain.add(left=low, right=high, seat=0)
    right = game_pb2.Move(tile=game_pb2.Tile(low=1, high=5), end=game_pb2.END_RIGHT)
    left = game_pb2.Move(tile=game_pb2.Tile(low=3, high=6), end=game_pb2.END_LEFT)
    stale = game_pb2.Move(tile=game_pb2.Tile(low=0, high=0), end=game_pb2.END_LEFT)
    assert texts.newest_index(view, right) == 2
    assert texts.newest_index(view, left) == 0
    assert texts.newest_index(view, stale) is None
    assert texts.newest_index(view, None) is None


# -- the history --------------------------------------------------------------------------------


def played(view: game_pb2.TableView, seat: int, low: int, high: int, version: int) -> None:
    view.version = version
    view.last_action.Clear()
    view.last_action.kind = game_pb2.ACTION_KIND_PLAYED
    view.last_action.seat = seat
    view.last_action.move.tile.low, view.last_action.move.tile.high = low, high
    view.last_action.move.end = game_pb2.END_RIGHT


def test_the_journal_keeps_this_rounds_moves_and_every_rounds_result() -> None:
    journal = texts.Journal()
    view = make_view(round_number=1)
    played(view, 0, 6, 6, 10)
    journal.record(view)
    journal.record(view)  # the same version twice counts once
    played(view, 1, 3, 6, 11)
    journal.record(view)
    assert [m.seat for m in journal.moves] == [0, 1]
    assert journal.newest_play() == view.last_action.move

    over = make_view(round_number=1, version=12, phase=game_pb2.PHASE_ROUND_OVER)
    over.score_team_b = 17
    over.last_round.CopyFrom(
        game_pb2.RoundSummary(
            round_number=1,
            outcome=game_pb2.ROUND_OUTCOME_BLOCKED,
            scoring_team=game_pb2.TEAM_B,
            points=17,
        )
    )
    journal.record(over)
    next_round = make_view(round_number=2, version=13)
    journal.record(next_round)
    assert journal.moves == [] and journal.newest_play() is None
    lines = texts.history_lines(journal, next_round, "fr", height=10)
    assert lines == [
        "Manches jouées",
        "Manche 1 · équipe B +17 (bloquée) · A 0 · B 17",
        "Coups de la manche 2",
        "(aucun coup vu depuis votre arrivée)",
    ]


def test_the_history_keeps_the_newest_moves_when_they_do_not_all_fit() -> None:
    journal = texts.Journal()
    view = make_view(round_number=1)
    for version, seat in enumerate((0, 1, 2, 3, 0, 1), start=10):
        played(view, seat, 1, 2, version)
        journal.record(view)
    lines = texts.history_lines(journal, view, "en", height=5)
    assert lines[:3] == ["Rounds played", "(no round over yet)", "Moves of round 1"]
    assert lines[3:] == ["Ann laid [1|2] on the right.", "Bob laid [1|2] on the right."]
    assert len(lines) == 5


# -- held seats and quitting ----------------------------------------------------------------------


def test_a_held_seat_reads_code_name_seat_and_how_long_ago() -> None:
    assert texts.saved_seat_text("ABCDE23456", "Chloé", 2, 300, "fr") == (
        "ABCDE-23456 · Chloé · place 3 · il y a 5 min"
    )
    assert texts.saved_seat_text("ABCDE23456", "Ann", 0, 7300, "en") == (
        "ABCDE-23456 · Ann · seat 1 · 2 h ago"
    )
    assert texts.ago_text(10, "fr") == "à l'instant"
    assert texts.ago_text(3 * 86400, "en") == "3 d ago"


def test_the_resume_command_names_the_gateway_only_when_it_is_not_the_default() -> None:
    assert texts.resume_command("ABCDE23456") == "dominos play --resume ABCDE23456"
    assert texts.resume_command("ABCDE23456", "host:1") == (
        "dominos play --gateway host:1 --resume ABCDE23456"
    )
    question = texts.ui("quit_game", "fr", command=texts.resume_command("ABCDE23456"))
    assert "dominos play --resume ABCDE23456" in question
    assert "la table joue pour vous" in question


def test_the_score_line_fits_80_columns_and_names_your_team_first() -> None:
    view = make_view(your_seat=1, score_team_a=495, score_team_b=480, target=500, round_number=12)
    line = texts.score_line(view, "fr")
    assert line == "Objectif 500 · Manche 12 · Équipe B (nous) 480 · Équipe A 495"
    assert len(line) <= 76
