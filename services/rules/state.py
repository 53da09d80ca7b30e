"""The immutable state of a table, from the lobby to the end of the game.

States are ``NamedTuple``\\ s of ints, strings and tuples: hashable, comparable, cheap to
copy with one field changed, and serialisable exactly (``codec``). Nothing here mutates;
:mod:`.engine` builds a new state for every accepted command.
"""

from __future__ import annotations

from enum import IntEnum
from typing import TYPE_CHECKING, Final, NamedTuple

from .options import NO_OPTIONS, TableOptions
from .rulesets import CLASSIC, RuleSet

if TYPE_CHECKING:
    from .events import Event

#: Seats per table (R1); the most a rule set has. Per-seat tuples always have four entries,
#: the seats a rule set does not use empty.
SEATS: Final = 4
#: Default target (R16).
DEFAULT_TARGET: Final = 100
#: Target bounds and step (R16).
MIN_TARGET: Final = 50
MAX_TARGET: Final = 500
TARGET_STEP: Final = 50
#: Longest player name, in characters.
MAX_NAME_LENGTH: Final = 24
#: The seat of the host (R2).
HOST_SEAT: Final = 0
#: "No seat" / "no team" in int fields.
NOBODY: Final = -1


class Phase(IntEnum):
    """The life cycle of a table (values match ``dominos.v1.Phase``)."""

    WAITING = 1
    PLAYING = 2
    ROUND_OVER = 3
    FINISHED = 4
    CLOSED = 5


class End(IntEnum):
    """The ends of the layout (values match ``dominos.v1.End``): the two ends of the chain,
    and under all fives the spinner's short sides (``spinner.Arm`` has the same values)."""

    LEFT = 1
    RIGHT = 2
    UP = 3
    DOWN = 4


class Outcome(IntEnum):
    """How a round ended (values match ``dominos.v1.RoundOutcome``)."""

    DOMINO = 1
    BLOCKED = 2
    BLOCKED_TIE = 3


class AutoCause(IntEnum):
    """Why the table acted for a seat (values match ``dominos.v1.AutoPlayCause``)."""

    NONE = 0
    TIMEOUT = 1
    AWAY = 2


class VoteOutcome(IntEnum):
    """How a friendly-end vote closed (values match ``dominos.v1.VoteOutcome``)."""

    #: Every human seat accepted: the game ended, unscored (D11).
    ENDED = 1
    #: A human seat refused.
    REFUSED = 2
    #: The time limit passed before every human seat accepted.
    EXPIRED = 3


class Timing(NamedTuple):
    """The table's clocks in milliseconds (D8): a turn, a turn while away (S3), the break (D1)."""

    turn_ms: int = 45_000
    away_ms: int = 5_000
    break_ms: int = 10_000


class RoundState(NamedTuple):
    """A round being played, or the round that just ended.

    ``hands`` are tile masks per seat. ``chain`` lists laid tiles from left to right, each
    encoded ``seat << 6 | left_half << 3 | right_half``. ``left``/``right`` are the open
    numbers (``tiles.NO_END`` while the chain is empty). ``passes`` counts consecutive passes
    (four block the round, R13); ``passed`` is the per-seat mask of numbers passed on (R10);
    ``last_layer`` is the seat that laid the latest tile (R14).

    Rule sets with a stock (issue 19): ``stock`` holds the undealt drawable tiles in draw
    order (the next drawn first), ``aside`` the mask of tiles neither dealt nor drawable,
    ``lead`` the tile the opener must lay (``NOBODY``: any tile) and ``drawn`` how many tiles
    each seat drew this round (public). Classic rounds keep the defaults.

    All fives (seed 002, :mod:`.fives`): ``chain`` is the long line (the spinner inside it)
    and ``left``/``right`` its ends; ``center`` is the index in ``chain`` of the layout's
    center (the opener, laid low half left, until the first double is laid; that double,
    the spinner, from then on; ``NOBODY`` on an empty table and under every other scoring);
    ``up``/``down`` list the tiles of the spinner's short sides from the spinner outward,
    each encoded ``seat << 6 | inner << 3 | outer`` (``inner`` faces the spinner).
    """

    number: int
    opener: int
    hands: tuple[int, int, int, int]
    chain: tuple[int, ...]
    left: int
    right: int
    turn: int
    passes: int
    passed: tuple[int, int, int, int]
    last_layer: int
    stock: tuple[int, ...] = ()
    aside: int = 0
    lead: int = NOBODY
    drawn: tuple[int, int, int, int] = (0, 0, 0, 0)
    center: int = NOBODY
    up: tuple[int, ...] = ()
    down: tuple[int, ...] = ()


