"""What just happened (services/client/last_action.py): a pass in words (R10), auto-play;
robots seated or standing in, the friendly end proposed, accepted and its vote closed."""

from __future__ import annotations

import time

import pytest
from dominos.v1 import game_pb2

from services.client.last_action import last_action_text
from tests.client.views import make_view


def test_a_pass_as_last_action_is_said_in_words() -> None:
    view = make_view()
    view.last_action.CopyFrom(
        game_pb2.LastAction(
            kind=game_pb2.ACTION_KIND_PASSED,
            seat=3,
            passed_on=[2, 5],
            auto_play=game_pb2.AUTO_PLAY_CAUSE_TIMEOUT,
        )
    )
    assert last_action_text(view, "fr") == (
        "Dee a passé sur cinq et deux (temps écoulé : joué par la table)."
    )
    assert last_action_text(view, "en") == (
        "Dee passed on five and two (time out: the table played)."
    )


AT_14_32 = int(time.mktime((2024, 5, 17, 14, 32, 0, 0, 0, -1)) * 1000)


def action(kind: int, seat: int | None = None, **fields: object) -> game_pb2.TableView:
    """A mid-game view (round 2) whose last action is ``kind`` by ``seat``."""
    view = make_view()
    view.last_action.CopyFrom(game_pb2.LastAction(kind=kind, **fields))  # type: ignore[arg-type]
    if seat is not None:
        view.last_action.seat = seat
    return view


@pytest.mark.parametrize(
    ("view", "french", "english"),
    [
        (
            action(game_pb2.ACTION_KIND_ROBOT_SEATED, 1, robot=game_pb2.ROBOT_LEVEL_STRONG),
            "Bob n'est pas revenu à temps : un robot fort garde sa place.",
            "Bob did not come back in time: a strong robot keeps the seat.",
        ),
        (
            action(
                game_pb2.ACTION_KIND_HANDED_OVER,
                3,
                robot=game_pb2.ROBOT_LEVEL_SOLID,
                until_ms=AT_14_32,
            ),
            "Dee est parti : un robot solide joue à sa place (retour possible jusqu'à 14:32).",
            "Dee dropped: a solid robot plays for them (they may come back until 14:32).",
        ),
        (
            action(game_pb2.ACTION_KIND_END_PROPOSED, 2, until_ms=AT_14_32),
            "Cid propose de finir la partie à l'amiable, sans vainqueur.",
            "Cid proposes to end the game by consent, unscored.",
        ),
        (
            action(game_pb2.ACTION_KIND_END_ACCEPTED, 1),
            "Bob accepte de finir la partie.",
            "Bob agrees to end the game.",
        ),
        (
            action(game_pb2.ACTION_KIND_VOTE_CLOSED, 3, vote_outcome=game_pb2.VOTE_OUTCOME_REFUSED),
            "Dee refuse de finir la partie : elle reprend.",
            "Dee refused to end the game: it resumes.",
        ),
        (
            action(game_pb2.ACTION_KIND_VOTE_CLOSED, vote_outcome=game_pb2.VOTE_OUTCOME_EXPIRED),
            "Le temps du vote est écoulé : la partie reprend.",
            "The vote ran out of time: the game resumes.",
        ),
    ],
)
def test_robots_and_the_friendly_end_as_last_action_in_both_languages(
    view: game_pb2.TableView, french: str, english: str
) -> None:
    assert last_action_text(view, "fr") == french
    assert last_action_text(view, "en") == english


def test_a_robot_seated_before_the_first_deal_takes_a_seat() -> None:
    view = make_view(phase=game_pb2.PHASE_WAITING, round_number=0)
    view.seats[2].name = "Robot 3"
    view.seats[2].robot = game_pb2.ROBOT_LEVEL_BEGINNER
    view.last_action.CopyFrom(
        game_pb2.LastAction(
            kind=game_pb2.ACTION_KIND_ROBOT_SEATED, seat=2, robot=game_pb2.ROBOT_LEVEL_BEGINNER
        )
    )
    assert last_action_text(view, "fr") == "Robot 3 (robot débutant) prend place."
    assert last_action_text(view, "en") == "Robot 3 (beginner robot) takes a seat."
