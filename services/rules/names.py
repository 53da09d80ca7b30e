"""Player names: what a valid name is, and when two names look the same.

A name is text a player chooses and every other player reads, so two rules protect them:

- :func:`validate_name` — the name is normalised to Unicode NFC (``"Chloe"`` followed by a
  combining acute accent and the composed ``"Chloé"`` are one name), trimmed, and refused
  (``NameInvalid``) unless it has 1 to 24 characters (counted after NFC), no control, format
  or line-separator characters, and at least one *visible* character: a name of spaces,
  combining marks or blank-looking letters (Hangul fillers U+115F, U+1160, U+3164, U+FFA0,
  braille blank U+2800...) shows as nothing.
- :func:`skeleton` — what a name looks like, as a comparison key: the engine refuses a join
  whose name has the skeleton of a name already seated at the table (``NameTaken``).

What "looks the same" means here (a middle ground, also documented in the contract's
``ERROR_REASON_NAME_TAKEN``):

- compatibility forms are folded (NFKC: fullwidth and mathematical letters, ligatures and
  superscripts read as their plain letters);
- case is ignored (``"bob"``, ``"Bob"`` and ``"BOB"`` are one name);
- accents and other combining marks are ignored (``"Zoé"``, ``"Zoë"`` and ``"Zoe"``);
- Cyrillic and Greek letters that look like Latin ones are read as those (``"Ana"`` spelt
  with a Cyrillic capital A, or ``"Bob"`` with a Greek capital beta, is ``"Ana"``,
  ``"Bob"``), by the two tables below;
- ``0`` reads as ``o``, and ``1``, ``I``, ``l`` and ``i`` as one letter (``"AIex"`` with a
  capital I is ``"Alex"``; as case is ignored too, ``"Ali"`` and ``"All"`` collide: a rare
  refusal at a table of four is the price of catching the classic I/l swap);
- runs of white space (and blank-looking letters, format characters) count as one space.

Not folded: punctuation and spacing differences (``"B o b"``, ``"Bob!"`` are other names),
multi-letter lookalikes (``"rn"``/``"m"``, ``"vv"``/``"w"``: font dependent), and scripts
other than Latin, Cyrillic and Greek (their letters only go through NFKC, case and marks).
The tables are written here rather than read from a package of Unicode's confusables data
on purpose: they are a rule of the game, replayed from command logs, so they must change
only with this code, never with a dependency's data update.
"""

from __future__ import annotations

import unicodedata
from typing import Final

from . import errors
from .state import MAX_NAME_LENGTH

__all__ = ["BLANK_LETTERS", "has_visible_character", "skeleton", "validate_name"]

#: Unicode categories never allowed in a name: controls, format characters (zero-width
#: spaces and joiners, bidi overrides), surrogates, private use, unassigned, line and
#: paragraph separators.
_FORBIDDEN_CATEGORIES: Final = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})

#: Letters and symbols drawn as nothing (white space, marks and format characters aside):
#: the Hangul fillers (choseong, jungseong, compatibility, halfwidth), the braille pattern
#: with no dot, the musical null notehead.
BLANK_LETTERS: Final = frozenset("\u115f\u1160\u3164\uffa0\u2800\U0001d159")

#: Lookalikes decided on the letter as typed, before case is folded: capitals whose lower
#: case looks like another Latin letter than the capital does (the Greek capital eta looks
#: like H, its small eta like n).
_CAPITALS: Final = {
    "\u0412": "B",  # cyrillic capital letter ve
    "\u041d": "H",  # cyrillic capital letter en
    "\u041c": "M",  # cyrillic capital letter em
    "\u0422": "T",  # cyrillic capital letter te
    "\u0397": "H",  # greek capital letter eta
    "\u039c": "M",  # greek capital letter mu
    "\u039d": "N",  # greek capital letter nu
    "\u03a4": "T",  # greek capital letter tau
    "\u03a5": "Y",  # greek capital letter upsilon
    "\u0396": "Z",  # greek capital letter zeta
}

