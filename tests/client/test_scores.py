"""The score lines (services/client/scores.py, R16): with the players, and in 80 columns."""

from __future__ import annotations

from services.client.scores import header_text, score_line
from tests.client.views import make_view


def test_header_shows_target_round_and_both_scores() -> None:
    view = make_view(score_team_a=35, score_team_b=20)
    assert header_text(view, "fr") == (
        "Objectif 150 · Manche 2 · Équipe A (Ann et Cid) 35 · Équipe B (Bob et Dee) 20"
    )
    assert header_text(view, "en") == (
        "Target 150 · Round 2 · Team A (Ann and Cid) 35 · Team B (Bob and Dee) 20"
    )


def test_the_score_line_fits_80_columns_and_names_your_team_first() -> None:
    view = make_view(your_seat=1, score_team_a=495, score_team_b=480, target=500, round_number=12)
    line = score_line(view, "fr")
    assert line == "Objectif 500 · Manche 12 · Équipe B (nous) 480 · Équipe A 495"
    assert len(line) <= 76
