"""Seats and teams as players name them: a seat's team (R1), « équipe A » / "team A", a seat's
player name, the two partners of a team."""

from __future__ import annotations

from dominos.v1 import game_pb2

from services.client.texts import Lang
from services.client.words import join_words

__all__ = ["seat_name", "seat_team", "team_label", "team_letter", "team_members"]


def seat_team(seat: int) -> int:
    """The team of a seat (R1): seats 0 and 2 are ``TEAM_A``, 1 and 3 ``TEAM_B``."""
    return game_pb2.TEAM_A if seat % 2 == 0 else game_pb2.TEAM_B


def team_letter(team: int) -> str:
    """``"A"`` for ``TEAM_A``, ``"B"`` otherwise."""
    return "A" if team == game_pb2.TEAM_A else "B"


def team_label(team: int, lang: Lang, *, capital: bool = False) -> str:
    """``"équipe A"`` / ``"team A"`` (capitalised on request)."""
    word = "équipe" if lang == "fr" else "team"
    if capital:
        word = word.capitalize()
    return f"{word} {team_letter(team)}"


def seat_name(view: game_pb2.TableView, seat: int) -> str:
    """The name of the player at ``seat`` as typed, or ``"#<seat>"`` for an empty or unnamed
    seat."""
    info = view.seats[seat] if seat < len(view.seats) else None
    if info is not None and info.occupied and info.name:
        return info.name
    return f"#{seat}"


def team_members(view: game_pb2.TableView, team: int, lang: Lang) -> str:
    """The two partners' names: ``"Ann et Cid"`` / ``"Ann and Cid"``."""
    seats = (0, 2) if team == game_pb2.TEAM_A else (1, 3)
    return join_words([seat_name(view, s) for s in seats], lang)
