"""Tiles as drawn (``[6|3]``) and the player's hand with the ends each tile may go on now."""

from __future__ import annotations

from dataclasses import dataclass

from dominos.v1 import game_pb2

__all__ = ["HandItem", "hand_items", "tile_text"]


def tile_text(low: int, high: int) -> str:
    """A tile as drawn: ``[6|3]``."""
    return f"[{low}|{high}]"


@dataclass(frozen=True)
class HandItem:
    """One tile of the player's hand, with the ends it may go on now (from ``legal_moves``)
    and, under all fives, the points each of them would score at once (``points[i]`` for
    ``ends[i]``)."""

    index: int
    low: int
    high: int
    ends: tuple[game_pb2.End, ...]
    points: tuple[int, ...] = ()

    @property
    def playable(self) -> bool:
        """Whether the tile may be laid now."""
        return bool(self.ends)

    @property
    def text(self) -> str:
        """``"[6|3]"``."""
        return tile_text(self.low, self.high)


def hand_items(view: game_pb2.TableView) -> list[HandItem]:
    """The hand in the view's order (ascending), each tile with its legal ends (R8, R9)."""
    ends: dict[tuple[int, int], dict[game_pb2.End, int]] = {}
    for move in view.legal_moves:
        ends.setdefault((move.tile.low, move.tile.high), {})[move.end] = move.points
    items = []
    for i, t in enumerate(view.hand):
        fitting = ends.get((t.low, t.high), {})
        order = tuple(sorted(fitting))
        items.append(HandItem(i, t.low, t.high, order, tuple(fitting[e] for e in order)))
    return items
