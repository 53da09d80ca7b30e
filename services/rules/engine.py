"""The rules of Dominos as pure functions: ``(state, command, now_ms) -> (state', events)``.

``create`` opens a table; ``apply`` applies any later command. Both return a
:class:`Transition`; an illegal command raises a :class:`~.errors.RuleError` subclass and the
input state (immutable) is unchanged. No clock, randomness or I/O: ``now_ms`` is an argument
and deals derive from the seed given at ``Start`` (see :mod:`.deal`).

Auto-play (R11, S3, D2): the seat's hand is scanned in ascending tile order (0-0, 0-1, ...,
6-6); the first tile that fits is laid, on the left end if it fits there, else on the right;
on an empty chain the first tile of the hand is laid. If nothing fits, the seat passes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

from . import errors
from .commands import (
    Command,
    Create,
    Expire,
    Join,
    Leave,
    Pass,
    Play,
    SetPresence,
    SetTarget,
    Start,
)
from .deal import deal_hands
from .events import (
    Event,
    GameEnded,
    Passed,
    PresenceChanged,
    RoundDealt,
    RoundEnded,
    SeatFreed,
    SeatTaken,
    TableClosed,
    TableCreated,
    TargetChanged,
    TileLaid,
)
from .names import skeleton, validate_name
from .state import (
    HOST_SEAT,
    MAX_TARGET,
    MIN_TARGET,
    NOBODY,
    SEATS,
    TARGET_STEP,
    AutoCause,
    End,
    Outcome,
    Phase,
    RoundResult,
    RoundState,
    TableState,
    is_seated,
    team_of,
)
from .tiles import ALL_TILES, DOUBLE_SIX, FITS, HIGH, LOW, NO_END, TILE_COUNT, points

LEFT = int(End.LEFT)
RIGHT = int(End.RIGHT)

# Hot paths build tuples with ``tuple.__new__(Cls, (...))``: the same immutable NamedTuple
# as ``Cls(...)``, at half the cost of its Python-level constructor.
_new = tuple.__new__
_PLAYING = Phase.PLAYING


class Transition(NamedTuple):
    """The state after a command and the events it produced.

    ``state is`` the input state (and ``events`` is empty) when the command changed nothing,
    e.g. a presence already recorded.
    """

    state: TableState
    events: tuple[Event, ...]


# --- validation of arguments --------------------------------------------------------------


def validate_target(target: int) -> int:
    """``target`` itself; ``TargetInvalid`` unless 50..500 in steps of 50 (R16)."""
    if not (MIN_TARGET <= target <= MAX_TARGET) or target % TARGET_STEP:
        raise errors.TargetInvalid(f"a target is {MIN_TARGET}..{MAX_TARGET} in steps of 50")
    return target


# --- reading the state ------------------------------------------------------------------------


def legal_moves(state: TableState, seat: int) -> tuple[Play, ...]:
    """Every move ``seat`` may make now, as ``Play`` commands ready to apply, in auto-play
    order (tile ascending, left end before right end); empty when it may not play.

    On an empty chain every tile is listed once, with ``End.LEFT`` (R8).
    """
    rnd = state.round
    if state.phase is not _PLAYING or rnd is None or rnd.turn != seat:
        return ()
    hand = rnd.hands[seat]
    left = rnd.left
    if left == NO_END:
        key = hand | _EMPTY_CHAIN_KEY
    else:
        key = (hand & FITS[left]) << TILE_COUNT | hand & FITS[rnd.right]
    key |= seat << _SEAT_SHIFT
    moves = _MOVES_MEMO.get(key)
    if moves is None:
        moves = _moves_of(key)
    return moves


# ``legal_moves`` depends only on the seat and on which tiles of its hand fit the left end
# and which fit the right end, so its answers are memoised by those: a bounded cache of a
# pure function, holding immutable commands.
_EMPTY_CHAIN_KEY = 1 << (2 * TILE_COUNT)
_SEAT_SHIFT = 2 * TILE_COUNT + 1
_MOVES_MEMO: dict[int, tuple[Play, ...]] = {}
_MOVES_MEMO_LIMIT = 1 << 16
_PLAYS = tuple(
    tuple(tuple(Play(seat, tile, end) for tile in range(TILE_COUNT)) for end in (0, LEFT, RIGHT))
    for seat in range(SEATS)
)


def _moves_of(key: int) -> tuple[Play, ...]:
    seat = key >> _SEAT_SHIFT
    if key & _EMPTY_CHAIN_KEY:
        fit_left, fit_right = key & ALL_TILES, 0
    else:
        fit_left, fit_right = key >> TILE_COUNT & ALL_TILES, key & ALL_TILES
    lefts, rights = _PLAYS[seat][LEFT], _PLAYS[seat][RIGHT]
    moves: list[Play] = []
    for tile in range(TILE_COUNT):
        if fit_left >> tile & 1:
            moves.append(lefts[tile])
        if fit_right >> tile & 1:
            moves.append(rights[tile])
    result = tuple(moves)
    if len(_MOVES_MEMO) >= _MOVES_MEMO_LIMIT:
        _MOVES_MEMO.clear()
    _MOVES_MEMO[key] = result
    return result


def can_pass(state: TableState, seat: int) -> bool:
    """Whether ``seat`` may pass now: its turn, and no tile of its hand fits (R9)."""
    rnd = state.round
    if state.phase is not Phase.PLAYING or rnd is None or rnd.turn != seat:
        return False
    return not rnd.hands[seat] & (FITS[rnd.left] | FITS[rnd.right])


def auto_play_choice(state: TableState) -> Play | Pass:
    """What the table plays for the seat to act when its time runs out (R11, D2).

    The first tile of the hand, ascending, that fits; on its left end if it fits there, else
    on its right end. A pass when nothing fits. ``RoundNotInPlay`` outside a live round.
    """
    rnd = _round_in_play(state)
    seat = rnd.turn
    fits_left = FITS[rnd.left]
    playable = rnd.hands[seat] & (fits_left | FITS[rnd.right])
    if not playable:
        return Pass(seat)
    low_bit = playable & -playable
    return Play(seat, low_bit.bit_length() - 1, LEFT if low_bit & fits_left else RIGHT)


# --- creating and applying ------------------------------------------------------------------


def create(command: Create, now_ms: int) -> Transition:
    """Open a table at version 1 with the host in seat 0 (R2), waiting for players."""
    del now_ms  # a table's first clock starts with the first deal
    name = validate_name(command.host_name)
    target = validate_target(command.target)
    if not command.table_id:
        raise errors.SeatInvalid("a table needs an id")
    state = TableState(
        table_id=command.table_id,
        version=1,
        phase=Phase.WAITING,
        target=target,
        names=(name, "", "", ""),
        connected=(False, False, False, False),
        seed=0,
        timing=command.timing,
        scores=(0, 0),
        round=None,
        last_result=None,
        turn_number=0,
        deadline_ms=0,
        winner=NOBODY,
        last_action=TableCreated(name),
    )
    return Transition(state, (state.last_action,))


def apply(state: TableState, command: Command, now_ms: int) -> Transition:
    """Apply a command (any but ``Create``) at ``now_ms``; raises a ``RuleError`` if illegal."""
    if type(command) is Play:
        return _play(state, command, now_ms)
    handler = _HANDLERS.get(type(command))
    if handler is None:
        raise TypeError(f"not a command for an existing table: {command!r}")
    result: Transition = handler(state, command, now_ms)
    return result


# --- lobby --------------------------------------------------------------------------------


def _require_waiting(state: TableState) -> None:
    if state.phase is not Phase.WAITING:
        if state.phase in (Phase.FINISHED, Phase.CLOSED):
            raise errors.GameOver("the table is over")
        raise errors.GameAlreadyStarted("only before the start")


def _require_seated(state: TableState, seat: int) -> None:
    if not is_seated(state, seat):
        raise errors.SeatInvalid(f"seat {seat} is not taken at this table")


def _require_host(state: TableState, seat: int) -> None:
    _require_seated(state, seat)
    if seat != HOST_SEAT:
        raise errors.NotHost("only the host may do this")


def _join(state: TableState, command: Join, now_ms: int) -> Transition:
    name = validate_name(command.name)
    _require_waiting(state)
    names = state.names
    try:
        seat = names.index("")
    except ValueError:
        raise errors.TableFull("four players are seated") from None
    looks = skeleton(name)
    if any(seated and skeleton(seated) == looks for seated in names):
        raise errors.NameTaken("a player with a name that looks the same is seated")
    event = SeatTaken(seat, name)
    new_state = state._replace(
        version=state.version + 1,
        names=_with4(names, seat, name),
        connected=_with4(state.connected, seat, False),
        last_action=event,
    )
    return Transition(new_state, (event,))


def _leave(state: TableState, command: Leave, now_ms: int) -> Transition:
    seat = command.seat
    _require_seated(state, seat)
    _require_waiting(state)
    event = SeatFreed(seat)
    if seat == HOST_SEAT:
        closed = state._replace(version=state.version + 1, phase=Phase.CLOSED, last_action=event)
        return Transition(closed, (event, TableClosed()))
    new_state = state._replace(
        version=state.version + 1,
        names=_with4(state.names, seat, ""),
        connected=_with4(state.connected, seat, False),
        last_action=event,
    )
    return Transition(new_state, (event,))


def _set_target(state: TableState, command: SetTarget, now_ms: int) -> Transition:
    target = validate_target(command.target)
    _require_host(state, command.seat)
    _require_waiting(state)
    event = TargetChanged(target)
    new_state = state._replace(version=state.version + 1, target=target, last_action=event)
    return Transition(new_state, (event,))


def _start(state: TableState, command: Start, now_ms: int) -> Transition:
    _require_host(state, command.seat)
    _require_waiting(state)
    if "" in state.names:
        raise errors.NotEnoughPlayers("four players must be seated")
    started = state._replace(seed=command.seed)
    return _deal(started, 1, now_ms)


def _set_presence(state: TableState, command: SetPresence, now_ms: int) -> Transition:
    seat, connected = command.seat, bool(command.connected)
    _require_seated(state, seat)
    if state.connected[seat] == connected or state.phase in (Phase.FINISHED, Phase.CLOSED):
        # Nothing to record: an over table no longer changes, watching it included (D5).
        return Transition(state, ())
    deadline = state.deadline_ms
    rnd = state.round
    if not connected and state.phase is Phase.PLAYING and rnd is not None and rnd.turn == seat:
        deadline = min(deadline, now_ms + state.timing.away_ms)  # D3; reconnecting never extends
    event = PresenceChanged(seat, connected)
    new_state = state._replace(
        version=state.version + 1,
        connected=_with4(state.connected, seat, connected),
        deadline_ms=deadline,
        last_action=event,
    )
    return Transition(new_state, (event,))


# --- rounds ---------------------------------------------------------------------------------


def _round_in_play(state: TableState) -> RoundState:
    rnd = state.round
    if state.phase is not Phase.PLAYING or rnd is None:
        if state.phase in (Phase.FINISHED, Phase.CLOSED):
            raise errors.GameOver("the game is over")
        raise errors.RoundNotInPlay("no round is being played")
    return rnd


def _turn_deadline(state: TableState, seat: int, now_ms: int) -> int:
    timing = state.timing
    return now_ms + (timing.turn_ms if state.connected[seat] else timing.away_ms)


def _deal(state: TableState, number: int, now_ms: int) -> Transition:
    hands = deal_hands(state.seed, number)
    if number == 1:
        opener = next(s for s in range(SEATS) if hands[s] >> DOUBLE_SIX & 1)  # R6
    else:
        assert state.round is not None
        opener = (state.round.opener + 1) % SEATS  # R7
    rnd = RoundState(
        number=number,
        opener=opener,
        hands=hands,
        chain=(),
        left=NO_END,
        right=NO_END,
        turn=opener,
        passes=0,
        passed=(0, 0, 0, 0),
        last_layer=NOBODY,
    )
    event = RoundDealt(number, opener)
    new_state = state._replace(
        version=state.version + 1,
        phase=Phase.PLAYING,
        round=rnd,
        last_result=None,
        turn_number=state.turn_number + 1,
        deadline_ms=_turn_deadline(state, opener, now_ms),
        last_action=event,
    )
    return Transition(new_state, (event,))


def _play(
    state: TableState, command: Play, now_ms: int, auto: AutoCause = AutoCause.NONE
) -> Transition:
    """Lay a tile: the seat's own move, or the table's for it when ``auto`` is set (R11)."""
    seat, tile, end = command
    if not 0 <= tile < TILE_COUNT:
        raise errors.TileMalformed(f"no tile {tile}")
    if end != LEFT and end != RIGHT:  # noqa: PLR1714 (faster than a tuple test)
        raise errors.EndMalformed(f"no end {end}")
    rnd = state.round
    if state.phase is not _PLAYING or rnd is None:
        rnd = _round_in_play(state)
    if seat != rnd.turn:
        _require_seated(state, seat)
        raise errors.NotYourTurn(f"seat {rnd.turn} is to play")
    if not rnd.hands[seat] >> tile & 1:
        raise errors.TileNotInHand("the tile is not in your hand")
    chain, left, right = _laid(rnd, seat, tile, end)
    hands = rnd.hands
    hand = hands[seat] & ~(1 << tile)
    if seat == 0:
        hands = (hand, hands[1], hands[2], hands[3])
    elif seat == 1:
        hands = (hands[0], hand, hands[2], hands[3])
    elif seat == 2:
        hands = (hands[0], hands[1], hand, hands[3])
    else:
        hands = (hands[0], hands[1], hands[2], hand)
    event = _new(TileLaid, (seat, tile, end, auto))
    if not hand:  # R12: domino
        ended = _new(
            RoundState,
            (rnd.number, rnd.opener, hands, chain, left, right, seat, 0, rnd.passed, seat),
        )
        return _end_round(state, ended, Outcome.DOMINO, now_ms, event)
    nxt = (seat + 1) & 3
    return _next_turn(
        state,
        (rnd.number, rnd.opener, hands, chain, left, right, nxt, 0, rnd.passed, seat),
        nxt,
        now_ms,
        event,
    )


def _laid(rnd: RoundState, seat: int, tile: int, end: int) -> tuple[tuple[int, ...], int, int]:
    """The chain and its two ends once ``seat`` laid ``tile`` on ``end`` (R8, R9), or
    ``TileDoesNotFit``."""
    low, high = LOW[tile], HIGH[tile]
    left, right = rnd.left, rnd.right
    stamp = seat << 6
    if left == NO_END:
        return (stamp | low << 3 | high,), low, high
    if end == LEFT:
        if high == left:
            left = low
        elif low == left:
            left = high
        else:
            raise errors.TileDoesNotFit(f"the tile does not fit the left end ({rnd.left})")
        return (stamp | left << 3 | rnd.left, *rnd.chain), left, right
    if low == right:
        right = high
    elif high == right:
        right = low
    else:
        raise errors.TileDoesNotFit(f"the tile does not fit the right end ({rnd.right})")
    return (*rnd.chain, stamp | rnd.right << 3 | right), left, right


def _next_turn(
    state: TableState, round_fields: tuple[Any, ...], nxt: int, now_ms: int, event: Event
) -> Transition:
    """The state after a play or pass that did not end the round: the round given as its
    fields, ``nxt`` to act with a fresh clock (R4, R11, S3). Built with ``_new``: hot path."""
    timing = state.timing
    new_state = _new(
        TableState,
        (
            state.table_id,
            state.version + 1,
            _PLAYING,
            state.target,
            state.names,
            state.connected,
            state.seed,
            timing,
            state.scores,
            _new(RoundState, round_fields),
            None,
            state.turn_number + 1,
            now_ms + (timing.turn_ms if state.connected[nxt] else timing.away_ms),
            NOBODY,
            event,
        ),
    )
    return _new(Transition, (new_state, (event,)))


def _pass(state: TableState, command: Pass, now_ms: int) -> Transition:
    seat = command.seat
    rnd = _round_in_play(state)
    if seat != rnd.turn:
        _require_seated(state, seat)
        raise errors.NotYourTurn(f"seat {rnd.turn} is to play")
    return _pass_turn(state, rnd, seat, now_ms, AutoCause.NONE)


def _pass_turn(
    state: TableState, rnd: RoundState, seat: int, now_ms: int, auto: AutoCause
) -> Transition:
    left, right = rnd.left, rnd.right
    if rnd.hands[seat] & (FITS[left] | FITS[right]):
        raise errors.MustPlay("a tile of your hand fits")  # R9 (and the opener never passes)
    numbers = 1 << left | 1 << right
    passed = _with4(rnd.passed, seat, rnd.passed[seat] | numbers)  # R10
    passes = rnd.passes + 1
    event = _new(Passed, (seat, numbers, auto))
    chain, last = rnd.chain, rnd.last_layer
    if passes == SEATS:  # R13: four passes one after another
        ended = _new(
            RoundState,
            (rnd.number, rnd.opener, rnd.hands, chain, left, right, seat, passes, passed, last),
        )
        return _end_round(state, ended, Outcome.BLOCKED, now_ms, event)
    nxt = (seat + 1) & 3
    return _next_turn(
        state,
        (rnd.number, rnd.opener, rnd.hands, chain, left, right, nxt, passes, passed, last),
        nxt,
        now_ms,
        event,
    )


def score_round(rnd: RoundState, outcome: Outcome) -> RoundResult:
    """Score an ended round: domino (R12), blocked (R13) or blocked tie (R14); one scorer (R15).

    For ``Outcome.DOMINO`` the seat that laid last (``rnd.last_layer``) emptied its hand.
    For ``Outcome.BLOCKED`` the lighter team scores the other's total; on a tie the outcome
    becomes ``BLOCKED_TIE`` and the team that laid the last tile scores.
    """
    pips = [points(hand) for hand in rnd.hands]
    team_pips = (pips[0] + pips[2], pips[1] + pips[3])
    last_team = team_of(rnd.last_layer)
    domino_seat = NOBODY
    if outcome is Outcome.DOMINO:
        domino_seat = rnd.last_layer
        scorer = last_team
    elif team_pips[0] != team_pips[1]:
        scorer = 0 if team_pips[0] < team_pips[1] else 1
    else:
        outcome = Outcome.BLOCKED_TIE
        scorer = last_team
    return RoundResult(
        number=rnd.number,
        opener=rnd.opener,
        outcome=outcome,
        scoring_team=scorer,
        points=team_pips[1 - scorer],  # the other team's pips (R12: partner's never count)
        domino_seat=domino_seat,
        team_pips=team_pips,
        last_tile_team=last_team,
        hands=rnd.hands,
    )


def _end_round(
    state: TableState, rnd: RoundState, outcome: Outcome, now_ms: int, event: Event
) -> Transition:
    result = score_round(rnd, outcome)
    scorer = result.scoring_team
    scores = (
        (state.scores[0] + result.points, state.scores[1])
        if scorer == 0
        else (state.scores[0], state.scores[1] + result.points)
    )
    ended: tuple[Event, ...] = (event, RoundEnded(result))
    finished = scores[scorer] >= state.target  # R17
    new_state = state._replace(
        version=state.version + 1,
        phase=Phase.FINISHED if finished else Phase.ROUND_OVER,
        scores=scores,
        round=rnd,
        last_result=result,
        turn_number=state.turn_number + 1,
        deadline_ms=0 if finished else now_ms + state.timing.break_ms,  # D1
        winner=scorer if finished else NOBODY,
        last_action=event,
    )
    if finished:
        ended = (*ended, GameEnded(scorer, scores))
    return Transition(new_state, ended)


def _expire(state: TableState, command: Expire, now_ms: int) -> Transition:
    if command.turn_number != state.turn_number or state.deadline_ms == 0:
        raise errors.TimerStale("the clock named is not the current one")
    if now_ms < state.deadline_ms:
        raise errors.TimerStale("the clock has not run out yet")
    if state.phase is Phase.ROUND_OVER:
        assert state.round is not None
        return _deal(state, state.round.number + 1, now_ms)  # D1
    rnd = _round_in_play(state)
    seat = rnd.turn
    cause = AutoCause.TIMEOUT if state.connected[seat] else AutoCause.AWAY
    choice = auto_play_choice(state)
    if isinstance(choice, Play):
        return _play(state, choice, now_ms, cause)
    return _pass_turn(state, rnd, seat, now_ms, cause)


def _with4(values: tuple[Any, Any, Any, Any], index: int, value: Any) -> Any:
    if index == 0:
        return (value, values[1], values[2], values[3])
    if index == 1:
        return (values[0], value, values[2], values[3])
    if index == 2:
        return (values[0], values[1], value, values[3])
    return (values[0], values[1], values[2], value)


_HANDLERS: dict[type, Callable[[Any, Any, int], Transition]] = {
    Join: _join,
    Leave: _leave,
    SetTarget: _set_target,
    Start: _start,
    Play: _play,
    Pass: _pass,
    SetPresence: _set_presence,
    Expire: _expire,
}
