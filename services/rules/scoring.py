"""Scoring an ended round (R12-R15 for classic; ``DominoScore``, ``BlockedScore``,
``BlockedTie`` of the rule set).

Sides are teams or seats (:class:`~.rulesets.RuleSet`). A domino scores, for the side of the
seat that went out, the opponents' hands (``OPPONENTS``) or every other hand, the partner's
included (``ALL_OTHERS``). A blocked round is won by the lightest side (sums of pips, not
numbers of tiles), which scores the other sides' total (``OTHERS_TOTAL``), that minus its own
(``OTHERS_MINUS_OWN``) or every tile left (``ALL_TILES``). When the lightest sides are level
the outcome is ``BLOCKED_TIE`` and ``BlockedTie`` decides: the last placer's side (R14),
nobody (no points for anyone), or the opener's side ("la main", 004); a rule naming a side
that is not among the level ones falls to the level side first in turn order after it.

Under all fives (``Scoring.ALL_FIVES``, seed 002) the round's points are rounded to the
nearest 5 (:func:`.spinner.round_to_five`); the result keeps them before rounding too
(``RoundResult.unrounded_points``, 0 under every other scoring).
"""

from __future__ import annotations

from .rulesets import CLASSIC, BlockedScore, BlockedTie, DominoScore, RuleSet, Scoring
from .spinner import round_to_five
from .state import NOBODY, Outcome, RoundResult, RoundState
from .tiles import points


def _nearest(rules: RuleSet, start: int, level: list[int]) -> int:
    """The first seat's side, in turn order from ``start``, that is one of ``level``."""
    for i in range(rules.seats):
        side = rules.side_of((start + i) % rules.seats)
        if side in level:
            return side
    return level[0]


def _tie_scorer(rules: RuleSet, rnd: RoundState, level: list[int]) -> int:
    tie = rules.blocked_tie
    if tie is BlockedTie.NOBODY:
        return NOBODY
    start = rnd.last_layer if tie is BlockedTie.LAST_PLACER else rnd.opener
    return _nearest(rules, max(start, 0), level)


def _blocked_points(rules: RuleSet, side_pips: list[int], scorer: int) -> int:
    total = sum(side_pips)
    own = side_pips[scorer]
    if rules.blocked_score is BlockedScore.ALL_TILES:
        return total
    if rules.blocked_score is BlockedScore.OTHERS_MINUS_OWN:
        return total - 2 * own
    return total - own


def score_round(rnd: RoundState, outcome: Outcome, rules: RuleSet = CLASSIC) -> RoundResult:
    """Score an ended round under ``rules`` (see the module docstring).

    For ``Outcome.DOMINO`` the seat that laid last (``rnd.last_layer``) emptied its hand.
    For ``Outcome.BLOCKED`` the lightest side scores; when sides are level the outcome
    becomes ``BLOCKED_TIE`` and the tie rule names the scorer (``NOBODY``: 0 points).
    """
    seat_pips = [points(rnd.hands[s]) for s in range(rules.seats)]
    side_pips = [0] * rules.sides
    for seat, pips in enumerate(seat_pips):
        side_pips[rules.side_of(seat)] += pips
    last_side = rules.side_of(rnd.last_layer)
    domino_seat = NOBODY
    if outcome is Outcome.DOMINO:
        domino_seat = rnd.last_layer
        scorer = last_side
        if rules.domino_score is DominoScore.ALL_OTHERS:
            gained = sum(seat_pips) - seat_pips[domino_seat]
        else:
            gained = sum(side_pips) - side_pips[scorer]
    else:
        lightest = min(side_pips)
        level = [side for side, pips in enumerate(side_pips) if pips == lightest]
        if len(level) == 1:
            scorer = level[0]
        else:
            outcome = Outcome.BLOCKED_TIE
            scorer = _tie_scorer(rules, rnd, level)
        gained = _blocked_points(rules, side_pips, scorer) if scorer != NOBODY else 0
    unrounded = 0
    if rules.scoring is Scoring.ALL_FIVES:
        unrounded, gained = gained, round_to_five(gained)
    return RoundResult(
        number=rnd.number,
        opener=rnd.opener,
        outcome=outcome,
        scoring_team=scorer,
        points=gained,
        domino_seat=domino_seat,
        team_pips=tuple(side_pips),
        last_tile_team=last_side,
        hands=rnd.hands,
        unrounded_points=unrounded,
    )
