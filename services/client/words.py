"""Numbers and lists as dominoes players say them, and the passes (R10) in words.

- Numbers: 0 is *blanc* / *blank*, then *un* … *six*.
- Passes read like the FAQ, « A passé sur cinq et deux »: the numbers a seat passed on
  during the round, **highest first** (the view lists them ascending, the FAQ's example says
  the higher number first), joined with commas and a final *et* / *and*.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from services.client.texts import Lang

__all__ = ["join_words", "number_word", "passes_in_words"]

_NUMBERS: Final[dict[str, tuple[str, ...]]] = {
    "fr": ("blanc", "un", "deux", "trois", "quatre", "cinq", "six"),
    "en": ("blank", "one", "two", "three", "four", "five", "six"),
}


def number_word(number: int, lang: Lang) -> str:
    """A domino number 0..6 in words: ``5`` → ``"cinq"`` / ``"five"``; 0 is blanc / blank."""
    return _NUMBERS[lang][number]


def join_words(words: Sequence[str], lang: Lang) -> str:
    """``["a"]`` → ``"a"``; ``["a", "b"]`` → ``"a et b"``; ``["a", "b", "c"]`` → ``"a, b et c"``
    (``and`` in English, no serial comma)."""
    if not words:
        return ""
    if len(words) == 1:
        return words[0]
    conjunction = " et " if lang == "fr" else " and "
    return ", ".join(words[:-1]) + conjunction + words[-1]


def passes_in_words(passed_on: Sequence[int], lang: Lang) -> str:
    """What a seat passed on this round (R10), highest number first, as the FAQ says it:
    ``[2, 5]`` → « A passé sur cinq et deux » / "Passed on five and two"; ``""`` when the
    seat has not passed."""
    numbers = sorted(set(passed_on), reverse=True)
    if not numbers:
        return ""
    words = join_words([number_word(n, lang) for n in numbers], lang)
    return f"A passé sur {words}" if lang == "fr" else f"Passed on {words}"
