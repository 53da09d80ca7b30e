"""The friendly end (seed 004, D11, issue 20): every human accepts, robots do not vote, a
refusal or the time limit cancels it, the game pauses meanwhile and resumes as it was."""

from __future__ import annotations

import pytest

from services.rules import NOBODY, Expire, Pass, Phase, SetPresence, apply, view_for
from services.rules import errors as e
from services.rules.commands import AnswerEnd, ProposeEnd
from services.rules.engine import auto_play_choice, legal_moves
from services.rules.events import EndAnswered, EndProposed, RobotSeated, VoteClosed
from services.rules.options import TableOptions
from services.rules.state import VoteOutcome

from .builders import NOW
from .option_builders import SITE_PAIRS, WEB_DRAW_2, started

FRIENDLY = TableOptions(friendly_end=True, vote_ms=30_000, fill_level=1)
T = NOW + 2_000


def test_every_human_accepting_ends_the_game_unscored_and_won_by_nobody() -> None:
    state = started(SITE_PAIRS, FRIENDLY, humans=3)  # seat 3 is a robot: it does not vote
    t = apply(state, ProposeEnd(1), T)
    assert t.events == (EndProposed(1, T + 30_000),)
    t = apply(t.state, AnswerEnd(0, True), T + 1)
    assert t.events == (EndAnswered(0, True),) and t.state.phase is Phase.PLAYING
    t = apply(t.state, AnswerEnd(2, True), T + 2)
    assert t.events == (EndAnswered(2, True), VoteClosed(VoteOutcome.ENDED, 2))
    ended = t.state
    assert ended.phase is Phase.FINISHED and ended.unscored and ended.winner == NOBODY
    assert ended.deadline_ms == 0 and ended.scores == state.scores
    assert view_for(ended, 0).unscored


def test_a_refusal_closes_the_vote_and_the_turn_resumes_with_the_time_it_had_left() -> None:
    state = started(SITE_PAIRS, FRIENDLY, humans=4)
    left = state.deadline_ms - T
    voting = apply(state, ProposeEnd(0), T).state
    t = apply(voting, AnswerEnd(3, False), T + 5_000)
    assert t.events == (EndAnswered(3, False), VoteClosed(VoteOutcome.REFUSED, 3))
    resumed = t.state
    assert resumed.vote is None and resumed.phase is Phase.PLAYING
    assert resumed.deadline_ms == T + 5_000 + left
    assert resumed.turn_number == voting.turn_number + 1  # the vote's clock is stale now


def test_the_time_limit_cancels_the_proposal() -> None:
    state = started(SITE_PAIRS, FRIENDLY, humans=2)
    voting = apply(state, ProposeEnd(0), T).state
    with pytest.raises(e.TimerStale):
        apply(voting, Expire(voting.turn_number), T + 29_999)
    t = apply(voting, Expire(voting.turn_number), T + 30_000)
    assert t.events == (VoteClosed(VoteOutcome.EXPIRED, NOBODY),)
    assert t.state.vote is None and t.state.phase is Phase.PLAYING


def test_the_game_is_paused_during_a_vote_no_move_and_no_auto_play() -> None:
    state = started(SITE_PAIRS, FRIENDLY, humans=4)
    assert state.round is not None
    seat = state.round.turn
    move = auto_play_choice(state)
    voting = apply(state, ProposeEnd(0), T).state
    assert legal_moves(voting, seat) == () and not view_for(voting, seat).legal_moves
    for command in (move, Pass(seat)):
        with pytest.raises(e.VoteOpen):
            apply(voting, command, T + 1)
    with pytest.raises(e.VoteOpen):
        apply(voting, ProposeEnd(1), T + 1)
    # The old turn clock is stale: the only clock is the vote's.
    with pytest.raises(e.TimerStale):
        apply(voting, Expire(state.turn_number), state.deadline_ms)


def test_robots_do_not_vote_and_a_second_answer_is_refused() -> None:
    state = started(SITE_PAIRS, FRIENDLY, humans=2)
    voting = apply(state, ProposeEnd(0), T).state
    with pytest.raises(e.RobotSeat):
        apply(voting, AnswerEnd(2, True), T)
    with pytest.raises(e.RobotSeat):
        apply(state, ProposeEnd(3), T)
    with pytest.raises(e.NoVoteOpen):
        apply(voting, AnswerEnd(0, True), T)  # the proposer accepted already
    with pytest.raises(e.NoVoteOpen):
        apply(state, AnswerEnd(1, True), T)


