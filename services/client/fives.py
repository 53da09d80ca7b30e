"""All fives ("tous les 5", the ``web_fives`` preset) as the client shows it: the spinner's
layout (its short sides), the open ends with their numbers and their total, each legal
placement with the points it would score, a play that scored, the round's points rounded to
the nearest 5, and a game ended by a play in the middle of a round.

How the table counts the ends (as the server scores them): each end counts the outer half
of the tile lying there, a double both halves; the spinner counts both halves, once, while
one of its long sides is still uncovered; a short side that holds no tile yet counts
nothing. A play that makes the total a positive multiple of 5 scores it at once.

Pure functions of the view (no I/O), plain text in both languages.
"""

from __future__ import annotations

from typing import Final

from dominos.v1 import game_pb2

from services.client.chain import Arm
from services.client.rule_sets import has_teams, side_label, side_of
from services.client.teams import seat_name
from services.client.texts import Lang
from services.client.tiles import HandItem, tile_text

__all__ = [
    "END_KEYS",
    "arms_of",
    "end_name",
    "end_place",
    "ended_by_play_text",
    "ends_total",
    "is_fives",
    "open_ends_text",
    "placements_text",
    "rounding_text",
    "scored_text",
    "spinner_of",
]

_NAMES: Final[dict[int, tuple[str, str]]] = {
    game_pb2.END_LEFT: ("gauche", "left"),
    game_pb2.END_RIGHT: ("droite", "right"),
    game_pb2.END_UP: ("haut", "top"),
    game_pb2.END_DOWN: ("bas", "bottom"),
}

_PLACES: Final[dict[int, tuple[str, str]]] = {
    game_pb2.END_LEFT: ("à gauche", "on the left"),
    game_pb2.END_RIGHT: ("à droite", "on the right"),
    game_pb2.END_UP: ("en haut", "at the top"),
    game_pb2.END_DOWN: ("en bas", "at the bottom"),
}

#: The key that lays the selected tile on each end, by language (the game screen's bindings:
#: G or L left, D or R right, U top, B bottom).
END_KEYS: Final[dict[str, dict[int, str]]] = {
    "fr": {game_pb2.END_LEFT: "G", game_pb2.END_RIGHT: "D", game_pb2.END_UP: "U",
           game_pb2.END_DOWN: "B"},
    "en": {game_pb2.END_LEFT: "L", game_pb2.END_RIGHT: "R", game_pb2.END_UP: "U",
           game_pb2.END_DOWN: "B"},
}  # fmt: skip


def is_fives(view: game_pb2.TableView) -> bool:
    """Whether the table scores all fives (points during the round, the spinner)."""
    return view.rules.scoring == game_pb2.SCORING_ALL_FIVES


def end_name(end: int, lang: Lang) -> str:
    """An end in one word: ``"gauche"``, ``"haut"`` / ``"left"``, ``"top"``."""
    fr, en = _NAMES.get(end, _NAMES[game_pb2.END_RIGHT])
    return fr if lang == "fr" else en


def end_place(end: int, lang: Lang) -> str:
    """Where a tile went: ``"à gauche"``, ``"en haut"`` / ``"on the left"``, ``"at the top"``."""
    fr, en = _PLACES.get(end, _PLACES[game_pb2.END_RIGHT])
    return fr if lang == "fr" else en


def spinner_of(view: game_pb2.TableView) -> int | None:
    """The spinner's index in ``chain``, None before the first double (or in other games)."""
    if not view.HasField("spinner_index") or view.spinner_index >= len(view.chain):
        return None
    return view.spinner_index


def _open(view: game_pb2.TableView) -> dict[int, int]:
    """The open ends and their numbers, in the view's order."""
    return {e.end: e.number for e in view.open_ends}


def arms_of(view: game_pb2.TableView) -> tuple[Arm, Arm]:
    """The spinner's short sides (up, down) as the chain drawing takes them."""
    ends = _open(view)
    spinner = spinner_of(view)
    number = view.chain[spinner].left if spinner is not None else 0
    return tuple(  # type: ignore[return-value]
        Arm(tuple((p.left, p.right) for p in arm), end in ends, number)
        for arm, end in ((view.up_arm, game_pb2.END_UP), (view.down_arm, game_pb2.END_DOWN))
    )


