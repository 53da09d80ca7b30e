"""Table ids, invitation codes (S1, D6), seat tokens (D7) and seat nonces."""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
from collections import Counter

import pytest

from services.common import credentials
from services.common.credentials import (
    CODE_ALPHABET,
    CODE_LENGTH,
    TABLE_ID_LENGTH,
    is_table_id,
    is_token_shape,
    new_code,
    new_nonce,
    new_table_id,
    normalise_code,
    same_hash,
    seat_token,
    token_digest,
    token_hash,
)

URL_SAFE = re.compile(r"[A-Za-z0-9_-]+")
SECRET = b"server secret of at least thirty-two bytes!"
TABLE = "Qm9uam91ciBsZXMgYW1pcw"
NONCE = "ab" * 32
DRAWS = 2_000


# --- table ids ----------------------------------------------------------------------------


def test_a_table_id_is_22_url_safe_characters_of_16_random_bytes() -> None:
    for _ in range(50):
        table_id = new_table_id()
        assert len(table_id) == TABLE_ID_LENGTH == 22
        assert URL_SAFE.fullmatch(table_id)
        assert is_table_id(table_id)
        assert len(base64.urlsafe_b64decode(table_id + "==")) == 16


def test_table_ids_do_not_repeat() -> None:
    assert len({new_table_id() for _ in range(DRAWS)}) == DRAWS


def test_table_ids_use_the_whole_url_safe_alphabet() -> None:
    seen = Counter("".join(new_table_id()[:21] for _ in range(DRAWS)))
    assert len(seen) == 64


@pytest.mark.parametrize(
    "value",
    [
        "",
        "A" * 21,
        "A" * 23,
        "A" * 21 + "+",  # standard, not URL-safe, base64
        "A" * 21 + "/",
        "A" * 20 + "==",  # padding
        "A" * 21 + "é",
        "A" * 22 + "\n",
        " " + "A" * 21,
        "A" * 11 + ":" + "A" * 10,
    ],
)
def test_a_string_not_shaped_like_a_table_id_is_not_one(value: str) -> None:
    assert not is_table_id(value)


# --- invitation codes ---------------------------------------------------------------------


def test_the_code_alphabet_has_30_unambiguous_characters() -> None:
    assert len(CODE_ALPHABET) == len(set(CODE_ALPHABET)) == 30
    assert not set("0O1ILU") & set(CODE_ALPHABET)
    assert set(CODE_ALPHABET) <= set("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")


def test_d6_a_code_is_10_characters_of_the_alphabet() -> None:
    for _ in range(200):
        code = new_code()
        assert len(code) == CODE_LENGTH == 10
        assert set(code) <= set(CODE_ALPHABET)


def test_d6_codes_do_not_repeat_and_use_the_whole_alphabet() -> None:
    codes = [new_code() for _ in range(DRAWS)]
    assert len(set(codes)) == DRAWS
    counts = Counter("".join(codes))
    assert set(counts) == set(CODE_ALPHABET)
    # 20 000 characters over 30 symbols: about 667 each; a biased draw would stray far.
    assert all(520 < n < 820 for n in counts.values()), counts


def test_a_fresh_code_is_its_own_normal_form() -> None:
    for _ in range(100):
        code = new_code()
        assert normalise_code(code) == code


@pytest.mark.parametrize(
    ("typed", "expected"),
    [
        ("ABCDEFGHJK", "ABCDEFGHJK"),
        ("abcdefghjk", "ABCDEFGHJK"),
        ("aBcDe-FgHjK", "ABCDEFGHJK"),
        ("ABCDE FGHJK", "ABCDEFGHJK"),
        ("  abcde - fghjk  ", "ABCDEFGHJK"),
        ("A-B-C-D-E-F-G-H-J-K", "ABCDEFGHJK"),
        ("ab\tcd\nef gh jk", "ABCDEFGHJK"),
        ("2345678923", "2345678923"),
        ("zz99x-y22mn", "ZZ99XY22MN"),
    ],
)
def test_d6_a_typed_code_is_upper_cased_without_spaces_or_dashes(typed: str, expected: str) -> None:
    assert normalise_code(typed) == expected


@pytest.mark.parametrize(
    "typed",
    [
        "",
        "ABCDEFGH",  # 8: the old length
        "ABCDEFGHJ",  # 9
        "ABCDEFGHJKM",  # 11
        "ABCDE-FGHJ",
        "ABCDEFGHJ0",  # zero
        "ABCDEFGHJO",  # letter O
        "ABCDEFGHJ1",  # one
        "ABCDEFGHJI",
        "ABCDEFGHJL",
        "abcdefghjl",  # a lower-case l is an L
        "ABCDEFGHJU",
        "ABCDE_FGHJ",
        "ABCDE.FGHJK",
        "ABCDÉFGHJK",
        "----------",
    ],
)
def test_d6_a_typed_string_that_cannot_be_a_code_normalises_to_none(typed: str) -> None:
    assert normalise_code(typed) is None


