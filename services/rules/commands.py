"""The commands a table accepts: plain immutable records, also the entries of its command log.

Randomness and time come from outside: ``Start`` carries the seed every deal of the game
derives from, and every command is applied at an explicit ``now_ms``.
"""

from __future__ import annotations

from typing import NamedTuple

from .options import NO_OPTIONS, TableOptions
from .rulesets import CLASSIC, RuleSet
from .state import DEFAULT_TARGET, Timing


class Create(NamedTuple):
    """Open a table: the host takes seat 0 (R2). Always the first entry of a command log.

    ``rules`` is the table's rule set for its whole life (issue 19; classic by default);
    ``target`` must lie in its range (a caller without the host's choice passes
    ``rules.target``). ``timing`` holds the operator's clocks (D8); a rule set that lets the
    table choose its turn time (``RuleSet.turn_adjustable``) sets the turn clock itself.
    ``options`` are the host's other choices (robots, friendly end, count aid; issue 20).
    """

    table_id: str
    host_name: str
    target: int = DEFAULT_TARGET
    timing: Timing = Timing()
    rules: RuleSet = CLASSIC
    options: TableOptions = NO_OPTIONS


class Join(NamedTuple):
    """Take the lowest free seat (R2, D4)."""

    name: str


class Leave(NamedTuple):
    """Leave before the start (D4); the host leaving closes the table."""

    seat: int


class SetTarget(NamedTuple):
    """Set the target before the start (host only, R16)."""

    seat: int
    target: int


class Start(NamedTuple):
    """Start the game (host only, four seated, R3); ``seed`` drives every deal of the game."""

    seat: int
    seed: int


class Play(NamedTuple):
    """Lay ``tile`` (an index, see ``tiles``) on ``end`` (``End.LEFT``/``End.RIGHT``; under
    all fives also ``End.UP``/``End.DOWN``, the spinner's short sides)."""

    seat: int
    tile: int
    end: int


class Pass(NamedTuple):
    """Pass: only when nothing fits (R9)."""

    seat: int


class Draw(NamedTuple):
    """Draw one tile from the stock (issue 19): only for the seat to play, when the rule set
    draws, the stock holds a tile and nothing in the hand fits. The turn goes on: the seat
    then lays the drawn tile if it fits (001, 004: "pose-la"), or draws again."""

    seat: int


class SetPresence(NamedTuple):
    """A seat's client connected or disconnected (S3, S4, D3)."""

    seat: int
    connected: bool


class ProposeEnd(NamedTuple):
    """Propose to end the game by consent (D11): a human seat, at a table with the friendly
    end, while the game runs. The game pauses until the vote closes."""

    seat: int


class AnswerEnd(NamedTuple):
    """A human seat's answer to the open proposal: accept, or refuse (which closes it)."""

    seat: int
    accept: bool


class Expire(NamedTuple):
    """The clock numbered ``turn_number`` ran out: auto-play (R11) or the next deal (D1)."""

    turn_number: int


Command = (
    Create
    | Join
    | Leave
    | SetTarget
    | Start
    | Play
    | Pass
    | Draw
    | SetPresence
    | ProposeEnd
    | AnswerEnd
    | Expire
)
