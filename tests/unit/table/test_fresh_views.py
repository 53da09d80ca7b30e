"""The answer's view joined from the parts a commit computed (issue 22), and only for the
very state they were computed from (S6: never another version's or another seat's)."""

from __future__ import annotations

from dominos.v1.game_pb2 import TableView

from services.common.projection import table_view, view_parts
from services.table.fresh_views import FreshViews
from testing.games import new_game

NOW = 1_800_000_000_000


def test_the_answer_of_a_commit_is_its_seats_view_from_the_remembered_parts() -> None:
    state = new_game(1).state
    views = FreshViews()
    parts = view_parts(state)
    views.remember(state, parts)
    assert views.view(state, 2, NOW) == table_view(state, 2, NOW)
    assert len(views) == 0  # taken once


def test_parts_of_another_state_of_the_table_are_never_used() -> None:
    """A state equal in value but not the committed object (read back, or an older version
    answered to a repeated request) is projected afresh, not joined from the parts."""
    game = new_game(2)
    state = game.state
    older = game.states[-2]
    views = FreshViews()
    views.remember(state, view_parts(older))  # wrong parts: they must not be used
    assert views.view(state._replace(), 1, NOW) == table_view(state, 1, NOW)
    assert views.view(older, 1, NOW) == table_view(older, 1, NOW)


def test_at_most_so_many_commits_wait_for_their_answer() -> None:
    views = FreshViews(kept=2)
    states = [new_game(seed).state._replace(table_id=f"table{seed}") for seed in (3, 4, 5)]
    for state in states:
        views.remember(state, view_parts(state))
    assert len(views) == 2
    # The oldest was pushed out: its answer is projected, still the same view.
    assert views.view(states[0], 0, NOW) == table_view(states[0], 0, NOW)
    assert len(views) == 2


def test_the_serialised_answer_is_the_views_bytes_remembered_or_projected() -> None:
    """``view_bytes`` (the command's answer as the table service sends it, issue 22) parses as
    the view, from the remembered parts and when projected afresh."""
    game = new_game(6)
    state = game.state
    views = FreshViews()
    views.remember(state, view_parts(state))
    for seat in range(4):
        expected = table_view(state, seat, NOW)
        views.remember(state, view_parts(state))
        assert TableView.FromString(views.view_bytes(state, seat, NOW)) == expected
        assert len(views) == 0
        assert TableView.FromString(views.view_bytes(state, seat, NOW)) == expected  # projected
