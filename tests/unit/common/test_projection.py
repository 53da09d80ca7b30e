"""``table_view``: the contract's ``TableView`` is a faithful copy of ``view_for`` (S6, D1),
and while a round is live no seat's message carries a tile of another seat's hand."""

from __future__ import annotations

import random
from typing import Any

import pytest
from dominos.v1 import game_pb2, gateway_pb2
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from services.common import projection
from services.common.projection import (
    SEAT_FIELDS,
    public_view_bytes,
    seat_part_bytes,
    table_view,
    tile_message,
    view_bytes_from_parts,
    view_parts,
    watch_response_from_parts,
)
from services.rules import (
    NOBODY,
    Draw,
    Expire,
    Leave,
    Pass,
    Phase,
    Play,
    RoundResult,
    RuleSet,
    SeatView,
    SetPresence,
    SetTarget,
    Start,
    TableState,
    apply,
    can_draw,
    legal_moves,
    view_for,
)
from services.rules import (
    PRESETS as PRESET_RULES,
)
from services.rules.commands import AnswerEnd, ProposeEnd
from services.rules.errors import RuleError
from services.rules.events import (
    Drew,
    EndAnswered,
    EndProposed,
    Event,
    HandedOver,
    Passed,
    PresenceChanged,
    RobotSeated,
    RoundDealt,
    SeatFreed,
    SeatTaken,
    TableCreated,
    TargetChanged,
    TileLaid,
    VoteClosed,
)
from services.rules.options import NO_OPTIONS, TableOptions
from services.rules.robot_seats import humans
from services.rules.state import AutoCause, End, Outcome
from services.rules.tiles import HIGH, INDEX, LOW, numbers_of, tile_index
from testing.games import drive, new_game, tiles_in
from tests.unit.rules.builders import NOW, TIMING, in_play, lobby
from tests.unit.rules.option_builders import table as option_table
from tests.unit.rules.rule_builders import lobby_of

SERVER_TIME = 1_767_225_612_345
TEAMS = {NOBODY: game_pb2.TEAM_UNSPECIFIED, 0: game_pb2.TEAM_A, 1: game_pb2.TEAM_B}
ACTION_KINDS = {
    TableCreated: game_pb2.ACTION_KIND_CREATED,
    SeatTaken: game_pb2.ACTION_KIND_JOINED,
    SeatFreed: game_pb2.ACTION_KIND_LEFT,
    TargetChanged: game_pb2.ACTION_KIND_TARGET_SET,
    RoundDealt: game_pb2.ACTION_KIND_ROUND_DEALT,
    TileLaid: game_pb2.ACTION_KIND_PLAYED,
    Passed: game_pb2.ACTION_KIND_PASSED,
    PresenceChanged: game_pb2.ACTION_KIND_PRESENCE,
    Drew: game_pb2.ACTION_KIND_DREW,
    RobotSeated: game_pb2.ACTION_KIND_ROBOT_SEATED,
    HandedOver: game_pb2.ACTION_KIND_HANDED_OVER,
    EndProposed: game_pb2.ACTION_KIND_END_PROPOSED,
    EndAnswered: game_pb2.ACTION_KIND_END_ACCEPTED,
    VoteClosed: game_pb2.ACTION_KIND_VOTE_CLOSED,
}
PRESETS = {
    "classic": game_pb2.PRESET_CLASSIC,
    "family_draw": game_pb2.PRESET_FAMILY_DRAW,
    "web_draw": game_pb2.PRESET_WEB_DRAW,
    "web_block": game_pb2.PRESET_WEB_BLOCK,
    "web_fives": game_pb2.PRESET_WEB_FIVES,
    "app": game_pb2.PRESET_APP,
    "site": game_pb2.PRESET_SITE,
}
LEFT, RIGHT = int(End.LEFT), int(End.RIGHT)


def pair(tile: game_pb2.Tile) -> tuple[int, int]:
    return (tile.low, tile.high)


def halves(tile: int) -> tuple[int, int]:
    return (LOW[tile], HIGH[tile])


# --- the mirror of view_for -----------------------------------------------------------------


def assert_summary_mirrors(
    summary: game_pb2.RoundSummary, result: RoundResult, teams: bool = True
) -> None:
    assert summary.round_number == result.number
    assert summary.outcome == int(result.outcome)
    assert summary.points == result.points
    assert summary.HasField("domino_seat") is (result.outcome is Outcome.DOMINO)
    if result.outcome is Outcome.DOMINO:
        assert summary.domino_seat == result.domino_seat
    assert tuple(summary.side_pips) == result.team_pips
    assert summary.HasField("scoring_side") is (result.scoring_team != NOBODY)
    if result.scoring_team != NOBODY:
        assert summary.scoring_side == result.scoring_team
    if teams:
        assert summary.scoring_team == TEAMS[result.scoring_team]
        assert (summary.team_a_pips, summary.team_b_pips) == result.team_pips
        assert summary.last_tile_team == TEAMS[result.last_tile_team]
    else:
        assert summary.scoring_team == game_pb2.TEAM_UNSPECIFIED
        assert (summary.team_a_pips, summary.team_b_pips) == (0, 0)
    assert summary.tie_rule_applied is (result.outcome is Outcome.BLOCKED_TIE)
    assert summary.opener_seat == result.opener
    assert summary.unrounded_points == result.unrounded_points
    assert [h.seat for h in summary.hands] == [0, 1, 2, 3]
    for revealed, mask in zip(summary.hands, result.hands, strict=True):
        assert [pair(t) for t in revealed.tiles] == [halves(t) for t in sorted(tiles_in(mask))]
        assert revealed.points == sum(LOW[t] + HIGH[t] for t in tiles_in(mask))


