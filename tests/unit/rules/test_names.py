"""Player names (services/rules/names.py): NFC, a visible character, and no join under a
name that looks the same as a seated player's (``skeleton``)."""

from __future__ import annotations

import string
import unicodedata

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from services.rules import (
    ALL_REASONS,
    Create,
    ErrorKind,
    Join,
    Leave,
    TableState,
    apply,
    create,
    encode_state,
    skeleton,
    validate_name,
)
from services.rules import errors as e

from .builders import NOW, TIMING, lobby

#: Characters that show nothing: white space, combining marks (accents, the grapheme joiner,
#: variation selectors), Hangul fillers, the braille blank.
INVISIBLE = st.text(
    alphabet=st.sampled_from(
        [
            " ",
            "\u00a0",  # no-break space
            "\u2003",  # em space
            "\u3000",  # ideographic space
            "\u0301",  # combining acute accent
            "\u0308",  # combining diaeresis
            "\u034f",  # combining grapheme joiner
            "\ufe0f",  # variation selector-16
            "\u115f",  # hangul choseong filler
            "\u1160",  # hangul jungseong filler
            "\u3164",  # hangul filler
            "\uffa0",  # halfwidth hangul filler
            "\u2800",  # braille pattern blank
        ]
    ),
    min_size=1,
    max_size=24,
)

#: Latin letters and what may stand for them in a name that looks the same: Cyrillic and
#: Greek lookalikes, and the digits.
LOOKALIKES: dict[str, tuple[str, ...]] = {
    "A": ("\u0410", "\u0391"),  # Cyrillic A, Greek alpha
    "B": ("\u0412", "\u0392"),  # Cyrillic ve, Greek beta
    "C": ("\u0421",),  # Cyrillic es
    "E": ("\u0415", "\u0395"),  # Cyrillic ie, Greek epsilon
    "H": ("\u041d", "\u0397"),  # Cyrillic en, Greek eta
    "I": ("\u0406", "\u0399", "l", "1"),  # Cyrillic i, Greek iota, small L, one
    "J": ("\u0408",),  # Cyrillic je
    "K": ("\u041a", "\u039a"),  # Cyrillic ka, Greek kappa
    "M": ("\u041c", "\u039c"),  # Cyrillic em, Greek mu
    "N": ("\u039d",),  # Greek nu
    "O": ("\u041e", "\u039f", "0"),  # Cyrillic o, Greek omicron, zero
    "P": ("\u0420", "\u03a1"),  # Cyrillic er, Greek rho
    "S": ("\u0405",),  # Cyrillic dze
    "T": ("\u0422", "\u03a4"),  # Cyrillic te, Greek tau
    "X": ("\u0425", "\u03a7"),  # Cyrillic ha, Greek chi
    "Y": ("\u03a5",),  # Greek upsilon
    "Z": ("\u0396",),  # Greek zeta
    "a": ("\u0430",),  # Cyrillic a
    "c": ("\u0441",),  # Cyrillic es
    "e": ("\u0435",),  # Cyrillic ie
    "i": ("\u0456",),  # Cyrillic i
    "j": ("\u0458",),  # Cyrillic je
    "l": ("I", "1", "\u04cf"),  # capital I, one, Cyrillic palochka
    "o": ("\u043e", "\u03bf", "0"),  # Cyrillic o, Greek omicron, zero
    "p": ("\u0440", "\u03c1"),  # Cyrillic er, Greek rho
    "s": ("\u0455",),  # Cyrillic dze
    "x": ("\u0445", "\u03c7"),  # Cyrillic ha, Greek chi
    "y": ("\u0443",),  # Cyrillic u
}

LATIN_NAMES = st.text(alphabet=string.ascii_letters, min_size=1, max_size=12)


@st.composite
def disguised(draw: st.DrawFn, name: str) -> str:
    """``name`` with some letters swapped for lookalikes, other case, fullwidth or bold
    forms, or an accent: another string that looks the same."""
    out = []
    for letter in name:
        char = letter
        how = draw(st.sampled_from(["keep", "lookalike", "case", "wide", "bold", "accent"]))
        if how == "lookalike" and letter in LOOKALIKES:
            char = draw(st.sampled_from(LOOKALIKES[letter]))
        elif how == "case":
            char = letter.swapcase()
        elif how == "wide":
            char = chr(ord(letter) - ord("!") + 0xFF01)  # FULLWIDTH LATIN ...
        elif how == "bold":
            base = 0x1D400 if letter.isupper() else 0x1D41A  # MATHEMATICAL BOLD ...
            char = chr(base + ord(letter.upper()) - ord("A"))
        elif how == "accent":
            char = letter + draw(st.sampled_from(["\u0301", "\u0300", "\u0308"]))
        out.append(char)
    return "".join(out)


