"""A seat's view as the contract's message: ``view_for`` (the one projection, S6) → proto.

``table_view(state, seat, server_time_ms)`` is what every service sends towards a client;
it is a mechanical copy of :func:`services.rules.view_for`'s result, so no field can
carry more than the engine's projection allows. The gateway's view streams send the same
message in serialised parts (:class:`ViewParts`, computed once per version by the table
service: the public part from the engine's :func:`~services.rules.public_view`, each seat's
own part from :func:`~services.rules.private_view`), joined per stream with the server time
by :func:`watch_response_from_parts`.
"""

from __future__ import annotations

import functools
from typing import Any, NamedTuple

from dominos.v1 import game_pb2

from services.rules import (
    NOBODY,
    RoundResult,
    RuleSet,
    SeatPublic,
    SeatView,
    TableState,
    private_view,
    public_view,
)
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
from services.rules.tiles import HIGH, LOW, numbers_of, tiles_of

_TEAMS = (game_pb2.TEAM_A, game_pb2.TEAM_B)
#: The engine's preset names as the contract's ``Preset`` values.
_PRESETS = {
    "classic": game_pb2.PRESET_CLASSIC,
    "family_draw": game_pb2.PRESET_FAMILY_DRAW,
    "web_draw": game_pb2.PRESET_WEB_DRAW,
    "web_block": game_pb2.PRESET_WEB_BLOCK,
    "web_fives": game_pb2.PRESET_WEB_FIVES,
    "app": game_pb2.PRESET_APP,
    "site": game_pb2.PRESET_SITE,
}


def _enum(value: int) -> Any:
    """An engine enum value as the contract's enum number (the numbers match, see tests)."""
    return int(value)


def tile_message(tile: int) -> game_pb2.Tile:
    """The contract's ``Tile`` for an engine tile index."""
    return game_pb2.Tile(low=LOW[tile], high=HIGH[tile])


def _team(team: int) -> Any:
    return _TEAMS[team] if team != NOBODY else game_pb2.TEAM_UNSPECIFIED


def rules_message(rules: RuleSet) -> game_pb2.RuleSet:
    """The contract's ``RuleSet`` of an engine rule set (the enum numbers match)."""
    return game_pb2.RuleSet(
        preset=_PRESETS[rules.preset],
        seats=rules.seats,
        teams=rules.teams,
        hand_size=rules.hand_size,
        draw=rules.draw,
        set_aside=rules.set_aside,
        opener=_enum(rules.opener),
        next_opener=_enum(rules.next_opener),
        domino_score=_enum(rules.domino_score),
        blocked_score=_enum(rules.blocked_score),
        blocked_tie=_enum(rules.blocked_tie),
        scoring=_enum(rules.scoring),
        min_target=rules.min_target,
        max_target=rules.max_target,
        target_step=rules.target_step,
        turn_seconds=rules.turn_seconds,
    )


def _summary(result: RoundResult, teams: bool) -> game_pb2.RoundSummary:
    """The round summary; "team" fields only with teams, the side fields always (a side is
    the team with teams, the seat without)."""
    summary = game_pb2.RoundSummary(
        round_number=result.number,
        outcome=_enum(result.outcome),
        points=result.points,
        tie_rule_applied=int(result.outcome) == game_pb2.ROUND_OUTCOME_BLOCKED_TIE,
        opener_seat=result.opener,
        side_pips=result.team_pips,
        unrounded_points=result.unrounded_points,
    )
    if teams:
        summary.scoring_team = _team(result.scoring_team)
        summary.team_a_pips, summary.team_b_pips = result.team_pips[0], result.team_pips[1]
        summary.last_tile_team = _team(result.last_tile_team)
    if result.scoring_team != NOBODY:
        summary.scoring_side = result.scoring_team
    if result.domino_seat != NOBODY:
        summary.domino_seat = result.domino_seat
    for seat, hand in enumerate(result.hands):
        revealed = summary.hands.add(seat=seat)
        for tile in tiles_of(hand):
            revealed.tiles.append(tile_message(tile))
            revealed.points += LOW[tile] + HIGH[tile]
    return summary


