"""The rules of Dominos as pure functions: ``(state, command, now_ms) -> (state', events)``.

``create`` opens a table; ``apply`` applies any later command. Both return a
:class:`Transition`; an illegal command raises a :class:`~.errors.RuleError` subclass and the
input state (immutable) is unchanged. No clock, randomness or I/O: ``now_ms`` is an argument
and deals derive from the seed given at ``Start`` (see :mod:`.deal`).

Auto-play (R11, S3, D2): the seat's hand is scanned in ascending tile order (0-0, 0-1, ...,
6-6); the first tile that fits is laid, on the left end if it fits there, else on the right;
on an empty chain the first tile of the hand is laid (or the tile the opener must lay). If
nothing fits and the rule set draws, the table draws for the seat, one tile at a time,
until a tile fits, then lays the first fitting tile by the same order (the drawn one: it
is the only one that fits); with the stock empty, the seat passes.

The rule set (:mod:`.rulesets`) is chosen at ``Create`` and kept in the state: seats, sides,
hand size and stock (:mod:`.deal`, :mod:`.stock`), openers (:mod:`.openers`), scoring
(:mod:`.scoring`), the target range and the turn time. Classic (R1-R17) is the default.

All fives (``Scoring.ALL_FIVES``, seed 002, :mod:`.fives`): the round keeps the spinner
layout; a tile may go on up to four ends (``End.UP``/``End.DOWN`` once both long sides of
the spinner are covered); a play that makes the open ends total a multiple of 5 scores it
at once for the seat's side (``TileLaid.points``, :func:`move_points` lists them ahead),
and reaching the target that way ends the game at once, the round unscored. Auto-play lays
the first of ``legal_moves`` (long sides before short ones).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from . import consent, errors, fives, robot_seats
from .commands import (
    AnswerEnd,
    Command,
    Create,
    Draw,
    Expire,
    Join,
    Leave,
    Pass,
    Play,
    ProposeEnd,
    SetPresence,
    SetTarget,
    Start,
)
from .deal import deal_round
from .events import (
    Drew,
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
from .openers import opening
from .options import NO_OPTIONS, validate_options
from .rulesets import CLASSIC, Scoring, validate_rules, validate_target
from .scoring import score_round
from .state import (
    HOST_SEAT,
    NOBODY,
    SEATS,
    AutoCause,
    End,
    Outcome,
    Phase,
    RoundState,
    TableState,
    is_seated,
)
from .stock import draw_one, draws_to_fit
from .tiles import ALL_TILES, FITS, HIGH, LOW, NO_END, TILE_COUNT
from .transition import Transition

LEFT = int(End.LEFT)
RIGHT = int(End.RIGHT)
UP = int(End.UP)
DOWN = int(End.DOWN)
_ALL_FIVES = Scoring.ALL_FIVES
_SHORT_SIDES = (UP, DOWN)

# Hot paths build tuples with ``tuple.__new__(Cls, (...))``: the same immutable NamedTuple
# as ``Cls(...)``, at half the cost of its Python-level constructor.
_new = tuple.__new__
_PLAYING = Phase.PLAYING


__all__ = [
    "CLASSIC",
    "Transition",
    "apply",
    "auto_play_choice",
    "can_draw",
    "can_pass",
    "create",
    "legal_moves",
    "move_points",
    "score_round",
    "validate_target",
]


# --- reading the state ------------------------------------------------------------------------


def legal_moves(state: TableState, seat: int) -> tuple[Play, ...]:
    """Every move ``seat`` may make now, as ``Play`` commands ready to apply, in auto-play
    order (tile ascending, left end before right end); empty when it may not play.

    On an empty chain every tile is listed once, with ``End.LEFT`` (R8); only the tile the
    opener must lay when the rule set names one (``RoundState.lead``). Under all fives a
    tile may also go on the spinner's short sides (``End.UP``, ``End.DOWN``, once open):
    tile ascending, then ``LEFT, RIGHT, UP, DOWN``; :func:`move_points` gives their points.
    """
    rnd = state.round
    if state.phase is not _PLAYING or rnd is None or rnd.turn != seat or state.vote is not None:
        return ()
    hand = rnd.hands[seat]
    if rnd.center != NOBODY:  # all fives, a tile laid
        return tuple(
            Play(seat, tile, end)
            for tile in range(TILE_COUNT)
            if hand >> tile & 1
            for end in fives.fitting_ends(rnd, tile)
        )
    left = rnd.left
    if left == NO_END:
        key = (hand if rnd.lead == NOBODY else 1 << rnd.lead) | _EMPTY_CHAIN_KEY
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


def move_points(state: TableState, seat: int) -> tuple[int, ...]:
    """The points each of ``legal_moves(state, seat)`` would score at once, in the same
    order: under all fives the open ends' total after the play when it is a multiple of 5
    (seed 002), else 0; all 0 under every other scoring."""
    moves = legal_moves(state, seat)
    rnd = state.round
    if rnd is None or state.rules.scoring is not _ALL_FIVES:
        return (0,) * len(moves)
    return tuple(fives.points_of(rnd, move.tile, move.end) for move in moves)


def _fit_mask(rnd: RoundState) -> int:
    """The tiles that fit an open end (every tile on an empty chain): the two ends of the
    line, and under all fives the spinner's short sides once open."""
    if rnd.center != NOBODY:
        return fives.fit_mask(rnd)
    return FITS[rnd.left] | FITS[rnd.right]


