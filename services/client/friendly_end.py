"""The friendly end (the site's game, issue 20) in words: whether the table offers it, the
key that proposes it, the vote while it runs (who proposed, who agreed, who is still to
answer, the keys to answer; its time left is on the turn line, see
:func:`services.client.countdown.turn_text`), and how a vote closed.

While a vote is open the game is paused: no move, no turn clock; ``TableView.vote`` says
where it stands. Robots do not vote.
"""

from __future__ import annotations

from collections.abc import Iterable

from dominos.v1 import game_pb2

from services.client.teams import seat_name
from services.client.texts import Lang, labelled, ui
from services.client.words import join_words

__all__ = [
    "can_answer",
    "friendly_end_offered",
    "proposed_this_round",
    "vote_closed_text",
    "vote_lines",
    "vote_open",
]

_RUNNING = (game_pb2.PHASE_PLAYING, game_pb2.PHASE_ROUND_OVER)


def friendly_end_offered(view: game_pb2.TableView) -> bool:
    """Whether the host chose the friendly end and the game runs (it may be proposed)."""
    return view.options.friendly_end and view.phase in _RUNNING


def vote_open(view: game_pb2.TableView) -> bool:
    """Whether a friendly-end vote is open (the game is paused meanwhile)."""
    return view.HasField("vote") and view.phase in _RUNNING


def can_answer(view: game_pb2.TableView) -> bool:
    """Whether the open vote waits for this seat's answer."""
    return vote_open(view) and view.your_seat in view.vote.waiting


def proposed_this_round(view: game_pb2.TableView, seen: Iterable[game_pb2.LastAction]) -> bool:
    """Whether this seat proposed the friendly end this round (its break included), by what
    the client ``seen`` of it (the round's actions): a seat proposes once a round."""
    return any(
        action.kind == game_pb2.ACTION_KIND_END_PROPOSED
        and action.HasField("seat")
        and action.seat == view.your_seat
        for action in seen
    )


def _who(view: game_pb2.TableView, seats: list[int], lang: Lang) -> str:
    """Seats by name, this seat as "vous" / "you": ``"Bob et vous"``."""
    you = ui("you", lang)
    return join_words([you if s == view.your_seat else seat_name(view, s) for s in seats], lang)


def vote_lines(view: game_pb2.TableView, lang: Lang, *, proposed: bool = False) -> list[str]:
    """The open vote, for the game screen (its time left is on the turn line): who proposed,
    who else agreed and who is still to answer; then the keys when it waits for this seat,
    or that it waits for the others. Without a vote: the key that proposes one at a table
    that offers it (once a round: ``proposed``, this seat already did this round), else
    ``[]``.

    e.g. ``["Fin amiable proposée par Bob · d'accord : Cid · on attend : vous et Dee",
    "O : accepter (fin sans vainqueur) · N : refuser"]``."""
    if not vote_open(view):
        if not friendly_end_offered(view):
            return []
        return [ui("friendly_end_proposed" if proposed else "friendly_end_hint", lang)]
    vote = view.vote
    proposer = _who(view, [vote.proposer], lang)
    fr = lang == "fr"
    parts = [
        f"Fin amiable proposée par {proposer}" if fr else f"Friendly end proposed by {proposer}"
    ]
    others = [seat for seat in vote.accepted if seat != vote.proposer]
    if others:
        parts.append(labelled("d'accord" if fr else "agreed", _who(view, others, lang), lang))
    if vote.waiting:
        waiting = "on attend" if fr else "waiting for"
        parts.append(labelled(waiting, _who(view, list(vote.waiting), lang), lang))
    keys = ui("vote_keys" if can_answer(view) else "vote_waiting", lang)
    return [" · ".join(parts), keys]


def vote_closed_text(action: game_pb2.LastAction, name: str, lang: Lang) -> str:
    """How a vote closed (``VOTE_CLOSED``): every human agreed (the game ends, unscored), a
    seat (``name``) refused, or the time ran out (the game resumes)."""
    outcome = action.vote_outcome
    if outcome == game_pb2.VOTE_OUTCOME_ENDED:
        if lang == "fr":
            return "Tout le monde est d'accord : la partie s'arrête, sans vainqueur."
        return "Everyone agreed: the game ends, unscored."
    if outcome == game_pb2.VOTE_OUTCOME_REFUSED:
        if lang == "fr":
            return f"{name} refuse de finir la partie : elle reprend."
        return f"{name} refused to end the game: it resumes."
    if lang == "fr":
        return "Le temps du vote est écoulé : la partie reprend."
    return "The vote ran out of time: the game resumes."