def _last_action(event: Event) -> game_pb2.LastAction:
    action = game_pb2.LastAction()
    if isinstance(event, TileLaid):
        action.kind = game_pb2.ACTION_KIND_PLAYED
        action.seat = event.seat
        action.move.tile.CopyFrom(tile_message(event.tile))
        action.move.end = _enum(event.end)
        action.auto_play = _enum(event.auto)
        action.points = event.points
    elif isinstance(event, Passed):
        action.kind = game_pb2.ACTION_KIND_PASSED
        action.seat = event.seat
        action.passed_on.extend(numbers_of(event.numbers))
        action.auto_play = _enum(event.auto)
    elif isinstance(event, Drew):
        action.kind = game_pb2.ACTION_KIND_DREW
        action.seat = event.seat
        action.drawn = event.count
        action.auto_play = _enum(event.auto)
    elif isinstance(event, SeatTaken):
        action.kind = game_pb2.ACTION_KIND_JOINED
        action.seat = event.seat
    elif isinstance(event, SeatFreed):
        action.kind = game_pb2.ACTION_KIND_LEFT
        action.seat = event.seat
    elif isinstance(event, TargetChanged):
        action.kind = game_pb2.ACTION_KIND_TARGET_SET
        action.seat = 0
    elif isinstance(event, RoundDealt):
        action.kind = game_pb2.ACTION_KIND_ROUND_DEALT
    elif isinstance(event, PresenceChanged):
        action.kind = game_pb2.ACTION_KIND_PRESENCE
        action.seat = event.seat
        action.connected = event.connected
    elif isinstance(event, TableCreated):
        action.kind = game_pb2.ACTION_KIND_CREATED
        action.seat = 0
    else:
        _robot_or_vote_action(action, event)
    return action


def _robot_or_vote_action(action: game_pb2.LastAction, event: Event) -> None:
    """The last actions of tables with options (issue 20)."""
    if isinstance(event, RobotSeated):
        action.kind = game_pb2.ACTION_KIND_ROBOT_SEATED
        action.seat = event.seat
        action.robot = _enum(event.level)
    elif isinstance(event, HandedOver):
        action.kind = game_pb2.ACTION_KIND_HANDED_OVER
        action.seat = event.seat
        action.robot = _enum(event.level)
        action.until_ms = event.until_ms
    elif isinstance(event, EndProposed):
        action.kind = game_pb2.ACTION_KIND_END_PROPOSED
        action.seat = event.seat
        action.until_ms = event.deadline_ms
    elif isinstance(event, EndAnswered):
        action.kind = game_pb2.ACTION_KIND_END_ACCEPTED
        action.seat = event.seat
    elif isinstance(event, VoteClosed):
        action.kind = game_pb2.ACTION_KIND_VOTE_CLOSED
        action.vote_outcome = _enum(event.outcome)
        if event.seat != NOBODY:
            action.seat = event.seat


def options_message(options: TableOptions) -> game_pb2.TableOptions:
    """The contract's ``TableOptions`` of an engine's (empty for a table without any)."""
    message = game_pb2.TableOptions(
        practice=[_enum(level) for level in options.practice],
        fill_empty_seats=_enum(options.fill_level),
        replace_disconnected=_enum(options.replace_level),
        friendly_end=options.friendly_end,
        count_aid=options.count_aid,
    )
    if options.replace_level:
        message.return_seconds = options.return_ms // 1000
    if options.friendly_end:
        message.vote_seconds = options.vote_ms // 1000
    return message


def _copy_options(message: game_pb2.TableView, view: SeatView, state: TableState) -> None:
    """Options, the open vote, the unscored end and the count aid (issue 20), for a table
    whose host chose options."""
    message.options.CopyFrom(options_message(view.options))
    message.unscored = view.unscored
    message.laid_per_number.extend(view.laid_per_number)
    vote = view.vote
    if vote is not None:
        voters = humans(state)
        message.vote.proposer = vote.proposer
        message.vote.deadline_ms = vote.deadline_ms
        for seat in range(view.rules.seats):
            if vote.accepted >> seat & 1:
                message.vote.accepted.append(seat)
            elif voters >> seat & 1:
                message.vote.waiting.append(seat)