#: Lookalikes after case folding and the removal of marks: each lower-case letter (or digit)
#: and the Latin letter it is read as.
_LOWER: Final = {
    "0": "o",
    "1": "l",
    "i": "l",
    "|": "l",
    "\u0131": "l",  # latin small letter dotless i
    "\u01c0": "l",  # latin letter dental click
    # Cyrillic
    "\u0430": "a",  # cyrillic small letter a
    "\u0441": "c",  # cyrillic small letter es
    "\u0501": "d",  # cyrillic small letter komi de
    "\u0435": "e",  # cyrillic small letter ie
    "\u04bb": "h",  # cyrillic small letter shha
    "\u0456": "l",  # cyrillic small letter byelorussian-ukrainian i
    "\u0458": "j",  # cyrillic small letter je
    "\u043a": "k",  # cyrillic small letter ka
    "\u04cf": "l",  # cyrillic small letter palochka
    "\u043e": "o",  # cyrillic small letter o
    "\u0440": "p",  # cyrillic small letter er
    "\u051b": "q",  # cyrillic small letter qa
    "\u0455": "s",  # cyrillic small letter dze
    "\u0443": "y",  # cyrillic small letter u
    "\u04af": "y",  # cyrillic small letter straight u
    "\u051d": "w",  # cyrillic small letter we
    "\u0445": "x",  # cyrillic small letter ha
    # Greek
    "\u03b1": "a",  # greek small letter alpha
    "\u03b2": "b",  # greek small letter beta
    "\u03f2": "c",  # greek lunate sigma symbol
    "\u03b5": "e",  # greek small letter epsilon
    "\u03b7": "n",  # greek small letter eta
    "\u03b9": "l",  # greek small letter iota
    "\u03f3": "j",  # greek letter yot
    "\u03ba": "k",  # greek small letter kappa
    "\u03bc": "u",  # greek small letter mu
    "\u03bd": "v",  # greek small letter nu
    "\u03bf": "o",  # greek small letter omicron
    "\u03c1": "p",  # greek small letter rho
    "\u03c5": "u",  # greek small letter upsilon
    "\u03c7": "x",  # greek small letter chi
    "\u03c9": "w",  # greek small letter omega
}

#: Dropped from a skeleton: combining marks (accents, variation selectors) and format
#: characters (zero-width spaces and joiners).
_DROPPED: Final = frozenset({"Mn", "Me", "Cf"})


def has_visible_character(name: str) -> bool:
    """Whether ``name`` shows anything: its :func:`skeleton` (without white space, marks,
    format characters or blank letters; spacing accents such as U+00B4 fold to a space and a
    mark) keeps a character that is not a spacing combining mark."""
    return any(char != " " and unicodedata.category(char) != "Mc" for char in skeleton(name))


def validate_name(name: str) -> str:
    """``name`` in NFC with surrounding white space removed; ``NameInvalid`` unless it has 1
    to 24 characters, no control, format or line-separator characters, and a visible one."""
    normal = unicodedata.normalize("NFC", name).strip()
    if not normal or len(normal) > MAX_NAME_LENGTH:
        raise errors.NameInvalid(f"a name has 1 to {MAX_NAME_LENGTH} characters")
    for char in normal:
        if unicodedata.category(char) in _FORBIDDEN_CATEGORIES:
            raise errors.NameInvalid("a name holds no control characters")
    if not has_visible_character(normal):
        raise errors.NameInvalid("a name needs a visible character")
    return normal


def skeleton(name: str) -> str:
    """What ``name`` looks like, as a key: two names with one skeleton are taken for one
    (see the module's documentation for what is folded).

    NFKD without marks and format characters, the capitals of :data:`_CAPITALS`, case
    folding, NFKD without marks again (folding may compose or add some), the letters of
    :data:`_LOWER`, and white space and blank letters merged into single spaces. Idempotent
    (``skeleton(skeleton(n)) == skeleton(n)``): the result is decomposed, case-folded, has no
    marks, and its lookalikes became Latin letters that map to themselves.
    """
    bare = "".join(_CAPITALS.get(char, char) for char in _without_marks(name))
    chars = []
    for char in _without_marks(bare.casefold()):
        if char.isspace() or char in BLANK_LETTERS:
            chars.append(" ")
        else:
            chars.append(_LOWER.get(char, char))
    return " ".join("".join(chars).split())


def _without_marks(text: str) -> str:
    """``text`` in NFKD without its combining marks and format characters."""
    return "".join(
        char
        for char in unicodedata.normalize("NFKD", text)
        if unicodedata.category(char) not in _DROPPED
    )