def assert_action_mirrors(action: game_pb2.LastAction, event: Event) -> None:
    assert action.kind == ACTION_KINDS[type(event)]
    seat = getattr(event, "seat", 0 if isinstance(event, (TableCreated, TargetChanged)) else None)
    if seat == NOBODY:
        seat = None  # an expired vote
    assert action.HasField("seat") is (seat is not None)
    if seat is not None:
        assert action.seat == seat
    assert action.HasField("move") is isinstance(event, TileLaid)
    if isinstance(event, TileLaid):
        assert pair(action.move.tile) == halves(event.tile)
        assert action.move.end == event.end
    if isinstance(event, Passed):
        assert list(action.passed_on) == list(numbers_of(event.numbers))
    else:
        assert list(action.passed_on) == []
    auto = event.auto if isinstance(event, (TileLaid, Passed, Drew)) else AutoCause.NONE
    assert action.auto_play == int(auto)
    assert action.drawn == (event.count if isinstance(event, Drew) else 0)
    assert action.points == (event.points if isinstance(event, TileLaid) else 0)
    assert action.connected is (isinstance(event, PresenceChanged) and event.connected)
    level = event.level if isinstance(event, (RobotSeated, HandedOver)) else 0
    assert action.robot == level
    until = (
        event.until_ms
        if isinstance(event, HandedOver)
        else event.deadline_ms
        if isinstance(event, EndProposed)
        else 0
    )
    assert action.until_ms == until
    assert action.vote_outcome == (event.outcome if isinstance(event, VoteClosed) else 0)


CHECKED_FIELDS = {
    "table_id",
    "version",
    "phase",
    "target",
    "score_team_a",
    "score_team_b",
    "seats",
    "your_seat",
    "hand",
    "legal_moves",
    "can_pass",
    "turn_seat",
    "turn_deadline_ms",
    "server_time_ms",
    "round_number",
    "opener_seat",
    "chain",
    "left_end",
    "right_end",
    "last_round",
    "winner",
    "last_action",
    "consecutive_passes",
    "rules",
    "stock_size",
    "can_draw",
    "open_ends",
    "up_arm",
    "down_arm",
    "spinner_index",
    "side_scores",
    "winner_side",
    "options",
    "vote",
    "unscored",
    "laid_per_number",
}


