"""The chain (services/client/chain.py): its ends (R8), wrapped between tiles, doubles across,
the newest tile marked."""

from __future__ import annotations

from dominos.v1 import game_pb2

from services.client.chain import chain_drawing, chain_text, ends_text, newest_index
from tests.client.views import make_view


def test_chain_and_its_two_ends() -> None:
    view = make_view(left_end=6, right_end=1)
    view.chain.add(left=6, right=6, seat=0)
    view.chain.add(left=6, right=1, seat=1)
    assert chain_text(view, "en") == "[6|6][6|1]"
    assert ends_text(view, "fr") == "Bout gauche : 6 · bout droit : 1"
    assert ends_text(view, "en") == "Left end: 6 · right end: 1"
    assert ends_text(make_view(), "en") == ""
    assert "first tile may be any tile" in chain_text(make_view(), "en")


def test_the_chain_wraps_between_tiles_never_inside_one() -> None:
    chain = [(6, 3), (3, 1), (1, 5), (5, 2), (2, 0), (0, 4)]
    drawing = chain_drawing(chain, width=17)
    assert drawing.rows == ["[6|3] [3|1] [1|5]", "[5|2] [2|0] [0|4]"]
    assert chain_drawing(chain, width=16).rows == [
        "[6|3] [3|1]",
        "[1|5] [5|2]",
        "[2|0] [0|4]",
    ]


def test_a_double_stands_across_the_chain_over_three_rows() -> None:
    drawing = chain_drawing([(6, 3), (3, 3), (3, 1)], width=40)
    assert drawing.rows == [
        "      ┌3┐",
        "[6|3] ├─┤ [3|1]",
        "      └3┘",
    ]


def test_the_newest_tile_is_marked_on_every_row_it_covers() -> None:
    drawing = chain_drawing([(6, 3), (3, 3), (3, 1)], width=40, newest=1)
    assert drawing.newest == [(0, 6, 9), (1, 6, 9), (2, 6, 9)]
    plain = chain_drawing([(6, 3), (3, 1)], width=40, newest=1)
    assert plain.newest == [(0, 6, 11)]
    assert plain.rows[0][6:11] == "[3|1]"


def test_the_newest_tile_is_found_at_the_end_it_was_laid_on() -> None:
    view = make_view()
    for low, high in ((6, 3), (3, 1), (1, 5)):
        view.chain.add(left=low, right=high, seat=0)
    right = game_pb2.Move(tile=game_pb2.Tile(low=1, high=5), end=game_pb2.END_RIGHT)
    left = game_pb2.Move(tile=game_pb2.Tile(low=3, high=6), end=game_pb2.END_LEFT)
    stale = game_pb2.Move(tile=game_pb2.Tile(low=0, high=0), end=game_pb2.END_LEFT)
    assert newest_index(view, right) == 2
    assert newest_index(view, left) == 0
    assert newest_index(view, stale) is None
    assert newest_index(view, None) is None
