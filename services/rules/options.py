"""Table options chosen at ``Create`` beside the rule set (D10, D11, issue 20): computer
players, the friendly end and the count-per-number aid. Fixed for the table's life.

Robots sit only where the host chose them (S2): a *practice* table seats robots of chosen
levels in every seat but the host's at creation; *fill* seats robots of one level in the
empty seats when the host starts early; *replace* has a robot of one level play a
disconnected player's turns instead of the 5-second away turns (S3), handing the seat back
the moment the player returns, within ``return_ms`` (after that the robot keeps the seat).
None of these exists under the default rule set (seed 000, D10): only the seeds that offer
computer players (002 ``web_*``, 003 ``app``, 004 ``site``) allow them. The friendly end
(seed 004, D11) exists only at ``site`` tables; the humans vote within ``vote_ms``. The
count aid (seed 004's visual aid: how many tiles of each number have been laid) is public
information and allowed everywhere.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum
from typing import Final

from . import errors
from .rulesets import RuleSet


class RobotLevel(IntEnum):
    """How well a computer player plays (values match ``dominos.v1.RobotLevel``)."""

    #: Any legal tile.
    BEGINNER = 1
    #: Sheds heavy tiles, keeps its numbers varied.
    SOLID = 2
    #: Reads the public record: passes, tiles laid per number, the partner's plays.
    STRONG = 3


#: "No robot" in per-seat level tuples and in ``fill_level`` / ``replace_level``.
NO_ROBOT: Final = 0
#: The presets whose seeds offer computer players (002, 003, 004; D10).
ROBOT_PRESETS: Final = frozenset({"web_draw", "web_block", "web_fives", "app", "site"})
#: The presets whose seed offers the friendly end (004; D11).
FRIENDLY_END_PRESETS: Final = frozenset({"site"})
#: How long a replaced player may come back (seed 004: "quelques minutes"): range, default.
MIN_RETURN_MS: Final = 60_000
MAX_RETURN_MS: Final = 15 * 60_000
DEFAULT_RETURN_MS: Final = 3 * 60_000
#: How long the humans have to answer a friendly-end proposal: range, default.
MIN_VOTE_MS: Final = 10_000
MAX_VOTE_MS: Final = 120_000
DEFAULT_VOTE_MS: Final = 30_000


@dataclass(frozen=True, slots=True)
class TableOptions:
    """The host's choices beside the rule set (see the module docstring).

    ``practice`` lists the levels of the robots seated at creation in seats 1.. (one per
    seat but the host's; empty: not a practice table). ``fill_level`` / ``replace_level``
    are ``NO_ROBOT`` when off.
    """

    practice: tuple[int, ...] = ()
    fill_level: int = NO_ROBOT
    replace_level: int = NO_ROBOT
    return_ms: int = DEFAULT_RETURN_MS
    friendly_end: bool = False
    vote_ms: int = DEFAULT_VOTE_MS
    count_aid: bool = False

    @property
    def robots(self) -> bool:
        """Whether any robot may ever sit at the table."""
        return bool(self.practice) or bool(self.fill_level) or bool(self.replace_level)


#: A table with no option chosen (every table created before issue 20).
NO_OPTIONS: Final = TableOptions()


def _check(ok: bool, field: str, message: str) -> None:
    if not ok:
        raise errors.RulesInvalid(message, field=field)


def _level(value: int, field: str, allow_none: bool) -> None:
    _check(
        (allow_none and value == NO_ROBOT) or value in RobotLevel.__members__.values(),
        field,
        "a robot level is 1 (beginner), 2 (solid) or 3 (strong)",
    )


def validate_options(options: TableOptions, rules: RuleSet) -> TableOptions:
    """``options`` itself when ``rules`` allows them; otherwise ``RobotsUnavailable`` (a
    robot option under a rule set without computer players, S2/D10) or
    ``FriendlyEndUnavailable``, or ``RulesInvalid`` naming the field out of its range."""
    _check(isinstance(options, TableOptions), "options", "not table options")
    if options.robots and rules.preset not in ROBOT_PRESETS:
        raise errors.RobotsUnavailable(
            f"the {rules.preset} rules have no computer players", field="robots"
        )
    if options.friendly_end and rules.preset not in FRIENDLY_END_PRESETS:
        raise errors.FriendlyEndUnavailable(
            f"the {rules.preset} rules have no friendly end", field="friendly_end"
        )
    if options.practice:
        _check(
            len(options.practice) == rules.seats - 1,
            "practice",
            f"a practice table seats {rules.seats - 1} robots beside its host",
        )
        for level in options.practice:
            _level(level, "practice", allow_none=False)
    _level(options.fill_level, "fill_level", allow_none=True)
    _level(options.replace_level, "replace_level", allow_none=True)
    _check(
        MIN_RETURN_MS <= options.return_ms <= MAX_RETURN_MS,
        "return_ms",
        f"a player may be given {MIN_RETURN_MS // 60_000}..{MAX_RETURN_MS // 60_000} minutes",
    )
    _check(
        MIN_VOTE_MS <= options.vote_ms <= MAX_VOTE_MS,
        "vote_ms",
        f"a vote lasts {MIN_VOTE_MS // 1000}..{MAX_VOTE_MS // 1000} s",
    )
    return options
