"""The chain: as one line with its two open ends (R8), and drawn in rows for the game screen,
wrapped between tiles (never inside one), doubles across, the newest tile marked; under all
fives the spinner framed and its short sides above and below it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from dominos.v1 import game_pb2

from services.client.texts import Lang, ui
from services.client.tiles import tile_text

__all__ = [
    "DOWN_ARROW",
    "UP_ARROW",
    "Arm",
    "ChainDrawing",
    "arm_rows",
    "chain_drawing",
    "chain_text",
    "ends_text",
    "newest_arm",
    "newest_index",
]


def chain_text(view: game_pb2.TableView, lang: Lang) -> str:
    """The chain from left to right, each tile oriented as laid, or a note when empty."""
    if not view.chain:
        return ui("empty_chain", lang)
    return "".join(tile_text(p.left, p.right) for p in view.chain)


def ends_text(view: game_pb2.TableView, lang: Lang) -> str:
    """The two open ends (R8): ``"Bout gauche : 6 · bout droit : 1"``; ``""`` when empty."""
    if not view.HasField("left_end") or not view.HasField("right_end"):
        return ""
    if lang == "fr":
        return f"Bout gauche : {view.left_end} · bout droit : {view.right_end}"
    return f"Left end: {view.left_end} · right end: {view.right_end}"


@dataclass(frozen=True)
class ChainDrawing:
    """The chain drawn in rows of text. ``rows`` are the lines as shown; ``newest`` the
    ``(row, start, end)`` character ranges covering the newest tile (to highlight it)."""

    rows: list[str]
    newest: list[tuple[int, int, int]]


def _tile_cells(left: int, right: int, spinner: bool = False) -> tuple[str, str, str]:
    """A tile in three rows: a plain tile lies along the chain, ``[6|3]`` on the middle row;
    a double stands across it, its two halves above and below (R8's "across"); the spinner
    of all fives (a double) in a double frame, ``╔5╗ ╠═╣ ╚5╝``."""
    if spinner:
        return (f"╔{left}╗", "╠═╣", f"╚{right}╝")
    if left == right:
        return (f"┌{left}┐", "├─┤", f"└{right}┘")
    return ("     ", f"[{left}|{right}]", "     ")


#: The arrows that start the spinner's short sides (all fives): up, then down.
UP_ARROW = "↑"
DOWN_ARROW = "↓"


@dataclass(frozen=True)
class Arm:
    """One short side of the spinner (all fives) as drawn: its tiles from the spinner out
    (``(inner, outer)`` halves: ``inner`` faces the spinner), whether it is open (both long
    sides covered) and the number it shows when it holds no tile yet."""

    tiles: tuple[tuple[int, int], ...] = ()
    open: bool = False
    number: int = 0


def arm_rows(arrow: str, arm: Arm, width: int) -> tuple[list[str], list[tuple[int, int]]]:
    """A short side in compact notation, ``"↑ [5|2] [2|4]"`` (``"↑ (5)"`` while open and
    empty), wrapped between tiles into rows of at most ``width`` columns; with the
    ``(row, start)`` of each tile. ``([], [])`` for a closed, empty side."""
    if not arm.tiles:
        return ([f"{arrow} ({arm.number})"] if arm.open else []), []
    rows = [arrow]
    starts: list[tuple[int, int]] = []
    for left, right in arm.tiles:
        cell = f"[{left}|{right}]"
        if len(rows[-1]) + 1 + len(cell) > width and rows[-1].strip():
            rows.append(" " * len(arrow))
        starts.append((len(rows) - 1, len(rows[-1]) + 1))
        rows[-1] += " " + cell
    return rows, starts


def chain_drawing(  # noqa: C901
    chain: Sequence[tuple[int, int]],
    width: int,
    newest: int | None = None,
    *,
    spinner: int | None = None,
    up: Arm | None = None,
    down: Arm | None = None,
    newest_arm: str | None = None,
) -> ChainDrawing:
    """Lay out the chain (``(left, right)`` halves, left to right) in ``width`` columns:
    tiles separated by a space and wrapped only between tiles, never inside one; doubles
    drawn across (:func:`_tile_cells`), so a line holding one takes three rows, a line
    without any one row. ``newest`` is the index in ``chain`` of the tile laid last.

    All fives: ``spinner`` is the index of the spinner in ``chain`` (drawn in a double
    frame); its short sides ``up`` and ``down`` (:func:`arm_rows`) are drawn just above and
    just below the rows of its line, from its column (moved left when they would not fit);
    ``newest_arm`` (``"up"``/``"down"``) marks the outer tile of that side as the newest."""
    lines: list[list[int]] = [[]]
    used = 0
    for index, (left, right) in enumerate(chain):
        size = 3 if left == right else 5
        if lines[-1] and used + 1 + size > width:
            lines.append([])
            used = 0
        used += size + (1 if lines[-1] else 0)
        lines[-1].append(index)
    rows: list[str] = []
    marks: list[tuple[int, int, int]] = []
    for line in lines:
        cells = [_tile_cells(*chain[i], spinner=i == spinner) for i in line]
        tall = any(chain[i][0] == chain[i][1] for i in line)
        shown = (0, 1, 2) if tall else (1,)
        offset = 0
        column = -1
        above: list[str] = []
        for position, index in enumerate(line):
            size = len(cells[position][1])
            if index == spinner:
                column = offset + 1
            offset += size + 1
        if column >= 0 and up is not None:
            above, tiles = arm_rows(UP_ARROW, up, width)
            shift = _arm_start(above, column, width)
            if newest_arm == "up" and tiles:
                row, start = tiles[-1]
                marks.append((len(rows) + row, shift + start, shift + start + 5))
            rows += [" " * shift + row for row in above]
        offset = 0
        for position, index in enumerate(line):
            size = len(cells[position][1])
            if index == newest:
                marks += [(len(rows) + r, offset, offset + size) for r in range(len(shown))]
            offset += size + 1
        for r in shown:
            rows.append(" ".join(cell[r] for cell in cells).rstrip())
        if column >= 0 and down is not None:
            below, tiles = arm_rows(DOWN_ARROW, down, width)
            shift = _arm_start(below, column, width)
            if newest_arm == "down" and tiles:
                row, start = tiles[-1]
                marks.append((len(rows) + row, shift + start, shift + start + 5))
            rows += [" " * shift + row for row in below]
    return ChainDrawing(rows if chain else [], marks)


def _arm_start(rows: list[str], column: int, width: int) -> int:
    """Where a short side's rows start: at the spinner's column, moved left to fit."""
    longest = max((len(row) for row in rows), default=0)
    return max(0, min(column, width - longest))


def newest_index(view: game_pb2.TableView, played: game_pb2.Move | None) -> int | None:
    """The index in the chain of the tile ``played`` (the newest move seen, or None): at the
    left end when it went left, at the right end otherwise; None when that end holds
    another tile (the move is of an earlier round), or the move went on a short side of the
    spinner (see :func:`newest_arm`)."""
    short_side = played is not None and played.end in (game_pb2.END_UP, game_pb2.END_DOWN)
    if played is None or not view.chain or short_side:
        return None
    index = 0 if played.end == game_pb2.END_LEFT else len(view.chain) - 1
    tile = view.chain[index]
    if sorted((tile.left, tile.right)) != [played.tile.low, played.tile.high]:
        return None
    return index


def newest_arm(view: game_pb2.TableView, played: game_pb2.Move | None) -> str | None:
    """``"up"``/``"down"`` when ``played`` (the newest move seen) is the outer tile of that
    short side of the spinner (all fives), else None."""
    if played is None:
        return None
    arms = {game_pb2.END_UP: ("up", view.up_arm), game_pb2.END_DOWN: ("down", view.down_arm)}
    if played.end not in arms:
        return None
    name, arm = arms[played.end]
    if not arm or sorted((arm[-1].left, arm[-1].right)) != [played.tile.low, played.tile.high]:
        return None
    return name