def seated(*names: str) -> TableState:
    """A waiting table with ``names`` seated, the first the host."""
    state = create(Create("t-names", names[0], 100, TIMING), NOW).state
    for name in names[1:]:
        state = apply(state, Join(name), NOW).state
    return state


def refused_name_taken(state: TableState, name: str) -> None:
    before = encode_state(state)
    with pytest.raises(e.NameTaken):
        apply(state, Join(name), NOW)
    assert encode_state(state) == before


# -- NFC and the length rule -----------------------------------------------------------------


def test_names_are_stored_in_nfc_so_a_decomposed_chloe_is_the_composed_one() -> None:
    decomposed, composed = "Chloe\u0301", "Chlo\u00e9"
    assert validate_name(decomposed) == composed
    state = apply(lobby(1), Join(f"  {decomposed} "), NOW).state
    assert state.names[1] == composed
    refused_name_taken(state, composed)
    refused_name_taken(seated(composed), decomposed)


def test_the_24_characters_are_counted_after_nfc() -> None:
    assert validate_name("e\u0301" * 24) == "\u00e9" * 24  # 48 code points, 24 letters
    with pytest.raises(e.NameInvalid):
        validate_name("e\u0301" * 25)


@given(st.text(max_size=40))
def test_a_valid_name_is_nfc_trimmed_1_to_24_characters_with_a_visible_one(name: str) -> None:
    try:
        valid = validate_name(name)
    except e.NameInvalid:
        return
    assert unicodedata.is_normalized("NFC", valid)
    assert valid == valid.strip() and 1 <= len(valid) <= 24
    assert validate_name(valid) == valid
    assert skeleton(valid).strip()


# -- invisible names -------------------------------------------------------------------------


@given(INVISIBLE)
def test_a_name_with_no_visible_character_is_invalid(name: str) -> None:
    with pytest.raises(e.NameInvalid):
        validate_name(name)
    with pytest.raises(e.NameInvalid):
        apply(lobby(2), Join(name), NOW)
    with pytest.raises(e.NameInvalid):
        create(Create("t", name, 100, TIMING), NOW)


@pytest.mark.parametrize(
    "name",
    ["\u3164", "\u115f\u1160", "\u2800\u2800", " \u0301 ", "\u3000", "\ufe0f", "a\u200b", "\u00b4"],
)
def test_fillers_blanks_lone_accents_and_zero_width_characters_are_not_names(name: str) -> None:
    with pytest.raises(e.NameInvalid):
        validate_name(name)


@given(INVISIBLE, st.sampled_from(["A", "\u674e", "!", "\U0001f063"]), INVISIBLE)
def test_one_visible_character_among_invisible_ones_makes_a_name(
    before: str, visible: str, after: str
) -> None:
    name = (before + visible + after)[:24]
    assume(visible in name)
    assert skeleton(visible) in skeleton(validate_name(name))  # an accent may compose on it


# -- names that look the same ----------------------------------------------------------------


@given(LATIN_NAMES.flatmap(lambda name: st.tuples(st.just(name), disguised(name))))
def test_join_refuses_name_that_looks_like_a_seated_one(names: tuple[str, str]) -> None:
    name, lookalike = names
    assume(skeleton(name) != skeleton("Host"))
    state = apply(lobby(1), Join(name), NOW).state
    assert skeleton(lookalike) == skeleton(name)
    refused_name_taken(state, lookalike)
    refused_name_taken(state, name)  # the very same name too


@given(LATIN_NAMES.flatmap(lambda name: st.tuples(st.just(name), disguised(name))))
def test_the_hosts_name_counts_as_seated(names: tuple[str, str]) -> None:
    host, lookalike = names
    refused_name_taken(seated(host), lookalike)


def valid_or_none(name: str) -> str | None:
    try:
        return validate_name(name)
    except e.NameInvalid:
        return None