class RoundResult(NamedTuple):
    """The summary of an ended round (D1): outcome, the one scoring team (R15), and why.

    "Team" reads "side" under rule sets without teams (a side is a seat, issue 19):
    ``scoring_team`` is the scoring side (``NOBODY`` when a blocked tie scores nothing),
    ``team_pips`` the pips of each side, ``last_tile_team`` the side of the last tile laid.
    Under all fives ``points`` are rounded to the nearest 5 and ``unrounded_points`` keeps
    them before rounding (0 under every other scoring).
    """

    number: int
    opener: int
    outcome: Outcome
    scoring_team: int
    points: int
    domino_seat: int
    team_pips: tuple[int, ...]
    last_tile_team: int
    hands: tuple[int, int, int, int]
    unrounded_points: int = 0


class Vote(NamedTuple):
    """A friendly-end proposal the humans are voting on (D11, issue 20).

    ``accepted`` is the mask of the seats that accepted (the proposer's included); the game
    is paused meanwhile: ``paused_ms`` is what was left of the clock the vote stopped (the
    turn's or the break's; 0 when none ran), given back when the vote fails.
    """

    proposer: int
    accepted: int
    deadline_ms: int
    paused_ms: int


#: No seat held by a robot, no seat handed to a robot.
NO_SEAT_VALUES: Final = (0, 0, 0, 0)


class TableState(NamedTuple):
    """Everything about one table at one version. ``seed`` (the deals' secret) is never shown.

    ``rules`` is the rule set chosen at ``Create``, fixed for the table's life; ``scores``
    has one entry per side (two teams for classic, else one per seat), and ``winner`` is a
    side. ``names`` and ``connected`` always have four entries (unused seats empty).

    ``turn_number`` counts the clocks started (turns and breaks); a timer expiry names it so
    a late one is recognised. ``deadline_ms`` is when the running clock ends (0 when none
    runs). ``winner`` is a team index (0 = A, 1 = B) or ``NOBODY``. ``last_action`` is the
    public event of the latest command (a laid tile, a pass, a join...), for clients to show.

    Options (issue 20, :mod:`.options`): ``options`` are the host's choices; ``robots`` the
    level of the robot holding each seat (``NO_ROBOT`` = 0: a person, or nobody);
    ``stand_ins`` per seat, while a robot plays for a disconnected player, the time (ms) until
    which the player may come back (0: none); ``vote`` the friendly-end proposal being voted
    on; ``unscored`` marks a game ended by consent (D11: finished, nobody won, it counts for
    nothing); ``proposals`` is ``(round number, mask of the seats that proposed in it)``: a
    seat proposes at most once per round (its break included), so nobody can keep a game
    paused by proposing again and again.
    """

    table_id: str
    version: int
    phase: Phase
    target: int
    names: tuple[str, str, str, str]
    connected: tuple[bool, bool, bool, bool]
    seed: int
    timing: Timing
    scores: tuple[int, ...]
    round: RoundState | None
    last_result: RoundResult | None
    turn_number: int
    deadline_ms: int
    winner: int
    last_action: Event
    rules: RuleSet = CLASSIC
    options: TableOptions = NO_OPTIONS
    robots: tuple[int, int, int, int] = NO_SEAT_VALUES
    stand_ins: tuple[int, int, int, int] = NO_SEAT_VALUES
    vote: Vote | None = None
    unscored: bool = False
    proposals: tuple[int, int] = (0, 0)


def team_of(seat: int) -> int:
    """The team of a seat: 0 (A) for seats 0 and 2, 1 (B) for seats 1 and 3 (R1)."""
    return seat & 1


def is_seated(state: TableState, seat: int) -> bool:
    """Whether ``seat`` is a seat number with a player on it (an empty name is a free seat)."""
    return 0 <= seat < state.rules.seats and state.names[seat] != ""
