"""Numbers and passes in words (services/client/words.py, R10): the FAQ's order, highest
first, with commas and a final « et » / "and"."""

from __future__ import annotations

import pytest

from services.client import texts
from services.client.words import number_word, passes_in_words


def test_one_number_in_words() -> None:
    assert passes_in_words([5], "fr") == "A passé sur cinq"
    assert passes_in_words([5], "en") == "Passed on five"


def test_two_numbers_read_like_the_faq_highest_first() -> None:
    # The view lists them ascending; the FAQ says « A passé sur cinq et deux ».
    assert passes_in_words([2, 5], "fr") == "A passé sur cinq et deux"
    assert passes_in_words([2, 5], "en") == "Passed on five and two"


def test_several_numbers_with_commas_and_a_final_and() -> None:
    assert passes_in_words([0, 2, 5, 6], "fr") == "A passé sur six, cinq, deux et blanc"
    assert passes_in_words([0, 2, 5, 6], "en") == "Passed on six, five, two and blank"


def test_no_pass_says_nothing_and_repeats_are_said_once() -> None:
    assert passes_in_words([], "fr") == ""
    assert passes_in_words([3, 3], "en") == "Passed on three"


@pytest.mark.parametrize(
    ("lang", "words"),
    [
        ("fr", ["blanc", "un", "deux", "trois", "quatre", "cinq", "six"]),
        ("en", ["blank", "one", "two", "three", "four", "five", "six"]),
    ],
)
def test_every_number_has_its_word(lang: texts.Lang, words: list[str]) -> None:
    assert [number_word(n, lang) for n in range(7)] == words
