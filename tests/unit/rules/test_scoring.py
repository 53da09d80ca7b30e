"""Ending rounds and games (R12-R15, R17) and the next round's opener (R7, D1)."""

from __future__ import annotations

from services.rules import (
    Expire,
    Outcome,
    Pass,
    Phase,
    Play,
    TableState,
    apply,
    view_for,
)
from services.rules.events import Event, GameEnded, RoundDealt, RoundEnded
from services.rules.state import End
from services.rules.tiles import tile_index

from .builders import NOW, TIMING, in_play

L, R = int(End.LEFT), int(End.RIGHT)


def _pass_all(state: TableState, first_seat: int = 0) -> tuple[TableState, list[Event]]:
    """Every seat passes in turn from ``first_seat``: the round is blocked (R13)."""
    events: list[Event] = []
    for seat in range(first_seat, first_seat + 4):
        t = apply(state, Pass(seat % 4), NOW)
        state, events = t.state, [*events, *t.events]
    return state, events


def test_r12_domino_scores_both_opponents_hands_and_not_the_partners() -> None:
    # Seat 1 (team B) lays its last tile. Opponents: seats 0 and 2 (team A).
    state = in_play(("1-1 2-2", "5-6", "3-3", "6-6 4-4"), left=0, right=6, turn=1, last_layer=0)
    t = apply(state, Play(1, tile_index(5, 6), R), NOW)
    (ended,) = [ev for ev in t.events if isinstance(ev, RoundEnded)]
    result = ended.result
    assert result.outcome is Outcome.DOMINO
    assert result.domino_seat == 1
    assert result.scoring_team == 1
    assert result.points == (1 + 1 + 2 + 2) + (3 + 3)  # seat 3's 6-6 and 4-4 do not count
    assert t.state.scores == (0, 12)


def test_r13_blocked_round_the_lighter_team_scores_the_other_teams_total() -> None:
    # Ends 5 and 6: nobody holds a 5 or a 6. Team A: 1-1 + 2-2 = 6; team B: 3-3 + 0-1 = 7.
    state = in_play(("1-1", "3-3", "2-2", "0-1"), left=5, right=6, turn=0, last_layer=3)
    state, events = _pass_all(state)
    (ended,) = [ev for ev in events if isinstance(ev, RoundEnded)]
    assert ended.result.outcome is Outcome.BLOCKED
    assert ended.result.team_pips == (6, 7)
    assert ended.result.scoring_team == 0
    assert ended.result.points == 7
    assert state.scores == (7, 0)


def test_r13_the_round_is_blocked_only_after_four_consecutive_passes() -> None:
    state = in_play(("1-1", "3-3", "2-2", "0-1"), left=5, right=6, turn=0, last_layer=3)
    for seat in range(3):
        state = apply(state, Pass(seat), NOW).state
        assert state.phase is Phase.PLAYING
    assert state.round is not None and state.round.passes == 3
    state = apply(state, Pass(3), NOW).state
    assert state.phase is Phase.ROUND_OVER


def test_r13_a_play_resets_the_count_of_consecutive_passes() -> None:
    state = in_play(("1-1", "3-3 5-2", "2-2", "0-1"), left=5, right=6, turn=0, last_layer=3)
    state = apply(state, Pass(0), NOW).state
    state = apply(state, Play(1, tile_index(2, 5), L), NOW).state
    assert state.round is not None and state.round.passes == 0


def test_r14_blocked_tie_goes_to_the_team_that_laid_the_last_tile_and_the_summary_says_so() -> None:
    # Team A: 1-1 + 2-2 = 6; team B: 3-3 + 0-0 = 6. Seat 3 (team B) laid the last tile.
    state = in_play(("1-1", "3-3", "2-2", "0-0"), left=5, right=6, turn=0, last_layer=3)
    state, events = _pass_all(state)
    (ended,) = [ev for ev in events if isinstance(ev, RoundEnded)]
    result = ended.result
    assert result.outcome is Outcome.BLOCKED_TIE
    assert result.last_tile_team == 1
    assert result.scoring_team == 1
    assert result.points == 6  # the same points either way
    summary = view_for(state, 0).last_round
    assert summary is not None and summary.outcome is Outcome.BLOCKED_TIE