def can_pass(state: TableState, seat: int) -> bool:
    """Whether ``seat`` may pass now: its turn, no tile of its hand fits (R9) and the stock
    is empty (always, without a stock)."""
    rnd = state.round
    if state.phase is not Phase.PLAYING or rnd is None or rnd.turn != seat or state.vote:
        return False
    return not rnd.stock and not rnd.hands[seat] & _fit_mask(rnd)


def can_draw(state: TableState, seat: int) -> bool:
    """Whether ``seat`` may draw now: its turn, no tile of its hand fits and the stock holds
    a tile (only rule sets that draw have one). Exactly one of ``legal_moves``, ``can_draw``
    and ``can_pass`` holds for the seat to play."""
    rnd = state.round
    if state.phase is not Phase.PLAYING or rnd is None or rnd.turn != seat or state.vote:
        return False
    return bool(rnd.stock) and not rnd.hands[seat] & _fit_mask(rnd)


def auto_play_choice(state: TableState) -> Play | Pass | Draw:
    """What the table does next for the seat to act when its time runs out (R11, D2).

    The first tile of the hand, ascending, that fits; on its left end if it fits there, else
    on its right end (on an empty chain: the tile the opener must lay, if any). When nothing
    fits: a draw while the stock holds tiles, else a pass. ``RoundNotInPlay`` outside a
    live round. Under all fives: the first of ``legal_moves`` (the short sides after the
    long ones).
    """
    rnd = _round_in_play(state)
    seat = rnd.turn
    if rnd.lead != NOBODY and rnd.left == NO_END:
        return Play(seat, rnd.lead, LEFT)
    if rnd.center != NOBODY:
        moves = legal_moves(state, seat)
        if moves:
            return moves[0]
        return Draw(seat) if rnd.stock else Pass(seat)
    fits_left = FITS[rnd.left]
    playable = rnd.hands[seat] & (fits_left | FITS[rnd.right])
    if not playable:
        return Draw(seat) if rnd.stock else Pass(seat)
    low_bit = playable & -playable
    return Play(seat, low_bit.bit_length() - 1, LEFT if low_bit & fits_left else RIGHT)


# --- creating and applying ------------------------------------------------------------------


