"""The lobby (S1, R3) in words: the invitation code as read out, one line per seat, what
happens next."""

from __future__ import annotations

from dominos.v1 import game_pb2

from services.client.robots import options_lines, robot_seat_text, robots_label, stand_in_text
from services.client.rule_sets import count_word, has_teams, rules_lines, seat_count
from services.client.teams import seat_team, team_label
from services.client.texts import Lang, ui
from services.client.words import passes_in_words

__all__ = ["code_text", "lobby_lines", "seat_line", "seated_text"]


def code_text(code: str) -> str:
    """An invitation code as players read it out: two groups of five (``ABCDE-23456``); a
    code of another length as it is. Typing it back, dashes and spaces do not matter."""
    if len(code) == 10 and code.isalnum():
        return f"{code[:5]}-{code[5:]}"
    return code


def seat_line(view: game_pb2.TableView, seat: int, lang: Lang) -> str:
    """One seat as every player sees it (S6): turn marker, name, team, host, "you", a robot
    and its level, tiles left, connection (or the robot playing for a player who dropped),
    and the passes in words (R10).

    e.g. ``"▶ Bob (équipe B) · 5 dominos · A passé sur cinq et deux"``.
    """
    info = view.seats[seat]
    marker = (
        "▶"
        if view.phase == game_pb2.PHASE_PLAYING
        and view.HasField("turn_seat")
        and view.turn_seat == seat
        else " "
    )
    if not info.occupied:
        return f"{marker} {'(place libre)' if lang == 'fr' else '(empty seat)'}"
    tags = [team_label(seat_team(seat), lang)] if has_teams(view) else []
    if info.host:
        tags.append("hôte" if lang == "fr" else "host")
    if seat == view.your_seat:
        tags.append("vous" if lang == "fr" else "you")
    tagged = f" ({', '.join(tags)})" if tags else ""
    parts = [f"{marker} {info.name}{tagged}"]
    robot = robot_seat_text(info, lang)
    if robot:
        parts.append(robot)
    if view.phase != game_pb2.PHASE_WAITING:
        count = info.tile_count
        if lang == "fr":
            parts.append(f"{count} domino{'s' if count > 1 else ''}")
        else:
            parts.append(f"{count} tile{'s' if count != 1 else ''}")
    stand_in = stand_in_text(info, lang)
    if stand_in:
        parts.append(stand_in)
    elif not info.connected and not info.robot:
        parts.append("déconnecté" if lang == "fr" else "disconnected")
    passes = passes_in_words(list(info.passed_on), lang)
    if passes:
        parts.append(passes)
    return " · ".join(parts)


def seated_text(view: game_pb2.TableView, lang: Lang) -> str:
    """How many seats are taken of how many must be (``RuleSet.seats``), and whether the
    host can start: with ``fill_empty_seats`` at once, robots taking the empty seats."""
    seated = sum(1 for s in view.seats if s.occupied)
    total = seat_count(view)
    fill = view.options.fill_empty_seats
    if fill and seated < total:
        robots = robots_label(fill, lang)
        return ui("lobby_waiting_fill", lang, n=seated, total=total, robots=robots)
    if total == 4:  # the default game's words
        return ui("lobby_ready" if seated >= total else "lobby_waiting", lang, n=seated)
    key = "lobby_ready_n" if seated >= total else "lobby_waiting_n"
    return ui(key, lang, n=seated, total=total, word=count_word(total, lang))


def lobby_lines(view: game_pb2.TableView, code: str, lang: Lang) -> list[str]:
    """The lobby (S1, R3): invitation code, the rule set in words (or the target), the
    host's options (robots, the friendly end), seats, and what happens next."""
    code = code_text(code)
    lines = [f"Code d'invitation : {code}" if lang == "fr" else f"Invitation code: {code}"]
    if view.rules.seats:
        lines += rules_lines(view, lang)
    elif lang == "fr":
        lines.append(f"Objectif : {view.target} points")
    else:
        lines.append(f"Target: {view.target} points")
    lines += options_lines(view, lang)
    lines += [seat_line(view, seat, lang) for seat in range(len(view.seats))]
    lines.append(seated_text(view, lang))
    return lines