def assert_options_mirror(
    message: game_pb2.TableView, view: SeatView, voters: int, chosen: TableOptions
) -> None:
    """Issue 20's fields: the options as chosen, the vote, the unscored end, the aid."""
    options = message.options
    assert message.HasField("options") is (view.options != NO_OPTIONS)
    assert view.options == chosen
    assert [int(level) for level in options.practice] == list(chosen.practice)
    assert (int(options.fill_empty_seats), int(options.replace_disconnected)) == (
        chosen.fill_level,
        chosen.replace_level,
    )
    assert options.return_seconds == (chosen.return_ms // 1000 if chosen.replace_level else 0)
    assert options.friendly_end is chosen.friendly_end
    assert options.vote_seconds == (chosen.vote_ms // 1000 if chosen.friendly_end else 0)
    assert options.count_aid is chosen.count_aid
    assert message.unscored is view.unscored
    assert tuple(message.laid_per_number) == view.laid_per_number
    assert message.HasField("vote") is (view.vote is not None)
    if view.vote is not None:
        vote = message.vote
        assert (vote.proposer, vote.deadline_ms) == (view.vote.proposer, view.vote.deadline_ms)
        accepted = [s for s in range(4) if view.vote.accepted >> s & 1]
        assert list(vote.accepted) == accepted
        assert list(vote.waiting) == [s for s in range(4) if voters >> s & 1 and s not in accepted]
    for info, public in zip(message.seats, view.seats, strict=True):
        assert info.robot == public.robot
        assert info.stand_in_until_ms == public.stand_in_until_ms
        assert info.stand_in == (chosen.replace_level if public.stand_in_until_ms else 0)


def assert_rules_mirror(message: game_pb2.RuleSet, rules: RuleSet) -> None:
    assert message.preset == PRESETS[rules.preset]
    assert (message.seats, message.teams, message.hand_size) == (
        rules.seats,
        rules.teams,
        rules.hand_size,
    )
    assert (message.draw, message.set_aside) == (rules.draw, rules.set_aside)
    assert (int(message.opener), int(message.next_opener)) == (rules.opener, rules.next_opener)
    assert (
        int(message.domino_score),
        int(message.blocked_score),
        int(message.blocked_tie),
    ) == (rules.domino_score, rules.blocked_score, rules.blocked_tie)
    assert int(message.scoring) == rules.scoring
    assert (message.min_target, message.max_target, message.target_step) == (
        rules.min_target,
        rules.max_target,
        rules.target_step,
    )
    assert message.turn_seconds == rules.turn_seconds


def assert_mirrors(message: game_pb2.TableView, view: SeatView, server_time_ms: int) -> None:
    """Every field of the message is the matching field of ``view``."""
    teams = view.rules.teams
    assert message.table_id == view.table_id
    assert message.version == view.version
    assert message.phase == int(view.phase)
    assert message.target == view.target
    assert tuple(message.side_scores) == view.scores
    assert (message.score_team_a, message.score_team_b) == (view.scores if teams else (0, 0))
    assert len(message.seats) == view.rules.seats
    for info, public in zip(message.seats, view.seats, strict=True):
        assert (info.seat, info.occupied, info.name) == (public.seat, public.occupied, public.name)
        assert info.team == TEAMS[public.team]
        assert (info.host, info.connected) == (public.host, public.connected)
        assert info.tile_count == public.tile_count
        assert tuple(info.passed_on) == public.passed_on
        assert (info.side, info.score) == (public.side, view.scores[public.side])
        assert info.drawn == public.drawn
    assert message.your_seat == view.your_seat
    assert [pair(t) for t in message.hand] == [halves(t) for t in view.hand]
    assert [(pair(m.tile), m.end, m.points) for m in message.legal_moves] == [
        (halves(p.tile), p.end, points)
        for p, points in zip(view.legal_moves, view.move_points, strict=True)
    ]
    assert message.can_pass is view.can_pass
    assert message.can_draw is view.can_draw
    assert message.stock_size == view.stock_count
    assert_rules_mirror(message.rules, view.rules)
    assert message.HasField("turn_seat") is (view.turn_seat != NOBODY)
    if view.turn_seat != NOBODY:
        assert message.turn_seat == view.turn_seat
    assert message.turn_deadline_ms == view.deadline_ms
    assert message.server_time_ms == server_time_ms
    assert message.round_number == view.round_number
    assert message.opener_seat == max(view.opener_seat, 0)
    assert [(p.left, p.right, p.seat) for p in message.chain] == list(view.chain)
    assert [(p.left, p.right, p.seat) for p in message.up_arm] == list(view.up_arm)
    assert [(p.left, p.right, p.seat) for p in message.down_arm] == list(view.down_arm)
    assert message.HasField("spinner_index") is (view.spinner_index != NOBODY)
    if view.spinner_index != NOBODY:
        assert message.spinner_index == view.spinner_index
    assert message.HasField("left_end") is (view.left_end != NOBODY)
    assert message.HasField("right_end") is (view.right_end != NOBODY)
    assert message.HasField("left_end") is bool(view.chain)
    if view.chain:
        assert (message.left_end, message.right_end) == (view.left_end, view.right_end)
        assert message.left_end == message.chain[0].left
        assert message.right_end == message.chain[-1].right
    assert [(int(e.end), e.number) for e in message.open_ends] == [
        (int(end), number) for end, number in view.open_ends
    ]
    if view.chain and not view.up_arm and not view.down_arm and view.spinner_index == NOBODY:
        assert list(view.open_ends) == [(LEFT, view.left_end), (RIGHT, view.right_end)]
    if not view.chain:
        assert list(message.open_ends) == []
    assert message.HasField("last_round") is (view.last_round is not None)
    if view.last_round is not None:
        assert_summary_mirrors(message.last_round, view.last_round, teams)
    assert message.winner == (TEAMS[view.winner] if teams else game_pb2.TEAM_UNSPECIFIED)
    assert message.HasField("winner_side") is (view.winner != NOBODY)
    if view.winner != NOBODY:
        assert message.winner_side == view.winner
    assert_action_mirrors(message.last_action, view.last_action)
    assert message.consecutive_passes == view.consecutive_passes
    if view.options == NO_OPTIONS:
        assert not message.HasField("options") and not message.HasField("vote")
        assert not message.unscored and list(message.laid_per_number) == []
        assert all(not (i.robot or i.stand_in or i.stand_in_until_ms) for i in message.seats)


def test_the_mirror_check_covers_every_field_of_table_view() -> None:
    assert {f.name for f in game_pb2.TableView.DESCRIPTOR.fields} == CHECKED_FIELDS


def _lobby_states() -> list[TableState]:
    states = [lobby(players) for players in range(1, 5)]
    states.append(apply(lobby(3), Leave(2), NOW).state)
    states.append(apply(lobby(2), SetTarget(0, 350), NOW).state)
    states.append(apply(lobby(2), SetPresence(1, True), NOW).state)
    states.append(apply(lobby(2), Leave(0), NOW).state)  # the host leaves: closed
    return states


def test_every_field_mirrors_view_for_in_every_phase_and_for_every_seat() -> None:
    states = _lobby_states()
    for number in range(3):
        rng = random.Random(number)
        game = new_game(rng.getrandbits(128))
        drive(game, rng.randint, max_steps=5_000)
        states += game.states
    phases, kinds = set(), set()
    for state in states:
        for seat in range(4):
            message = table_view(state, seat, SERVER_TIME + state.version)
            assert_mirrors(message, view_for(state, seat), SERVER_TIME + state.version)
            phases.add(message.phase)
            kinds.add(message.last_action.kind)
    assert phases == {int(p) for p in Phase}
    robots_and_votes = {ACTION_KINDS[k] for k in (RobotSeated, HandedOver, EndProposed)}
    robots_and_votes |= {ACTION_KINDS[k] for k in (EndAnswered, VoteClosed)}
    assert kinds == set(ACTION_KINDS.values()) - {game_pb2.ACTION_KIND_DREW} - robots_and_votes


def _preset_game(rules: RuleSet, rng: random.Random) -> list[TableState]:
    """Every state of one game under ``rules``: random legal moves, draws and passes, and
    now and then a clock running out (auto-play draws and plays)."""
    state = apply(lobby_of(rules), Start(0, rng.getrandbits(128)), NOW).state
    states, now = [state], NOW
    for _ in range(3_000):
        if state.phase in (Phase.FINISHED, Phase.CLOSED):
            break
        now += 1_000
        rnd = state.round
        if state.phase is not Phase.PLAYING or rnd is None or rng.random() < 0.1:
            command: Any = Expire(state.turn_number)
            now = max(now, state.deadline_ms)
        elif moves := legal_moves(state, rnd.turn):
            command = rng.choice(moves)
        elif can_draw(state, rnd.turn):
            command = Draw(rnd.turn)
        else:
            command = Pass(rnd.turn)
        state = apply(state, command, now).state
        states.append(state)
    return states


@pytest.mark.parametrize("name", list(PRESET_RULES))
def test_every_field_mirrors_view_for_under_every_preset(name: str) -> None:
    """D9: the same faithful copy under every rule set: sides, stock, draws, rules."""
    rules = PRESET_RULES[name]
    kinds: set[int] = set()
    for number in range(2):
        for state in _preset_game(rules, random.Random(number)):
            for seat in range(rules.seats):
                message = table_view(state, seat, SERVER_TIME)
                assert_mirrors(message, view_for(state, seat), SERVER_TIME)
                kinds.add(message.last_action.kind)
    if rules.draw and rules.stock_size:
        assert game_pb2.ACTION_KIND_DREW in kinds
    if name == "web_fives":  # the spinner's arms and the points reach the contract
        assert any(
            message.up_arm or message.down_arm
            for state in _preset_game(rules, random.Random(7))
            for message in (table_view(state, 0, SERVER_TIME),)
        )


# --- particular fields ----------------------------------------------------------------------


def test_the_lobby_view_shows_free_seats_teams_and_the_host_and_nothing_of_a_round() -> None:
    message = table_view(lobby(2), 1, SERVER_TIME)
    assert message.phase == game_pb2.PHASE_WAITING
    assert [s.occupied for s in message.seats] == [True, True, False, False]
    assert [s.name for s in message.seats] == ["Host", "P1", "", ""]
    assert [s.team for s in message.seats] == [game_pb2.TEAM_A, game_pb2.TEAM_B] * 2  # R1
    assert [s.host for s in message.seats] == [True, False, False, False]  # R2
    assert list(message.hand) == [] and list(message.chain) == []
    assert message.round_number == 0 and message.opener_seat == 0
    assert not message.HasField("turn_seat")
    assert not message.HasField("left_end") and not message.HasField("right_end")
    assert not message.HasField("last_round")
    assert message.winner == game_pb2.TEAM_UNSPECIFIED
    assert message.last_action.kind == game_pb2.ACTION_KIND_JOINED
    assert message.last_action.seat == 1
    assert message.target == 100 and message.your_seat == 1


def test_server_time_is_copied_as_given() -> None:
    state = lobby()
    assert table_view(state, 0, 0).server_time_ms == 0
    assert table_view(state, 0, SERVER_TIME).server_time_ms == SERVER_TIME
    assert table_view(state, 0, 2**62).server_time_ms == 2**62


def test_after_the_deal_the_chain_is_empty_its_ends_unset_and_the_opener_may_lay_any_tile() -> None:
    state = apply(lobby(), Start(0, 99), NOW).state
    assert state.round is not None
    opener = state.round.opener
    message = table_view(state, opener, SERVER_TIME)
    assert message.phase == game_pb2.PHASE_PLAYING
    assert message.round_number == 1 and message.opener_seat == opener
    assert message.HasField("turn_seat") and message.turn_seat == opener
    assert list(message.chain) == []
    assert not message.HasField("left_end") and not message.HasField("right_end")
    assert [s.tile_count for s in message.seats] == [7, 7, 7, 7]
    hand = [pair(t) for t in message.hand]
    assert hand == sorted(hand) and len(hand) == 7
    assert [(pair(m.tile), m.end) for m in message.legal_moves] == [(t, LEFT) for t in hand]
    assert message.can_pass is False
    assert message.turn_deadline_ms == NOW + TIMING.away_ms  # nobody connected yet
    assert message.last_action.kind == game_pb2.ACTION_KIND_ROUND_DEALT
    assert not message.last_action.HasField("seat")


def test_s6_each_seat_gets_its_own_hand_ascending_and_only_counts_of_the_others() -> None:
    state = in_play(("6-6 0-1 2-5", "0-0 5-6", "3-4 1-2 4-4 0-3", "1-1"), left=5, right=3)
    for seat, spec in enumerate(("0-1 2-5 6-6", "0-0 5-6", "0-3 1-2 3-4 4-4", "1-1")):
        message = table_view(state, seat, SERVER_TIME)
        assert [f"{t.low}-{t.high}" for t in message.hand] == spec.split()
        assert [s.tile_count for s in message.seats] == [3, 2, 4, 1]


def test_legal_moves_and_can_pass_are_the_seat_to_plays_only() -> None:
    state = in_play(("2-5 1-1 3-6", "0-0 5-6", "0-1", "0-2"), left=5, right=3, turn=0)
    mover = table_view(state, 0, SERVER_TIME)
    assert [(pair(m.tile), m.end) for m in mover.legal_moves] == [
        ((2, 5), LEFT),
        ((3, 6), RIGHT),
    ]
    assert mover.can_pass is False
    other = table_view(state, 1, SERVER_TIME)
    assert list(other.legal_moves) == [] and other.can_pass is False
    assert other.turn_seat == 0


def test_r9_can_pass_is_true_on_the_seats_turn_when_nothing_fits() -> None:
    state = in_play(("1-1 2-2", "0-0", "0-1", "0-2"), left=5, right=3, turn=0)
    message = table_view(state, 0, SERVER_TIME)
    assert message.can_pass is True
    assert list(message.legal_moves) == []


def test_seat_zero_and_end_zero_are_sent_as_present_values() -> None:
    state = in_play(("0-2", "1-1", "2-2", "3-3"), left=0, right=0, turn=0)
    message = table_view(state, 0, SERVER_TIME)
    assert message.HasField("turn_seat") and message.turn_seat == 0
    assert message.HasField("left_end") and message.left_end == 0
    assert message.HasField("right_end") and message.right_end == 0


def test_r8_the_chain_is_oriented_left_to_right_with_who_laid_each_tile() -> None:
    state = in_play(("2-5 1-1", "3-6 0-0", "1-2", "0-4"), left=5, right=3, turn=0, opener=2)
    state = apply(state, Play(0, tile_index(2, 5), LEFT), NOW).state
    state = apply(state, Play(1, tile_index(3, 6), RIGHT), NOW).state
    message = table_view(state, 3, SERVER_TIME)
    assert [(p.left, p.right, p.seat) for p in message.chain] == [(2, 5, 0), (5, 3, 2), (3, 6, 1)]
    assert (message.left_end, message.right_end) == (2, 6)
    assert message.last_action.kind == game_pb2.ACTION_KIND_PLAYED
    assert message.last_action.seat == 1
    assert pair(message.last_action.move.tile) == (3, 6)
    assert message.last_action.move.end == game_pb2.END_RIGHT
    assert message.last_action.auto_play == game_pb2.AUTO_PLAY_CAUSE_UNSPECIFIED
    assert [s.tile_count for s in message.seats] == [1, 1, 1, 1]


def test_r10_passes_show_on_the_seat_and_in_the_last_action() -> None:
    state = in_play(("1-1 2-2", "0-0", "0-1", "0-2"), left=5, right=3, turn=0)
    state = apply(state, Pass(0), NOW).state
    message = table_view(state, 2, SERVER_TIME)
    assert list(message.seats[0].passed_on) == [3, 5]
    assert [list(s.passed_on) for s in message.seats[1:]] == [[], [], []]
    assert message.last_action.kind == game_pb2.ACTION_KIND_PASSED
    assert message.last_action.seat == 0
    assert list(message.last_action.passed_on) == [3, 5]
    assert not message.last_action.HasField("move")
    assert message.consecutive_passes == 1
    assert message.turn_seat == 1


def test_r10_a_pass_on_equal_ends_shows_one_number_and_passes_accumulate() -> None:
    state = in_play(
        ("1-1 2-2", "0-0", "0-1", "0-2"), left=4, right=4, turn=0, passed=(1 << 6, 0, 0, 0)
    )
    state = apply(state, Pass(0), NOW).state
    message = table_view(state, 1, SERVER_TIME)
    assert list(message.last_action.passed_on) == [4]
    assert list(message.seats[0].passed_on) == [4, 6]


def test_r11_s3_an_auto_play_says_why_the_table_acted() -> None:
    state = in_play(("2-5 1-1", "0-0 5-6", "0-1", "0-2"), left=5, right=3, turn=0)
    timed_out = apply(state, Expire(state.turn_number), state.deadline_ms).state
    action = table_view(timed_out, 0, SERVER_TIME).last_action
    assert action.kind == game_pb2.ACTION_KIND_PLAYED
    assert action.auto_play == game_pb2.AUTO_PLAY_CAUSE_TIMEOUT
    assert pair(action.move.tile) == (2, 5)

    away = in_play(
        ("1-1", "0-0 5-6", "0-1", "0-2"), left=5, right=3, connected=(False, True, True, True)
    )
    passed = apply(away, Expire(away.turn_number), away.deadline_ms).state
    action = table_view(passed, 3, SERVER_TIME).last_action
    assert action.kind == game_pb2.ACTION_KIND_PASSED
    assert action.auto_play == game_pb2.AUTO_PLAY_CAUSE_AWAY


def test_s3_presence_changes_show_on_the_seat_and_in_the_last_action() -> None:
    state = in_play(("2-5", "0-0", "0-1", "0-2"), left=5, right=3, turn=0)
    state = apply(state, SetPresence(2, False), NOW).state
    message = table_view(state, 0, SERVER_TIME)
    assert [s.connected for s in message.seats] == [True, True, False, True]
    assert message.last_action.kind == game_pb2.ACTION_KIND_PRESENCE
    assert message.last_action.seat == 2
    assert message.last_action.connected is False
    state = apply(state, SetPresence(2, True), NOW).state
    assert table_view(state, 0, SERVER_TIME).last_action.connected is True


def test_lobby_actions_have_their_kinds() -> None:
    created = table_view(lobby(1), 0, SERVER_TIME).last_action
    assert created.kind == game_pb2.ACTION_KIND_CREATED and created.seat == 0
    left = table_view(apply(lobby(3), Leave(1), NOW).state, 0, SERVER_TIME)
    assert left.last_action.kind == game_pb2.ACTION_KIND_LEFT and left.last_action.seat == 1
    assert [s.occupied for s in left.seats] == [True, False, True, False]
    target = table_view(apply(lobby(2), SetTarget(0, 250), NOW).state, 1, SERVER_TIME)
    assert target.last_action.kind == game_pb2.ACTION_KIND_TARGET_SET
    assert target.target == 250


def _blocked(hands: tuple[str, str, str, str], last_layer: int) -> TableState:
    state = in_play(hands, left=5, right=6, turn=0, last_layer=last_layer)
    for seat in range(4):
        state = apply(state, Pass(seat), NOW).state
    assert state.phase is Phase.ROUND_OVER
    return state


def test_d1_r13_a_blocked_round_is_summarised_with_every_hand_revealed_to_every_seat() -> None:
    state = _blocked(("1-1", "3-3", "2-2 0-4", "0-1"), last_layer=3)
    for seat in range(4):
        message = table_view(state, seat, SERVER_TIME)
        assert message.phase == game_pb2.PHASE_ROUND_OVER
        assert not message.HasField("turn_seat")
        assert list(message.legal_moves) == [] and message.can_pass is False
        assert message.turn_deadline_ms == NOW + TIMING.break_ms
        summary = message.last_round
        assert summary.outcome == game_pb2.ROUND_OUTCOME_BLOCKED
        assert (summary.team_a_pips, summary.team_b_pips) == (10, 7)
        assert summary.scoring_team == game_pb2.TEAM_B  # the lighter team (R13)
        assert summary.points == 10
        assert summary.tie_rule_applied is False
        assert not summary.HasField("domino_seat")
        assert summary.last_tile_team == game_pb2.TEAM_B
        assert [[pair(t) for t in h.tiles] for h in summary.hands] == [
            [(1, 1)],
            [(3, 3)],
            [(0, 4), (2, 2)],
            [(0, 1)],
        ]
        assert [h.points for h in summary.hands] == [2, 6, 8, 1]
        assert (message.score_team_a, message.score_team_b) == (0, 10)
        assert message.winner == game_pb2.TEAM_UNSPECIFIED


def test_r14_the_tie_rule_is_flagged_exactly_for_a_blocked_tie() -> None:
    state = _blocked(("1-1", "3-3", "2-2", "0-0"), last_layer=0)
    summary = table_view(state, 1, SERVER_TIME).last_round
    assert summary.outcome == game_pb2.ROUND_OUTCOME_BLOCKED_TIE
    assert summary.tie_rule_applied is True
    assert (summary.team_a_pips, summary.team_b_pips) == (6, 6)
    assert summary.scoring_team == summary.last_tile_team == game_pb2.TEAM_A
    assert summary.points == 6


def test_r12_a_domino_names_its_seat_even_seat_zero() -> None:
    state = in_play(("2-5", "3-3 0-0", "4-4", "0-1 6-6"), left=5, right=6, turn=0)
    state = apply(state, Play(0, tile_index(2, 5), LEFT), NOW).state
    message = table_view(state, 2, SERVER_TIME)
    summary = message.last_round
    assert summary.outcome == game_pb2.ROUND_OUTCOME_DOMINO
    assert summary.HasField("domino_seat") and summary.domino_seat == 0
    assert summary.scoring_team == game_pb2.TEAM_A
    assert summary.points == 6 + 1 + 12  # both opponents' hands, not the partner's (R12)
    assert summary.tie_rule_applied is False
    assert list(message.hand) == [tile_message(INDEX[4][4])]
    assert [(p.left, p.right) for p in message.chain] == [(2, 5), (5, 6)]


def test_r17_the_winner_is_set_once_a_team_reaches_the_target() -> None:
    state = in_play(("2-5", "3-3", "4-4", "0-1"), left=5, right=6, turn=0, scores=(95, 40))
    playing = table_view(state, 0, SERVER_TIME)
    assert playing.winner == game_pb2.TEAM_UNSPECIFIED
    state = apply(state, Play(0, tile_index(2, 5), LEFT), NOW).state
    message = table_view(state, 1, SERVER_TIME)
    assert message.phase == game_pb2.PHASE_FINISHED
    assert message.winner == game_pb2.TEAM_A
    assert (message.score_team_a, message.score_team_b) == (102, 40)
    assert message.HasField("last_round")
    assert message.turn_deadline_ms == 0
    assert not message.HasField("turn_seat")


def test_d1_the_summary_is_cleared_when_the_next_round_is_dealt() -> None:
    ended = _blocked(("1-1", "3-3", "2-2 0-4", "0-1"), last_layer=3)
    assert table_view(ended, 0, SERVER_TIME).HasField("last_round")
    dealt = apply(ended, Expire(ended.turn_number), ended.deadline_ms).state
    message = table_view(dealt, 0, SERVER_TIME)
    assert message.phase == game_pb2.PHASE_PLAYING
    assert not message.HasField("last_round")
    assert message.round_number == 2
    assert message.opener_seat == 1  # the previous opener's neighbour (R7)
    assert message.HasField("turn_seat") and message.turn_seat == 1
    assert [s.tile_count for s in message.seats] == [7, 7, 7, 7]
    assert [list(s.passed_on) for s in message.seats] == [[], [], [], []]
    assert message.last_action.kind == game_pb2.ACTION_KIND_ROUND_DEALT


# --- hidden information ---------------------------------------------------------------------


def _tiles_shown(message: game_pb2.TableView) -> set[int]:
    """Every tile a TableView names anywhere."""
    shown = {INDEX[t.low][t.high] for t in message.hand}
    shown |= {INDEX[m.tile.low][m.tile.high] for m in message.legal_moves}
    shown |= {INDEX[min(p.left, p.right)][max(p.left, p.right)] for p in message.chain}
    if message.last_action.HasField("move"):
        tile = message.last_action.move.tile
        shown.add(INDEX[tile.low][tile.high])
    for revealed in message.last_round.hands:
        shown |= {INDEX[t.low][t.high] for t in revealed.tiles}
    return shown


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(min_value=0, max_value=2**128 - 1), data=st.data())
def test_s6_while_a_round_is_live_no_view_carries_a_tile_of_another_seats_hand(
    seed: int, data: st.DataObject
) -> None:
    game = new_game(seed)

    def randint(low: int, high: int) -> int:
        return data.draw(st.integers(min_value=low, max_value=high))

    drive(game, randint, max_steps=300)
    for state in game.states:
        if state.phase is not Phase.PLAYING:
            continue
        assert state.round is not None
        hands = [tiles_in(mask) for mask in state.round.hands]
        for seat in range(4):
            wire = table_view(state, seat, SERVER_TIME).SerializeToString()
            message = game_pb2.TableView.FromString(wire)
            assert not message.HasField("last_round")
            others = set().union(*(hands[s] for s in range(4) if s != seat))
            assert not _tiles_shown(message) & others
            assert {INDEX[t.low][t.high] for t in message.hand} == hands[seat]


def _option_game(
    rules: RuleSet, options: TableOptions, people: int, rng: random.Random
) -> list[TableState]:
    """Every state of one game with ``options``: random moves, presence changes (late
    returns too), proposals and answers, clocks running out."""
    state = option_table(rules, options, people)
    state = apply(state, Start(0, rng.getrandbits(128)), NOW).state
    states, now = [state], NOW
    for _ in range(1_500):
        if state.phase in (Phase.FINISHED, Phase.CLOSED):
            break
        now += rng.choice((500, 1_000, 40_000))
        rnd = state.round
        seat = rng.randrange(rules.seats)
        roll = rng.random()
        if state.phase is not Phase.PLAYING or rnd is None or roll < 0.1:
            command: Any = Expire(state.turn_number)
            now = max(now, state.deadline_ms)
        elif roll < 0.2:
            command = SetPresence(seat, not state.connected[seat])
        elif roll < 0.25:
            command = ProposeEnd(seat)
        elif state.vote is not None:
            command = AnswerEnd(seat, rng.random() < 0.8)
        elif moves := legal_moves(state, rnd.turn):
            command = rng.choice(moves)
        elif can_draw(state, rnd.turn):
            command = Draw(rnd.turn)
        else:
            command = Pass(rnd.turn)
        try:
            state = apply(state, command, now).state
        except RuleError:
            continue
        states.append(state)
    return states


OPTION_TABLES = [
    ("site", TableOptions(practice=(1, 2, 3), friendly_end=True, count_aid=True), 1),
    ("site", TableOptions(fill_level=2, replace_level=3, friendly_end=True, return_ms=60_000), 2),
    ("web_fives", TableOptions(replace_level=1, return_ms=60_000, count_aid=True), 4),
    ("classic", TableOptions(count_aid=True), 4),
]


@pytest.mark.parametrize(("name", "options", "people"), OPTION_TABLES)
def test_every_field_mirrors_view_for_at_tables_with_options(
    name: str, options: TableOptions, people: int
) -> None:
    """Issue 20: robots, stand-ins, votes, the unscored end and the count aid are copied as
    the projection gives them, for every seat."""
    rules = PRESET_RULES[name]
    kinds: set[int] = set()
    for number in range(3):
        for state in _option_game(rules, options, people, random.Random(number)):
            for seat in range(rules.seats):
                message = table_view(state, seat, SERVER_TIME)
                view = view_for(state, seat)
                assert_mirrors(message, view, SERVER_TIME)
                assert_options_mirror(message, view, humans(state), options)
                kinds.add(message.last_action.kind)
    if options.friendly_end:  # a single person's proposal ends the game at once
        assert game_pb2.ACTION_KIND_VOTE_CLOSED in kinds
        assert (game_pb2.ACTION_KIND_END_PROPOSED in kinds) is (people > 1)
    if options.replace_level:
        assert game_pb2.ACTION_KIND_HANDED_OVER in kinds


# --- the view stream's two parts (issue 22) --------------------------------------------------


def _all_states() -> list[TableState]:
    """Lobbies, classic games in every phase, a game of every preset, every options table."""
    states = _lobby_states()
    for number in range(2):
        rng = random.Random(number)
        game = new_game(rng.getrandbits(128))
        drive(game, rng.randint, max_steps=2_000)
        states += game.states
    for rules in PRESET_RULES.values():
        states += _preset_game(rules, random.Random(3))
    for name, options, people in OPTION_TABLES:
        states += _option_game(PRESET_RULES[name], options, people, random.Random(4))
    return states


def test_s6_the_stream_bytes_of_a_seat_parse_as_its_table_view_everywhere() -> None:
    """The views of a version travel in parts (the public part, each seat's own part); a
    stream sends the public part, the seat's part and the time: the bytes parse exactly as
    ``table_view`` of that seat, and so does the answer joined from the same parts, in every
    phase, preset and option set, for every seat."""
    checked = 0
    for state in _all_states():
        parts = view_parts(state)
        assert parts.public == public_view_bytes(state)
        assert len(parts.seats) == state.rules.seats
        for seat in range(state.rules.seats):
            expected = table_view(state, seat, SERVER_TIME)
            sent = watch_response_from_parts(parts.public, parts.seats[seat], SERVER_TIME)
            assert gateway_pb2.WatchTableResponse.FromString(sent).view == expected
            view = game_pb2.TableView.FromString(view_bytes_from_parts(parts, seat, SERVER_TIME))
            assert view == expected
            checked += 1
    assert checked > 5_000


def test_the_kept_serialised_entries_are_bounded_and_change_no_byte(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Seat entries and rule sets are serialised once and kept (issue 22): with the stores
    emptied, or bounded to a few entries so that they are cleared again and again, every
    public part is byte for byte the one made with warm stores."""
    states = _all_states()[::7]
    warm = [public_view_bytes(state) for state in states]
    projection._SEAT_ENTRIES.clear()
    projection._RULES_BYTES.clear()
    assert [public_view_bytes(state) for state in states] == warm
    monkeypatch.setattr(projection, "_SEAT_ENTRIES_KEPT", 3)
    monkeypatch.setattr(projection, "_RULES_KEPT", 1)
    projection._SEAT_ENTRIES.clear()
    projection._RULES_BYTES.clear()
    assert [public_view_bytes(state) for state in states] == warm
    assert len(projection._SEAT_ENTRIES) <= 3
    assert len(projection._RULES_BYTES) <= 1


def test_kept_hands_are_bounded_and_change_no_seats_part(monkeypatch: pytest.MonkeyPatch) -> None:
    """A whole hand's entries are serialised once and kept (issue 22): with the store
    emptied, or bounded to two hands so that it is cleared again and again, every seat's
    own part is byte for byte the one made with a warm store (S6: a kept hand is looked up
    by the seat's own tiles only)."""
    states = _all_states()[::7]

    def parts() -> list[bytes]:
        return [seat_part_bytes(s, seat) for s in states for seat in range(s.rules.seats)]

    warm = parts()
    projection._HAND_BYTES.clear()
    assert parts() == warm
    monkeypatch.setattr(projection, "_HAND_BYTES_KEPT", 2)
    projection._HAND_BYTES.clear()
    assert parts() == warm
    assert len(projection._HAND_BYTES) <= 2


def test_s6_a_seats_own_part_holds_only_seat_fields() -> None:
    """What is sent to one seat only carries the seat fields (and no server time: the
    sender appends it), and no tile of another seat's hand."""
    for state in _all_states()[::5]:
        for seat in range(state.rules.seats):
            own = game_pb2.TableView.FromString(view_parts(state).seats[seat])
            present = {field.name for field, _ in own.ListFields()}
            assert present <= set(SEAT_FIELDS) - {"server_time_ms"}
            rnd = state.round
            if rnd is not None:
                mine = {(t.low, t.high) for t in own.hand}
                others = {
                    halves(tile)
                    for other in range(state.rules.seats)
                    if other != seat
                    for tile in tiles_in(rnd.hands[other])
                }
                assert not mine & others


def test_s6_the_public_part_holds_no_seats_own_field_and_no_hand() -> None:
    """The part every stream shares carries none of the seat fields: no hand, no legal
    move, no seat number; a tile of a hand appears in it only once laid (or at the round's
    end, in its summary)."""
    for state in _all_states():
        public = game_pb2.TableView.FromString(public_view_bytes(state))
        assert not public.hand and not public.legal_moves
        assert not public.can_pass and not public.can_draw and not public.your_seat
        assert public.server_time_ms == 0
        rnd = state.round
        if state.phase is Phase.PLAYING and rnd is not None:
            laid = {
                (tile.left, tile.right)
                for tile in (*public.chain, *public.up_arm, *public.down_arm)
            }
            for seat in range(state.rules.seats):
                for tile in tiles_in(rnd.hands[seat]):
                    low, high = halves(tile)
                    assert (low, high) not in laid and (high, low) not in laid


def test_the_seat_fields_are_exactly_the_fields_that_differ_between_seats() -> None:
    """A field outside SEAT_FIELDS that differed between two seats' views would be sent to
    every seat from the public part: none does, in any state."""
    differing: set[str] = set()
    for state in _all_states()[::7]:
        views = [table_view(state, seat, SERVER_TIME) for seat in range(state.rules.seats)]
        for field in game_pb2.TableView.DESCRIPTOR.fields:
            values = {repr(getattr(view, field.name)) for view in views}
            if len(values) > 1:
                differing.add(field.name)
    assert differing <= set(SEAT_FIELDS)
    assert {"your_seat", "hand"} <= differing
