"""A failed call in words: its contract reason (``ErrorInfo.reason``) or, for failures without
one, its gRPC code, mapped to a sentence of the catalogue
(:data:`~services.client.texts.ERROR_SENTENCES` and a few older interface strings), never
the server's raw text."""

from __future__ import annotations

import math
from typing import Final

from services.client.texts import ERROR_SENTENCES, Lang, ui

__all__ = ["error_key", "error_text"]

#: Reasons that only a faulty client (or server) produces: one sentence for all of them.
_CLIENT_BUGS: Final = frozenset(
    {
        "REQUEST_ID_MALFORMED",
        "TILE_MALFORMED",
        "END_MALFORMED",
        "COMMAND_MISSING",
        "TOKEN_MISSING",
        "TIMER_STALE",
    }
)

#: Reasons whose sentence is an older interface string (same words wherever they show).
_REASON_KEYS: Final = {
    "MUST_PLAY": "must_play",
    "NOT_YOUR_TURN": "not_your_turn",
    "TILE_DOES_NOT_FIT": "does_not_fit",
    "NAME_INVALID": "name_invalid",
    "NAME_TAKEN": "name_taken",
}

#: gRPC codes (by name) of failures without a reason: the network or the server is away.
_CONNECTION_CODES: Final = frozenset({"UNAVAILABLE", "DEADLINE_EXCEEDED"})


def error_key(reason: str | None, code: str) -> str:
    """The interface string that explains a failed call, from its contract ``reason``
    (``ErrorInfo.reason``, e.g. ``"NOT_YOUR_TURN"``) and, for failures without one, its gRPC
    ``code`` name. Decided on the reason first, never on the message text (client guide,
    "Errors"): a known reason has its own sentence; the reasons only a faulty client causes
    share one; UNAVAILABLE (with or without the reason) and DEADLINE_EXCEEDED say the server
    does not answer; an unknown reason (a newer server) falls back on its code."""
    if reason in _REASON_KEYS:
        return _REASON_KEYS[reason]
    if reason in _CLIENT_BUGS:
        return "client_bug"
    if reason == "UNAVAILABLE" or code in _CONNECTION_CODES:
        return "unavailable"
    if reason in ERROR_SENTENCES:
        return reason
    if code == "CANCELLED":
        return "cancelled"
    if code in ("INVALID_ARGUMENT", "UNAUTHENTICATED", "UNIMPLEMENTED"):
        return "client_bug"
    return "unexpected"


def error_text(
    reason: str | None, code: str, lang: Lang, *, retry_after: float | None = None
) -> str:
    """The sentence, in ``lang``, for a failed call (see :func:`error_key`); a rate limit says
    how long to wait (``retry_after``, the ``RetryInfo`` delay, rounded up; 1 s at least)."""
    key = error_key(reason, code)
    if key == "RATE_LIMITED":
        return ui(key, lang, seconds=max(1, math.ceil(retry_after or 1)))
    return ui(key, lang)