#: The fields of a ``TableView`` that list laid tiles, in the order they are copied.
_LAID_FIELDS = ("chain", "up_arm", "down_arm")
#: Entries of the repeated fields of a ``TableView`` that list tiles, each serialised once
#: as a ``TableView`` holding it alone, filled as met: a laid tile ``(field, tile)`` of one
#: of :data:`_LAID_FIELDS`, a tile of a hand ``("hand", tile)``, a legal move
#: ``("legal_moves", tile, end, points)``. A repeated field's entries appended to a
#: message's bytes parse as its elements, in order.
_ENTRY_BYTES: dict[tuple[Any, ...], bytes] = {}


def _entry_message(key: tuple[Any, ...]) -> game_pb2.TableView:
    """A ``TableView`` holding only the entry :data:`_ENTRY_BYTES` names by ``key``."""
    message = game_pb2.TableView()
    field = key[0]
    if field == "hand":
        message.hand.append(tile_message(key[1]))
    elif field == "legal_moves":
        _, tile, end, points = key
        message.legal_moves.add(tile=tile_message(tile), end=_enum(end), points=points)
    else:
        placed = key[1]
        getattr(message, field).add(left=placed.left, right=placed.right, seat=placed.seat)
    return message


def _entry_bytes(key: tuple[Any, ...]) -> bytes:
    """The serialised entry named by ``key`` (see :data:`_ENTRY_BYTES`), made once."""
    found = _ENTRY_BYTES.get(key)
    if found is None:
        found = _ENTRY_BYTES[key] = _entry_message(key).SerializeToString()
    return found


def _laid_tiles_bytes(view: SeatView) -> bytes:
    """The laid tiles of ``view`` (the chain, the spinner's short sides), serialised: the
    bytes of each tile's field entry are made once and kept, and a repeated field's
    entries appended to a message's bytes parse as its elements, in order."""
    return b"".join(
        _entry_bytes((field, placed))
        for field, placed_tiles in zip(
            _LAID_FIELDS, (view.chain, view.up_arm, view.down_arm), strict=True
        )
        for placed in placed_tiles
    )


def _copy_layout(message: game_pb2.TableView, view: SeatView) -> None:
    """The spinner's index and every open end with its number (the laid tiles themselves
    are appended as bytes: :func:`_laid_tiles_bytes`)."""
    if view.spinner_index != NOBODY:
        message.spinner_index = view.spinner_index
    for end, number in view.open_ends:
        message.open_ends.add(end=_enum(end), number=number)


#: Each rule set's ``TableView.rules`` entry, serialised once (a table's rule set never
#: changes; there are a few presets and the options' variants of them).
_RULES_BYTES: dict[RuleSet, bytes] = {}
#: Rule sets kept at most (a bound, whatever builds them).
_RULES_KEPT = 256


def _keep(store: dict[Any, bytes], bound: int, key: Any, made: bytes) -> bytes:
    """Keep ``made`` in ``store`` under ``key`` (emptied first when it holds ``bound``
    entries) and return it."""
    if len(store) >= bound:
        store.clear()
    store[key] = made
    return made


def _rules_bytes(rules: RuleSet) -> bytes:
    """The serialised ``TableView.rules`` entry of ``rules`` (appended to a public part)."""
    found = _RULES_BYTES.get(rules)
    if found is None:
        made = game_pb2.TableView(rules=rules_message(rules)).SerializeToString()
        found = _keep(_RULES_BYTES, _RULES_KEPT, rules, made)
    return found


#: Serialised ``TableView.seats`` entries by what they hold (the seat's public facts, its
#: side's score, its stand-in level): a seat's entry changes only when one of them does
#: (its tile count, mostly), and most versions change one seat. Cleared when full.
_SEAT_ENTRIES: dict[tuple[SeatPublic, int, int], bytes] = {}
_SEAT_ENTRIES_KEPT = 8192


