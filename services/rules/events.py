"""Domain events: what an accepted command did, for logs, metrics and notifications.

Events describe public facts only (a laid tile is public once laid); hands never appear
except in ``RoundEnded.result``, which is emitted when the round is over (D1).
"""

from __future__ import annotations

from typing import NamedTuple

from .state import AutoCause, RoundResult, VoteOutcome


class TableCreated(NamedTuple):
    """A host opened the table (seat 0)."""

    host_name: str


class SeatTaken(NamedTuple):
    """A player took ``seat``."""

    seat: int
    name: str


class SeatFreed(NamedTuple):
    """A player left ``seat`` before the start (D4)."""

    seat: int


class TableClosed(NamedTuple):
    """The host left before the start: the table is closed."""


class TargetChanged(NamedTuple):
    """The host set the target (R16)."""

    target: int


class RoundDealt(NamedTuple):
    """A round was dealt; ``opener`` acts first (R6, R7)."""

    number: int
    opener: int


class TileLaid(NamedTuple):
    """``seat`` laid ``tile`` on ``end``; ``auto`` tells whether the table did it (R11).
    ``points``: what the play scored at once for the seat's side under all fives (the open
    ends' total when a multiple of 5, seed 002); always 0 under every other scoring."""

    seat: int
    tile: int
    end: int
    auto: AutoCause
    points: int = 0


class Passed(NamedTuple):
    """``seat`` passed on the numbers of mask ``numbers`` (R10); ``auto`` as for TileLaid."""

    seat: int
    numbers: int
    auto: AutoCause


class Drew(NamedTuple):
    """``seat`` drew ``count`` tiles from the stock (issue 19); which tiles is never said:
    only the drawer's own view shows them, in its hand."""

    seat: int
    count: int  # type: ignore[assignment]  # the contract's name; shadows tuple.count
    auto: AutoCause = AutoCause.NONE


class RoundEnded(NamedTuple):
    """A round ended (R12-R15)."""

    result: RoundResult


class GameEnded(NamedTuple):
    """A side reached the target (R17); ``scores`` per side."""

    winner: int
    scores: tuple[int, ...]


class PresenceChanged(NamedTuple):
    """A seat connected or disconnected (S3, S4)."""

    seat: int
    connected: bool


class RobotSeated(NamedTuple):
    """A robot of ``level`` took ``seat`` (issue 20): at a practice table's creation, in an
    empty seat when the host started early, or for good when a replaced player did not come
    back in time."""

    seat: int
    level: int


class HandedOver(NamedTuple):
    """``seat``'s player dropped and a robot of ``level`` plays for them until they come back,
    at the latest at ``until_ms`` (issue 20; then the robot keeps the seat)."""

    seat: int
    level: int
    until_ms: int


class EndProposed(NamedTuple):
    """``seat`` proposed to end the game by consent; the humans vote until ``deadline_ms``
    (D11)."""

    seat: int
    deadline_ms: int


class EndAnswered(NamedTuple):
    """``seat`` accepted the proposal (a refusal closes the vote: :class:`VoteClosed`)."""

    seat: int
    accepted: bool


class VoteClosed(NamedTuple):
    """The friendly-end vote closed: ended (the last acceptance was ``seat``'s), refused (by
    ``seat``) or expired (``seat`` is ``NOBODY``); the game resumes but when ended."""

    outcome: VoteOutcome
    seat: int


Event = (
    TableCreated
    | SeatTaken
    | SeatFreed
    | TableClosed
    | TargetChanged
    | RoundDealt
    | TileLaid
    | Passed
    | Drew
    | RoundEnded
    | GameEnded
    | PresenceChanged
    | RobotSeated
    | HandedOver
    | EndProposed
    | EndAnswered
    | VoteClosed
)
