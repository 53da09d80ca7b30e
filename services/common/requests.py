"""Validation of incoming requests: contract messages → engine arguments, or INVALID_ARGUMENT.

Everything here is checked before any state is read, so a malformed request is answered
with a precise reason and touches nothing.
"""

from __future__ import annotations

import hashlib
from typing import Final

import grpc
from dominos.v1 import game_pb2
from google.protobuf.message import Message

from services.common import credentials
from services.common.service_errors import Reason, ServiceError, invalid
from services.rules import (
    DEFAULT_TARGET,
    RuleError,
    RuleSet,
    preset,
    validate_name,
    validate_rules,
    validate_target,
)
from services.rules.options import (
    DEFAULT_RETURN_MS,
    DEFAULT_VOTE_MS,
    TableOptions,
    validate_options,
)
from services.rules.tiles import tile_index

MAX_REQUEST_ID_LENGTH: Final = 64
_MAX_RAW_NAME: Final = 256


def request_id(value: str) -> str:
    """A valid client request id (1-64 printable ASCII characters)."""
    # ASCII and printable: every character in " " .. "~" (checked in C, not per character).
    if not 0 < len(value) <= MAX_REQUEST_ID_LENGTH or not (value.isascii() and value.isprintable()):
        raise invalid(Reason.REQUEST_ID_MALFORMED, "request_id is 1-64 printable ASCII characters")
    return value


#: A create or join request id proves its seat on a retry: at least 128 bits of randomness
#: (22 characters of base64url; a random UUID or 32 hex digits qualify).
MIN_SECRET_REQUEST_ID_LENGTH: Final = 22
#: A random id of 22+ characters practically always has this many distinct characters (a
#: random UUID misses it with odds under 1 in 10^11); "aaaa..." or "1111..." do not.
MIN_SECRET_REQUEST_ID_SYMBOLS: Final = 6


def secret_request_id(value: str) -> str:
    """A valid request id of a create or join: a retry with it answers the seat token, so
    it must be random (at least 22 characters, 6 of them different), not a counter."""
    value = request_id(value)
    if len(value) < MIN_SECRET_REQUEST_ID_LENGTH or len(set(value)) < MIN_SECRET_REQUEST_ID_SYMBOLS:
        raise invalid(
            Reason.REQUEST_ID_MALFORMED,
            "the request_id of a create or join is random: at least 128 bits "
            "(22-64 characters, e.g. a random UUID)",
        )
    return value


def request_hash(value: str) -> bytes:
    """The 8-byte hash a request id is remembered by."""
    return hashlib.sha256(value.encode()).digest()[:8]


def fingerprint(message: Message) -> bytes:
    """An 8-byte fingerprint of a request's type and whole payload (same id, other RPC or
    other payload: rejected). Requests of different RPCs may share a wire layout, so the
    message's full name is part of it."""
    digest = hashlib.sha256(message.DESCRIPTOR.full_name.encode())
    digest.update(b"\0")
    digest.update(message.SerializeToString(deterministic=True))
    return digest.digest()[:8]


def table_id(value: str) -> str:
    """A table id of the right shape."""
    if not credentials.is_table_id(value):
        raise invalid(Reason.ID_MALFORMED, "table_id is 22 characters of URL-safe base64")
    return value


def invitation_code(value: str) -> str:
    """A normalised invitation code."""
    code = credentials.normalise_code(value[:64])
    if code is None:
        raise invalid(
            Reason.ID_MALFORMED,
            f"an invitation code is {credentials.CODE_LENGTH} characters of "
            f"{credentials.CODE_ALPHABET}",
        )
    return code


def name(value: str) -> str:
    """A valid, trimmed player name."""
    if len(value) > _MAX_RAW_NAME:
        raise invalid(Reason.NAME_INVALID, "a name has 1 to 24 characters")
    try:
        return validate_name(value)
    except RuleError as exc:
        raise ServiceError.from_rule(exc) from None


def target(value: int, *, zero_means_default: bool) -> int:
    """A valid target (R16); 0 is the default 100 where allowed."""
    if value == 0 and zero_means_default:
        return DEFAULT_TARGET
    try:
        return validate_target(value)
    except RuleError as exc:
        raise ServiceError.from_rule(exc) from None


