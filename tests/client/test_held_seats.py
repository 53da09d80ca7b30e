"""Held seats in words (services/client/held_seats.py): code, name, seat, how long ago; the
resume command."""

from __future__ import annotations

from services.client import texts
from services.client.held_seats import ago_text, resume_command, saved_seat_text


def test_a_held_seat_reads_code_name_seat_and_how_long_ago() -> None:
    assert saved_seat_text("ABCDE23456", "Chloé", 2, 300, "fr") == (
        "ABCDE-23456 · Chloé · place 3 · il y a 5 min"
    )
    assert saved_seat_text("ABCDE23456", "Ann", 0, 7300, "en") == (
        "ABCDE-23456 · Ann · seat 1 · 2 h ago"
    )
    assert ago_text(10, "fr") == "à l'instant"
    assert ago_text(3 * 86400, "en") == "3 d ago"


def test_the_resume_command_names_the_gateway_only_when_it_is_not_the_default() -> None:
    assert resume_command("ABCDE23456") == "dominos play --resume ABCDE23456"
    assert resume_command("ABCDE23456", "host:1") == (
        "dominos play --gateway host:1 --resume ABCDE23456"
    )
    question = texts.ui("quit_game", "fr", command=resume_command("ABCDE23456"))
    assert "dominos play --resume ABCDE23456" in question
    assert "la table joue pour vous" in question
