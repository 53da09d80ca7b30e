"""Computer players (issue 20) as the client names them: the robots' levels in words, which
presets offer them (and the friendly end), a robot's seat and a player's stand-in at the
table, the host's options in words for the lobby, and the ``TableOptions`` of a creation.

Robots exist only where the host chose them, and only with the presets whose systems offer
computer players (``web_draw``, ``web_block``, ``web_fives``, ``app``, ``site``): the client
never offers a robot option with ``classic`` or ``family_draw``. The friendly end is the
site's (``site`` only).
"""

from __future__ import annotations

import time
from typing import Final

from dominos.v1 import game_pb2

from services.client.texts import Lang, labelled

__all__ = [
    "FRIENDLY_END_PRESETS",
    "LEVELS",
    "RETURN_SECONDS",
    "ROBOT_PRESETS",
    "VOTE_SECONDS",
    "a_robot",
    "clock_time",
    "duration_text",
    "level_word",
    "options_lines",
    "practice_options",
    "robot_label",
    "robot_seat_text",
    "robots_label",
    "stand_in_text",
    "table_options",
]

#: The presets whose systems offer computer players, in the start screen's order.
ROBOT_PRESETS: Final[tuple[str, ...]] = ("web_draw", "web_block", "web_fives", "app", "site")

#: The presets whose system offers the friendly end.
FRIENDLY_END_PRESETS: Final[tuple[str, ...]] = ("site",)

#: The levels, weakest first.
LEVELS: Final[tuple[int, ...]] = (
    game_pb2.ROBOT_LEVEL_BEGINNER,
    game_pb2.ROBOT_LEVEL_SOLID,
    game_pb2.ROBOT_LEVEL_STRONG,
)

_WORDS: Final[dict[int, tuple[tuple[str, str], str]]] = {
    # level: ((French singular, French plural), English)
    game_pb2.ROBOT_LEVEL_BEGINNER: (("débutant", "débutants"), "beginner"),
    game_pb2.ROBOT_LEVEL_SOLID: (("solide", "solides"), "solid"),
    game_pb2.ROBOT_LEVEL_STRONG: (("fort", "forts"), "strong"),
}

#: The default time a replaced player has to come back (``return_seconds`` 0), and to vote.
RETURN_SECONDS: Final = 180
VOTE_SECONDS: Final = 30


def level_word(level: int, lang: Lang, *, plural: bool = False) -> str:
    """A level as an adjective: ``"solide"`` (``"solides"``) / ``"solid"``; an unknown level
    (a newer server) is just a robot: ``""``."""
    words = _WORDS.get(level)
    if words is None:
        return ""
    (one, many), english = words
    return (many if plural else one) if lang == "fr" else english


def robot_label(level: int, lang: Lang) -> str:
    """``"robot fort"`` / ``"strong robot"`` (``"robot"`` for an unknown level)."""
    word = level_word(level, lang)
    if not word:
        return "robot"
    return f"robot {word}" if lang == "fr" else f"{word} robot"


def robots_label(level: int, lang: Lang) -> str:
    """The plural: ``"robots forts"`` / ``"strong robots"``."""
    word = level_word(level, lang, plural=True)
    if not word:
        return "robots"
    return f"robots {word}" if lang == "fr" else f"{word} robots"


def clock_time(ms: int) -> str:
    """A server time (ms since the epoch) as the player's wall clock reads it: ``"14:32"``
    (the local time zone; the epoch is the same on both sides, so clock skew only shifts it
    by the skew)."""
    return time.strftime("%H:%M", time.localtime(ms / 1000))


def robot_seat_text(info: game_pb2.SeatInfo, lang: Lang) -> str:
    """What the table says of a seat a robot holds (``SeatInfo.robot``): ``"robot fort"``;
    ``""`` for a seat a person holds."""
    return robot_label(info.robot, lang) if info.robot else ""


