"""Seating, start and target before the game (R1-R3, R16, D4, S2)."""

from __future__ import annotations

import pytest

from services.rules import (
    Create,
    Join,
    Leave,
    Phase,
    SetPresence,
    SetTarget,
    Start,
    apply,
    create,
    encode_state,
    team_of,
)
from services.rules import errors as e
from services.rules.events import SeatFreed, SeatTaken, TableClosed

from .builders import NOW, TIMING, lobby


def test_r1_teams_are_partners_face_to_face() -> None:
    assert [team_of(s) for s in range(4)] == [0, 1, 0, 1]


def test_r2_host_takes_seat_0_and_arrivals_take_seats_in_order() -> None:
    state = create(Create("t", "Ana", 100, TIMING), NOW).state
    assert state.names == ("Ana", "", "", "") and state.version == 1
    for expected_seat, name in enumerate(("Bo", "Cy", "Di"), start=1):
        transition = apply(state, Join(name), NOW)
        assert transition.events == (SeatTaken(expected_seat, name),)
        state = transition.state
    assert state.names == ("Ana", "Bo", "Cy", "Di")
    assert state.version == 4


def test_r1_a_fifth_player_is_refused_and_nothing_changes() -> None:
    state = lobby(4)
    before = encode_state(state)
    with pytest.raises(e.TableFull):
        apply(state, Join("Eve"), NOW)
    assert encode_state(state) == before


def test_d4_leaving_before_the_start_frees_the_seat_and_arrivals_take_the_lowest_free_one() -> None:
    state = lobby(4)
    state = apply(state, Leave(1), NOW).state
    state = apply(state, Leave(3), NOW).state
    assert state.names == ("Host", "", "P2", "")
    transition = apply(state, Join("Zed"), NOW)
    assert transition.events == (SeatTaken(1, "Zed"),)
    assert apply(transition.state, Join("Yan"), NOW).events == (SeatTaken(3, "Yan"),)


def test_d4_the_host_leaving_closes_the_table_and_nobody_can_join_it() -> None:
    state = lobby(2)
    transition = apply(state, Leave(0), NOW)
    assert transition.events == (SeatFreed(0), TableClosed())
    assert transition.state.phase is Phase.CLOSED
    with pytest.raises(e.GameOver):
        apply(transition.state, Join("Late"), NOW)


def test_d5_presence_on_a_closed_table_changes_nothing() -> None:
    # Watching an over table must not write to it (nor keep it alive past its expiry).
    closed = apply(lobby(2), Leave(0), NOW).state
    for seat, connected in ((1, True), (1, False)):
        transition = apply(closed, SetPresence(seat, connected), NOW)
        assert transition.state is closed and transition.events == ()


def test_d4_after_the_start_nobody_leaves() -> None:
    state = apply(lobby(4), Start(0, 1), NOW).state
    with pytest.raises(e.GameAlreadyStarted):
        apply(state, Leave(2), NOW)


def test_r3_only_the_host_starts() -> None:
    state = lobby(4)
    with pytest.raises(e.NotHost):
        apply(state, Start(2, 1), NOW)


@pytest.mark.parametrize("players", [1, 2, 3])
def test_r3_s2_the_game_cannot_start_with_fewer_than_four_and_no_robot_fills_a_seat(
    players: int,
) -> None:
    state = lobby(players)
    with pytest.raises(e.NotEnoughPlayers):
        apply(state, Start(0, 1), NOW)
    assert state.names.count("") == 4 - players


def test_r3_start_deals_the_first_round_and_joining_is_then_refused() -> None:
    state = apply(lobby(4), Start(0, 99), NOW).state
    assert state.phase is Phase.PLAYING and state.round is not None
    assert state.round.number == 1
    with pytest.raises(e.GameAlreadyStarted):
        apply(state, Join("Late"), NOW)


def test_r16_target_defaults_to_100() -> None:
    assert lobby().target == 100


@pytest.mark.parametrize("target", [50, 100, 150, 300, 500])
def test_r16_host_sets_target_from_50_to_500_in_steps_of_50(target: int) -> None:
    assert apply(lobby(), SetTarget(0, target), NOW).state.target == target


@pytest.mark.parametrize("target", [0, 49, 75, 501, 550, -50, 1000])
def test_r16_targets_outside_the_range_or_step_are_invalid(target: int) -> None:
    with pytest.raises(e.TargetInvalid):
        apply(lobby(), SetTarget(0, target), NOW)
    with pytest.raises(e.TargetInvalid):
        create(Create("t", "Ana", target, TIMING), NOW)


def test_r16_only_the_host_sets_the_target() -> None:
    with pytest.raises(e.NotHost):
        apply(lobby(), SetTarget(1, 200), NOW)


def test_r16_the_target_cannot_change_once_started() -> None:
    state = apply(lobby(), Start(0, 5), NOW).state
    with pytest.raises(e.GameAlreadyStarted):
        apply(state, SetTarget(0, 200), NOW)
    assert state.target == 100


@pytest.mark.parametrize("name", ["", "   ", "x" * 25, "bad\nname", "nul\x00", "rtl\u202e"])
def test_names_that_are_empty_too_long_or_hold_control_characters_are_invalid(name: str) -> None:
    with pytest.raises(e.NameInvalid):
        apply(lobby(2), Join(name), NOW)


def test_names_are_trimmed_and_may_be_any_printable_text() -> None:
    state = apply(lobby(1), Join("  Zoé 🁣  "), NOW).state
    assert state.names[1] == "Zoé 🁣"


def test_commands_for_an_empty_seat_are_refused() -> None:
    with pytest.raises(e.SeatInvalid):
        apply(lobby(2), Leave(3), NOW)
    with pytest.raises(e.SeatInvalid):
        apply(lobby(2), Leave(7), NOW)