def create(command: Create, now_ms: int) -> Transition:
    """Open a table at version 1 with the host in seat 0 (R2), waiting for players.

    The rule set is checked (``RulesInvalid``) and kept for the table's life; the target
    must lie in its range (``TargetInvalid``).
    """
    del now_ms  # a table's first clock starts with the first deal
    name = validate_name(command.host_name)
    rules = validate_rules(command.rules)
    target = validate_target(command.target, rules)
    options = validate_options(command.options, rules)
    if not command.table_id:
        raise errors.SeatInvalid("a table needs an id")
    timing = command.timing
    if rules.turn_adjustable:
        timing = timing._replace(turn_ms=rules.turn_seconds * 1000)
    state = TableState(
        table_id=command.table_id,
        version=1,
        phase=Phase.WAITING,
        target=target,
        names=(name, "", "", ""),
        connected=(False, False, False, False),
        seed=0,
        timing=timing,
        scores=(0,) * rules.sides,
        round=None,
        last_result=None,
        turn_number=0,
        deadline_ms=0,
        winner=NOBODY,
        last_action=TableCreated(name),
        rules=rules,
        options=options,
    )
    if options.practice:  # the host plus robots of the chosen levels (issue 20)
        state, seated = robot_seats.seat_robots(state, tuple(enumerate(options.practice, 1)))
        return Transition(state, (state.last_action, *seated))
    return Transition(state, (state.last_action,))


def apply(state: TableState, command: Command, now_ms: int) -> Transition:
    """Apply a command (any but ``Create``) at ``now_ms``; raises a ``RuleError`` if illegal.

    A seat whose player did not come back within the return window is first given to its
    robot for good (``robot_seats.settle``), in the same version as the command."""
    settled: tuple[Event, ...] = ()
    if state.options is not NO_OPTIONS:
        state, settled = robot_seats.settle(state, now_ms)
    if type(command) is Play:
        result = _play(state, command, now_ms)
    else:
        handler = _HANDLERS.get(type(command))
        if handler is None:
            raise TypeError(f"not a command for an existing table: {command!r}")
        result = handler(state, command, now_ms)
    if settled:
        result = Transition(result.state, (*settled, *result.events))
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
        seat = names.index("", 0, state.rules.seats)
    except ValueError:
        raise errors.TableFull("every seat is taken") from None
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
    target = validate_target(command.target, state.rules)
    _require_host(state, command.seat)
    _require_waiting(state)
    event = TargetChanged(target)
    new_state = state._replace(version=state.version + 1, target=target, last_action=event)
    return Transition(new_state, (event,))


def _start(state: TableState, command: Start, now_ms: int) -> Transition:
    _require_host(state, command.seat)
    _require_waiting(state)
    filled: tuple[Event, ...] = ()
    if "" in state.names[: state.rules.seats]:
        state, filled = robot_seats.fill_empty_seats(state)  # an early start (issue 20)
        if not filled:
            raise errors.NotEnoughPlayers("every seat must be taken")
    dealt = _deal(state._replace(seed=command.seed), 1, now_ms)
    return Transition(dealt.state, (*filled, *dealt.events)) if filled else dealt


def _set_presence(state: TableState, command: SetPresence, now_ms: int) -> Transition:
    seat, connected = command.seat, bool(command.connected)
    _require_seated(state, seat)
    if state.robots[seat]:
        raise errors.RobotSeat("a robot holds this seat")  # its player did not come back
    if state.connected[seat] == connected or state.phase in (Phase.FINISHED, Phase.CLOSED):
        # Nothing to record: an over table no longer changes, watching it included (D5).
        return Transition(state, ())
    deadline = state.deadline_ms
    rnd = state.round
    turn = state.phase is Phase.PLAYING and rnd is not None and rnd.turn == seat
    if not connected and turn and state.vote is None:
        deadline = min(deadline, now_ms + state.timing.away_ms)  # D3; reconnecting never extends
    event: Event = PresenceChanged(seat, connected)
    events: tuple[Event, ...] = (event,)
    if connected:
        state = robot_seats.hand_back(state, seat)  # the robot standing in stops at once
    else:
        state, handed = robot_seats.hand_over(state, seat, now_ms)  # issue 20
        if handed is not None:
            event, events = handed, (event, handed)
    new_state = state._replace(
        version=state.version + 1,
        connected=_with4(state.connected, seat, connected),
        deadline_ms=deadline,
        last_action=event,
    )
    return Transition(new_state, events)


