"""The strong player: the solid player's hand sense plus the public record of the round.

Every legal move is scored on the ends it leaves and the hand it keeps, with the record of
:mod:`services.robots.record` (the seeds' advice sections, 001 and 002):

- *shed the heavy tiles*, more so near the end of the round (an opponent down to a tile or
  two: "lorsque la fin approche, réduire les grosses valeurs");
- *keep varied numbers*, and *before exposing a number, make sure you can still play on
  it*: the tiles of the hand that answer the ends left count, a hand that answers none is
  penalised;
- *watch the passes and count the tiles*: the chance that the next opponent cannot answer
  the ends left (void in them, or every unseen tile of them elsewhere) weighs most of all;
  the other opponent's counts for the move, the partner's against it. When the next
  opponent holds one tile, the chance that it goes out on those ends costs the side's
  pips. Ends nobody else can answer (every tile of their numbers laid or in the hand) lock
  the others out: good when the hand answers them; when it does not, the round is blocked
  and the lighter side wins (the others' pips are estimated from the record);
- doubles fit one number only: laying one is worth a little;
- *in all fives look at the total first*: the points the move scores now, minus what the
  ends it leaves are expected to give the next opponent (each unseen tile weighed by the
  chance that seat holds it), plus a share of what they offer the partner; a move that
  reaches the target wins at once.

The best score is played; equal scores are broken at random (``chance``). The weights
(:class:`Weights`) were tuned with the tournament. A decision reads the record once and
costs tens of microseconds (one placement per move under all fives and a pass over the
unseen tiles of its ends).
"""

from __future__ import annotations

from typing import Final, NamedTuple

from services.robots.chance import Chance, pick
from services.robots.observation import Decision, Move, Observation, no_move
from services.robots.record import Record, fitting, read
from services.rules import Play
from services.rules.spinner import Layout, ends_total, place
from services.rules.tiles import FITS, HIGH, LOW, NO_END, PIPS, TILE_COUNT

_DOUBLE: Final = tuple(LOW[t] == HIGH[t] for t in range(TILE_COUNT))
_NUMBERS: Final = tuple(1 << LOW[t] | 1 << HIGH[t] for t in range(TILE_COUNT))


class Weights(NamedTuple):
    """The strong player's weights, in pips (see the module docstring); the defaults were
    tuned with the tournament (``bench.bots_bench``) against the previous defaults."""

    pips: float = 0.7
    #: Extra weight on pips once an opponent holds :attr:`endgame_tiles` tiles or fewer.
    endgame: float = 1.5
    endgame_tiles: int = 2
    variety: float = 1.5
    #: Per tile of the hand that answers the ends left (up to two).
    follow: float = 2.0
    #: When no tile of the hand answers the ends left.
    stuck: float = 4.0
    #: Times the chance that the next seat (an opponent) cannot answer the ends left.
    block_next: float = 40.0
    block_partner: float = 4.0
    block_other: float = 2.0
    double: float = 2.0
    #: Ends nobody else can answer while the hand can.
    lock: float = 10.0
    #: Scale of the pips won or lost by a block the move causes.
    blocked: float = 1.0
    #: All fives: per point scored now, per point the next opponent is expected to score
    #: on the ends left, per point the partner is.
    points: float = 1.0
    reply: float = 1.5
    partner_reply: float = 0.3
    #: Per pip of the side's hands, times the chance that an opponent holding one tile
    #: goes out on the ends left.
    out_risk: float = 5.0


#: The weights of games scored at the end of the round only.
WEIGHTS: Final = Weights()
#: The weights of all fives, where the points during the round weigh more than the pips.
FIVES_WEIGHTS: Final = WEIGHTS._replace(pips=0.6, block_next=25.0)


class _Table(NamedTuple):
    """What a decision reads once, for every move."""

    record: Record
    hand: int
    next_seat: int
    partner: int
    others: tuple[int, ...]
    pips_weight: float
    my_side: int
    score_to_win: int
    #: Expected pips of the seat's side (its own hand exact).
    side_pips: float


