"""Whose turn and the time left (services/client/countdown.py, R11), « au tour d'Ana », and
the pause of a friendly-end vote."""

from __future__ import annotations

import pytest
from dominos.v1 import game_pb2

from services.client.countdown import format_countdown, remaining_seconds, turn_text
from tests.client.views import make_view


def test_countdown_uses_the_server_clock_and_the_local_elapsed_time() -> None:
    view = make_view(server_time_ms=1_000_000, turn_deadline_ms=1_030_000)
    # The client clock is far off; only the elapsed time since receipt matters.
    assert remaining_seconds(view, received_at=500.0, now=500.0) == 30.0
    assert remaining_seconds(view, received_at=500.0, now=512.5) == 17.5
    assert remaining_seconds(view, received_at=500.0, now=600.0) == 0.0
    assert remaining_seconds(make_view(), received_at=0.0, now=0.0) is None


@pytest.mark.parametrize(
    ("seconds", "shown"),
    [(45.0, "45 s"), (27.2, "28 s"), (0.4, "1 s"), (0.0, "0 s"), (60.0, "1:00"), (65.0, "1:05")],
)
def test_countdown_format(seconds: float, shown: str) -> None:
    assert format_countdown(seconds) == shown


def test_turn_text_says_whose_turn_with_the_seconds_left() -> None:
    view = make_view(turn_seat=0)
    assert turn_text(view, 12.0, "fr") == "À vous de jouer — 12 s"
    assert turn_text(view, 12.0, "en") == "Your turn — 12 s"
    view.turn_seat = 1
    assert turn_text(view, 3.1, "fr") == "Au tour de Bob — 4 s"
    assert turn_text(view, 3.1, "en") == "Bob's turn — 4 s"
    between = make_view(phase=game_pb2.PHASE_ROUND_OVER)
    assert turn_text(between, 8.0, "fr") == "Manche suivante dans 8 s."


def test_whose_turn_reads_au_tour_d_before_a_vowel_and_au_tour_de_otherwise() -> None:
    view = make_view(turn_seat=1, server_time_ms=1000, turn_deadline_ms=5000)
    view.seats[1].name = "Ana"
    assert turn_text(view, 3.1, "fr") == "Au tour d'Ana — 4 s"
    view.seats[1].name = "Éric"
    assert turn_text(view, None, "fr") == "Au tour d'Éric"
    view.seats[1].name = "Chloé"
    assert turn_text(view, None, "fr") == "Au tour de Chloé"


def test_a_friendly_end_vote_pauses_the_game_and_the_clock_is_the_votes() -> None:
    view = make_view(turn_seat=0, server_time_ms=1_000_000, turn_deadline_ms=1_030_000)
    view.vote.CopyFrom(game_pb2.FriendlyEndVote(proposer=1, deadline_ms=1_020_000))
    assert remaining_seconds(view, 5.0, 7.0, view.vote.deadline_ms) == 18.0
    assert turn_text(view, 18.0, "fr") == "Partie en pause : vote en cours — 18 s"
    assert turn_text(view, 18.0, "en") == "Game paused: vote in progress — 18 s"