def test_r14_the_tie_goes_to_team_a_when_team_a_laid_last() -> None:
    state = in_play(("1-1", "3-3", "2-2", "0-0"), left=5, right=6, turn=1, last_layer=2)
    state, events = _pass_all(state, first_seat=1)
    (ended,) = [ev for ev in events if isinstance(ev, RoundEnded)]
    assert ended.result.scoring_team == 0 and ended.result.outcome is Outcome.BLOCKED_TIE


def test_r15_exactly_one_team_scores_in_a_round() -> None:
    state = in_play(("1-1", "3-3", "2-2", "0-1"), left=5, right=6, turn=0, last_layer=3)
    state, _ = _pass_all(state)
    assert sorted(state.scores) == [0, 7]


def test_r17_the_first_team_to_reach_the_target_wins_and_points_beyond_count() -> None:
    state = in_play(
        ("1-1 2-2", "5-6", "3-3", "6-6 4-4"),
        left=0,
        right=6,
        turn=1,
        last_layer=0,
        scores=(40, 95),
        target=100,
    )
    t = apply(state, Play(1, tile_index(5, 6), R), NOW)
    assert t.state.phase is Phase.FINISHED
    assert t.state.scores == (40, 107)
    assert t.state.winner == 1
    assert GameEnded(1, (40, 107)) in t.events
    assert t.state.deadline_ms == 0


def test_r17_below_the_target_the_game_goes_on_to_a_break() -> None:
    state = in_play(
        ("1-1 2-2", "5-6", "3-3", "6-6 4-4"), left=0, right=6, turn=1, last_layer=0, scores=(0, 80)
    )
    t = apply(state, Play(1, tile_index(5, 6), R), NOW)
    assert t.state.phase is Phase.ROUND_OVER
    assert t.state.scores == (0, 92)
    assert t.state.winner == -1


def test_r7_d1_after_the_break_the_next_round_is_opened_by_the_previous_openers_neighbour() -> None:
    # Round 3 was opened by seat 2 and won by team B: round 4 is opened by seat 3 regardless.
    state = in_play(
        ("1-1 2-2", "5-6", "3-3", "6-6 4-4"), left=0, right=6, turn=1, opener=2, number=3
    )
    over = apply(state, Play(1, tile_index(5, 6), R), NOW).state
    assert over.phase is Phase.ROUND_OVER
    assert over.deadline_ms == NOW + TIMING.break_ms
    t = apply(over, Expire(over.turn_number), over.deadline_ms)
    assert t.events == (RoundDealt(4, 3),)
    assert t.state.round is not None and t.state.round.opener == 3 and t.state.round.turn == 3
    assert t.state.last_result is None  # the summary is shown during the break only
    assert [h.bit_count() for h in t.state.round.hands] == [7, 7, 7, 7]


def test_r7_over_four_rounds_everyone_opens_exactly_once() -> None:
    state = in_play(("1-1", "3-3", "2-2", "0-1"), left=5, right=6, turn=0, opener=1)
    openers = []
    for _ in range(4):
        assert state.round is not None
        openers.append(state.round.opener)
        rnd = state.round
        # End the round by blocking it: build the same blocked layout for the current opener.
        state = in_play(
            ("1-1", "3-3", "2-2", "0-1"),
            left=5,
            right=6,
            turn=0,
            opener=rnd.opener,
            number=rnd.number,
        )
        state, _ = _pass_all(state)
        state = apply(state, Expire(state.turn_number), state.deadline_ms).state
    assert sorted(openers) == [0, 1, 2, 3]
