"""The words for seats held at unfinished games: how the start screen lists one (code, name,
seat, how long ago) and the command that takes one back."""

from __future__ import annotations

from services.client.lobby import code_text
from services.client.texts import Lang

__all__ = ["ago_text", "resume_command", "saved_seat_text"]


def ago_text(seconds: float, lang: Lang) -> str:
    """How long ago, roughly: ``"à l'instant"`` under a minute, then minutes, hours, days
    (``"il y a 5 min"`` / ``"5 min ago"``)."""
    whole = max(0, int(seconds))
    if whole < 60:
        return "à l'instant" if lang == "fr" else "just now"
    for size, unit in ((86400, "j" if lang == "fr" else "d"), (3600, "h"), (60, "min")):
        if whole >= size:
            amount = f"{whole // size} {unit}"
            return f"il y a {amount}" if lang == "fr" else f"{amount} ago"
    raise AssertionError("unreachable")  # pragma: no cover


def saved_seat_text(code: str, name: str, seat: int, age_seconds: float, lang: Lang) -> str:
    """One held seat on the start screen: ``"ABCDE-23456 · Chloé · place 3 · il y a 5 min"``
    (seats are counted from 1 for people)."""
    seat_word = "place" if lang == "fr" else "seat"
    return " · ".join(
        [code_text(code), name or "?", f"{seat_word} {seat + 1}", ago_text(age_seconds, lang)]
    )


def resume_command(code: str, gateway: str | None = None) -> str:
    """The command that takes a seat back: ``"dominos play --resume ABCDE23456"``, with
    ``--gateway`` when the server is not the default one (``gateway`` None)."""
    where = f" --gateway {gateway}" if gateway else ""
    return f"dominos play{where} --resume {code}"
