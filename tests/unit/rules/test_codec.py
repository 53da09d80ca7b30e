"""Compact, exact serialisation of states and commands."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from services.rules import (
    CodecError,
    Join,
    Leave,
    SetPresence,
    SetTarget,
    Start,
    apply,
    decode_state,
    encode_state,
)
from services.rules.binary import Reader, varint

from .builders import NOW, in_play, lobby


def test_a_live_table_serialises_compactly() -> None:
    state = apply(lobby(), Start(0, 2**128 - 1), NOW).state
    data = encode_state(state)
    assert len(data) < 400
    assert decode_state(data) == state


@pytest.mark.parametrize(
    "data", [b"", b"[]", b"not json", b'[2, "t"]', b'{"a": 1}', b"[1," + b"0," * 15 + b"0]"]
)
def test_garbage_is_rejected_with_codec_error(data: bytes) -> None:
    with pytest.raises(CodecError):
        decode_state(data)


def test_enums_and_booleans_survive_the_round_trip() -> None:
    state = in_play(
        ("1-1", "3-3", "2-2", "0-1"), left=5, right=6, turn=0, connected=(True, False, True, False)
    )
    back = decode_state(encode_state(state))
    assert back.connected == (True, False, True, False)
    assert type(back.phase) is type(state.phase)


def test_every_kind_of_last_action_round_trips_including_lobby_texts() -> None:
    state = lobby(1)  # TableCreated, with the host's name
    assert decode_state(encode_state(state)) == state
    for name in ("Bo", "Zoé 🁣", "x" * 24):
        state = apply(state, Join(name), NOW).state  # SeatTaken carries text too
        assert decode_state(encode_state(state)) == state
    state = apply(state, SetTarget(0, 250), NOW).state
    assert decode_state(encode_state(state)) == state
    state = apply(state, Leave(2), NOW).state
    assert decode_state(encode_state(state)) == state
    state = apply(state, SetPresence(1, True), NOW).state
    assert decode_state(encode_state(state)) == state
    closed = apply(state, Leave(0), NOW).state
    assert decode_state(encode_state(closed)) == closed


def test_a_live_table_is_about_150_bytes() -> None:
    state = apply(lobby(), Start(0, 2**128 - 1), NOW).state
    assert len(encode_state(state)) <= 160


@given(st.integers(min_value=0, max_value=2**63) | st.integers(min_value=4000, max_value=5000))
def test_a_varint_is_unsigned_leb128_on_both_sides_of_its_lookup_table(value: int) -> None:
    encoded = varint(value)
    assert all(byte & 0x80 for byte in encoded[:-1]) and not encoded[-1] & 0x80
    assert sum((byte & 0x7F) << 7 * i for i, byte in enumerate(encoded)) == value
    reader = Reader(encoded)
    assert reader.varint() == value and reader.at_end


def test_a_negative_varint_is_refused() -> None:
    with pytest.raises(ValueError):
        varint(-1)
