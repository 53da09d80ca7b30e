"""French elision: « d'Ana », « de Chloé »; the e of « de », « le », « que » dropped before a
vowel (accented or not) or a mute h."""

from __future__ import annotations

import unicodedata
from typing import Final

__all__ = ["de", "elide", "elides"]

#: First letters before which French drops the e of « de », « le », « que »: the vowels
#: (accents ignored) and h, taken as mute (« d'Hugo »), which is the common case for names.
_ELIDING_LETTERS: Final = frozenset("aeiouhœæ")


def elides(word: str) -> bool:
    """Whether a French word or name starting so takes an elided article or preposition:
    ``"Ana"``, ``"Éric"``, ``"Hugo"``, ``"Œdipe"`` do; ``"Chloé"``, ``"Bot1"``, ``"[x]"``,
    ``""`` do not (accents are ignored: the first letter is compared without them)."""
    if not word:
        return False
    base = unicodedata.normalize("NFD", word[0])[0].lower()
    return base in _ELIDING_LETTERS


def elide(particle: str, word: str) -> str:
    """``particle`` (« de », « que », « le »…) before ``word``, elided when French wants it:
    ``elide("de", "Ana")`` → ``"d'Ana"``, ``elide("de", "Chloé")`` → ``"de Chloé"``. The
    capital of the particle is kept (``"De"`` → ``"D'"``)."""
    if particle[-1:].lower() == "e" and elides(word):
        return f"{particle[:-1]}'{word}"
    return f"{particle} {word}"


def de(name: str) -> str:
    """« de » before a name, elided: ``"d'Ana"``, ``"d'Éric"``, ``"de Chloé"``."""
    return elide("de", name)
