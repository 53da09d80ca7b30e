"""Dealing, opening, laying tiles and passing (R4-R10)."""

from __future__ import annotations

import pytest

from services.rules import (
    End,
    Pass,
    Phase,
    Play,
    Start,
    apply,
    can_pass,
    encode_state,
    legal_moves,
    view_for,
)
from services.rules import errors as e
from services.rules.deal import deal_hands, shuffled_deck
from services.rules.events import Passed, TileLaid
from services.rules.state import AutoCause
from services.rules.tiles import (
    ALL_TILES,
    DOUBLE_SIX,
    NO_END,
    TILE_COUNT,
    tile_index,
)

from .builders import NOW, in_play, lobby, tiles

L, R = int(End.LEFT), int(End.RIGHT)


@pytest.mark.parametrize("seed", [0, 1, 2, 2**127, 2**128 - 1])
def test_r5_the_28_tiles_are_dealt_seven_each_with_nothing_in_reserve(seed: int) -> None:
    for round_number in (1, 2, 9):
        hands = deal_hands(seed, round_number)
        assert [h.bit_count() for h in hands] == [7, 7, 7, 7]
        assert hands[0] | hands[1] | hands[2] | hands[3] == ALL_TILES
        assert sum(hands) == ALL_TILES  # disjoint


def test_r5_every_round_is_dealt_anew_and_deals_replay_from_the_seed() -> None:
    assert deal_hands(7, 1) == deal_hands(7, 1)
    assert len({deal_hands(7, r) for r in range(1, 30)}) == 29
    assert len({deal_hands(s, 1) for s in range(30)}) == 30


def test_r5_the_deal_algorithm_is_stable_so_stored_games_replay() -> None:
    # Golden value: changing the shuffle would break the replay of every stored table.
    assert shuffled_deck(42, 1)[:7] == (11, 6, 0, 7, 25, 19, 13)
    assert sorted(shuffled_deck(42, 1)) == list(range(TILE_COUNT))


@pytest.mark.parametrize("seed", range(12))
def test_r6_the_holder_of_6_6_opens_the_first_round_with_any_tile(seed: int) -> None:
    state = apply(lobby(), Start(0, seed), NOW).state
    rnd = state.round
    assert rnd is not None
    assert rnd.hands[rnd.opener] >> DOUBLE_SIX & 1
    assert rnd.turn == rnd.opener
    moves = legal_moves(state, rnd.opener)
    assert len(moves) == 7  # any of the seven tiles, the 6-6 only designates the opener
    other = next(m for m in moves if m.tile != DOUBLE_SIX)
    after = apply(state, other, NOW).state
    assert after.round is not None and len(after.round.chain) == 1


def test_r4_the_turn_passes_to_the_neighbour() -> None:
    state = in_play(("1-2 6-6", "2-3 6-5", "3-4 6-4", "4-5 0-0"), left=1, right=1, turn=0)
    seats = []
    for _ in range(4):
        assert state.round is not None
        seat = state.round.turn
        seats.append(seat)
        moves = legal_moves(state, seat)
        state = apply(state, moves[0] if moves else Pass(seat), NOW).state
    assert seats == [0, 1, 2, 3]


def test_r4_playing_out_of_turn_is_refused() -> None:
    state = in_play(("1-2", "1-3", "3-4", "4-5"), left=1, right=1, turn=0)
    before = encode_state(state)
    with pytest.raises(e.NotYourTurn):
        apply(state, Play(1, tile_index(1, 3), L), NOW)
    with pytest.raises(e.NotYourTurn):
        apply(state, Pass(2), NOW)
    assert encode_state(state) == before


def test_r8_a_tile_fits_an_end_showing_one_of_its_halves_and_its_other_half_becomes_the_end() -> (
    None
):
    state = in_play(("2-5 1-1", "0-0", "0-0", "0-0"), left=5, right=3, turn=0)
    after = apply(state, Play(0, tile_index(2, 5), L), NOW).state
    assert after.round is not None
    assert (after.round.left, after.round.right) == (2, 3)
    view = view_for(after, 1)
    assert [(p.left, p.right) for p in view.chain] == [(2, 5), (5, 3)]


def test_r8_a_tile_that_fits_neither_half_of_the_chosen_end_is_refused() -> None:
    state = in_play(("2-5 3-4", "0-0", "0-0", "0-0"), left=5, right=3, turn=0)
    with pytest.raises(e.TileDoesNotFit):
        apply(state, Play(0, tile_index(2, 5), R), NOW)
    with pytest.raises(e.TileDoesNotFit):
        apply(state, Play(0, tile_index(3, 4), L), NOW)


