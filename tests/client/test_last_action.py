"""What just happened (services/client/last_action.py): a pass in words (R10), auto-play."""

from __future__ import annotations

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