# --- seat tokens --------------------------------------------------------------------------


def test_d7_a_seat_token_is_the_documented_hmac_of_table_seat_and_nonce() -> None:
    mac = hmac.new(SECRET, f"{TABLE}:2:{NONCE}".encode(), hashlib.sha256).digest()
    token = seat_token(SECRET, TABLE, 2, NONCE)
    assert base64.urlsafe_b64decode(token + "=") == mac


def test_d7_a_seat_token_is_43_url_safe_characters() -> None:
    for seat in range(4):
        token = seat_token(SECRET, new_table_id(), seat, new_nonce())
        assert len(token) == 43
        assert URL_SAFE.fullmatch(token)
        assert is_token_shape(token)


def test_d7_the_same_secret_table_seat_and_nonce_give_the_same_token() -> None:
    assert seat_token(SECRET, TABLE, 1, NONCE) == seat_token(SECRET, TABLE, 1, NONCE)


@pytest.mark.parametrize(
    "changed",
    [
        (SECRET + b"!", TABLE, 1, NONCE),
        (b"", TABLE, 1, NONCE),
        (SECRET, TABLE[:-1] + "B", 1, NONCE),
        (SECRET, TABLE, 0, NONCE),
        (SECRET, TABLE, 3, NONCE),
        (SECRET, TABLE, 1, "ab" * 31 + "ac"),
    ],
)
def test_d7_changing_any_input_changes_the_token(changed: tuple[bytes, str, int, str]) -> None:
    assert seat_token(*changed) != seat_token(SECRET, TABLE, 1, NONCE)


def test_d7_the_four_seats_of_a_table_get_four_different_tokens() -> None:
    nonce = new_nonce()
    assert len({seat_token(SECRET, TABLE, seat, nonce) for seat in range(4)}) == 4


@pytest.mark.parametrize(
    "value",
    ["", "A" * 42, "A" * 44, "A" * 42 + "=", "A" * 42 + "+", "Bearer " + "A" * 36, "é" * 43],
)
def test_a_string_not_shaped_like_a_token_is_not_one(value: str) -> None:
    assert not is_token_shape(value)


def test_token_hash_is_the_sha256_hex_digest() -> None:
    # Known SHA-256 test vector (FIPS 180-2, "abc").
    assert token_hash("abc") == ("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    token = seat_token(SECRET, TABLE, 0, NONCE)
    assert re.fullmatch(r"[0-9a-f]{64}", token_hash(token))
    assert token_hash(token) != token_hash(seat_token(SECRET, TABLE, 1, NONCE))


def test_same_hash_is_equality() -> None:
    digest = token_hash("token")
    assert same_hash(digest, token_hash("token"))
    assert not same_hash(digest, token_hash("other"))
    assert not same_hash(digest, digest[:-1])
    assert not same_hash(digest, digest + "0")
    assert not same_hash(digest, "")
    assert same_hash("", "")


def test_same_hash_compares_in_constant_time(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[object, object]] = []
    compare = hmac.compare_digest

    def spy(a: bytes, b: bytes) -> bool:
        calls.append((a, b))
        return compare(a, b)

    monkeypatch.setattr(hmac, "compare_digest", spy)
    assert same_hash("ab", "ab")
    assert not same_hash("ab", "ac")
    assert len(calls) == 2


# --- nonces ---------------------------------------------------------------------------------


def test_a_nonce_is_16_random_bytes_in_hex() -> None:
    nonce = new_nonce()
    assert re.fullmatch(r"[0-9a-f]{32}", nonce)
    assert len(bytes.fromhex(nonce)) == 16


def test_nonces_do_not_repeat() -> None:
    assert len({new_nonce() for _ in range(DRAWS)}) == DRAWS


# --- seat holders ---------------------------------------------------------------------------


def test_a_holder_value_is_the_domain_separated_hash_of_the_digest_kept_or_not(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Kept holder values are the values (issue 22's cache), and the store stays bounded."""
    monkeypatch.setattr(credentials, "_HOLDER_TAGS_KEPT", 8)
    monkeypatch.setattr(credentials, "_HOLDER_TAGS", {})
    digests = [hashlib.sha256(bytes([i])).digest() for i in range(20)]
    for _ in range(2):
        for digest in digests:
            expected = hashlib.sha256(b"dominos.v1 seat holder\0" + digest).digest()[:8]
            assert credentials.holder_tag(digest) == expected
            assert credentials.token_holder("t") == credentials.holder_tag(token_digest("t"))
            assert len(credentials._HOLDER_TAGS) <= 8
