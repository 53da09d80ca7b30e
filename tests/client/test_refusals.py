"""A sentence for every error reason (services/client/refusals.py), told apart by reason,
never the raw text, no rule ids."""

from __future__ import annotations

import pytest

from services.client import texts
from services.client.refusals import error_key, error_text
from services.common.service_errors import Reason
from tests.client.views import RULE_ID


@pytest.mark.parametrize("reason", list(Reason))
def test_every_error_reason_has_its_sentence_in_both_languages(reason: Reason) -> None:
    french = error_text(reason.value, "FAILED_PRECONDITION", "fr", retry_after=2.2)
    english = error_text(reason.value, "FAILED_PRECONDITION", "en", retry_after=2.2)
    assert french and english and french != english
    for sentence in (french, english):
        assert reason.value not in sentence and "FAILED_PRECONDITION" not in sentence
        assert sentence.endswith((".", "?")), sentence
        assert not RULE_ID.search(sentence)


@pytest.mark.parametrize("reason", list(Reason))
def test_every_error_reason_has_a_sentence_of_its_own_not_the_fallback(reason: Reason) -> None:
    assert error_key(reason.value, "FAILED_PRECONDITION") not in ("unexpected", "cancelled")


def test_the_reasons_of_robots_and_the_friendly_end_are_told_apart() -> None:
    assert error_text("ROBOT_SEAT", "PERMISSION_DENIED", "fr") == (
        "Un robot a pris votre place pour de bon : vous n'êtes pas revenu à temps."
    )
    assert error_text("ROBOT_SEAT", "PERMISSION_DENIED", "en") == (
        "A robot took your seat for good: you did not come back in time."
    )
    sentences = {
        error_text(reason, "FAILED_PRECONDITION", "en")
        for reason in (
            "ROBOTS_UNAVAILABLE",
            "FRIENDLY_END_UNAVAILABLE",
            "VOTE_OPEN",
            "NO_VOTE_OPEN",
        )
    }
    assert len(sentences) == 4


def test_game_reasons_are_told_apart_and_a_rate_limit_says_how_long_to_wait() -> None:
    assert error_text("NOT_YOUR_TURN", "FAILED_PRECONDITION", "fr") == ("Ce n'est pas votre tour.")
    assert error_text("CODE_NOT_FOUND", "NOT_FOUND", "fr") == (
        "Aucune table ouverte n'a ce code : vérifiez-le."
    )
    assert error_text("RATE_LIMITED", "RESOURCE_EXHAUSTED", "en", retry_after=2.2) == (
        "Too many requests: try again in 3 s."
    )
    assert "1 s" in error_text("RATE_LIMITED", "RESOURCE_EXHAUSTED", "fr")


@pytest.mark.parametrize(
    ("reason", "code"),
    [(None, "UNAVAILABLE"), (None, "DEADLINE_EXCEEDED"), ("UNAVAILABLE", "UNAVAILABLE")],
)
def test_connection_failures_say_the_server_does_not_answer(reason: str | None, code: str) -> None:
    assert error_text(reason, code, "fr").startswith("Le serveur ne répond pas")
    assert error_text(reason, code, "en").startswith("The server does not answer")


def test_an_unknown_reason_or_code_gets_a_sentence_by_its_code_never_the_raw_text() -> None:
    assert error_key("SOMETHING_NEW", "FAILED_PRECONDITION") == "unexpected"
    assert error_key(None, "CANCELLED") == "cancelled"
    assert error_key(None, "UNIMPLEMENTED") == "client_bug"
    assert error_key("TOKEN_MISSING", "UNAUTHENTICATED") == "client_bug"
    assert error_text(None, "INTERNAL", "fr") == texts.ui("unexpected", "fr")
