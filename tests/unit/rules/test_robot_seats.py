"""Robots take seats only as the host chose (issue 20, D10): a practice table, an early start,
a player who dropped; the seat goes back to the player who returns in time."""

from __future__ import annotations

import pytest

from services.rules import Expire, Join, Phase, Play, SetPresence, Start, apply, view_for
from services.rules import errors as e
from services.rules.engine import auto_play_choice
from services.rules.events import HandedOver, PresenceChanged, RobotSeated, RoundDealt
from services.rules.options import RobotLevel, TableOptions
from services.rules.robot_seats import humans, robot_name, robot_plays

from .builders import NOW, TIMING
from .option_builders import SITE_PAIRS, WEB_DRAW_2, started, table

REPLACE = TableOptions(replace_level=RobotLevel.STRONG, return_ms=120_000)


def test_a_practice_table_seats_its_robots_at_creation_and_starts_with_the_host_alone() -> None:
    state = table(SITE_PAIRS, TableOptions(practice=(1, 2, 3)), humans=1)
    assert state.robots == (0, 1, 2, 3)
    assert state.names[1:] == ("Robot 2", "Robot 3", "Robot 4")
    assert state.connected[1:] == (True, True, True)  # a robot is always there
    assert humans(state) == 0b0001
    with pytest.raises(e.TableFull):
        apply(state, Join("Eve"), NOW)
    assert apply(state, Start(0, 1), NOW).state.phase is Phase.PLAYING


def test_an_early_start_fills_the_empty_seats_with_robots_of_the_chosen_level() -> None:
    state = table(SITE_PAIRS, TableOptions(fill_level=RobotLevel.SOLID), humans=2)
    t = apply(state, Start(0, 3), NOW)
    assert t.state.robots == (0, 0, 2, 2)
    assert t.events[:2] == (RobotSeated(2, 2), RobotSeated(3, 2))
    assert isinstance(t.events[2], RoundDealt)
    assert t.state.version == state.version + 1  # one command, one version


def test_without_the_fill_option_an_early_start_is_refused_r3() -> None:
    state = table(SITE_PAIRS, TableOptions(replace_level=1), humans=3)
    with pytest.raises(e.NotEnoughPlayers):
        apply(state, Start(0, 3), NOW)


def test_a_robot_never_takes_a_name_that_looks_like_a_seated_player() -> None:
    assert robot_name(("Robot 2", "", "", ""), 1) == "Robot 3"
    assert robot_name(("R0bot 3", "Robot 3", "", ""), 2) == "Robot 4"


def test_a_robot_seat_gets_the_short_clock_as_its_fallback() -> None:
    state = started(SITE_PAIRS, TableOptions(practice=(1, 1, 1)), humans=1)
    assert state.round is not None
    seat = state.round.turn
    clock = TIMING.turn_ms if seat == 0 else TIMING.away_ms
    assert state.deadline_ms == NOW + clock
    # Should the bots service be down, the table plays the robot's turn like an away seat's.
    late = apply(state, Expire(state.turn_number), state.deadline_ms)
    assert late.state.version == state.version + 1


def test_a_dropped_player_is_replaced_at_once_and_gets_the_seat_back_on_return() -> None:
    state = started(SITE_PAIRS, REPLACE, humans=4)
    t = apply(state, SetPresence(2, False), NOW + 10)
    assert t.events == (PresenceChanged(2, False), HandedOver(2, 3, NOW + 10 + 120_000))
    assert t.state.stand_ins == (0, 0, NOW + 120_010, 0) and robot_plays(t.state, 2)
    assert view_for(t.state, 0).seats[2].stand_in_until_ms == NOW + 120_010
    back = apply(t.state, SetPresence(2, True), NOW + 20).state
    assert back.stand_ins == (0, 0, 0, 0) and not robot_plays(back, 2)
    assert back.robots == (0, 0, 0, 0)


def test_a_player_who_returns_mid_turn_takes_over_the_clock_that_runs_d3_s4() -> None:
    state = started(SITE_PAIRS, REPLACE, humans=4)
    assert state.round is not None
    seat = state.round.turn
    away = apply(state, SetPresence(seat, False), NOW + 1_000).state
    assert away.deadline_ms == NOW + 1_000 + TIMING.away_ms  # D3, the robot acts within it
    back = apply(away, SetPresence(seat, True), NOW + 2_000).state
    assert back.deadline_ms == away.deadline_ms  # never lengthened (S4)
    move = auto_play_choice(back)
    assert isinstance(move, Play)
    assert apply(back, move, NOW + 2_500).state.round is not None  # the player's own move


def test_after_the_return_window_the_robot_keeps_the_seat_and_the_player_cannot_return() -> None:
    state = started(SITE_PAIRS, REPLACE, humans=4)
    away = apply(state, SetPresence(1, False), NOW).state
    late = NOW + 120_000
    with pytest.raises(e.RobotSeat):
        apply(away, SetPresence(1, True), late)
    # The next command settles it, in its own version.
    t = apply(away, Expire(away.turn_number), max(late, away.deadline_ms))
    assert t.state.robots[1] == RobotLevel.STRONG and t.state.stand_ins == (0, 0, 0, 0)
    assert RobotSeated(1, 3) in t.events and t.state.version == away.version + 1
    assert t.state.names[1] == "Bruno"  # the seat keeps its player's name, shown as a robot
    assert view_for(t.state, 0).seats[1].robot == 3


def test_no_robot_replaces_anyone_without_the_option_s3() -> None:
    state = started(WEB_DRAW_2, TableOptions(count_aid=True), humans=2)
    away = apply(state, SetPresence(1, False), NOW).state
    assert away.stand_ins == (0, 0, 0, 0) and not robot_plays(away, 1)


def test_a_player_who_drops_in_the_lobby_is_not_replaced() -> None:
    state = table(SITE_PAIRS, REPLACE, humans=2)
    assert apply(state, SetPresence(1, False), NOW).state.stand_ins == (0, 0, 0, 0)
