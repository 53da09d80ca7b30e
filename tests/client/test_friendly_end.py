"""The friendly end in words (services/client/friendly_end.py): the key at a table that
offers it, the vote while it runs (who proposed, who agreed, who is still to answer, the
keys for a seat it waits for), once a round, and how a vote closed."""

from __future__ import annotations

from dominos.v1 import game_pb2

from services.client.friendly_end import (
    can_answer,
    friendly_end_offered,
    proposed_this_round,
    vote_closed_text,
    vote_lines,
    vote_open,
)
from services.client.texts import ui
from tests.client.views import make_view


def voting(proposer: int, accepted: list[int], waiting: list[int]) -> game_pb2.TableView:
    """A four-seat table (seat 0's view) whose host chose the friendly end, a vote open."""
    view = make_view(turn_seat=1)
    view.options.friendly_end = True
    view.vote.CopyFrom(
        game_pb2.FriendlyEndVote(
            proposer=proposer, accepted=accepted, waiting=waiting, deadline_ms=9_000
        )
    )
    return view


def test_the_key_is_offered_only_at_a_table_whose_host_chose_the_friendly_end() -> None:
    view = make_view()
    assert not friendly_end_offered(view) and vote_lines(view, "fr") == []
    view.options.friendly_end = True
    assert friendly_end_offered(view)
    assert vote_lines(view, "fr") == [ui("friendly_end_hint", "fr")]
    assert vote_lines(view, "en")[0].startswith("F: propose to end the game by consent")
    view.phase = game_pb2.PHASE_FINISHED
    assert vote_lines(view, "fr") == []  # nothing left to end


def test_the_vote_says_who_proposed_who_agreed_who_is_awaited_and_the_keys() -> None:
    view = voting(proposer=1, accepted=[1, 2], waiting=[0, 3])
    assert vote_open(view) and can_answer(view)
    assert vote_lines(view, "fr") == [
        "Fin amiable proposée par Bob · d'accord : Cid · on attend : vous et Dee",
        "O : accepter (fin sans vainqueur) · N : refuser",
    ]
    assert vote_lines(view, "en") == [
        "Friendly end proposed by Bob · agreed: Cid · waiting for: you and Dee",
        "Y: accept (ends unscored) · N: refuse",
    ]


def test_a_seat_that_proposed_or_agreed_waits_for_the_others() -> None:
    view = voting(proposer=0, accepted=[0], waiting=[1, 2])
    assert not can_answer(view)
    assert vote_lines(view, "fr") == [
        "Fin amiable proposée par vous · on attend : Bob et Cid",
        "Vous avez accepté : on attend les autres.",
    ]


def test_how_a_vote_closed() -> None:
    ended = game_pb2.LastAction(vote_outcome=game_pb2.VOTE_OUTCOME_ENDED)
    refused = game_pb2.LastAction(vote_outcome=game_pb2.VOTE_OUTCOME_REFUSED)
    expired = game_pb2.LastAction(vote_outcome=game_pb2.VOTE_OUTCOME_EXPIRED)
    assert vote_closed_text(ended, "", "fr") == (
        "Tout le monde est d'accord : la partie s'arrête, sans vainqueur."
    )
    assert vote_closed_text(ended, "", "en") == "Everyone agreed: the game ends, unscored."
    assert vote_closed_text(refused, "Bob", "fr") == (
        "Bob refuse de finir la partie : elle reprend."
    )
    assert vote_closed_text(refused, "Bob", "en") == "Bob refused to end the game: it resumes."
    assert vote_closed_text(expired, "", "fr") == (
        "Le temps du vote est écoulé : la partie reprend."
    )
    assert vote_closed_text(expired, "", "en") == "The vote ran out of time: the game resumes."


def test_a_seat_proposes_once_a_round() -> None:
    view = make_view()
    view.options.friendly_end = True
    mine = game_pb2.LastAction(kind=game_pb2.ACTION_KIND_END_PROPOSED, seat=0)
    theirs = game_pb2.LastAction(kind=game_pb2.ACTION_KIND_END_PROPOSED, seat=1)
    assert not proposed_this_round(view, [theirs])
    assert proposed_this_round(view, [theirs, mine])
    assert vote_lines(view, "fr", proposed=True) == [
        "Fin amiable déjà proposée dans cette manche : F de nouveau à la suivante."
    ]
    assert vote_lines(view, "en", proposed=True) == [
        "Friendly end already proposed this round: F again from the next one."
    ]