def _numbers_after(observation: Observation, move: Move) -> int:
    """The numbers open once ``move`` is laid (a line of two ends)."""
    tile = move.tile
    if not observation.open_ends:
        return _NUMBERS[tile]
    mask = 0
    for end, number in observation.open_ends:
        if end != move.end:
            mask |= 1 << number
        else:
            mask |= 1 << (HIGH[tile] if LOW[tile] == number else LOW[tile])
    return mask


def _removed(layout: Layout, arm: int) -> int:
    """What covering ``arm`` (0..3) of ``layout`` takes off the ends' total."""
    tiles = layout.arms[arm]
    if tiles:
        last = tiles[-1]
        return 2 * last.outer if _DOUBLE[last.tile] else last.outer
    if arm >= 2:
        return 0  # a short side shows the spinner's number but does not count
    if layout.spinner >= 0:
        spinner = layout.spinner
        return 2 * LOW[spinner] if layout.arms[1 - arm] else 0  # counted once while alone
    return LOW[layout.center] if arm == 0 else HIGH[layout.center]


def _reply_points(record: Record, seat: int, layout: Layout) -> float:
    """The points ``seat`` is expected to score with its best tile on ``layout``: each
    unseen tile's best placement, the likelier-held and higher first, weighed by the chance
    it is held and no better one is."""
    base = ends_total(layout)
    chances = record.chances[seat]
    best: dict[int, int] = {}
    for arm in range(4):
        number = layout.ends[arm]
        if number == NO_END:
            continue
        removed = _removed(layout, arm)
        mask = FITS[number] & record.unseen
        while mask:
            low = mask & -mask
            tile = low.bit_length() - 1
            mask ^= low
            outer = HIGH[tile] if LOW[tile] == number else LOW[tile]
            total = base - removed + (2 * outer if _DOUBLE[tile] else outer)
            if total > 0 and total % 5 == 0 and total > best.get(tile, 0):
                best[tile] = total
    expected = 0.0
    missing = 1.0
    for tile, points in sorted(best.items(), key=lambda item: -item[1]):
        held = chances[tile]
        expected += missing * held * points
        missing *= 1.0 - held
    return expected


def _table(observation: Observation, weights: Weights) -> _Table:
    record = read(observation)
    seat, seats = observation.seat, observation.seats
    others = tuple((seat + i) % seats for i in range(1, seats))
    partner = observation.partner if observation.partner is not None else -1
    opponents = [s for s in others if s != partner]
    fewest = min(observation.tile_counts[s] for s in opponents)
    pips_weight = weights.pips
    if fewest <= weights.endgame_tiles:
        pips_weight += weights.endgame
    side = observation.side_of(seat)
    side_pips = sum(record.pips_of(s) for s in range(seats) if observation.side_of(s) == side)
    return _Table(
        record=record,
        hand=record.hand,
        next_seat=others[0],
        partner=partner,
        others=others,
        pips_weight=pips_weight,
        my_side=side,
        score_to_win=observation.target - observation.scores[side],
        side_pips=side_pips,
    )


def _blocked_value(observation: Observation, table: _Table, hand_after: int) -> float:
    """The pips a block caused now is expected to win (positive) or lose (negative)."""
    record = table.record
    sides: dict[int, float] = {}
    for s in range(observation.seats):
        pips = (
            float(sum(PIPS[t] for t in range(TILE_COUNT) if hand_after >> t & 1))
            if s == observation.seat
            else record.pips_of(s)
        )
        side = observation.side_of(s)
        sides[side] = sides.get(side, 0.0) + pips
    mine = sides.pop(table.my_side)
    lightest_other = min(sides.values())
    total = mine + sum(sides.values())
    if mine < lightest_other:
        return total - mine
    return -(total - lightest_other)


def _ends_after(observation: Observation, move: Move) -> tuple[int, Layout | None]:
    """The numbers open once ``move`` is laid, and under all fives the layout then."""
    if not observation.fives:
        return _numbers_after(observation, move), None
    layout = place(observation.layout, move.tile, move.end)
    numbers = 0
    for number in layout.ends:
        if number != NO_END:
            numbers |= 1 << number
    return numbers, layout