def test_the_only_person_at_a_practice_table_ends_it_at_once() -> None:
    options = TableOptions(practice=(1, 2, 3), friendly_end=True)
    state = started(SITE_PAIRS, options, humans=1)
    t = apply(state, ProposeEnd(0), T)
    assert t.events == (EndProposed(0, T), VoteClosed(VoteOutcome.ENDED, 0))
    assert t.state.phase is Phase.FINISHED and t.state.unscored


def test_a_player_who_dropped_still_votes_so_the_vote_cannot_pass_without_them() -> None:
    state = started(SITE_PAIRS, FRIENDLY, humans=3)
    away = apply(state, SetPresence(2, False), T).state
    voting = apply(apply(away, ProposeEnd(0), T).state, AnswerEnd(1, True), T).state
    assert voting.phase is Phase.PLAYING and voting.vote is not None


def test_a_player_whose_return_window_lapsed_no_longer_votes_d10_d11() -> None:
    """The window lapses before the proposal is weighed: the robot keeps the seat for good
    (RobotSeated, in the proposal's own transition) and the proposer, now the only person
    at the table, ends the game at once (found by the vote property on a 2-seat table)."""
    options = TableOptions(friendly_end=True, vote_ms=30_000, replace_level=1)
    state = started(SITE_PAIRS, options, humans=4)
    away = apply(state, SetPresence(0, False), T).state
    away = apply(away, SetPresence(1, False), T).state
    away = apply(away, SetPresence(2, False), T).state
    window = away.stand_ins[2]
    early = apply(away, ProposeEnd(3), window - 1)  # within the window the players still vote
    assert early.events == (EndProposed(3, window - 1 + 30_000),) and early.state.vote
    t = apply(away, ProposeEnd(3), window)
    seated = [event.seat for event in t.events if isinstance(event, RobotSeated)]
    assert seated == [0, 1, 2]
    assert t.events[-2:] == (EndProposed(3, window), VoteClosed(VoteOutcome.ENDED, 3))
    assert t.state.phase is Phase.FINISHED and t.state.unscored


def test_the_friendly_end_needs_the_option_and_a_game_that_runs() -> None:
    plain = started(SITE_PAIRS, TableOptions(fill_level=1), humans=2)
    with pytest.raises(e.FriendlyEndUnavailable):
        apply(plain, ProposeEnd(0), T)
    other = started(WEB_DRAW_2, TableOptions(), humans=2)
    with pytest.raises(e.FriendlyEndUnavailable):
        apply(other, ProposeEnd(0), T)
    over = apply(
        apply(started(SITE_PAIRS, FRIENDLY, 2), ProposeEnd(0), T).state, AnswerEnd(1, True), T
    )
    with pytest.raises(e.GameOver):
        apply(over.state, ProposeEnd(0), T)


def test_a_vote_during_the_break_pauses_the_break() -> None:
    state = started(SITE_PAIRS, FRIENDLY, humans=4)
    while state.phase is Phase.PLAYING:
        state = apply(state, Expire(state.turn_number), state.deadline_ms).state
    assert state.phase is Phase.ROUND_OVER
    now = state.deadline_ms - 4_000
    voting = apply(state, ProposeEnd(2), now).state
    resumed = apply(voting, AnswerEnd(1, False), now + 10_000).state
    assert resumed.phase is Phase.ROUND_OVER and resumed.deadline_ms == now + 10_000 + 4_000


def test_a_seat_proposes_once_per_round_so_nobody_keeps_the_game_paused() -> None:
    state = started(SITE_PAIRS, FRIENDLY, humans=4)
    refused = apply(apply(state, ProposeEnd(0), T).state, AnswerEnd(1, False), T + 1).state
    with pytest.raises(e.AlreadyProposed):
        apply(refused, ProposeEnd(0), T + 2)
    other = apply(refused, ProposeEnd(2), T + 2).state  # another seat still may
    assert other.vote is not None and other.vote.proposer == 2
    resumed = apply(other, AnswerEnd(1, False), T + 3).state
    while resumed.phase is Phase.PLAYING:  # to the next round
        resumed = apply(resumed, Expire(resumed.turn_number), resumed.deadline_ms).state
    assert resumed.phase is Phase.ROUND_OVER
    with pytest.raises(e.AlreadyProposed):  # the break belongs to the round
        apply(resumed, ProposeEnd(0), resumed.deadline_ms - 1)
    dealt = apply(resumed, Expire(resumed.turn_number), resumed.deadline_ms).state
    assert apply(dealt, ProposeEnd(0), dealt.deadline_ms - 1).state.vote is not None
