"""Typed errors of the rules engine, each with a stable reason code.

Every rejected command raises a subclass of :class:`RuleError`; the state it was applied to
is untouched (states are immutable). ``reason`` is the name of the ``ErrorReason`` value of
the contract without its prefix, and ``kind`` says which gRPC status class the services map
it to; the engine itself knows nothing of gRPC.
"""

from __future__ import annotations

from enum import StrEnum
from typing import ClassVar


class ErrorKind(StrEnum):
    """How a rejection is classified (the services map it to a gRPC status code)."""

    INVALID_ARGUMENT = "INVALID_ARGUMENT"
    PERMISSION_DENIED = "PERMISSION_DENIED"
    FAILED_PRECONDITION = "FAILED_PRECONDITION"


class RuleError(Exception):
    """A command the rules refuse. Subclasses fix ``reason`` and ``kind``."""

    reason: ClassVar[str] = "UNSPECIFIED"
    kind: ClassVar[ErrorKind] = ErrorKind.FAILED_PRECONDITION

    def __init__(self, message: str = "", *, field: str = "") -> None:
        super().__init__(message or self.reason)
        self.message = message or self.reason
        #: The argument the refusal is about (e.g. ``"hand_size"``), when there is one.
        self.field = field


class _InvalidArgumentError(RuleError):
    kind = ErrorKind.INVALID_ARGUMENT


class _FailedPreconditionError(RuleError):
    kind = ErrorKind.FAILED_PRECONDITION


class _PermissionDeniedError(RuleError):
    kind = ErrorKind.PERMISSION_DENIED


class NameInvalid(_InvalidArgumentError):
    """A player name that is empty, too long, holds control characters or shows nothing."""

    reason = "NAME_INVALID"


class TargetInvalid(_InvalidArgumentError):
    """A target outside 50..500 or not a multiple of 50 (R16)."""

    reason = "TARGET_INVALID"


class TileMalformed(_InvalidArgumentError):
    """A tile index outside the double-six set."""

    reason = "TILE_MALFORMED"


class EndMalformed(_InvalidArgumentError):
    """An end that is neither left nor right."""

    reason = "END_MALFORMED"


class SeatInvalid(_PermissionDeniedError):
    """A seat number that is not an occupied seat of the table."""

    reason = "TOKEN_INVALID"


class NotHost(_PermissionDeniedError):
    """Only the host may set the target or start (R3, R16)."""

    reason = "NOT_HOST"


class TableFull(_FailedPreconditionError):
    """Four players are seated already (R1)."""

    reason = "TABLE_FULL"


class NameTaken(_FailedPreconditionError):
    """A join whose name looks the same as a seated player's (same skeleton, see
    :func:`~.names.skeleton`)."""

    reason = "NAME_TAKEN"


class GameAlreadyStarted(_FailedPreconditionError):
    """The command is only allowed before the start (R16, D4)."""

    reason = "GAME_ALREADY_STARTED"


class NotEnoughPlayers(_FailedPreconditionError):
    """Start needs four seated players (R3)."""

    reason = "NOT_ENOUGH_PLAYERS"


class RoundNotInPlay(_FailedPreconditionError):
    """The command needs a round in play."""

    reason = "ROUND_NOT_IN_PLAY"


class NotYourTurn(_FailedPreconditionError):
    """Another seat is to act (R4)."""

    reason = "NOT_YOUR_TURN"


class TileNotInHand(_FailedPreconditionError):
    """The tile is not in the seat's hand."""

    reason = "TILE_NOT_IN_HAND"


class TileDoesNotFit(_FailedPreconditionError):
    """Neither half of the tile matches the chosen end (R8)."""

    reason = "TILE_DOES_NOT_FIT"


class MustPlay(_FailedPreconditionError):
    """A pass refused because a tile fits (R9)."""

    reason = "MUST_PLAY"


class GameOver(_FailedPreconditionError):
    """The game is finished (R17) or the table closed."""

    reason = "GAME_OVER"


class TimerStale(_FailedPreconditionError):
    """A timer expiry that names a past turn or is not due yet: it must change nothing."""

    reason = "TIMER_STALE"


class RulesInvalid(_InvalidArgumentError):
    """A rule set, or a preset's adjustment, outside what its seed allows (issue 19): a
    seat count, hand size, turn time or preset name; ``field`` names the argument."""

    reason = "RULES_INVALID"


class RulesUnavailable(_FailedPreconditionError):
    """A rule set this engine cannot play (the contract's ``RULES_UNAVAILABLE``); every rule
    set of :mod:`.rulesets` is playable now, all fives included, so the engine raises it for
    none; ``field`` would name the part."""

    reason = "RULES_UNAVAILABLE"


class MustDraw(_FailedPreconditionError):
    """A pass refused because nothing fits but the stock still holds tiles (draw first)."""

    reason = "MUST_DRAW"


class CannotDraw(_FailedPreconditionError):
    """A draw refused: the rule set has no stock, or the stock is empty (a draw refused
    because a tile fits is ``MustPlay``)."""

    reason = "CANNOT_DRAW"


class RobotsUnavailable(_FailedPreconditionError):
    """A robot option (practice table, robots filling seats, a robot replacing a player)
    under a rule set whose seed offers no computer players: seed 000 and 001 (S2, D10)."""

    reason = "ROBOTS_UNAVAILABLE"


class FriendlyEndUnavailable(_FailedPreconditionError):
    """The friendly end asked for, or proposed, at a table whose rules have none (D11: only
    seed 004's) or whose host did not choose it."""

    reason = "FRIENDLY_END_UNAVAILABLE"


class VoteOpen(_FailedPreconditionError):
    """A move, or a second proposal, while the humans vote on a friendly end: the game is
    paused until the vote ends (D11)."""

    reason = "VOTE_OPEN"


class AlreadyProposed(_FailedPreconditionError):
    """A second friendly-end proposal by the same seat in the same round (and its break):
    one vote per seat per round, so no one can keep the game paused."""

    reason = "ALREADY_PROPOSED"


class NoVoteOpen(_FailedPreconditionError):
    """An answer to a friendly-end proposal when none is open, or a second answer."""

    reason = "NO_VOTE_OPEN"


class RobotSeat(_PermissionDeniedError):
    """What only a human seat may do (propose or answer a friendly end, D11: robots do not
    vote; come back to a seat), asked of a seat a robot holds."""

    reason = "ROBOT_SEAT"


#: The reasons only rule sets other than classic raise (issue 19).
RULE_SET_REASONS: frozenset[str] = frozenset(
    cls.reason for cls in (RulesInvalid, RulesUnavailable, MustDraw, CannotDraw)
)

#: Every reason code the engine can raise (each one of the contract's ``ErrorReason``).
ALL_REASONS: frozenset[str] = frozenset(
    cls.reason
    for cls in (
        NameInvalid,
        TargetInvalid,
        TileMalformed,
        EndMalformed,
        SeatInvalid,
        NotHost,
        TableFull,
        NameTaken,
        GameAlreadyStarted,
        NotEnoughPlayers,
        RoundNotInPlay,
        NotYourTurn,
        TileNotInHand,
        TileDoesNotFit,
        MustPlay,
        GameOver,
        TimerStale,
        RulesInvalid,
        RulesUnavailable,
        MustDraw,
        CannotDraw,
        RobotsUnavailable,
        FriendlyEndUnavailable,
        VoteOpen,
        AlreadyProposed,
        NoVoteOpen,
        RobotSeat,
    )
)