def _hand_value(table: _Table, tile: int, hand_after: int, follow: int, weights: Weights) -> float:
    """The pips shed, the numbers kept, the tiles that answer the ends left, a double laid."""
    value = table.pips_weight * PIPS[tile]
    kept = 0
    rest = hand_after
    while rest:
        low = rest & -rest
        kept |= _NUMBERS[low.bit_length() - 1]
        rest ^= low
    value += weights.variety * kept.bit_count()
    value += weights.follow * min(follow, 2) if follow else -weights.stuck
    if _DOUBLE[tile]:
        value += weights.double
    return value


def _others_value(observation: Observation, table: _Table, answers: int, weights: Weights) -> float:
    """The chances that the other seats cannot answer the ends left (the tiles of
    ``answers``): the next opponent's above all, and its chance to go out on them."""
    record = table.record
    dead = not record.unseen & answers  # nobody else can answer these ends
    value = weights.lock if dead else 0.0
    stuck_next = 1.0 if dead else record.none_of(table.next_seat, answers)
    value += weights.block_next * stuck_next
    if weights.out_risk and observation.tile_counts[table.next_seat] == 1:
        value -= weights.out_risk * (1.0 - stuck_next) * table.side_pips
    for s in table.others[1:]:
        stuck = 1.0 if dead else record.none_of(s, answers)
        if s == table.partner:
            value -= weights.block_partner * stuck
        else:
            value += weights.block_other * stuck
    return value


def _fives_value(move: Move, table: _Table, layout: Layout, weights: Weights) -> float:
    """The points now, less those the ends left are expected to give the next opponent,
    plus a share of those they offer the partner."""
    value = weights.points * move.points
    value -= weights.reply * _reply_points(table.record, table.next_seat, layout)
    if table.partner >= 0:
        value += weights.partner_reply * _reply_points(table.record, table.partner, layout)
    return value


def evaluate(
    observation: Observation, table: _Table, move: Move, weights: Weights = WEIGHTS
) -> float:
    """The strong player's value of ``move`` (see the module docstring), in pips."""
    tile = move.tile
    hand_after = table.hand & ~(1 << tile)
    if not hand_after:
        return 10_000.0 + move.points  # out: the round is won
    if observation.fives and move.points >= table.score_to_win:
        return 20_000.0 + move.points  # the target reached: the game is won at once
    numbers, layout = _ends_after(observation, move)
    answers = fitting(numbers)
    follow = (hand_after & answers).bit_count()
    value = _hand_value(table, tile, hand_after, follow, weights)
    if not follow and observation.stock == 0 and not table.record.unseen & answers:
        # Nobody can answer these ends, the seat included: the round is blocked now.
        value += weights.blocked * _blocked_value(observation, table, hand_after)
    else:
        value += _others_value(observation, table, answers, weights)
    if layout is not None:
        value += _fives_value(move, table, layout, weights)
    return value


def decide(observation: Observation, chance: Chance, weights: Weights | None = None) -> Decision:
    """The move of best :func:`evaluate` (ties at random); without a move, a draw while the
    seat may draw, else a pass. ``weights`` default to :data:`FIVES_WEIGHTS` under all
    fives, :data:`WEIGHTS` otherwise."""
    if weights is None:
        weights = FIVES_WEIGHTS if observation.fives else WEIGHTS
    moves = observation.moves
    if not moves:
        return no_move(observation)
    if len(moves) == 1:
        move = moves[0]
        return Play(observation.seat, move.tile, move.end)
    table = _table(observation, weights)
    scores = [evaluate(observation, table, move, weights) for move in moves]
    best = max(scores)
    ties = [move for move, value in zip(moves, scores, strict=True) if value == best]
    move = ties[pick(chance, len(ties))] if len(ties) > 1 else ties[0]
    return Play(observation.seat, move.tile, move.end)
