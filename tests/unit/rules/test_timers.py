"""The turn clock and auto-play (R11, D2), disconnection (S3, D3, S4) and the break (D1)."""

from __future__ import annotations

import pytest

from services.rules import (
    AutoCause,
    Expire,
    Pass,
    Phase,
    Play,
    SetPresence,
    apply,
    auto_play_choice,
    encode_state,
)
from services.rules import errors as e
from services.rules.events import Passed, PresenceChanged, TileLaid
from services.rules.state import End
from services.rules.tiles import tile_index

from .builders import NOW, TIMING, in_play

L, R = int(End.LEFT), int(End.RIGHT)


def test_r11_a_turn_lasts_the_turn_duration_from_its_start() -> None:
    state = in_play(("2-5 1-1", "0-0 5-5", "0-1", "0-2"), left=5, right=3, turn=0)
    after = apply(state, Play(0, tile_index(2, 5), L), NOW + 1234).state
    assert after.deadline_ms == NOW + 1234 + TIMING.turn_ms
    assert after.turn_number == state.turn_number + 1


def test_d2_auto_play_lays_the_first_fitting_tile_of_the_ascending_hand() -> None:
    # Hand ascending: 0-1, 2-3, 3-5. Ends: left 3, right 0. 0-1 is first and fits right only.
    state = in_play(("0-1 2-3 3-5", "4-4", "4-4", "4-4"), left=3, right=0, turn=0)
    assert auto_play_choice(state) == Play(0, tile_index(0, 1), R)


def test_d2_auto_play_tries_the_left_end_before_the_right_end() -> None:
    state = in_play(("3-5 6-6", "4-4", "4-4", "4-4"), left=3, right=5, turn=0)
    assert auto_play_choice(state) == Play(0, tile_index(3, 5), L)


def test_d2_auto_play_on_an_empty_chain_lays_the_lowest_tile() -> None:
    state = in_play(("6-6 1-4 2-2", "4-4", "4-4", "4-4"), turn=0)
    assert auto_play_choice(state) == Play(0, tile_index(1, 4), L)


def test_d2_auto_play_passes_when_nothing_fits() -> None:
    state = in_play(("1-1 2-2", "4-4", "4-4", "4-4"), left=5, right=6, turn=0)
    assert auto_play_choice(state) == Pass(0)


def test_r11_when_the_turn_runs_out_the_table_plays_for_the_connected_seat() -> None:
    state = in_play(("0-1 2-3 3-5", "4-4", "4-4", "4-4"), left=3, right=0, turn=0)
    t = apply(state, Expire(state.turn_number), state.deadline_ms)
    assert t.events == (TileLaid(0, tile_index(0, 1), R, AutoCause.TIMEOUT),)
    assert t.state.last_action == TileLaid(0, tile_index(0, 1), R, AutoCause.TIMEOUT)


def test_s3_the_table_plays_for_a_disconnected_seat_as_if_its_time_ran_out() -> None:
    state = in_play(
        ("1-1 2-2", "4-4", "4-4", "4-4"),
        left=5,
        right=6,
        turn=0,
        connected=(False, True, True, True),
    )
    t = apply(state, Expire(state.turn_number), state.deadline_ms)
    assert t.events == (Passed(0, 1 << 5 | 1 << 6, AutoCause.AWAY),)


def test_r11_an_expiry_before_the_deadline_or_for_an_old_turn_changes_nothing() -> None:
    state = in_play(("0-1 2-3", "4-4", "4-4", "4-4"), left=3, right=0, turn=0)
    before = encode_state(state)
    with pytest.raises(e.TimerStale):
        apply(state, Expire(state.turn_number), state.deadline_ms - 1)
    with pytest.raises(e.TimerStale):
        apply(state, Expire(state.turn_number - 1), state.deadline_ms + 10)
    with pytest.raises(e.TimerStale):
        apply(state, Expire(state.turn_number + 1), state.deadline_ms + 10)
    assert encode_state(state) == before


def test_r11_a_duplicate_expiry_is_stale_once_the_turn_moved_on() -> None:
    state = in_play(("0-1 2-3", "4-4 0-0", "4-4", "4-4"), left=3, right=0, turn=0)
    expiry = Expire(state.turn_number)
    moved = apply(state, expiry, state.deadline_ms).state
    with pytest.raises(e.TimerStale):
        apply(moved, expiry, state.deadline_ms + 1)


def test_s3_a_disconnected_seat_gets_the_short_turn() -> None:
    state = in_play(
        ("2-5 1-1", "0-0 5-5", "0-1", "0-2"),
        left=5,
        right=3,
        turn=0,
        connected=(True, False, True, True),
    )
    after = apply(state, Play(0, tile_index(2, 5), L), NOW).state
    assert after.deadline_ms == NOW + TIMING.away_ms


def test_d3_a_seat_dropping_during_its_turn_keeps_at_most_the_short_duration() -> None:
    state = in_play(("2-5 1-1", "0-0", "0-1", "0-2"), left=5, right=3, turn=0)
    t = apply(state, SetPresence(0, False), NOW + 10_000)
    assert t.events == (PresenceChanged(0, False),)
    assert t.state.deadline_ms == NOW + 10_000 + TIMING.away_ms
    # Late in the turn, the earlier deadline stays.
    late = apply(state, SetPresence(0, False), NOW + 43_000).state
    assert late.deadline_ms == state.deadline_ms


def test_d3_another_seat_dropping_does_not_move_the_current_deadline() -> None:
    state = in_play(("2-5 1-1", "0-0", "0-1", "0-2"), left=5, right=3, turn=0)
    after = apply(state, SetPresence(2, False), NOW + 1).state
    assert after.deadline_ms == state.deadline_ms


def test_s4_reconnecting_never_moves_the_deadline() -> None:
    state = in_play(("2-5 1-1", "0-0", "0-1", "0-2"), left=5, right=3, turn=0)
    away = apply(state, SetPresence(0, False), NOW + 1000).state
    back = apply(away, SetPresence(0, True), NOW + 2000).state
    assert back.deadline_ms == away.deadline_ms == NOW + 1000 + TIMING.away_ms
    assert back.connected[0] is True


def test_presence_already_recorded_changes_nothing() -> None:
    state = in_play(("2-5", "0-0", "0-1", "0-2"), left=5, right=3, turn=0)
    t = apply(state, SetPresence(1, True), NOW)
    assert t.state is state and t.events == ()


def test_d1_the_break_runs_out_into_the_next_deal_even_with_everyone_away() -> None:
    state = in_play(
        ("1-1", "3-3", "2-2", "0-1"),
        left=5,
        right=6,
        turn=0,
        connected=(False, False, False, False),
    )
    for _ in range(4):
        state = apply(state, Expire(state.turn_number), state.deadline_ms).state
    assert state.phase is Phase.ROUND_OVER
    state = apply(state, Expire(state.turn_number), state.deadline_ms).state
    assert state.phase is Phase.PLAYING
    assert state.round is not None and state.round.number == 2
    assert state.deadline_ms - NOW >= TIMING.away_ms  # the opener is away: the short turn
