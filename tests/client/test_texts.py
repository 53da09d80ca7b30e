"""The catalogue (services/client/texts.py) and the promises every sentence keeps: names and
codes copied as typed (plain text, never markup), no rule ids on screen, refused names
explained in both languages."""

from __future__ import annotations

import pytest
from dominos.v1 import game_pb2

from services.client import texts
from services.client.chain import ends_text
from services.client.countdown import turn_text
from services.client.last_action import last_action_text
from services.client.lobby import lobby_lines, seat_line
from services.client.scores import header_text, score_line
from services.client.seating import seat_strip
from services.client.summaries import round_line, round_summary_lines, winner_text
from tests.client.views import RULE_ID, make_view, summary_view


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
    assert f"Équipe B ({name} et Dee) 25" in header_text(view, "fr")
    assert seat_line(view, 1, "en").startswith(f"  {name} (team B)")
    assert last_action_text(view, "en") == f"{name} laid [0|3] on the left."
    lines = round_summary_lines(view, "en")
    assert lines[0] == f"Round 2: domino! {name} (team B) laid their last tile."
    assert lines[2] == f"Hands left: {name} — (0)"
    assert f"domino by {name}" in round_line(view, "en")
    view.phase = game_pb2.PHASE_PLAYING
    assert turn_text(view, 5.0, "en") == f"{name}'s turn — 5 s"
    view.phase = game_pb2.PHASE_WAITING
    assert lobby_lines(view, name, "en")[0] == f"Invitation code: {name}"
    view.phase, view.winner = game_pb2.PHASE_FINISHED, game_pb2.TEAM_B
    assert winner_text(view, "fr").startswith(f"L'équipe B ({name} et Dee) gagne")


def test_a_refused_name_is_explained_in_both_languages() -> None:
    assert texts.ui("name_taken", "fr").startswith("Ce nom ressemble trop à celui d'un joueur")
    assert texts.ui("name_taken", "en").startswith("That name looks like the name of a player")
    assert "visible" in texts.ui("name_invalid", "fr")
    assert "visible" in texts.ui("name_invalid", "en")


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
            score_line(view, lang),
            turn_text(view, 3, lang),
            *lobby_lines(view, "ABCDE23456", lang),
            *(seat_strip(view, seat, lang) for seat in range(4)),
            ends_text(view, lang),
        ]
        assert not [line for line in shown if RULE_ID.search(line)]