#: The contract's presets (``dominos.v1.Preset``) by value: the engine's preset names.
PRESET_NAMES: Final = {
    game_pb2.PRESET_UNSPECIFIED: "classic",
    game_pb2.PRESET_CLASSIC: "classic",
    game_pb2.PRESET_FAMILY_DRAW: "family_draw",
    game_pb2.PRESET_WEB_DRAW: "web_draw",
    game_pb2.PRESET_WEB_BLOCK: "web_block",
    game_pb2.PRESET_WEB_FIVES: "web_fives",
    game_pb2.PRESET_APP: "app",
    game_pb2.PRESET_SITE: "site",
}


def rules(choice: game_pb2.RuleChoice, target: int) -> tuple[RuleSet, int]:
    """The rule set a host chose at creation (D9) and the table's target (0: the rule set's
    default): a preset adjusted within its system's ranges, playable by this engine.
    INVALID_ARGUMENT / RULES_INVALID (``field`` names what) or TARGET_INVALID for anything
    else; FAILED_PRECONDITION / RULES_UNAVAILABLE for a rule set not playable yet. An unset
    choice is the classic game, with today's checks."""
    name = PRESET_NAMES.get(choice.preset)
    if name is None:
        raise invalid(Reason.RULES_INVALID, "unknown preset", field="preset")
    try:
        chosen = preset(
            name,
            seats=choice.seats or None,
            hand_size=choice.hand_size or None,
            turn_seconds=choice.turn_seconds or None,
            teams=choice.teams if choice.HasField("teams") else None,
        )
        validate_rules(chosen)
        return chosen, validate_target(target or chosen.target, chosen)
    except RuleError as exc:
        raise ServiceError.from_rule(exc) from None


def options(choice: game_pb2.TableOptions, rules: RuleSet) -> TableOptions:
    """The host's options (issue 20) checked against the table's rule set: 0 seconds mean
    the defaults; a robot option under a preset without computer players is
    FAILED_PRECONDITION / ROBOTS_UNAVAILABLE, the friendly end outside seed 004's preset
    FRIENDLY_END_UNAVAILABLE, anything out of range INVALID_ARGUMENT / RULES_INVALID naming
    the field."""
    chosen = TableOptions(
        practice=tuple(int(level) for level in choice.practice),
        fill_level=int(choice.fill_empty_seats),
        replace_level=int(choice.replace_disconnected),
        return_ms=choice.return_seconds * 1000 if choice.return_seconds else DEFAULT_RETURN_MS,
        friendly_end=choice.friendly_end,
        vote_ms=choice.vote_seconds * 1000 if choice.vote_seconds else DEFAULT_VOTE_MS,
        count_aid=choice.count_aid,
    )
    try:
        return validate_options(chosen, rules)
    except RuleError as exc:
        if exc.field in ("return_ms", "vote_ms"):
            exc.field = exc.field.replace("_ms", "_seconds")
        raise ServiceError.from_rule(exc) from None


def tile(low: int, high: int) -> int:
    """The engine index of a contract tile (``low <= high``, both 0..6)."""
    try:
        return tile_index(low, high)
    except ValueError:
        raise invalid(Reason.TILE_MALFORMED, "a tile has 0 <= low <= high <= 6") from None


def end(value: int) -> int:
    """A valid end: END_LEFT or END_RIGHT, or END_UP / END_DOWN (the spinner's short sides,
    which the engine accepts only under the all-fives scoring)."""
    if value not in (1, 2, 3, 4):
        raise invalid(Reason.END_MALFORMED, "end is END_LEFT, END_RIGHT, END_UP or END_DOWN")
    return value


def seat_token(value: str) -> str:
    """A seat token of the right shape: UNAUTHENTICATED when missing, PERMISSION_DENIED when
    it cannot be one."""
    if not value:
        raise ServiceError(grpc.StatusCode.UNAUTHENTICATED, Reason.TOKEN_MISSING, "no seat token")
    if not credentials.is_token_shape(value):
        raise ServiceError(
            grpc.StatusCode.PERMISSION_DENIED, Reason.TOKEN_INVALID, "bad seat token"
        )
    return value
