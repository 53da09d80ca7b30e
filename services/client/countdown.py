"""Whose turn it is and the time left (R11), or when the next round is dealt (D1), or that
the game is paused by a friendly-end vote (its time left).

The countdown is computed from the view's ``turn_deadline_ms - server_time_ms`` minus the time
elapsed locally since the view was received (monotonic clock), so a skewed client clock does
not matter; it never goes below zero.
"""

from __future__ import annotations

import math

from dominos.v1 import game_pb2

from services.client.elision import de
from services.client.teams import seat_name
from services.client.texts import Lang, ui

__all__ = ["format_countdown", "remaining_seconds", "turn_text"]


def remaining_seconds(
    view: game_pb2.TableView, received_at: float, now: float, deadline_ms: int | None = None
) -> float | None:
    """Seconds left on the running clock (R11 turn, or D1 break; or until ``deadline_ms``,
    e.g. a vote's), or None when none runs.

    ``turn_deadline_ms - server_time_ms`` is the time left when the server sent the view;
    ``now - received_at`` (both from the client's monotonic clock) is what has elapsed
    since. Never negative.
    """
    deadline = view.turn_deadline_ms if deadline_ms is None else deadline_ms
    if deadline <= 0 or view.server_time_ms <= 0:
        return None
    left = (deadline - view.server_time_ms) / 1000.0 - (now - received_at)
    return max(0.0, left)


def format_countdown(seconds: float) -> str:
    """Whole seconds, rounded up so "0 s" means the time is over: ``27.2`` → ``"28 s"``;
    a minute or more as ``m:ss``: ``65`` → ``"1:05"``."""
    whole = max(0, math.ceil(seconds - 1e-9))
    if whole >= 60:
        return f"{whole // 60}:{whole % 60:02d}"
    return f"{whole} s"


def turn_text(view: game_pb2.TableView, remaining: float | None, lang: Lang) -> str:
    """Whose turn it is and the countdown: ``"À vous de jouer — 27 s"`` /
    ``"Bob's turn — 12 s"``; between rounds, when the next round is dealt; while a
    friendly-end vote is open, that the game is paused (the clock is the vote's);
    ``""`` otherwise."""
    clock = f" — {format_countdown(remaining)}" if remaining is not None else ""
    if view.HasField("vote") and view.phase in (
        game_pb2.PHASE_PLAYING, game_pb2.PHASE_ROUND_OVER,
    ):  # fmt: skip
        return ui("vote_paused", lang) + clock
    if view.phase == game_pb2.PHASE_PLAYING and view.HasField("turn_seat"):
        if view.turn_seat == view.your_seat:
            who = "À vous de jouer" if lang == "fr" else "Your turn"
        else:
            name = seat_name(view, view.turn_seat)
            who = f"Au tour {de(name)}" if lang == "fr" else f"{name}'s turn"
        return who + clock
    if view.phase == game_pb2.PHASE_ROUND_OVER and remaining is not None:
        return ui("next_round", lang, time=format_countdown(remaining))
    return ""
