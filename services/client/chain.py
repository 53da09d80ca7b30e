"""The chain: as one line with its two open ends (R8), and drawn in rows for the game screen,
wrapped between tiles (never inside one), doubles across, the newest tile marked."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from dominos.v1 import game_pb2

from services.client.texts import Lang, ui
from services.client.tiles import tile_text

__all__ = ["ChainDrawing", "chain_drawing", "chain_text", "ends_text", "newest_index"]


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


def _tile_cells(left: int, right: int) -> tuple[str, str, str]:
    """A tile in three rows: a plain tile lies along the chain, ``[6|3]`` on the middle row;
    a double stands across it, its two halves above and below (R8's "across")."""
    if left == right:
        return (f"┌{left}┐", "├─┤", f"└{right}┘")
    return ("     ", f"[{left}|{right}]", "     ")


def chain_drawing(
    chain: Sequence[tuple[int, int]], width: int, newest: int | None = None
) -> ChainDrawing:
    """Lay out the chain (``(left, right)`` halves, left to right) in ``width`` columns:
    tiles separated by a space and wrapped only between tiles, never inside one; doubles
    drawn across (:func:`_tile_cells`), so a line holding one takes three rows, a line
    without any one row. ``newest`` is the index in ``chain`` of the tile laid last."""
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
        cells = [_tile_cells(*chain[i]) for i in line]
        tall = any(chain[i][0] == chain[i][1] for i in line)
        shown = (0, 1, 2) if tall else (1,)
        offset = 0
        for position, index in enumerate(line):
            size = len(cells[position][1])
            if index == newest:
                marks += [(len(rows) + r, offset, offset + size) for r in range(len(shown))]
            offset += size + 1
        for r in shown:
            rows.append(" ".join(cell[r] for cell in cells).rstrip())
    return ChainDrawing(rows if chain else [], marks)


def newest_index(view: game_pb2.TableView, played: game_pb2.Move | None) -> int | None:
    """The index in the chain of the tile ``played`` (the newest move seen, or None): at the
    left end when it went left, at the right end otherwise; None when that end holds
    another tile (the move is of an earlier round)."""
    if played is None or not view.chain:
        return None
    index = 0 if played.end == game_pb2.END_LEFT else len(view.chain) - 1
    tile = view.chain[index]
    if sorted((tile.left, tile.right)) != [played.tile.low, played.tile.high]:
        return None
    return index