def _seat_entry(public: SeatPublic, score: int, stand_in: int) -> bytes:
    """The serialised ``TableView.seats`` entry of one seat (kept, see :data:`_SEAT_ENTRIES`)."""
    key = (public, score, stand_in)
    found = _SEAT_ENTRIES.get(key)
    if found is None:
        message = game_pb2.TableView()
        message.seats.add(
            seat=public.seat,
            occupied=public.occupied,
            name=public.name,
            team=_team(public.team),
            host=public.host,
            tile_count=public.tile_count,
            passed_on=public.passed_on,
            connected=public.connected,
            score=score,
            side=public.side,
            robot=_enum(public.robot),
            stand_in=_enum(stand_in),
            stand_in_until_ms=public.stand_in_until_ms,
            drawn=public.drawn,
        )
        found = _keep(_SEAT_ENTRIES, _SEAT_ENTRIES_KEPT, key, message.SerializeToString())
    return found


def _seats_bytes(view: SeatView) -> bytes:
    """Every seat's public entry, in seat order (a repeated field's entries appended to a
    message's bytes parse as its elements, in order)."""
    level = view.options.replace_level
    return b"".join(
        _seat_entry(public, view.scores[public.side], level if public.stand_in_until_ms else 0)
        for public in view.seats
    )


def _public_message(view: SeatView, state: TableState) -> game_pb2.TableView:
    """Every field of a ``TableView`` that is the same for every seat (none of
    :data:`SEAT_FIELDS`) but the seats, the rule set and the laid tiles, which
    :func:`public_view_bytes` appends."""
    teams = view.rules.teams
    message = game_pb2.TableView(
        table_id=view.table_id,
        version=view.version,
        phase=_enum(view.phase),
        target=view.target,
        turn_deadline_ms=view.deadline_ms,
        round_number=view.round_number,
        opener_seat=max(view.opener_seat, 0),
        consecutive_passes=view.consecutive_passes,
        last_action=_last_action(view.last_action),
        stock_size=view.stock_count,
        side_scores=view.scores,
    )
    if teams:
        message.score_team_a, message.score_team_b = view.scores[0], view.scores[1]
        message.winner = _team(view.winner)
    if view.winner != NOBODY:
        message.winner_side = view.winner
    _copy_layout(message, view)
    if view.turn_seat != NOBODY:
        message.turn_seat = view.turn_seat
    if view.left_end != NOBODY:
        message.left_end = view.left_end
        message.right_end = view.right_end
    if view.last_round is not None:
        message.last_round.CopyFrom(_summary(view.last_round, teams))
    if state.options is not NO_OPTIONS:
        _copy_options(message, view, state)
    return message


#: The fields of a ``TableView`` that differ between seats (the seat's own part) or between
#: two sends (``server_time_ms``); every other field is in the public part.
SEAT_FIELDS = ("your_seat", "can_pass", "can_draw", "hand", "legal_moves", "server_time_ms")


def table_view(state: TableState, seat: int, server_time_ms: int) -> game_pb2.TableView:
    """The contract's ``TableView`` of ``state`` for ``seat`` at the server time given: the
    engine's projection (:func:`~services.rules.view_for`, the public view with the seat's
    private view in it), copied field by field: the public part and the seat's own part
    joined with the time, as every stream sends them."""
    return game_pb2.TableView.FromString(table_view_bytes(state, seat, server_time_ms))


def table_view_bytes(state: TableState, seat: int, server_time_ms: int) -> bytes:
    """:func:`table_view` serialised (the bytes it parses)."""
    return _view_bytes(public_view_bytes(state), seat_part_bytes(state, seat), server_time_ms)


def public_view_bytes(state: TableState) -> bytes:
    """The serialised public part of every seat's ``TableView`` of ``state`` (from
    :func:`~services.rules.public_view`: no hand, no legal move): computed once per version,
    shared by the streams of every seat. The laid tiles' bytes are appended (kept per
    tile): they parse as the message's chain and arms."""
    view = public_view(state)
    return (
        bytes(_public_message(view, state).SerializeToString())
        + _seats_bytes(view)
        + _rules_bytes(view.rules)
        + _laid_tiles_bytes(view)
    )


