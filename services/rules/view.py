"""The one projection of a table onto what a seat may see (S6).

:func:`view_for` is the only function that turns a :class:`TableState` into something sent
towards a client. It copies the public state (chain, tile counts, passes, scores, target,
turn and deadline) and the seat's own hand; other seats' hands appear only in the summary of
a round that is over (D1). The seed of the deals never appears.

Under every rule set (issue 19) the view also carries the rule set, the number of tiles in
the stock (never which), one score per side, each seat's side and how many tiles it drew
this round, and whether the seat may draw; ``seats`` lists the rule set's seats only. A
tile drawn by another seat never appears: ``Drew`` tells who drew and how many.

Every view carries the open ends with their numbers (``open_ends``: ``LEFT``, ``RIGHT`` of
a line) and the points of each legal move (``move_points``, parallel to ``legal_moves``;
0 but under all fives). Under all fives (seed 002) ``chain`` is the long line from left to
right with the spinner inside it (``spinner_index``), ``up_arm``/``down_arm`` its short
sides from the spinner outward, and ``open_ends`` up to four ends (``UP``, ``DOWN`` once
both long sides are covered).
"""

from __future__ import annotations

from typing import NamedTuple

from . import fives
from .commands import Play
from .engine import can_draw, can_pass, legal_moves, move_points
from .events import Event
from .options import NO_OPTIONS, TableOptions
from .rulesets import CLASSIC, RuleSet
from .spinner import OpenEnd
from .state import (
    HOST_SEAT,
    NOBODY,
    Phase,
    RoundResult,
    TableState,
    Vote,
    team_of,
)
from .tiles import FITS, INDEX, NO_END, hand_tiles


class SeatPublic(NamedTuple):
    """What everybody sees of one seat. ``team`` is ``NOBODY`` without teams; ``side`` is
    the team, or the seat itself in individual play; ``drawn`` counts the tiles it drew from
    the stock this round. ``robot`` is the level of the robot holding the seat (0: a
    person); ``stand_in_until_ms``, while a robot plays for the seat's dropped player, when
    the player's time to come back ends (0: no robot stands in; issue 20)."""

    seat: int
    occupied: bool
    name: str
    team: int
    host: bool
    tile_count: int
    passed_on: tuple[int, ...]
    connected: bool
    side: int = 0
    drawn: int = 0
    robot: int = 0
    stand_in_until_ms: int = 0


class PlacedTile(NamedTuple):
    """A laid tile, oriented left to right, and who laid it. On a short side of the spinner
    (``SeatView.up_arm``/``down_arm``) ``left`` is the half facing the spinner and
    ``right`` the half facing away (the end's number when it is the last tile)."""

    left: int
    right: int
    seat: int


#: Every laid tile's :class:`PlacedTile` by its code in a chain or arm
#: (``seat << 6 | left << 3 | right``, seats 0-7), made once: a view lists up to 28.
_PLACED = tuple(PlacedTile(code >> 3 & 7, code & 7, code >> 6) for code in range(8 << 6))


class SeatView(NamedTuple):
    """One seat's view of the table at one version (mirrors ``dominos.v1.TableView``).

    ``turn_seat``, ``left_end`` and ``right_end`` are ``NOBODY`` when unset; ``winner`` is a
    side index or ``NOBODY``; ``last_round`` is set only while a round is over. ``scores``
    has one entry per side; ``stock_count`` is the number of tiles left to draw.

    ``open_ends`` lists every open end and its number (``LEFT, RIGHT, UP, DOWN`` order;
    empty while the chain is); ``move_points`` the points of each of ``legal_moves`` (same
    order, 0 but under all fives). Under all fives ``chain`` is the long line with the
    spinner at ``spinner_index`` (``NOBODY`` before the first double) and ``up_arm`` /
    ``down_arm`` its short sides from the spinner outward.

    Options (issue 20): ``options`` as the host chose them; ``vote`` the open friendly-end
    vote (the game is paused: no legal move meanwhile); ``unscored`` a game ended by consent;
    ``laid_per_number`` (with the count aid only) how many laid tiles show each number 0..6
    this round, a double counted once.
    """

    table_id: str
    version: int
    phase: Phase
    target: int
    scores: tuple[int, ...]
    seats: tuple[SeatPublic, ...]
    your_seat: int
    hand: tuple[int, ...]
    legal_moves: tuple[Play, ...]
    can_pass: bool
    turn_seat: int
    deadline_ms: int
    round_number: int
    opener_seat: int
    chain: tuple[PlacedTile, ...]
    left_end: int
    right_end: int
    last_round: RoundResult | None
    winner: int
    last_action: Event
    consecutive_passes: int
    rules: RuleSet = CLASSIC
    stock_count: int = 0
    can_draw: bool = False
    open_ends: tuple[OpenEnd, ...] = ()
    up_arm: tuple[PlacedTile, ...] = ()
    down_arm: tuple[PlacedTile, ...] = ()
    spinner_index: int = NOBODY
    move_points: tuple[int, ...] = ()
    options: TableOptions = NO_OPTIONS
    vote: Vote | None = None
    unscored: bool = False
    laid_per_number: tuple[int, ...] = ()


