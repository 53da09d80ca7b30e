"""Properties of random games with table options (issue 20, hypothesis): robots, players who
drop and come back (late too), friendly-end votes. Every state round-trips the codec and
the command log replays it; a seat a robot plays never gets the full turn clock; a vote
pauses the game; a game ends unscored only when every human accepted (a player whose return
window lapsed is a robot's seat from then on and no longer votes)."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from services.rules import (
    Create,
    Draw,
    Expire,
    Join,
    Pass,
    Phase,
    SetPresence,
    Start,
    can_draw,
    create,
    decode_state,
    encode_state,
    legal_moves,
    replay,
)
from services.rules import errors as e
from services.rules.commands import AnswerEnd, ProposeEnd
from services.rules.events import EndAnswered, EndProposed, RobotSeated, VoteClosed
from services.rules.options import ROBOT_PRESETS, TableOptions
from services.rules.robot_seats import humans, robot_plays
from services.rules.rulesets import RuleSet
from services.rules.state import VoteOutcome

from .builders import TIMING
from .rule_builders import layouts
from .test_preset_properties import Game

LAYOUTS = layouts(sorted(ROBOT_PRESETS))


@st.composite
def tables(draw: st.DrawFn) -> tuple[RuleSet, TableOptions, int]:
    site = [rules for rules in LAYOUTS if rules.preset == "site"]  # the friendly end's
    rules = draw(st.one_of(st.sampled_from(site), st.sampled_from(LAYOUTS)))
    level = st.integers(min_value=1, max_value=3)
    practice = draw(st.booleans())
    options = TableOptions(
        practice=tuple(draw(level) for _ in range(rules.seats - 1)) if practice else (),
        fill_level=draw(st.sampled_from([0, 1, 2, 3])),
        replace_level=draw(st.sampled_from([0, 1, 2, 3])),
        return_ms=60_000,
        friendly_end=rules.preset == "site",
        vote_ms=10_000,
        count_aid=draw(st.booleans()),
    )
    people = 1 if practice else draw(st.integers(min_value=1, max_value=rules.seats))
    if not options.fill_level:
        people = 1 if practice else rules.seats
    return rules, options, people


def new_game(rules: RuleSet, options: TableOptions, people: int, seed: int) -> Game:
    command = Create("opts", "A", rules.target, TIMING, rules, options)
    game = Game(create(command, 0).state)
    game.log.append((command, 0))
    for name in ("B", "C", "D")[: people - 1]:
        game.do(Join(name))
    game.do(Start(0, seed))
    return game


def play(game: Game, data: st.DataObject, steps: int) -> list[int]:
    """Random commands, refused ones included; the time of each entry of the history."""
    times: list[int] = []
    for _ in range(steps):
        times.extend([game.now] * (len(game.history) - len(times)))
        state = game.state
        if state.phase is Phase.FINISHED:
            break
        game.now += data.draw(st.integers(min_value=1, max_value=20_000), label="dt")
        action = data.draw(st.integers(min_value=0, max_value=9), label="action")
        seats = state.rules.seats
        who = data.draw(st.integers(min_value=0, max_value=seats - 1), label="who")
        try:
            if action == 0 or state.phase is Phase.ROUND_OVER or state.vote is not None:
                if action in (1, 2) and state.vote is not None:
                    game.do(AnswerEnd(who, action == 1))
                else:
                    game.now = max(game.now, state.deadline_ms)
                    game.do(Expire(state.turn_number))
            elif action == 1:
                game.do(SetPresence(who, not state.connected[who]))
            elif action == 2:
                game.do(ProposeEnd(who))
            else:
                assert state.round is not None
                seat = state.round.turn
                moves = legal_moves(state, seat)
                if moves:
                    game.do(data.draw(st.sampled_from(moves), label="move"))
                elif can_draw(state, seat):
                    game.do(Draw(seat))
                else:
                    game.do(Pass(seat))
        except e.RuleError:
            continue  # a refused command (a robot's seat, no vote open...) changes nothing
    times.extend([game.now] * (len(game.history) - len(times)))
    return times


SETTINGS = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(table=tables(), seed=st.integers(min_value=0, max_value=2**64), data=st.data())
def test_every_state_round_trips_the_codec_and_the_log_replays_it(
    table: tuple[RuleSet, TableOptions, int], seed: int, data: st.DataObject
) -> None:
    game = new_game(*table, seed)
    play(game, data, 150)
    for before, _, _, after in game.history:
        assert decode_state(encode_state(after)) == after
        assert after.version in (before.version, before.version + 1)
    assert replay(game.log) == game.state


@SETTINGS
@given(table=tables(), seed=st.integers(min_value=0, max_value=2**64), data=st.data())
def test_robots_stand_in_only_as_chosen_and_never_get_the_full_turn_clock(
    table: tuple[RuleSet, TableOptions, int], seed: int, data: st.DataObject
) -> None:
    rules, options, _ = table
    game = new_game(*table, seed)
    times = play(game, data, 150)
    for (before, _, _, after), now in zip(game.history, times, strict=True):
        if not options.replace_level:
            assert after.stand_ins == (0, 0, 0, 0)
        for seat in range(rules.seats):
            if after.robots[seat]:
                assert after.connected[seat]  # a robot is always there
            if after.stand_ins[seat]:
                assert not after.connected[seat]
        rnd = after.round
        clock_started = after.turn_number != before.turn_number and after.vote is None
        live = after.phase is Phase.PLAYING and rnd is not None
        if live and clock_started and rnd is not None and robot_plays(after, rnd.turn):
            assert after.deadline_ms - now <= TIMING.away_ms


@SETTINGS
@given(table=tables(), seed=st.integers(min_value=0, max_value=2**64), data=st.data())
def test_a_vote_pauses_the_game_and_ends_it_only_when_every_human_accepted(
    table: tuple[RuleSet, TableOptions, int], seed: int, data: st.DataObject
) -> None:
    game = new_game(*table, seed)
    play(game, data, 150)
    accepted = 0
    for before, _, events, after in game.history:
        # A return window that lapsed seats its robot for good before the command is weighed
        # (in the same transition): that seat is no longer a person's and does not vote.
        seated = sum(1 << event.seat for event in events if isinstance(event, RobotSeated))
        assert humans(before) & ~humans(after) == humans(before) & seated
        for event in events:
            if isinstance(event, EndProposed):
                accepted = 1 << event.seat
            elif isinstance(event, EndAnswered) and event.accepted:
                accepted |= 1 << event.seat
            elif isinstance(event, VoteClosed) and event.outcome is VoteOutcome.ENDED:
                assert accepted & humans(after) == humans(after)
                assert after.unscored and after.phase is Phase.FINISHED
        if before.vote is not None and after.vote is not None:
            assert after.round == before.round  # nothing is played during a vote
        if after.unscored:
            assert after.phase is Phase.FINISHED
