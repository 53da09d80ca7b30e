"""The views of the versions this replica just committed, for the commands' answers (issue 22).

A commit computes every seat's view of the new version in parts once
(:func:`services.common.projection.view_parts`: they go out in its ``TableEvent``); the
command's answer is the acting seat's view of that same version, so it is joined from those
parts instead of being projected a second time. An entry is matched by the identity of the
state object it was computed from, so an answer about any other state (a repeated request
answered from an older version, a table read back from Redis) is projected afresh; an entry is
taken once, and at most :data:`KEPT` wait (a commit that answers no view, such as a presence
change or a timer's, leaves one behind until newer ones push it out).
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Final

from dominos.v1 import game_pb2

from services.common.projection import ViewParts, table_view_bytes, view_bytes_from_parts
from services.rules import TableState

__all__ = ["KEPT", "FreshViews"]

#: Entries kept at most (one per table, the newest commits').
KEPT: Final = 1024


class FreshViews:
    """Table id → the state last committed here and its view parts, until answered."""

    def __init__(self, kept: int = KEPT) -> None:
        self.kept = kept
        self._latest: OrderedDict[str, tuple[TableState, ViewParts]] = OrderedDict()

    def __len__(self) -> int:
        return len(self._latest)

    def remember(self, state: TableState, parts: ViewParts) -> None:
        """``parts`` are the view parts of ``state``, which was just committed."""
        self._latest[state.table_id] = (state, parts)
        self._latest.move_to_end(state.table_id)
        while len(self._latest) > self.kept:
            self._latest.popitem(last=False)

    def view(self, state: TableState, seat: int, server_time_ms: int) -> game_pb2.TableView:
        """``table_view(state, seat, server_time_ms)``, joined from the parts remembered for
        this very state object (taken: an answer is built once), else projected."""
        return game_pb2.TableView.FromString(self.view_bytes(state, seat, server_time_ms))

    def view_bytes(self, state: TableState, seat: int, server_time_ms: int) -> bytes:
        """:meth:`view` serialised: joined from the remembered parts without being parsed
        (issue 22), else projected."""
        entry = self._latest.get(state.table_id)
        if entry is not None and entry[0] is state:
            del self._latest[state.table_id]
            return view_bytes_from_parts(entry[1], seat, server_time_ms)
        return table_view_bytes(state, seat, server_time_ms)