def test_r8_a_double_lies_across_and_does_not_branch() -> None:
    state = in_play(("5-5 1-2", "0-0", "0-0", "0-0"), left=5, right=3, turn=0)
    after = apply(state, Play(0, tile_index(5, 5), L), NOW).state
    assert after.round is not None
    assert (after.round.left, after.round.right) == (5, 3)  # still exactly two ends
    assert len(after.round.chain) == 2


def test_r8_the_round_first_tile_may_be_any_tile_on_either_end() -> None:
    state = in_play(("3-4 0-1", "0-0", "1-1", "2-2"), turn=0)
    for end in (L, R):
        after = apply(state, Play(0, tile_index(0, 1), end), NOW).state
        assert after.round is not None and (after.round.left, after.round.right) == (0, 1)


def test_a_tile_not_in_hand_is_refused() -> None:
    state = in_play(("2-5", "5-6", "0-0", "0-1"), left=5, right=3, turn=0)
    with pytest.raises(e.TileNotInHand):
        apply(state, Play(0, tile_index(5, 6), L), NOW)


@pytest.mark.parametrize(
    ("tile", "end", "error"),
    [
        (28, L, e.TileMalformed),
        (-1, L, e.TileMalformed),
        (3, 0, e.EndMalformed),
        (3, 3, e.EndMalformed),
    ],
)
def test_malformed_tiles_and_ends_are_invalid_arguments(tile: int, end: int, error: type) -> None:
    state = in_play(("0-3", "0-0", "1-1", "2-2"), left=3, right=3, turn=0)
    with pytest.raises(error):
        apply(state, Play(0, tile, end), NOW)


def test_r9_pass_is_refused_while_a_tile_fits() -> None:
    state = in_play(("2-5 1-1", "0-0", "0-0", "0-0"), left=5, right=3, turn=0)
    assert not can_pass(state, 0)
    with pytest.raises(e.MustPlay):
        apply(state, Pass(0), NOW)


def test_r9_the_opener_never_passes() -> None:
    state = in_play(("2-5 1-1", "0-0", "0-0", "0-0"), turn=0)
    assert not can_pass(state, 0)
    with pytest.raises(e.MustPlay):
        apply(state, Pass(0), NOW)


def test_r9_when_nothing_fits_the_seat_must_pass_and_has_no_move() -> None:
    state = in_play(("1-1 2-2", "0-0", "0-0", "0-0"), left=5, right=3, turn=0)
    assert legal_moves(state, 0) == ()
    assert can_pass(state, 0)
    with pytest.raises(e.TileDoesNotFit):
        apply(state, Play(0, tile_index(1, 1), L), NOW)
    assert apply(state, Pass(0), NOW).state.round is not None


def test_r10_passes_are_public_with_the_numbers_passed_on_for_the_whole_round() -> None:
    state = in_play(("1-1", "0-2 6-6", "0-0 0-1", "4-4 0-3"), left=5, right=2, turn=0)
    t = apply(state, Pass(0), NOW)
    assert t.events == (Passed(0, 1 << 5 | 1 << 2, AutoCause.NONE),)
    state = apply(t.state, Play(1, tile_index(0, 2), R), NOW).state  # ends now 5 and 0
    state = apply(state, Play(2, tile_index(0, 0), R), NOW).state
    state = apply(state, Play(3, tile_index(0, 3), R), NOW).state  # ends 5 and 3
    state = apply(state, Pass(0), NOW).state
    for seat in range(4):
        seats = view_for(state, seat).seats
        assert seats[0].passed_on == (2, 3, 5)  # "A passé sur deux, trois et cinq"
        assert seats[1].passed_on == ()


def test_legal_moves_list_both_ends_when_a_tile_fits_both() -> None:
    state = in_play(("3-5 1-1", "0-0", "0-0", "0-0"), left=3, right=5, turn=0)
    moves = legal_moves(state, 0)
    assert [(m.tile, m.end) for m in moves] == [(tile_index(3, 5), L), (tile_index(3, 5), R)]
    assert legal_moves(state, 1) == ()


def test_the_empty_chain_sentinel_is_not_an_end_number() -> None:
    state = in_play(("3-5", "0-0", "1-1", "2-2"), turn=0)
    assert state.round is not None and state.round.left == NO_END
    assert [m.tile for m in legal_moves(state, 0)] == tiles("3-5")


def test_play_events_name_the_seat_tile_and_end() -> None:
    state = in_play(("3-5 1-1", "0-0", "0-0", "0-0"), left=3, right=6, turn=0)
    t = apply(state, Play(0, tile_index(3, 5), L), NOW)
    assert t.events == (TileLaid(0, tile_index(3, 5), L, AutoCause.NONE),)
    assert t.state.version == state.version + 1
    assert t.state.phase is Phase.PLAYING
