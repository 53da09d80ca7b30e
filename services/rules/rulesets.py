"""Rule sets as data (issue 19): what a table plays, chosen at ``Create`` and fixed for its life.

A :class:`RuleSet` is a frozen, hashable record of every choice the engine follows: how many
seats and whether partners play together, the hand size and the stock, who opens a round,
how a domino and a blocked round score, who wins a blocked tie, the target and the turn
time, and the ranges a host may choose within. The vocabulary (enum names and numbers) is
shared with the contract (``OPENER_SIX_SIX_HOLDER = 1`` ...; 0 is ``UNSPECIFIED`` in the
contract only).

:data:`PRESETS` holds one rule set per seed system (``/work/shared/seeds/*.txt``);
:data:`CLASSIC` is today's game exactly (R1-R17). :func:`preset` adjusts a preset within
the ranges its seed allows and raises :class:`~.errors.RulesInvalid` (or
:class:`~.errors.TargetInvalid`) for anything else, naming the argument in ``field``.

Seats, sides and teams: seats are 0..``seats``-1 in turn order. With ``teams`` (four seats
only) the partners sit across (seats 0 and 2 are side 0, seats 1 and 3 side 1); without,
each seat is its own side (side = seat). Scores, pips and winners are per side.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import IntEnum
from typing import Final

from . import errors

#: The tiles of the double-six set (R5); a rule set deals from these.
SET_SIZE: Final = 28


class Opener(IntEnum):
    """Who opens the first round (and later rounds when :class:`NextOpener` sends back)."""

    #: The holder of 6-6 opens with any tile (seed 000; seed 004 with four players).
    SIX_SIX_HOLDER = 1
    #: The holder of the highest double opens and must lay it; with no double dealt, the
    #: holder of the heaviest tile lays it; equal weights: the higher half (001). Tiles are
    #: totally ordered that way, so the seat-order tie-break of 003 is never needed.
    HIGHEST_DOUBLE = 2


class NextOpener(IntEnum):
    """Who opens rounds 2 and later."""

    #: The seat after the previous round's opener, any tile (000, 004).
    ROTATION = 1
    #: The previous round's winner, any tile; after a round nobody scored: the ``Opener``
    #: rule again (001).
    PREVIOUS_WINNER = 2
    #: The previous round's winner, any tile; after a round nobody scored: the seat after
    #: the previous opener, any tile (002).
    PREVIOUS_WINNER_ELSE_NEXT = 3
    #: The ``Opener`` rule every round (003 is silent on later rounds).
    OPENER_AGAIN = 4


class DominoScore(IntEnum):
    """What a seat that lays its last tile scores for its side."""

    #: The opponents' hands (individual play: every other hand; teams: the other pair).
    OPPONENTS = 1
    #: Every other hand, the partner's included (004).
    ALL_OTHERS = 2


class BlockedScore(IntEnum):
    """What the lightest side of a blocked round scores."""

    #: The other sides' total (000, 001, 004).
    OTHERS_TOTAL = 1
    #: The other sides' total minus its own (002).
    OTHERS_MINUS_OWN = 2
    #: Every tile left in the hands, its own included (003).
    ALL_TILES = 3


class BlockedTie(IntEnum):
    """Who scores a blocked round when the lightest sides are level."""

    #: The side of the last tile laid (000); if it is not among the level sides, the level
    #: side nearest after it in turn order.
    LAST_PLACER = 1
    #: Nobody scores (001, 002, 003).
    NOBODY = 2
    #: The opener's side ("la main"), else the level side nearest after the opener (004).
    HAND_OR_NEAREST = 3


class Scoring(IntEnum):
    """When points are scored."""

    #: At the end of a round only.
    BLOCK = 1
    #: Seed 002's "tous les 5": the spinner (up to four ends), a play scores the open ends'
    #: total at once when it is a multiple of 5, round points are rounded to the nearest 5
    #: and reaching the target by a play ends the game at once (:mod:`.fives`).
    ALL_FIVES = 2


#: An allowed table layout of a rule set: ``(seats, hand_size, teams)``.
Layout = tuple[int, int, bool]


@dataclass(frozen=True, slots=True)
class RuleSet:
    """Every rule a table follows (see the module docstring); frozen and hashable.

    ``layouts`` lists the ``(seats, hand_size, teams)`` the preset allows (a seed may tie
    the hand size to the seat count); the chosen ``(seats, hand_size, teams)`` is one of
    them. ``set_aside`` tiles are neither dealt nor drawable; without ``draw`` every undealt
    tile is set aside. ``turn_seconds`` applies only when the rule set lets the table choose
    it (``min_turn_seconds < max_turn_seconds``); otherwise the operator's turn time (D8).
    """

    preset: str
    seats: int
    teams: bool
    hand_size: int
    draw: bool
    set_aside: int
    opener: Opener
    next_opener: NextOpener
    domino_score: DominoScore
    blocked_score: BlockedScore
    blocked_tie: BlockedTie
    scoring: Scoring
    target: int
    min_target: int
    max_target: int
    target_step: int
    turn_seconds: int
    min_turn_seconds: int
    max_turn_seconds: int
    layouts: tuple[Layout, ...]

    @property
    def sides(self) -> int:
        """How many sides score: two teams, or one per seat."""
        return 2 if self.teams else self.seats

    def side_of(self, seat: int) -> int:
        """The side of ``seat``: its team (seat & 1) with teams, else the seat itself."""
        return seat & 1 if self.teams else seat

    @property
    def allowed_seats(self) -> tuple[int, ...]:
        """The seat counts the preset allows, ascending."""
        return tuple(sorted({layout[0] for layout in self.layouts}))

    def hand_sizes_for(self, seats: int) -> tuple[int, ...]:
        """The hand sizes the preset allows at ``seats`` seats, ascending."""
        return tuple(sorted({h for s, h, _ in self.layouts if s == seats}))

    @property
    def stock_size(self) -> int:
        """The tiles a round starts with in the stock (0 without ``draw``)."""
        if not self.draw:
            return 0
        return SET_SIZE - self.seats * self.hand_size - self.set_aside

    @property
    def turn_adjustable(self) -> bool:
        """Whether the table chooses its turn time (004) rather than the operator (D8)."""
        return self.min_turn_seconds < self.max_turn_seconds


def _base(name: str, **fields: object) -> RuleSet:
    defaults: dict[str, object] = {
        "preset": name,
        "seats": 4,
        "teams": False,
        "hand_size": 5,
        "draw": True,
        "set_aside": 0,
        "opener": Opener.HIGHEST_DOUBLE,
        "next_opener": NextOpener.PREVIOUS_WINNER,
        "domino_score": DominoScore.OPPONENTS,
        "blocked_score": BlockedScore.OTHERS_TOTAL,
        "blocked_tie": BlockedTie.NOBODY,
        "scoring": Scoring.BLOCK,
        "target": 100,
        "min_target": 50,
        "max_target": 500,
        "target_step": 50,
        "turn_seconds": 45,
        "min_turn_seconds": 45,
        "max_turn_seconds": 45,
    }
    defaults.update(fields)
    return RuleSet(**defaults)  # type: ignore[arg-type]


#: Seed 000: today's game, R1-R17 exactly: four seats in two teams, seven tiles, no stock,
#: the 6-6 holder opens with any tile, then rotation; a domino scores the opponents' hands,
#: a blocked round the other team's total, a tie goes to the last placer; target 100
#: (50..500 step 50), 45 s turns (the operator's, D8). Adjustable: the target only.
CLASSIC: Final = _base(
    "classic",
    teams=True,
    hand_size=7,
    draw=False,
    opener=Opener.SIX_SIX_HOLDER,
    next_opener=NextOpener.ROTATION,
    blocked_tie=BlockedTie.LAST_PLACER,
    layouts=((4, 7, True),),
)

#: Seed 001 (family game with a stock): 2-4 seats each for themselves, 7 tiles at two and
#: 5 at three or four, the rest is the stock (all of it drawable); draw one at a time until
#: a tile fits and lay it, pass only when the stock is empty; round 1: the highest double
#: (else the heaviest tile, higher half first), later rounds the previous winner (after a
#: tie the highest double again); domino: every other hand; blocked: the lightest hand
#: scores the others' total (not minus its own), a tie scores nothing; target 100 (fixed
#: by the seed: "le seuil de 100 est un choix de cette table").
FAMILY_DRAW: Final = _base(
    "family_draw",
    target=100,
    min_target=100,
    max_target=100,
    layouts=((2, 7, False), (3, 5, False), (4, 5, False)),
)

#: Seed 002, "avec pioche": 2-4 seats each for themselves, 7 tiles at two, 5 at three or
#: four, draw until a tile fits; round 1 the highest double (else the heaviest tile), then
#: the previous winner (after a tie: the next seat); domino: the other hands; blocked: the
#: others' total minus its own; tie: nobody; target chosen (50..500 step 50).
WEB_DRAW: Final = _base(
    "web_draw",
    next_opener=NextOpener.PREVIOUS_WINNER_ELSE_NEXT,
    blocked_score=BlockedScore.OTHERS_MINUS_OWN,
    layouts=((2, 7, False), (3, 5, False), (4, 5, False)),
)

#: Seed 002, "bloqué": as ``web_draw`` but 7 tiles for everyone and no stock (at two or
#: three seats the undealt tiles are set aside), a seat that cannot play passes.
WEB_BLOCK: Final = replace(
    WEB_DRAW,
    preset="web_block",
    hand_size=7,
    draw=False,
    layouts=((2, 7, False), (3, 7, False), (4, 7, False)),
)

#: Seed 002, "tous les 5": as ``web_draw`` with the spinner and the multiples of five
#: (``Scoring.ALL_FIVES``): a play scores the ends' total when a multiple of 5, a domino or
#: a blocked round scores as ``web_draw`` rounded to the nearest 5.
WEB_FIVES: Final = replace(WEB_DRAW, preset="web_fives", scoring=Scoring.ALL_FIVES)

#: Seed 003 (the app): 5 or 7 tiles chosen, target 50, 100 or 150; two seats one against
#: one, three each for themselves, four always in teams (partners across); every undealt
#: tile is the stock (4 x 7: no stock); the highest double opens (else the heaviest tile),
#: every round; domino: the opponents' hands (teams: the other pair); blocked: the lightest
#: side (teams: pair sums) scores every tile left, its own included; a tie scores nothing.
APP: Final = _base(
    "app",
    teams=True,
    hand_size=7,
    next_opener=NextOpener.OPENER_AGAIN,
    blocked_score=BlockedScore.ALL_TILES,
    max_target=150,
    layouts=(
        (2, 5, False),
        (2, 7, False),
        (3, 5, False),
        (3, 7, False),
        (4, 5, True),
        (4, 7, True),
    ),
)

#: Seed 004 (the site): 2, 3 or 4 seats, or 4 in pairs; 7 tiles, fewer than four seats
#: draw from the rest as needed (pass when it is empty); round 1 the highest double, with
#: four seats the 6-6 holder (any tile), else the heaviest tile; later rounds rotate (any
#: tile); domino: every other hand, the partner's included; blocked: the lightest side
#: scores "normally" (the other sides' hands); a tie goes to the side with "la main" (the
#: opener), else the nearest after it; the table sets the turn time (15..120 s) and the
#: target (50..300, step 50).
SITE: Final = _base(
    "site",
    teams=True,
    hand_size=7,
    opener=Opener.SIX_SIX_HOLDER,
    next_opener=NextOpener.ROTATION,
    domino_score=DominoScore.ALL_OTHERS,
    blocked_tie=BlockedTie.HAND_OR_NEAREST,
    max_target=300,
    min_turn_seconds=15,
    max_turn_seconds=120,
    layouts=((2, 7, False), (3, 7, False), (4, 7, True), (4, 7, False)),
)

#: Every preset by name.
PRESETS: Final[dict[str, RuleSet]] = {
    rules.preset: rules
    for rules in (CLASSIC, FAMILY_DRAW, WEB_DRAW, WEB_BLOCK, WEB_FIVES, APP, SITE)
}


def validate_target(target: int, rules: RuleSet = CLASSIC) -> int:
    """``target`` itself; ``TargetInvalid`` (field ``target``) unless within the rule set's
    range and a multiple of its step (R16 for classic: 50..500 in steps of 50)."""
    low, high, step = rules.min_target, rules.max_target, rules.target_step
    if not (low <= target <= high) or (target - low) % step:
        raise errors.TargetInvalid(f"a target is {low}..{high} in steps of {step}", field="target")
    return target


def _check(ok: bool, field: str, message: str) -> None:
    if not ok:
        raise errors.RulesInvalid(message, field=field)


def validate_rules(rules: RuleSet) -> RuleSet:
    """``rules`` itself when it is playable and consistent; ``RulesInvalid`` naming the field
    otherwise. (``RulesUnavailable`` is kept for the contract; every scoring is playable.)"""
    _check(isinstance(rules, RuleSet), "rules", "not a rule set")
    _check(2 <= rules.seats <= 4, "seats", "a table has 2, 3 or 4 seats")
    _check(not rules.teams or rules.seats == 4, "teams", "teams need four seats")
    _check(rules.hand_size >= 1, "hand_size", "a hand holds at least one tile")
    dealt = rules.seats * rules.hand_size + rules.set_aside
    _check(rules.set_aside >= 0 and dealt <= SET_SIZE, "hand_size", "more tiles than the set")
    _check(
        (rules.seats, rules.hand_size, rules.teams) in rules.layouts,
        "seats",
        "seats, hand size and teams are not a layout of the rule set",
    )
    for value, enum, field in (
        (rules.opener, Opener, "opener"),
        (rules.next_opener, NextOpener, "next_opener"),
        (rules.domino_score, DominoScore, "domino_score"),
        (rules.blocked_score, BlockedScore, "blocked_score"),
        (rules.blocked_tie, BlockedTie, "blocked_tie"),
        (rules.scoring, Scoring, "scoring"),
    ):
        _check(type(value) is enum, field, f"not a {enum.__name__}")
    _check(
        rules.opener is not Opener.SIX_SIX_HOLDER or rules.seats * rules.hand_size == SET_SIZE,
        "opener",
        "the 6-6 holder opens only when every tile is dealt",
    )
    _check(
        rules.target_step > 0 and 0 < rules.min_target <= rules.max_target,
        "target",
        "a target range is positive",
    )
    validate_target(rules.target, rules)
    _check(
        0 < rules.min_turn_seconds <= rules.turn_seconds <= rules.max_turn_seconds <= 3600,
        "turn_seconds",
        f"a turn lasts {rules.min_turn_seconds}..{rules.max_turn_seconds} s",
    )
    return rules


def preset(
    name: str,
    *,
    seats: int | None = None,
    hand_size: int | None = None,
    target: int | None = None,
    turn_seconds: int | None = None,
    teams: bool | None = None,
) -> RuleSet:
    """The preset ``name`` adjusted within its seed's ranges; ``None`` keeps the default.

    The hand size follows the seat count where the seed ties them (001, 002: 7 at two, 5 at
    three or four); ``teams`` is a choice only where the seed gives one (004 at four seats).
    Anything else raises ``RulesInvalid`` naming the argument (``preset``, ``seats``,
    ``hand_size``, ``teams``, ``turn_seconds``) or ``TargetInvalid`` (``target``). The
    result is not checked further (``validate_rules`` does, at ``Create``).
    """
    base = PRESETS.get(name)
    if base is None:
        raise errors.RulesInvalid(f"no preset {name!r}", field="preset")
    seats = base.seats if seats is None else seats
    _check(seats in base.allowed_seats, "seats", f"{name} has {base.allowed_seats} seats")
    sizes = base.hand_sizes_for(seats)
    if hand_size is None:
        hand_size = base.hand_size if base.hand_size in sizes else sizes[0]
    _check(hand_size in sizes, "hand_size", f"{name} deals {sizes} tiles at {seats} seats")
    choices = tuple(t for s, h, t in base.layouts if (s, h) == (seats, hand_size))
    if teams is None:
        teams = base.teams if base.teams in choices else choices[0]
    _check(teams in choices, "teams", f"{name} at {seats} seats: teams {choices}")
    opener = base.opener
    if opener is Opener.SIX_SIX_HOLDER and seats * hand_size != SET_SIZE:
        opener = Opener.HIGHEST_DOUBLE  # 004: the 6-6 holder opens only with four players
    turn = base.turn_seconds if turn_seconds is None else turn_seconds
    _check(
        base.min_turn_seconds <= turn <= base.max_turn_seconds,
        "turn_seconds",
        f"{name}: a turn lasts {base.min_turn_seconds}..{base.max_turn_seconds} s",
    )
    chosen = replace(
        base,
        seats=seats,
        hand_size=hand_size,
        teams=teams,
        opener=opener,
        turn_seconds=turn,
        target=base.target if target is None else target,
    )
    validate_target(chosen.target, chosen)
    return chosen