def stand_in_text(info: game_pb2.SeatInfo, lang: Lang) -> str:
    """A player who dropped while a robot plays for them (``SeatInfo.stand_in``), with the
    time they may come back until: ``"joué par un robot (retour avant 14:32)"`` / ``"played
    by a robot (back by 14:32)"`` (three lines in a side column); ``""`` otherwise."""
    if not info.stand_in:
        return ""
    until = ""
    if info.stand_in_until_ms > 0:
        clock = clock_time(info.stand_in_until_ms)
        until = f" (retour avant {clock})" if lang == "fr" else f" (back by {clock})"
    return f"joué par un robot{until}" if lang == "fr" else f"played by a robot{until}"


def a_robot(level: int, lang: Lang, *, capital: bool = False) -> str:
    """A robot of ``level`` with its article: ``"un robot solide"`` / ``"a solid robot"``
    (``"Un robot solide"`` / ``"A solid robot"`` with ``capital``)."""
    robot = robot_label(level, lang)
    if lang == "fr":
        words = f"un {robot}"
    else:
        words = f"{'an' if robot[:1] in ('a', 'e', 'i', 'o', 'u') else 'a'} {robot}"
    return words[:1].upper() + words[1:] if capital else words


def duration_text(seconds: int) -> str:
    """``"3 min"``, ``"2 min 30 s"``, ``"45 s"``."""
    minutes, rest = divmod(seconds, 60)
    if not minutes:
        return f"{rest} s"
    return f"{minutes} min" + (f" {rest} s" if rest else "")


def options_lines(view: game_pb2.TableView, lang: Lang) -> list[str]:
    """The host's options (``TableOptions``) in words for the lobby, one a line; ``[]`` for
    a table without any.

    e.g. ``["Places vides au lancement : des robots solides les prennent", "Joueur parti :
    un robot fort joue pour lui (3 min pour revenir)", "Fin amiable : possible si tous les
    joueurs sont d'accord (30 s pour répondre)"]``."""
    options = view.options
    fr = lang == "fr"
    lines = []
    if options.practice:
        levels = sorted(set(options.practice))
        robots = (" et " if fr else " and ").join(robots_label(level, lang) for level in levels)
        if fr:
            lines.append(labelled("Entraînement", f"contre des {robots}", lang))
        else:
            lines.append(labelled("Practice", f"against {robots}", lang))
    if options.fill_empty_seats:
        robots = robots_label(options.fill_empty_seats, lang)
        if fr:
            lines.append(labelled("Places vides au lancement", f"des {robots} les prennent", lang))
        else:
            lines.append(labelled("Empty seats at the start", f"{robots} take them", lang))
    if options.replace_disconnected:
        robot = a_robot(options.replace_disconnected, lang)
        back = duration_text(options.return_seconds or RETURN_SECONDS)
        if fr:
            lines.append(
                labelled("Joueur parti", f"{robot} joue pour lui ({back} pour revenir)", lang)
            )
        else:
            lines.append(
                labelled("A player who drops", f"{robot} plays ({back} to come back)", lang)
            )
    if options.friendly_end:
        vote = options.vote_seconds or VOTE_SECONDS
        if fr:
            lines.append(
                labelled(
                    "Fin amiable",
                    f"possible si tous les joueurs sont d'accord ({vote} s pour répondre)",
                    lang,
                )
            )
        else:
            lines.append(
                labelled("Friendly end", f"if every player agrees ({vote} s to answer)", lang)
            )
    return lines


def table_options(
    fill: int = 0, replace: int = 0, friendly_end: bool = False
) -> game_pb2.TableOptions | None:
    """The ``TableOptions`` of a creation from the start screen's choices (levels, 0 for
    off); None when nothing is chosen (the request carries no options, as before)."""
    if not (fill or replace or friendly_end):
        return None
    options = game_pb2.TableOptions(friendly_end=friendly_end)
    options.fill_empty_seats = fill  # type: ignore[assignment]
    options.replace_disconnected = replace  # type: ignore[assignment]
    return options


def practice_options(seats: int, level: int) -> game_pb2.TableOptions:
    """A practice table's options: a robot of ``level`` in every seat after the host's."""
    options = game_pb2.TableOptions()
    options.practice.extend([level] * max(1, seats - 1))  # type: ignore[list-item]
    return options
