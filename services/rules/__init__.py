"""The rules of Dominos as a pure engine (SPEC R1-R17, D1-D3).

State in, state out: :func:`create` and :func:`apply` take an immutable :class:`TableState`,
a command and the time, and return the next state with its events, or raise a typed
:class:`RuleError`. :func:`view_for` is the one projection of a state onto what a seat may
see. :func:`replay` rebuilds any table from its command log. No grpc, redis, nats, clock or
global randomness is imported here.
"""

from __future__ import annotations

from .codec import CodecError, decode_state, encode_state, encode_state_unseeded
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
from .engine import (
    Transition,
    apply,
    auto_play_choice,
    can_draw,
    can_pass,
    create,
    legal_moves,
    move_points,
    score_round,
    validate_target,
)
from .errors import ALL_REASONS, ErrorKind, RuleError
from .names import skeleton, validate_name
from .replay import LogEntry, replay
from .rulesets import CLASSIC, PRESETS, RuleSet, preset, validate_rules
from .state import (
    DEFAULT_TARGET,
    NOBODY,
    AutoCause,
    End,
    Outcome,
    Phase,
    RoundResult,
    RoundState,
    TableState,
    Timing,
    team_of,
)
from .view import (
    NO_SEAT,
    PlacedTile,
    SeatPrivate,
    SeatPublic,
    SeatView,
    private_view,
    public_view,
    view_for,
)

__all__ = [
    "ALL_REASONS",
    "CLASSIC",
    "DEFAULT_TARGET",
    "NOBODY",
    "NO_SEAT",
    "PRESETS",
    "AnswerEnd",
    "AutoCause",
    "CodecError",
    "Command",
    "Create",
    "Draw",
    "End",
    "ErrorKind",
    "Expire",
    "Join",
    "Leave",
    "LogEntry",
    "Outcome",
    "Pass",
    "Phase",
    "PlacedTile",
    "Play",
    "ProposeEnd",
    "RoundResult",
    "RoundState",
    "RuleError",
    "RuleSet",
    "SeatPrivate",
    "SeatPublic",
    "SeatView",
    "SetPresence",
    "SetTarget",
    "Start",
    "TableState",
    "Timing",
    "Transition",
    "apply",
    "auto_play_choice",
    "can_draw",
    "can_pass",
    "create",
    "decode_state",
    "encode_state",
    "encode_state_unseeded",
    "legal_moves",
    "move_points",
    "preset",
    "private_view",
    "public_view",
    "replay",
    "score_round",
    "skeleton",
    "team_of",
    "validate_name",
    "validate_rules",
    "validate_target",
    "view_for",
]
