"""The friendly end (seed 004, D11, issue 20): the humans end a game by unanimous consent.

Any human seat may propose while the game runs (a round in play or the break between rounds)
at a table whose host chose the friendly end, once per round (its break included). The game
pauses: the running clock (turn or break) is stopped, what was left of it kept, and the
vote's own clock runs for ``TableOptions.vote_ms`` (the timer service fires it like any
clock). Each human seat answers once; the proposer has accepted. Robots do not vote. When
every human seat has accepted the game ends, unscored and won by nobody. A refusal, or the
vote's clock running out, closes the vote and the game resumes with the time that was left
(never more, S4).
"""

from __future__ import annotations

from . import errors
from .commands import AnswerEnd, ProposeEnd
from .events import EndAnswered, EndProposed, VoteClosed
from .robot_seats import humans, person_there
from .state import NOBODY, Phase, TableState, Vote, VoteOutcome
from .transition import Transition


def _require_human(state: TableState, seat: int) -> None:
    if not (0 <= seat < state.rules.seats and state.names[seat]):
        raise errors.SeatInvalid(f"seat {seat} is not taken at this table")
    if state.robots[seat]:
        raise errors.RobotSeat("robots do not vote")


def propose(state: TableState, command: ProposeEnd, now_ms: int) -> Transition:
    """Open a vote (see the module docstring); ``FriendlyEndUnavailable`` where the table has
    none, ``GameOver`` / ``RoundNotInPlay`` outside a game, ``VoteOpen`` during a vote."""
    seat = command.seat
    _require_human(state, seat)
    if not state.options.friendly_end:
        raise errors.FriendlyEndUnavailable("this table has no friendly end")
    if state.phase in (Phase.FINISHED, Phase.CLOSED):
        raise errors.GameOver("the game is over")
    if state.phase is Phase.WAITING:
        raise errors.RoundNotInPlay("the game has not started")
    if state.vote is not None:
        raise errors.VoteOpen("a vote is open")
    number = state.round.number if state.round is not None else 0
    asked = state.proposals[1] if state.proposals[0] == number else 0
    if asked >> seat & 1:
        raise errors.AlreadyProposed("this seat proposed already in this round")
    proposals = (number, asked | 1 << seat)
    accepted = 1 << seat
    if accepted == humans(state):  # the only person at the table: ended at once
        return _ended(state._replace(proposals=proposals), seat, (EndProposed(seat, now_ms),))
    paused = max(0, state.deadline_ms - now_ms) if state.deadline_ms else 0
    deadline = now_ms + state.options.vote_ms
    event = EndProposed(seat, deadline)
    new_state = state._replace(
        version=state.version + 1,
        vote=Vote(seat, accepted, deadline, paused),
        proposals=proposals,
        turn_number=state.turn_number + 1,
        deadline_ms=deadline,
        last_action=event,
    )
    return Transition(new_state, (event,))


def answer(state: TableState, command: AnswerEnd, now_ms: int) -> Transition:
    """A human seat's answer; ``NoVoteOpen`` without a vote or when it answered already."""
    seat = command.seat
    _require_human(state, seat)
    vote = state.vote
    if vote is None or vote.accepted >> seat & 1:
        raise errors.NoVoteOpen("no vote is waiting for this seat's answer")
    if not command.accept:
        return _resume(state, VoteClosed(VoteOutcome.REFUSED, seat), now_ms)
    accepted = vote.accepted | 1 << seat
    if accepted & humans(state) == humans(state):
        return _ended(state, seat, (EndAnswered(seat, True),))
    event = EndAnswered(seat, True)
    new_state = state._replace(
        version=state.version + 1,
        vote=vote._replace(accepted=accepted),
        last_action=event,
    )
    return Transition(new_state, (event,))


def expire(state: TableState, now_ms: int) -> Transition:
    """The vote's clock ran out (the caller checked it is due): closed, the game resumes."""
    return _resume(state, VoteClosed(VoteOutcome.EXPIRED, NOBODY), now_ms)


def _ended(state: TableState, seat: int, before: tuple[object, ...]) -> Transition:
    event = VoteClosed(VoteOutcome.ENDED, seat)
    new_state = state._replace(
        version=state.version + 1,
        phase=Phase.FINISHED,
        vote=None,
        turn_number=state.turn_number + 1,
        deadline_ms=0,
        winner=NOBODY,
        unscored=True,
        stand_ins=(0, 0, 0, 0),
        last_action=event,
    )
    return Transition(new_state, (*before, event))  # type: ignore[arg-type]


def _resume(state: TableState, event: VoteClosed, now_ms: int) -> Transition:
    """Close the vote and restart the paused clock with what was left of it (a seat that is
    away, and played by no robot, gets no more than the away clock, S3)."""
    vote = state.vote
    assert vote is not None
    left = vote.paused_ms
    rnd = state.round
    if state.phase is Phase.PLAYING and rnd is not None and not person_there(state, rnd.turn):
        left = min(left, state.timing.away_ms)
    new_state = state._replace(
        version=state.version + 1,
        vote=None,
        turn_number=state.turn_number + 1,
        deadline_ms=now_ms + left,
        last_action=event,
    )
    return Transition(new_state, (*_answered(event), event))


def _answered(event: VoteClosed) -> tuple[EndAnswered, ...]:
    if event.outcome is VoteOutcome.REFUSED:
        return (EndAnswered(event.seat, False),)
    return ()
