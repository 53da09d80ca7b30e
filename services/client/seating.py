"""The table drawn around the player: where each seat sits as seen from yours (two, three or
four seats), and what the table shows of a seat (name, team or its own score, a robot and
its level, tiles, away or played by a robot meanwhile, turn, passes), as a column (west,
east) or a strip (north, south)."""

from __future__ import annotations

import textwrap

from dominos.v1 import game_pb2

from services.client.robots import robot_seat_text, stand_in_text
from services.client.rule_sets import has_teams
from services.client.teams import seat_team, team_letter
from services.client.texts import Lang, ui
from services.client.words import passes_in_words

__all__ = ["relative_seats", "seat_column", "seat_facts", "seat_strip"]


def relative_seats(your_seat: int, seats: int = 4) -> dict[str, int]:
    """Where each seat sits as seen from ``your_seat`` (turn order goes round the table):
    ``south`` is you, ``east`` plays after you, ``north`` is your partner across (R1),
    ``west`` plays before you. At two seats the opponent sits across (``north``); at three
    the next player on the right (``east``), the other on the left (``west``), nobody
    across. Places without a seat are left out."""
    if seats == 2:
        return {"south": your_seat % 2, "north": (your_seat + 1) % 2}
    if seats == 3:
        return {"south": your_seat % 3, "east": (your_seat + 1) % 3, "west": (your_seat + 2) % 3}
    return {
        "south": your_seat % 4,
        "east": (your_seat + 1) % 4,
        "north": (your_seat + 2) % 4,
        "west": (your_seat + 3) % 4,
    }


def _is_turn(view: game_pb2.TableView, seat: int) -> bool:
    return (
        view.phase == game_pb2.PHASE_PLAYING
        and view.HasField("turn_seat")
        and view.turn_seat == seat
    )


def seat_facts(view: game_pb2.TableView, seat: int, lang: Lang) -> list[str]:
    """What the table shows of a seat, one fact a line: its name with its team letter (and
    "partner"/"you" as seen from the view's seat), a robot with its level ("robot fort")
    when one holds the seat, the tiles it holds (after the start), "away" when disconnected
    (S3) or, while a robot plays for its player, "away, played by a solid robot (back by
    14:32)", "to play" on its turn, and its passes in words (R10). Names are copied as
    typed."""
    info = view.seats[seat] if seat < len(view.seats) else None
    if info is None or not info.occupied:
        return ["(place libre)" if lang == "fr" else "(empty seat)"]
    teams = has_teams(view)
    tags = [team_letter(seat_team(seat))] if teams else []
    if seat == view.your_seat:
        tags.append(ui("you", lang))
    elif teams and seat_team(seat) == seat_team(view.your_seat):
        tags.append(ui("partner", lang))
    tagged = f" ({', '.join(tags)})" if tags else ""
    facts = [f"{'▶ ' if _is_turn(view, seat) else ''}{info.name}{tagged}"]
    robot = robot_seat_text(info, lang)
    if robot:
        facts.append(robot)
    if view.phase != game_pb2.PHASE_WAITING:
        count = info.tile_count
        if lang == "fr":
            facts.append(f"{count} domino{'s' if count > 1 else ''}")
        else:
            facts.append(f"{count} tile{'s' if count != 1 else ''}")
        if not teams:  # each for themselves: every seat its own score
            facts.append(f"score : {info.score}" if lang == "fr" else f"score: {info.score}")
    stand_in = stand_in_text(info, lang)
    if stand_in:
        facts.append(stand_in)
    elif not info.connected and not info.robot:
        facts.append(ui("away", lang))
    if _is_turn(view, seat):
        facts.append(ui("their_turn", lang))
    passes = passes_in_words(list(info.passed_on), lang)
    if passes:
        facts.append(passes)
    return facts


def seat_column(view: game_pb2.TableView, seat: int, lang: Lang, width: int) -> list[str]:
    """:func:`seat_facts` as a column ``width`` characters wide (west and east of the
    table): each fact wrapped between words, a word longer than the column cut."""
    lines: list[str] = []
    for fact in seat_facts(view, seat, lang):
        lines += textwrap.wrap(fact, width=max(1, width), break_on_hyphens=False) or [""]
    return lines


def seat_strip(view: game_pb2.TableView, seat: int, lang: Lang) -> str:
    """:func:`seat_facts` on one line, joined by `` · `` (north and south of the table)."""
    return " · ".join(seat_facts(view, seat, lang))