def ends_total(view: game_pb2.TableView) -> int:
    """The open ends' total as the table counts it (see the module docstring)."""
    doubles: set[tuple[int, int]] = set()
    total = 0
    for end, number in _open(view).items():
        if end == game_pb2.END_LEFT and view.chain:
            where, tile = (0, 0), view.chain[0]
        elif end == game_pb2.END_RIGHT and view.chain:
            where, tile = (0, len(view.chain) - 1), view.chain[-1]
        elif end == game_pb2.END_UP and view.up_arm:
            where, tile = (1, len(view.up_arm) - 1), view.up_arm[-1]
        elif end == game_pb2.END_DOWN and view.down_arm:
            where, tile = (2, len(view.down_arm) - 1), view.down_arm[-1]
        else:
            continue  # an empty short side shows the spinner's number but counts nothing
        if tile.left != tile.right:
            total += number  # the outer half (the opener alone: each half an end)
        elif where not in doubles:  # a double both halves; the spinner alone only once
            doubles.add(where)
            total += 2 * tile.left
    return total


def open_ends_text(view: game_pb2.TableView, lang: Lang) -> str:
    """The open ends with their numbers and their total: ``"Bouts : gauche 6 · droite 1 ·
    haut 5 · bas 4 · total 16"`` / ``"Ends: left 6 · right 1 · top 5 · bottom 4 · total
    16"``; ``""`` on an empty table."""
    ends = _open(view)
    if not ends:
        return ""
    order = (game_pb2.END_LEFT, game_pb2.END_RIGHT, game_pb2.END_UP, game_pb2.END_DOWN)
    parts = [f"{end_name(end, lang)} {ends[end]}" for end in order if end in ends]
    parts.append(f"total {ends_total(view)}")
    label = "Bouts : " if lang == "fr" else "Ends: "
    return label + " · ".join(parts)


def placements_text(item: HandItem, lang: Lang) -> str:
    """Where the selected tile may go, each end with its key and the points it would score:
    ``"[5|0] → G gauche · D droite +10 · U haut"``; ``""`` when it fits nowhere."""
    if not item.ends:
        return ""
    keys = END_KEYS[lang]
    parts = []
    for end, points in zip(item.ends, item.points or (0,) * len(item.ends), strict=True):
        scored = f" +{points}" if points else ""
        parts.append(f"{keys.get(end, '?')} {end_name(end, lang)}{scored}")
    return f"{item.text} → " + " · ".join(parts)


def scored_text(view: game_pb2.TableView, action: game_pb2.LastAction, lang: Lang) -> str:
    """A play that scored at once: ``"Ana marque 10 (bouts : 10)."`` / ``"Ana scores 10
    (ends: 10)."`` (with teams: ``"… pour l'équipe A"``); ``""`` for a play that did not."""
    if action.kind != game_pb2.ACTION_KIND_PLAYED or not action.points:
        return ""
    seat = action.seat if action.HasField("seat") else 0
    name = seat_name(view, seat)
    team = ""
    if has_teams(view):
        label = side_label(view, side_of(view, seat), lang)
        team = f" pour l'{label}" if lang == "fr" else f" for {label}"
    if lang == "fr":
        return f"{name} marque {action.points}{team} (bouts : {action.points})."
    return f"{name} scores {action.points}{team} (ends: {action.points})."


def rounding_text(summary: game_pb2.RoundSummary, lang: Lang) -> str:
    """The round's points before and after rounding to the nearest 5: ``"18 arrondis à
    20"`` / ``"18 rounded to 20"``; ``"20, déjà un multiple de 5"`` when nothing moved."""
    raw, rounded = summary.unrounded_points, summary.points
    if raw == rounded:
        return (
            f"{raw}, déjà un multiple de 5" if lang == "fr" else f"{raw}, already a multiple of 5"
        )
    if lang == "fr":
        return f"{raw} arrondi{'s' if raw > 1 else ''} à {rounded}"
    return f"{raw} rounded to {rounded}"


def ended_by_play_text(view: game_pb2.TableView, lang: Lang) -> str:
    """The game ended by a play in the middle of a round (the target reached by points
    scored at once; the round is not counted): ``"Ana a atteint l'objectif en marquant 10
    avec [5|0] : la partie s'arrête là, au milieu de la manche 3."``; ``""`` otherwise."""
    action = view.last_action
    if (
        view.phase != game_pb2.PHASE_FINISHED
        or action.kind != game_pb2.ACTION_KIND_PLAYED
        or not action.points
        or (view.HasField("last_round") and view.last_round.round_number >= view.round_number)
    ):
        return ""
    name = seat_name(view, action.seat if action.HasField("seat") else 0)
    tile = tile_text(action.move.tile.low, action.move.tile.high)
    if lang == "fr":
        return (
            f"{name} a atteint l'objectif ({view.target}) en marquant {action.points} avec "
            f"{tile} : la partie s'arrête là, au milieu de la manche {view.round_number}."
        )
    return (
        f"{name} reached the target ({view.target}) scoring {action.points} with {tile}: "
        f"the game ends there, in the middle of round {view.round_number}."
    )
