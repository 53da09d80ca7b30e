"""Serialisation of states and commands to compact bytes, and back, exactly.

The format is a JSON array of numbers and strings in a fixed field order, led by a format
number; ``decode_state(encode_state(s)) == s`` for every reachable state, enums and tuples
included. A typical live table is about 300 bytes. Unknown format numbers or shapes raise
``CodecError``.
"""

from __future__ import annotations

import json
from typing import Any, Final

from .commands import (
    Command,
    Create,
    Expire,
    Join,
    Leave,
    Pass,
    Play,
    SetPresence,
    SetTarget,
    Start,
)
from .events import (
    Event,
    Passed,
    PresenceChanged,
    RoundDealt,
    SeatFreed,
    SeatTaken,
    TableClosed,
    TableCreated,
    TargetChanged,
    TileLaid,
)
from .state import (
    AutoCause,
    Outcome,
    Phase,
    RoundResult,
    RoundState,
    TableState,
    Timing,
)

STATE_FORMAT: Final = 1


class CodecError(ValueError):
    """Bytes that are not an encoded state or command of a known format."""


def _dumps(value: Any) -> bytes:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()


def encode_state(state: TableState) -> bytes:
    """The state as compact bytes (see the module docstring)."""
    rnd = state.round
    res = state.last_result
    act = state.last_action
    connected = sum(1 << i for i, c in enumerate(state.connected) if c)
    return _dumps(
        [
            STATE_FORMAT,
            state.table_id,
            state.version,
            int(state.phase),
            state.target,
            list(state.names),
            connected,
            state.seed,
            list(state.timing),
            list(state.scores),
            None
            if rnd is None
            else [
                rnd.number,
                rnd.opener,
                list(rnd.hands),
                list(rnd.chain),
                rnd.left,
                rnd.right,
                rnd.turn,
                rnd.passes,
                list(rnd.passed),
                rnd.last_layer,
            ],
            None
            if res is None
            else [
                res.number,
                res.opener,
                int(res.outcome),
                res.scoring_team,
                res.points,
                res.domino_seat,
                list(res.team_pips),
                res.last_tile_team,
                list(res.hands),
            ],
            state.turn_number,
            state.deadline_ms,
            state.winner,
            _encode_action(act),
        ]
    )


_ACTION_TYPES: Final[dict[str, type]] = {
    cls.__name__: cls
    for cls in (
        TableCreated,
        SeatTaken,
        SeatFreed,
        TableClosed,
        TargetChanged,
        RoundDealt,
        TileLaid,
        Passed,
        PresenceChanged,
    )
}


def _encode_action(event: Event) -> list[Any]:
    name = type(event).__name__
    if name not in _ACTION_TYPES:
        raise CodecError(f"{name} is not a last action")
    return [name, *(int(v) if isinstance(v, AutoCause) else v for v in event)]


def _decode_action(raw: list[Any]) -> Event:
    name, *fields = raw
    cls = _ACTION_TYPES[name]
    if cls in (TileLaid, Passed):
        fields[-1] = AutoCause(fields[-1])
    event: Event = cls(*fields)
    return event


def _four(values: list[Any]) -> Any:
    if len(values) != 4:
        raise CodecError("expected four values")
    return (values[0], values[1], values[2], values[3])


def decode_state(data: bytes) -> TableState:
    """The state ``encode_state`` wrote; ``CodecError`` for anything else."""
    try:
        raw = json.loads(data)
        (fmt, table_id, version, phase, target, names, connected, seed, timing, scores) = raw[:10]
        raw_round, raw_result, turn_number, deadline_ms, winner, raw_action = raw[10:]
        if fmt != STATE_FORMAT:
            raise CodecError(f"unknown state format {fmt!r}")
        rnd = None
        if raw_round is not None:
            number, opener, hands, chain, left, right, turn, passes, passed, last = raw_round
            rnd = RoundState(
                number,
                opener,
                _four(hands),
                tuple(chain),
                left,
                right,
                turn,
                passes,
                _four(passed),
                last,
            )
        result = None
        if raw_result is not None:
            number, opener, outcome, scorer, points, domino, pips, last_team, hands = raw_result
            result = RoundResult(
                number,
                opener,
                Outcome(outcome),
                scorer,
                points,
                domino,
                (pips[0], pips[1]),
                last_team,
                _four(hands),
            )
        return TableState(
            table_id=table_id,
            version=version,
            phase=Phase(phase),
            target=target,
            names=_four(names),
            connected=_four([bool(connected >> i & 1) for i in range(4)]),
            seed=seed,
            timing=Timing(*timing),
            scores=(scores[0], scores[1]),
            round=rnd,
            last_result=result,
            turn_number=turn_number,
            deadline_ms=deadline_ms,
            winner=winner,
            last_action=_decode_action(raw_action),
        )
    except CodecError:
        raise
    except (ValueError, TypeError, IndexError, KeyError) as exc:
        raise CodecError(f"not an encoded table state: {exc}") from exc


_COMMAND_TYPES: Final[dict[str, type]] = {
    cls.__name__: cls
    for cls in (Create, Join, Leave, SetTarget, Start, Play, Pass, SetPresence, Expire)
}


def encode_command(command: Command) -> bytes:
    """A command (a command-log entry) as compact bytes: ``[type name, fields...]``."""
    fields: list[Any] = list(command)
    if isinstance(command, Create):
        fields[3] = list(command.timing)
    return _dumps([type(command).__name__, *fields])


def decode_command(data: bytes) -> Command:
    """The command ``encode_command`` wrote; ``CodecError`` for anything else."""
    try:
        name, *fields = json.loads(data)
        cls = _COMMAND_TYPES[name]
        if cls is Create:
            fields[3] = Timing(*fields[3])
        if cls is SetPresence:
            fields[1] = bool(fields[1])
        command: Command = cls(*fields)
        return command
    except (ValueError, TypeError, IndexError, KeyError) as exc:
        raise CodecError(f"not an encoded command: {exc}") from exc