# --- rounds ---------------------------------------------------------------------------------


def _round_in_play(state: TableState) -> RoundState:
    rnd = state.round
    if state.phase is not Phase.PLAYING or rnd is None:
        if state.phase in (Phase.FINISHED, Phase.CLOSED):
            raise errors.GameOver("the game is over")
        raise errors.RoundNotInPlay("no round is being played")
    if state.vote is not None:
        raise errors.VoteOpen("the game is paused while the humans vote on ending it")
    return rnd


def _turn_deadline(state: TableState, seat: int, now_ms: int) -> int:
    """A turn's clock: the full turn for a person who is there, else the short clock (an
    away player, S3; a robot, whose service acts well within it, issue 20)."""
    timing = state.timing
    return now_ms + (timing.turn_ms if robot_seats.person_there(state, seat) else timing.away_ms)


def _deal(state: TableState, number: int, now_ms: int) -> Transition:
    rules = state.rules
    hands, stock, aside = deal_round(state.seed, number, rules)
    previous = state.round.opener if state.round is not None else NOBODY
    opener, lead = opening(rules, hands, number, previous, state.last_result)  # R6, R7
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
        stock=stock,
        aside=aside,
        lead=lead,
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
    state: TableState,
    command: Play,
    now_ms: int,
    auto: AutoCause = AutoCause.NONE,
    drew: tuple[Event, ...] = (),
) -> Transition:
    """Lay a tile: the seat's own move, or the table's for it when ``auto`` is set (R11);
    ``drew`` holds the ``Drew`` event of the table's draws for it just before."""
    seat, tile, end = command
    if not 0 <= tile < TILE_COUNT:
        raise errors.TileMalformed(f"no tile {tile}")
    fives_play = state.rules.scoring is _ALL_FIVES
    if end != LEFT and end != RIGHT and not (fives_play and end in _SHORT_SIDES):  # noqa: PLR1714
        raise errors.EndMalformed(f"no end {end}")
    rnd = state.round
    if state.phase is not _PLAYING or rnd is None or state.vote is not None:
        rnd = _round_in_play(state)
    if seat != rnd.turn:
        _require_seated(state, seat)
        raise errors.NotYourTurn(f"seat {rnd.turn} is to play")
    if not rnd.hands[seat] >> tile & 1:
        raise errors.TileNotInHand("the tile is not in your hand")
    if fives_play:
        return _play_fives(state, rnd, command, now_ms, auto, drew)
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
    event = _new(TileLaid, (seat, tile, end, auto, 0))
    stock, aside, drawn = rnd.stock, rnd.aside, rnd.drawn
    if not hand:  # R12: domino
        ended = _new(
            RoundState,
            (
                rnd.number,
                rnd.opener,
                hands,
                chain,
                left,
                right,
                seat,
                0,
                rnd.passed,
                seat,
                stock,
                aside,
                NOBODY,
                drawn,
                NOBODY,
                (),
                (),
            ),
        )
        return _end_round(state, ended, Outcome.DOMINO, now_ms, event, drew)
    nxt = seat + 1 if seat + 1 < state.rules.seats else 0  # R4
    return _next_turn(
        state,
        (
            rnd.number,
            rnd.opener,
            hands,
            chain,
            left,
            right,
            nxt,
            0,
            rnd.passed,
            seat,
            stock,
            aside,
            NOBODY,
            drawn,
            NOBODY,
            (),
            (),
        ),
        nxt,
        now_ms,
        (*drew, event),
    )


