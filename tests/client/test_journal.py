"""What a client saw (services/client/journal.py): this round's moves, every round's result,
the history panel."""

from __future__ import annotations

from dominos.v1 import game_pb2

from services.client.journal import Journal, history_lines
from tests.client.views import make_view


def played(view: game_pb2.TableView, seat: int, low: int, high: int, version: int) -> None:
    view.version = version
    view.last_action.Clear()
    view.last_action.kind = game_pb2.ACTION_KIND_PLAYED
    view.last_action.seat = seat
    view.last_action.move.tile.low, view.last_action.move.tile.high = low, high
    view.last_action.move.end = game_pb2.END_RIGHT


def test_the_journal_keeps_this_rounds_moves_and_every_rounds_result() -> None:
    journal = Journal()
    view = make_view(round_number=1)
    played(view, 0, 6, 6, 10)
    journal.record(view)
    journal.record(view)  # the same version twice counts once
    played(view, 1, 3, 6, 11)
    journal.record(view)
    assert [m.seat for m in journal.moves] == [0, 1]
    assert journal.newest_play() == view.last_action.move

    over = make_view(round_number=1, version=12, phase=game_pb2.PHASE_ROUND_OVER)
    over.score_team_b = 17
    over.last_round.CopyFrom(
        game_pb2.RoundSummary(
            round_number=1,
            outcome=game_pb2.ROUND_OUTCOME_BLOCKED,
            scoring_team=game_pb2.TEAM_B,
            points=17,
        )
    )
    journal.record(over)
    next_round = make_view(round_number=2, version=13)
    journal.record(next_round)
    assert journal.moves == [] and journal.newest_play() is None
    lines = history_lines(journal, next_round, "fr", height=10)
    assert lines == [
        "Manches jouées",
        "Manche 1 · équipe B +17 (bloquée) · A 0 · B 17",
        "Coups de la manche 2",
        "(aucun coup vu depuis votre arrivée)",
    ]


def test_the_history_keeps_the_newest_moves_when_they_do_not_all_fit() -> None:
    journal = Journal()
    view = make_view(round_number=1)
    for version, seat in enumerate((0, 1, 2, 3, 0, 1), start=10):
        played(view, seat, 1, 2, version)
        journal.record(view)
    lines = history_lines(journal, view, "en", height=5)
    assert lines[:3] == ["Rounds played", "(no round over yet)", "Moves of round 1"]
    assert lines[3:] == ["Ann laid [1|2] on the right.", "Bob laid [1|2] on the right."]
    assert len(lines) == 5


def test_the_history_lists_what_robots_and_the_friendly_end_did_among_the_moves() -> None:
    journal = Journal()
    view = make_view(round_number=1)
    played(view, 0, 6, 6, 10)
    journal.record(view)
    view.version = 11
    view.last_action.CopyFrom(
        game_pb2.LastAction(
            kind=game_pb2.ACTION_KIND_HANDED_OVER, seat=1, robot=game_pb2.ROBOT_LEVEL_SOLID
        )
    )
    journal.record(view)
    view.version = 12
    view.last_action.CopyFrom(game_pb2.LastAction(kind=game_pb2.ACTION_KIND_END_PROPOSED, seat=2))
    journal.record(view)
    view.version = 13
    view.last_action.CopyFrom(game_pb2.LastAction(kind=game_pb2.ACTION_KIND_PRESENCE, seat=3))
    journal.record(view)  # a presence change is no news
    lines = history_lines(journal, view, "fr", height=10)
    assert lines[3:] == [
        "Ann a posé [6|6] à droite.",
        "Bob est parti : un robot solide joue à sa place.",
        "Cid propose de finir la partie à l'amiable, sans vainqueur.",
    ]