def seat_part_bytes(state: TableState, seat: int) -> bytes:
    """The serialised own part of ``seat``'s ``TableView`` of ``state`` (the
    :data:`SEAT_FIELDS` from :func:`~services.rules.private_view`), without the server time,
    which is appended when the view is sent. The hand's and the legal moves' entries are
    serialised once each and kept (:data:`_ENTRY_BYTES`)."""
    private = private_view(state, seat)
    head = _seat_head(private.your_seat, private.can_pass, private.can_draw)
    hand = _HAND_BYTES.get(private.hand)
    if hand is None:
        made = b"".join(_entry_bytes(("hand", tile)) for tile in private.hand)
        hand = _keep(_HAND_BYTES, _HAND_BYTES_KEPT, private.hand, made)
    if not private.legal_moves:
        return head + hand
    moves = b"".join(
        _entry_bytes(("legal_moves", move.tile, move.end, points))
        for move, points in zip(private.legal_moves, private.move_points, strict=True)
    )
    return head + hand + moves


#: Serialised ``TableView.hand`` entries of a whole hand, by its tiles: the hands of the
#: seats that did not move are the same from one version to the next. Cleared when full.
_HAND_BYTES: dict[tuple[int, ...], bytes] = {}
_HAND_BYTES_KEPT = 16_384


@functools.cache
def _seat_head(your_seat: int, can_pass: bool, can_draw: bool) -> bytes:
    """A seat part's first fields, serialised once per combination (a few dozen at most)."""
    return game_pb2.TableView(
        your_seat=your_seat, can_pass=can_pass, can_draw=can_draw
    ).SerializeToString()


class ViewParts(NamedTuple):
    """Every view of one version in serialised parts: the public part, and each seat's own
    part (index = seat). The table service computes them once per committed version and
    carries them in the version's ``TableEvent``; a view is ``public + seats[seat]`` and
    the server time (:func:`view_bytes_from_parts`, :func:`watch_response_from_parts`)."""

    public: bytes
    seats: tuple[bytes, ...]


def view_parts(state: TableState) -> ViewParts:
    """The :class:`ViewParts` of ``state``, for each of its rule set's seats."""
    return ViewParts(
        public_view_bytes(state),
        tuple(seat_part_bytes(state, seat) for seat in range(state.rules.seats)),
    )


#: ``TableView.server_time_ms`` (field 14, varint) as its tag's bytes.
_SERVER_TIME_TAG = b"\x70"
#: ``WatchTableResponse.view`` is field 1, length-delimited.
_VIEW_TAG = b"\x0a"


def _varint(value: int) -> bytes:
    out = bytearray()
    while value > 0x7F:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _view_bytes(public: bytes, own: bytes, server_time_ms: int) -> bytes:
    """A ``TableView``'s bytes from its parts: protobuf parses concatenated messages as one
    merged message, and the parts share no field."""
    return public + own + _SERVER_TIME_TAG + _varint(server_time_ms)


def view_bytes_from_parts(parts: ViewParts, seat: int, server_time_ms: int) -> bytes:
    """``seat``'s serialised ``TableView`` from the version's parts: they parse as
    ``table_view(state, seat, server_time_ms)`` of the state they were computed from."""
    return _view_bytes(parts.public, parts.seats[seat], server_time_ms)


def view_answer_bytes(view: bytes) -> bytes:
    """A serialised message whose field 1, ``view``, holds the serialised ``TableView``
    ``view``, and nothing else: a ``WatchTableResponse``, or the response of any command that
    answers the seat's view (``PlayTileResponse``, ...; ``CommandSpec.answers_view``)."""
    return _VIEW_TAG + _varint(len(view)) + view


def watch_response_from_parts(public: bytes, own: bytes, server_time_ms: int) -> bytes:
    """A serialised ``WatchTableResponse`` whose ``view`` is a seat's ``TableView``: the
    version's ``public`` part, the seat's ``own`` part (:class:`ViewParts`) and the server
    time; the bytes parse exactly as ``table_view(state, seat, server_time_ms)``."""
    return view_answer_bytes(_view_bytes(public, own, server_time_ms))