def _play_fives(
    state: TableState,
    rnd: RoundState,
    command: Play,
    now_ms: int,
    auto: AutoCause,
    drew: tuple[Event, ...],
) -> Transition:
    """Lay a tile under all fives (seed 002, :mod:`.fives`): a play that makes the open
    ends total a multiple of 5 scores it at once for the seat's side; reaching the target
    that way ends the game at once (the round is not scored); otherwise as ``_play``."""
    seat, tile, end = command
    laying = fives.lay(rnd, seat, tile, end)
    hand = rnd.hands[seat] & ~(1 << tile)
    laid = fives.laid_round(rnd, laying)._replace(
        hands=_with4(rnd.hands, seat, hand), passes=0, last_layer=seat, lead=NOBODY
    )
    points = fives.points_of(rnd, tile, end)
    event = TileLaid(seat, tile, end, auto, points)
    if points:
        side = state.rules.side_of(seat)
        scores = tuple(v + points if i == side else v for i, v in enumerate(state.scores))
        state = state._replace(scores=scores)
        if scores[side] >= state.target:  # seed 002: the game ends at once
            finished = state._replace(
                version=state.version + 1,
                phase=Phase.FINISHED,
                round=laid._replace(turn=seat),
                last_result=None,
                turn_number=state.turn_number + 1,
                deadline_ms=0,
                winner=side,
                last_action=event,
            )
            return Transition(finished, (*drew, event, GameEnded(side, scores)))
    if not hand:  # R12: domino
        return _end_round(state, laid._replace(turn=seat), Outcome.DOMINO, now_ms, event, drew)
    nxt = seat + 1 if seat + 1 < state.rules.seats else 0
    return _next_turn(state, tuple(laid._replace(turn=nxt)), nxt, now_ms, (*drew, event))


def _laid(rnd: RoundState, seat: int, tile: int, end: int) -> tuple[tuple[int, ...], int, int]:
    """The chain and its two ends once ``seat`` laid ``tile`` on ``end`` (R8, R9), or
    ``TileDoesNotFit``."""
    low, high = LOW[tile], HIGH[tile]
    left, right = rnd.left, rnd.right
    stamp = seat << 6
    if left == NO_END:
        if rnd.lead not in (NOBODY, tile):
            raise errors.TileDoesNotFit(f"the round opens with {LOW[rnd.lead]}-{HIGH[rnd.lead]}")
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
    state: TableState,
    round_fields: tuple[Any, ...],
    nxt: int,
    now_ms: int,
    events: tuple[Event, ...],
) -> Transition:
    """The state after a play or pass that did not end the round: the round given as its
    fields, ``nxt`` to act with a fresh clock (R4, R11, S3); the last of ``events`` is the
    public last action. Built with ``_new``: hot path."""
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
            now_ms + (timing.turn_ms if state.connected[nxt] else timing.away_ms)
            if state.options is NO_OPTIONS  # no robot can play any seat
            else _turn_deadline(state, nxt, now_ms),
            NOBODY,
            events[-1],
            state.rules,
            state.options,
            state.robots,
            state.stand_ins,
            state.vote,
            state.unscored,
            state.proposals,
        ),
    )
    return _new(Transition, (new_state, events))


def _pass(state: TableState, command: Pass, now_ms: int) -> Transition:
    seat = command.seat
    rnd = _round_in_play(state)
    if seat != rnd.turn:
        _require_seated(state, seat)
        raise errors.NotYourTurn(f"seat {rnd.turn} is to play")
    return _pass_turn(state, rnd, seat, now_ms, AutoCause.NONE)


