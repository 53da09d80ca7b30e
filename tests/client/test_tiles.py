"""Tiles and the hand (services/client/tiles.py, R8, R9): each tile with its legal ends."""

from __future__ import annotations

from dominos.v1 import game_pb2

from services.client.tiles import hand_items
from tests.client.views import make_view


def test_hand_items_carry_the_legal_ends() -> None:
    view = make_view(turn_seat=0, left_end=6, right_end=1)
    view.hand.add(low=0, high=3)
    view.hand.add(low=1, high=6)
    view.hand.add(low=4, high=5)
    view.legal_moves.add(tile=game_pb2.Tile(low=1, high=6), end=game_pb2.END_LEFT)
    view.legal_moves.add(tile=game_pb2.Tile(low=1, high=6), end=game_pb2.END_RIGHT)
    items = hand_items(view)
    assert [(i.text, i.playable) for i in items] == [
        ("[0|3]", False),
        ("[1|6]", True),
        ("[4|5]", False),
    ]
    assert items[1].ends == (game_pb2.END_LEFT, game_pb2.END_RIGHT)
