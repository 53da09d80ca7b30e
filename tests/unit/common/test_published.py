"""What leaves the table service (issue 13): the state without its deal seed, and the seat
holders that bind view streams to tokens."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from services.common import credentials
from services.common.published import is_held, published_state, seat_holders
from services.rules import (
    Expire,
    Leave,
    Phase,
    SetPresence,
    Start,
    apply,
    decode_state,
    encode_state,
    encode_state_unseeded,
)
from services.rules.options import TableOptions
from tests.unit.rules.builders import NOW, lobby
from tests.unit.rules.option_builders import SITE_PAIRS, started

TOKENS = tuple(f"{'t' * 42}{i}" for i in range(4))
DIGESTS = {seat: credentials.token_digest(token) for seat, token in enumerate(TOKENS)}


@given(seed=st.integers(min_value=1, max_value=2**128 - 1))
def test_the_published_state_is_the_state_without_its_seed(seed: int) -> None:
    state = apply(lobby(4), Start(0, seed), NOW).state
    published = decode_state(published_state(state))
    assert published.seed == 0
    assert published == state._replace(seed=0)  # hands and all the rest are the same


def test_each_held_seat_publishes_the_holder_of_its_token() -> None:
    holders = seat_holders(lobby(4), DIGESTS.get)
    for seat, token in enumerate(TOKENS):
        assert credentials.holder_of(holders, seat) == credentials.token_holder(token)
    assert len(set(holders[i : i + 8] for i in range(0, 32, 8))) == 4


def test_a_free_seat_has_no_holder() -> None:
    state = apply(lobby(4), Leave(2), NOW).state
    holders = seat_holders(state, DIGESTS.get)
    assert not is_held(state, 2)
    assert credentials.holder_of(holders, 2) == credentials.NO_HOLDER
    assert credentials.holder_of(holders, 1) == credentials.token_holder(TOKENS[1])


def test_the_host_of_a_closed_table_holds_no_seat_but_the_guests_still_do() -> None:
    closed = apply(lobby(3), Leave(0), NOW).state
    assert closed.phase is Phase.CLOSED
    assert not is_held(closed, 0)
    assert [is_held(closed, seat) for seat in (1, 2, 3)] == [True, True, False]
    holders = seat_holders(closed, DIGESTS.get)
    assert credentials.holder_of(holders, 0) == credentials.NO_HOLDER


def test_a_holder_value_is_not_the_stored_digest_nor_the_token() -> None:
    holder = credentials.token_holder(TOKENS[0])
    assert holder not in DIGESTS[0] and holder not in TOKENS[0].encode()


def test_a_seat_a_robot_kept_holds_its_players_token_no_more_d12() -> None:
    """Issue 20: once a robot keeps the seat of a player who did not return in time, the
    seat's holder value is zeros, so every stream of that player ends."""
    options = TableOptions(replace_level=3, return_ms=60_000)
    state = apply(started(SITE_PAIRS, options, humans=4), SetPresence(1, False), NOW).state
    assert is_held(state, 1)  # standing in: still the player's seat
    late = apply(state, Expire(state.turn_number), max(state.deadline_ms, NOW + 60_000)).state
    assert late.robots[1] and not is_held(late, 1)
    holders = seat_holders(late, lambda seat: b"d" * 32)
    assert holders[8:16] == bytes(8) and holders[:8] != bytes(8)


@given(seed=st.integers(min_value=0, max_value=2**128 - 1), optioned=st.booleans())
def test_one_encoding_gives_the_stored_state_and_the_published_one(
    seed: int, optioned: bool
) -> None:
    """The commit encodes a state once: the stored bytes are ``encode_state`` of it, the
    published ones ``encode_state`` of it without its seed (rules with options included)."""
    if optioned:
        options = TableOptions(replace_level=3, return_ms=60_000)
        state = started(SITE_PAIRS, options, humans=4, seed=seed or 1)._replace(seed=seed)
    else:
        state = apply(lobby(4), Start(0, seed or 1), NOW).state._replace(seed=seed)
    stored, published = encode_state_unseeded(state)
    assert stored == encode_state(state)
    assert published == encode_state(state._replace(seed=0)) == published_state(state)
    assert decode_state(stored).seed == seed
