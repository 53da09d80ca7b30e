"""What the contract documents about errors, read from the protos where it is written there.

- :data:`REASON_CODES`: every ``ErrorReason`` (without its prefix) and the status code its
  comment in ``game.proto`` gives ("// FAILED_PRECONDITION: ..."), parsed from the file.
- :data:`RPC_ERRORS`: per public RPC, the codes and reasons its comment in
  ``gateway.proto`` lists ("Errors: ..."), plus ALREADY_EXISTS / REQUEST_ID_REUSED, which
  the file comment documents for every command.
- :func:`size_exhausted`: when gRPC itself may answer RESOURCE_EXHAUSTED (no reason): a
  message over the server's receive limit, or metadata over gRPC's metadata limits.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Final

import grpc

from services.common.grpc_server import MAX_RECEIVE_MESSAGE_BYTES

PROTOS = Path(__file__).resolve().parents[2] / "protos" / "dominos" / "v1"

#: gRPC core's default soft limit on received metadata: above it a fraction of calls is
#: refused with RESOURCE_EXHAUSTED, above the hard limit (16 KiB) every call is. It counts
#: every header (path, user agent, timeout...: about 600 bytes), so the application's own
#: metadata may trip it from 7 KiB on.
METADATA_SOFT_LIMIT: Final = 8 * 1024
HEADERS_OVERHEAD: Final = 1024


def commented_lines(proto: str) -> Iterator[tuple[str, list[str]]]:
    """Each non-comment line of ``proto`` (stripped) with the comment lines right above it."""
    comment: list[str] = []
    for raw in (PROTOS / proto).read_text().splitlines():
        line = raw.strip()
        if line.startswith("//"):
            comment.append(line[2:].strip())
            continue
        yield line, comment
        comment = []


def _reason_codes() -> dict[str, grpc.StatusCode]:
    codes: dict[str, grpc.StatusCode] = {}
    for line, comment in commented_lines("game.proto"):
        match = re.fullmatch(r"ERROR_REASON_([A-Z_]+) = \d+;", line)
        if match and match.group(1) != "UNSPECIFIED":
            first = re.match(r"([A-Z_]+):", comment[0] if comment else "")
            assert first, f"no status code documented for {match.group(1)}"
            codes[match.group(1)] = grpc.StatusCode[first.group(1)]
    return codes


#: Every documented reason and its status code (game.proto).
REASON_CODES: Final = _reason_codes()

_S = grpc.StatusCode
_REUSED: Final = {_S.ALREADY_EXISTS: {"REQUEST_ID_REUSED"}}
_SEATED: Final[dict[grpc.StatusCode, set[str]]] = {
    _S.INVALID_ARGUMENT: {"REQUEST_ID_MALFORMED", "ID_MALFORMED"},
    _S.UNAUTHENTICATED: {"TOKEN_MISSING"},
    _S.PERMISSION_DENIED: {"TOKEN_INVALID"},
    _S.NOT_FOUND: {"TABLE_NOT_FOUND"},
    _S.FAILED_PRECONDITION: {"GAME_ALREADY_STARTED", "GAME_OVER"},
    _S.ABORTED: {"VERSION_CONFLICT"},
    _S.RESOURCE_EXHAUSTED: {"RATE_LIMITED"},
    **_REUSED,
}
_READ: Final[dict[grpc.StatusCode, set[str]]] = {
    _S.INVALID_ARGUMENT: {"ID_MALFORMED"},
    _S.UNAUTHENTICATED: {"TOKEN_MISSING"},
    _S.PERMISSION_DENIED: {"TOKEN_INVALID"},
    _S.NOT_FOUND: {"TABLE_NOT_FOUND"},
    _S.RESOURCE_EXHAUSTED: {"RATE_LIMITED"},
}


def _plus(
    base: dict[grpc.StatusCode, set[str]], **more: set[str]
) -> dict[grpc.StatusCode, set[str]]:
    merged = {code: set(reasons) for code, reasons in base.items()}
    for name, reasons in more.items():
        merged.setdefault(_S[name], set()).update(reasons)
    return merged


_PLAY: Final = {
    _S.INVALID_ARGUMENT: {
        "REQUEST_ID_MALFORMED",
        "ID_MALFORMED",
        "TILE_MALFORMED",
        "END_MALFORMED",
    },
    _S.UNAUTHENTICATED: {"TOKEN_MISSING"},
    _S.PERMISSION_DENIED: {"TOKEN_INVALID"},
    _S.NOT_FOUND: {"TABLE_NOT_FOUND"},
    _S.FAILED_PRECONDITION: {
        "ROUND_NOT_IN_PLAY",
        "NOT_YOUR_TURN",
        "TILE_NOT_IN_HAND",
        "TILE_DOES_NOT_FIT",
        "GAME_OVER",
    },
    _S.ABORTED: {"VERSION_CONFLICT"},
    _S.RESOURCE_EXHAUSTED: {"RATE_LIMITED"},
    **_REUSED,
}

#: Per public RPC: status code → the reasons gateway.proto documents for it.
RPC_ERRORS: Final[dict[str, dict[grpc.StatusCode, set[str]]]] = {
    "CreateTable": {
        _S.INVALID_ARGUMENT: {
            "REQUEST_ID_MALFORMED",
            "NAME_INVALID",
            "TARGET_INVALID",
            "RULES_INVALID",
        },
        _S.FAILED_PRECONDITION: {
            "RULES_UNAVAILABLE",
            "ROBOTS_UNAVAILABLE",
            "FRIENDLY_END_UNAVAILABLE",
        },
        _S.RESOURCE_EXHAUSTED: {"RATE_LIMITED"},
        **_REUSED,
    },
    "JoinTable": {
        _S.INVALID_ARGUMENT: {"REQUEST_ID_MALFORMED", "NAME_INVALID", "ID_MALFORMED"},
        _S.NOT_FOUND: {"CODE_NOT_FOUND"},
        _S.FAILED_PRECONDITION: {"TABLE_FULL", "NAME_TAKEN", "GAME_ALREADY_STARTED", "GAME_OVER"},
        _S.RESOURCE_EXHAUSTED: {"RATE_LIMITED"},
        **_REUSED,
    },
    "LeaveTable": _SEATED,
    "SetTarget": _plus(
        _SEATED, INVALID_ARGUMENT={"TARGET_INVALID"}, PERMISSION_DENIED={"NOT_HOST"}
    ),
    "StartGame": _plus(
        _SEATED, PERMISSION_DENIED={"NOT_HOST"}, FAILED_PRECONDITION={"NOT_ENOUGH_PLAYERS"}
    ),
    "PlayTile": _PLAY,
    "Pass": {
        **{code: set(reasons) for code, reasons in _PLAY.items()},
        _S.INVALID_ARGUMENT: {"REQUEST_ID_MALFORMED", "ID_MALFORMED"},
        _S.FAILED_PRECONDITION: {
            "ROUND_NOT_IN_PLAY",
            "NOT_YOUR_TURN",
            "GAME_OVER",
            "MUST_PLAY",
            "MUST_DRAW",
        },
    },
    "DrawTile": {
        **{code: set(reasons) for code, reasons in _PLAY.items()},
        _S.INVALID_ARGUMENT: {"REQUEST_ID_MALFORMED", "ID_MALFORMED"},
        _S.FAILED_PRECONDITION: {
            "ROUND_NOT_IN_PLAY",
            "NOT_YOUR_TURN",
            "GAME_OVER",
            "MUST_PLAY",
            "CANNOT_DRAW",
        },
    },
    "ProposeFriendlyEnd": {
        **{code: set(reasons) for code, reasons in _SEATED.items()},
        _S.FAILED_PRECONDITION: {
            "FRIENDLY_END_UNAVAILABLE",
            "VOTE_OPEN",
            "ALREADY_PROPOSED",
            "ROUND_NOT_IN_PLAY",
            "GAME_OVER",
        },
        _S.PERMISSION_DENIED: {*_SEATED.get(_S.PERMISSION_DENIED, set()), "ROBOT_SEAT"},
    },
    "AnswerFriendlyEnd": {
        **{code: set(reasons) for code, reasons in _SEATED.items()},
        _S.FAILED_PRECONDITION: {"FRIENDLY_END_UNAVAILABLE", "NO_VOTE_OPEN", "GAME_OVER"},
        _S.PERMISSION_DENIED: {*_SEATED.get(_S.PERMISSION_DENIED, set()), "ROBOT_SEAT"},
    },
    "GetTableView": _READ,
    "WatchTable": _plus(_READ, ABORTED={"STREAM_REPLACED"}),
    "GetServerInfo": {_S.RESOURCE_EXHAUSTED: {"RATE_LIMITED"}},
}


def size_exhausted(request_bytes: int, metadata_bytes: int) -> bool:
    """Whether gRPC itself may refuse the call with RESOURCE_EXHAUSTED (no reason)."""
    return (
        request_bytes > MAX_RECEIVE_MESSAGE_BYTES
        or metadata_bytes > METADATA_SOFT_LIMIT - HEADERS_OVERHEAD
    )


def check_status(
    rpc: str, code: grpc.StatusCode, reason: str | None, *, request_bytes: int, metadata_bytes: int
) -> str | None:
    """Why a status breaks the contract of ``rpc`` (None when it keeps it).

    The code must be one the contract documents for the RPC (never UNKNOWN or INTERNAL); a
    refusal must carry a documented reason whose documented code is the code received, except
    RESOURCE_EXHAUSTED from gRPC itself for an oversized message or metadata.
    """
    if code == grpc.StatusCode.OK:
        return None
    if size_exhausted(request_bytes, metadata_bytes) and code == _S.RESOURCE_EXHAUSTED:
        return None
    documented = RPC_ERRORS[rpc]
    if code not in documented:
        return f"{rpc}: status {code.name} ({reason}) is not documented for this RPC"
    if reason is None:
        return f"{rpc}: status {code.name} without an ErrorInfo reason"
    if reason not in REASON_CODES:
        return f"{rpc}: reason {reason!r} is not an ErrorReason"
    if REASON_CODES[reason] != code:
        return f"{rpc}: reason {reason} documented as {REASON_CODES[reason].name}, got {code.name}"
    return None


def undocumented_reason(rpc: str, code: grpc.StatusCode, reason: str | None) -> bool:
    """Whether a (documented, consistent) reason is missing from the RPC's own error list."""
    if code == grpc.StatusCode.OK or reason is None:
        return False
    return reason not in RPC_ERRORS[rpc].get(code, set())