def _pass_turn(
    state: TableState,
    rnd: RoundState,
    seat: int,
    now_ms: int,
    auto: AutoCause,
    drew: tuple[Event, ...] = (),
) -> Transition:
    left, right = rnd.left, rnd.right
    if rnd.hands[seat] & _fit_mask(rnd):
        raise errors.MustPlay("a tile of your hand fits")  # R9 (and the opener never passes)
    if rnd.stock:
        raise errors.MustDraw("nothing fits: draw from the stock")
    numbers = fives.end_numbers(rnd) if rnd.center != NOBODY else 1 << left | 1 << right
    passed = _with4(rnd.passed, seat, rnd.passed[seat] | numbers)  # R10
    passes = rnd.passes + 1
    event = _new(Passed, (seat, numbers, auto))
    chain, last = rnd.chain, rnd.last_layer
    extra = (rnd.stock, rnd.aside, rnd.lead, rnd.drawn, rnd.center, rnd.up, rnd.down)
    seats = state.rules.seats
    if passes == seats:  # R13: every seat passed, one after another (the stock is empty)
        ended = _new(
            RoundState,
            (
                rnd.number,
                rnd.opener,
                rnd.hands,
                chain,
                left,
                right,
                seat,
                passes,
                passed,
                last,
                *extra,
            ),
        )
        return _end_round(state, ended, Outcome.BLOCKED, now_ms, event, drew)
    nxt = seat + 1 if seat + 1 < seats else 0
    return _next_turn(
        state,
        (
            rnd.number,
            rnd.opener,
            rnd.hands,
            chain,
            left,
            right,
            nxt,
            passes,
            passed,
            last,
            *extra,
        ),
        nxt,
        now_ms,
        (*drew, event),
    )


def _draw(state: TableState, command: Draw, now_ms: int) -> Transition:
    """Draw one tile (issue 19): the turn goes on with the same clock (``turn_number`` and
    the deadline unchanged), so the seat then lays the tile or draws again."""
    seat = command.seat
    rnd = _round_in_play(state)
    if seat != rnd.turn:
        _require_seated(state, seat)
        raise errors.NotYourTurn(f"seat {rnd.turn} is to play")
    if rnd.hands[seat] & _fit_mask(rnd):
        raise errors.MustPlay("a tile of your hand fits")
    if not rnd.stock:
        raise errors.CannotDraw("the stock is empty" if state.rules.draw else "no stock here")
    event = Drew(seat, 1)
    new_state = state._replace(
        version=state.version + 1, round=draw_one(rnd, seat), last_action=event
    )
    return Transition(new_state, (event,))


def _end_round(
    state: TableState,
    rnd: RoundState,
    outcome: Outcome,
    now_ms: int,
    event: Event,
    drew: tuple[Event, ...] = (),
) -> Transition:
    """Score the round (:mod:`.scoring`) and end it; the game ends when the scoring side
    reached the target (R17). A round nobody scored (a tie under ``BlockedTie.NOBODY``)
    changes no score."""
    result = score_round(rnd, outcome, state.rules)
    scorer = result.scoring_team
    scores = state.scores
    if scorer != NOBODY:
        scores = tuple(v + result.points if i == scorer else v for i, v in enumerate(scores))
    ended: tuple[Event, ...] = (*drew, event, RoundEnded(result))
    finished = scorer != NOBODY and scores[scorer] >= state.target  # R17
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
    if state.vote is not None:
        return consent.expire(state, now_ms)  # D11: the vote's time limit
    if state.phase is Phase.ROUND_OVER:
        assert state.round is not None
        return _deal(state, state.round.number + 1, now_ms)  # D1
    rnd = _round_in_play(state)
    seat = rnd.turn
    cause = AutoCause.TIMEOUT if state.connected[seat] else AutoCause.AWAY
    drew: tuple[Event, ...] = ()
    count = draws_to_fit(rnd, seat)
    if count:  # draw until a tile fits, or the stock is empty (issue 19)
        for _ in range(count):
            rnd = draw_one(rnd, seat)
        state = state._replace(round=rnd)
        drew = (Drew(seat, count, cause),)
    choice = auto_play_choice(state)
    if isinstance(choice, Play):
        return _play(state, choice, now_ms, cause, drew)
    return _pass_turn(state, rnd, seat, now_ms, cause, drew)


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
    Draw: _draw,
    SetPresence: _set_presence,
    ProposeEnd: consent.propose,
    AnswerEnd: consent.answer,
    Expire: _expire,
}