#: Any text without the characters a name may never hold (most of it is a valid name).
NAME_LIKE = st.text(
    alphabet=st.characters(exclude_categories=("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp")),
    min_size=1,
    max_size=24,
).filter(lambda name: valid_or_none(name) is not None)


@given(st.lists(NAME_LIKE, min_size=4, max_size=4, unique_by=skeleton))
def test_join_accepts_names_that_look_different(names: list[str]) -> None:
    assert seated(*names).names == tuple(validate_name(name) for name in names)


@given(st.lists(LATIN_NAMES, min_size=4, max_size=4, unique_by=skeleton))
def test_join_accepts_latin_names_that_look_different(names: list[str]) -> None:
    assert seated(*names).names == tuple(names)


@pytest.mark.parametrize(
    ("seated_name", "joining"),
    [
        ("Ana", "\u0410NA"),  # Cyrillic capital A
        ("Bob", "bob"),
        ("Bob", "BOB"),
        ("Bob", "\u0392o\u03b2"),  # Greek capital and small beta
        ("Bob", "B0b"),
        ("Bob", "\uff22ob"),  # fullwidth B
        ("Bob", "\U0001d401ob"),  # mathematical bold B
        ("Bob", "Bob\u3164"),  # a trailing Hangul filler
        ("Alex", "AIex"),  # capital I for small L
        ("Alex", "A1ex"),
        ("Zo\u00e9", "Zoe"),
        ("Zo\u00e9", "Zo\u00eb"),
        ("Ana Bel", "Ana \u3000 Bel"),
        ("Hana", "\u0397ANA"),  # Greek capital eta
        ("nana", "\u03b7ana"),  # Greek small eta
        ("Stra\u00dfe", "STRASSE"),
    ],
)
def test_names_that_look_the_same(seated_name: str, joining: str) -> None:
    assert skeleton(seated_name) == skeleton(joining)
    refused_name_taken(seated("Host", seated_name), joining)


@pytest.mark.parametrize(
    ("seated_name", "joining"),
    [
        ("Bob", "B o b"),  # spacing is not folded
        ("Bob", "Bob!"),  # nor punctuation
        ("Bob", "Rob"),
        ("mary", "rnary"),  # nor multi-letter lookalikes
        ("Ann", "Anne"),
        ("Bo", "B\u00f8"),  # o with stroke is its own letter
        ("\u674e", "\u5b63"),  # other Han characters
        ("Ana", "\u0410\u043d\u0430"),  # Cyrillic small en does not look like n
    ],
)
def test_names_that_look_different(seated_name: str, joining: str) -> None:
    assert skeleton(seated_name) != skeleton(joining)
    state = apply(seated("Host", seated_name), Join(joining), NOW).state
    assert state.names[2] == validate_name(joining)


def test_a_freed_seat_frees_its_name() -> None:
    state = apply(seated("Host", "Bob"), Leave(1), NOW).state
    assert apply(state, Join("BOB"), NOW).state.names[1] == "BOB"


def test_a_full_table_says_full_before_name_taken() -> None:
    with pytest.raises(e.TableFull):
        apply(lobby(4), Join("host"), NOW)


def test_name_taken_is_a_failed_precondition_with_its_own_reason() -> None:
    assert e.NameTaken.reason == "NAME_TAKEN" and e.NameTaken.reason in ALL_REASONS
    assert e.NameTaken.kind is ErrorKind.FAILED_PRECONDITION


# -- the skeleton ----------------------------------------------------------------------------


@given(st.text())
def test_skeleton_is_idempotent(name: str) -> None:
    once = skeleton(name)
    assert skeleton(once) == once


@given(LATIN_NAMES.flatmap(lambda name: st.tuples(st.just(name), disguised(name))))
def test_skeleton_of_a_disguised_name_is_the_names(names: tuple[str, str]) -> None:
    name, lookalike = names
    assert skeleton(lookalike) == skeleton(name)
    assert skeleton(name) == skeleton(name.swapcase())


@given(st.text(max_size=30))
def test_skeleton_ignores_accents_and_the_normal_form(name: str) -> None:
    expected = skeleton(name)
    for form in ("NFC", "NFD", "NFKC", "NFKD"):
        assert skeleton(unicodedata.normalize(form, name)) == expected
    stripped = "".join(
        c for c in unicodedata.normalize("NFD", name) if unicodedata.category(c) not in ("Mn", "Me")
    )
    assert skeleton(stripped) == expected