class SeatPrivate(NamedTuple):
    """The part of a seat's view that is its own (the rest is the same for every seat):
    its number, its hand, its legal moves and their points, whether it may pass or draw."""

    your_seat: int
    hand: tuple[int, ...]
    legal_moves: tuple[Play, ...]
    move_points: tuple[int, ...]
    can_pass: bool
    can_draw: bool


def private_view(state: TableState, seat: int) -> SeatPrivate:
    """``seat``'s own part of its view: nothing of any other seat's hand (S6)."""
    rnd = state.round
    return SeatPrivate(
        your_seat=seat,
        hand=hand_tiles(rnd.hands[seat]) if rnd is not None else (),
        legal_moves=legal_moves(state, seat),
        move_points=move_points(state, seat),
        can_pass=can_pass(state, seat),
        can_draw=can_draw(state, seat),
    )


#: The seat of a public view (no seat's own part).
NO_SEAT = NOBODY
_NO_PRIVATE = SeatPrivate(NO_SEAT, (), (), (), False, False)


def view_for(state: TableState, seat: int) -> SeatView:
    """What ``seat`` may see of ``state``: public facts plus its own hand, nothing more (S6):
    :func:`public_view` with :func:`private_view` of the seat in it."""
    return public_view(state)._replace(**private_view(state, seat)._asdict())


#: The numbers (0-6) a seat passed on, by the mask of them (``RoundState.passed``).
_PASSED_ON: tuple[tuple[int, ...], ...] = tuple(
    tuple(n for n in range(7) if mask >> n & 1) for mask in range(1 << 7)
)


def public_view(state: TableState) -> SeatView:
    """What every seat sees alike of ``state`` (and a spectator would): the view of no seat,
    ``your_seat`` ``NO_SEAT``, no hand, no legal move, neither pass nor draw."""
    rnd = state.round
    private = _NO_PRIVATE
    live = state.phase is Phase.PLAYING
    rules = state.rules
    seats = []
    for s in range(rules.seats):
        seats.append(
            SeatPublic(
                seat=s,
                occupied=state.names[s] != "",
                name=state.names[s],
                team=team_of(s) if rules.teams else NOBODY,
                host=s == HOST_SEAT,
                tile_count=rnd.hands[s].bit_count() if rnd is not None else 0,
                passed_on=_PASSED_ON[rnd.passed[s]] if rnd is not None else (),
                connected=state.connected[s],
                side=rules.side_of(s),
                drawn=rnd.drawn[s] if rnd is not None else 0,
                robot=state.robots[s],
                stand_in_until_ms=state.stand_ins[s],
            )
        )
    chain: tuple[PlacedTile, ...] = ()
    up_arm: tuple[PlacedTile, ...] = ()
    down_arm: tuple[PlacedTile, ...] = ()
    if rnd is not None:
        chain, up_arm, down_arm = (
            tuple(_PLACED[code] for code in codes) for codes in (rnd.chain, rnd.up, rnd.down)
        )
    over = state.phase in (Phase.ROUND_OVER, Phase.FINISHED)
    return SeatView(
        table_id=state.table_id,
        version=state.version,
        phase=state.phase,
        target=state.target,
        scores=state.scores,
        seats=tuple(seats),
        your_seat=private.your_seat,
        hand=private.hand,
        legal_moves=private.legal_moves,
        can_pass=private.can_pass,
        turn_seat=rnd.turn if live and rnd is not None else NOBODY,
        deadline_ms=state.deadline_ms,
        round_number=rnd.number if rnd is not None else 0,
        opener_seat=rnd.opener if rnd is not None else NOBODY,
        chain=chain,
        left_end=rnd.left if rnd is not None and rnd.left != NO_END else NOBODY,
        right_end=rnd.right if rnd is not None and rnd.right != NO_END else NOBODY,
        last_round=state.last_result if over else None,
        winner=state.winner,
        last_action=state.last_action,
        consecutive_passes=rnd.passes if rnd is not None and live else 0,
        rules=rules,
        stock_count=len(rnd.stock) if rnd is not None else 0,
        can_draw=private.can_draw,
        open_ends=fives.open_ends(rnd) if rnd is not None else (),
        up_arm=up_arm,
        down_arm=down_arm,
        spinner_index=fives.spinner_index(rnd) if rnd is not None else NOBODY,
        move_points=private.move_points,
        options=state.options,
        vote=state.vote,
        unscored=state.unscored,
        laid_per_number=_laid_per_number(state) if state.options.count_aid else (),
    )


def _laid_per_number(state: TableState) -> tuple[int, ...]:
    """Seed 004's aid: per number 0..6, how many tiles laid this round carry it."""
    rnd = state.round
    if rnd is None:
        return (0,) * 7
    laid = 0
    for code in (*rnd.chain, *rnd.up, *rnd.down):
        left, right = code >> 3 & 7, code & 7
        laid |= 1 << INDEX[min(left, right)][max(left, right)]
    return tuple((laid & FITS[n]).bit_count() for n in range(7))
