"""What just happened, in one sentence: a tile laid (and on which end; under all fives the
points it scored at once), a pass in words (R10),
tiles drawn from the stock (how many, never which), a deal; says when the table played for
the seat (R11, S3); a robot seated or standing in for a player who dropped, a friendly end
proposed, accepted, and how its vote closed (issue 20)."""

from __future__ import annotations

from dominos.v1 import game_pb2

from services.client.fives import end_place, scored_text
from services.client.friendly_end import vote_closed_text
from services.client.robots import a_robot, clock_time, robot_label
from services.client.teams import seat_name
from services.client.texts import Lang
from services.client.tiles import tile_text
from services.client.words import join_words, number_word

__all__ = ["drawn_words", "last_action_text", "robot_action_text"]


def drawn_words(count: int, lang: Lang) -> str:
    """How many tiles a seat drew, never which: ``"a pioché 2 dominos"`` / ``"drew 2 tiles"``
    (one: ``"a pioché un domino"`` / ``"drew a tile"``)."""
    count = max(1, count)
    if lang == "fr":
        return "a pioché un domino" if count == 1 else f"a pioché {count} dominos"
    return "drew a tile" if count == 1 else f"drew {count} tiles"


def last_action_text(view: game_pb2.TableView, lang: Lang) -> str:
    """What just happened, for the game screen: a tile laid (and on which end), a pass (in
    words, R10), tiles drawn (how many: "Ben a pioché 2 dominos"), a deal; says when the
    table played for the seat (R11, S3); robots and the friendly end (see
    :func:`robot_action_text`). ``""`` for changes that need no sentence (presence,
    lobby)."""
    action = view.last_action
    seat = action.seat if action.HasField("seat") else None
    name = seat_name(view, seat) if seat is not None else ""
    auto = ""
    if action.auto_play == game_pb2.AUTO_PLAY_CAUSE_TIMEOUT:
        auto = (
            " (temps écoulé : joué par la table)"
            if lang == "fr"
            else " (time out: the table played)"
        )
    elif action.auto_play == game_pb2.AUTO_PLAY_CAUSE_AWAY:
        auto = " (absent : joué par la table)" if lang == "fr" else " (away: the table played)"
    if action.kind == game_pb2.ACTION_KIND_PLAYED:
        tile = tile_text(action.move.tile.low, action.move.tile.high)
        where = end_place(action.move.end, lang)
        scored = scored_text(view, action, lang)
        laid = f"{name} a posé" if lang == "fr" else f"{name} laid"
        return f"{laid} {tile} {where}{auto}." + (f" {scored}" if scored else "")
    if action.kind == game_pb2.ACTION_KIND_PASSED:
        words = join_words(
            [number_word(n, lang) for n in sorted(set(action.passed_on), reverse=True)], lang
        )
        if lang == "fr":
            return f"{name} a passé sur {words}{auto}."
        return f"{name} passed on {words}{auto}."
    if action.kind == game_pb2.ACTION_KIND_DREW:
        return f"{name} {drawn_words(action.drawn, lang)}{auto}."
    if action.kind == game_pb2.ACTION_KIND_ROUND_DEALT:
        opener = seat_name(view, view.opener_seat)
        if lang == "fr":
            return f"Nouvelle donne : {opener} ouvre la manche {view.round_number}."
        return f"New deal: {opener} opens round {view.round_number}."
    return robot_action_text(view, action, name, lang)


def robot_action_text(
    view: game_pb2.TableView, action: game_pb2.LastAction, name: str, lang: Lang
) -> str:
    """The actions of issue 20 in words (``name``: the seat's): a robot takes a seat (before
    the first deal), or keeps it for good (its player did not come back in time); a robot
    plays for a player who dropped, until when they may come back; a friendly end proposed,
    accepted, and how its vote closed. ``""`` for other actions."""
    fr = lang == "fr"
    kind = action.kind
    if kind == game_pb2.ACTION_KIND_ROBOT_SEATED:
        if not view.round_number:  # a practice table, or an early start
            robot = robot_label(action.robot, lang)
            return f"{name} ({robot}) prend place." if fr else f"{name} ({robot}) takes a seat."
        robot = a_robot(action.robot, lang)
        if fr:
            return f"{name} n'est pas revenu à temps : {robot} garde sa place."
        return f"{name} did not come back in time: {robot} keeps the seat."
    if kind == game_pb2.ACTION_KIND_HANDED_OVER:
        robot = a_robot(action.robot, lang)
        until = clock_time(action.until_ms) if action.until_ms > 0 else ""
        if fr:
            back = f" (retour possible jusqu'à {until})" if until else ""
            return f"{name} est parti : {robot} joue à sa place{back}."
        back = f" (they may come back until {until})" if until else ""
        return f"{name} dropped: {robot} plays for them{back}."
    if kind == game_pb2.ACTION_KIND_END_PROPOSED:
        if fr:
            return f"{name} propose de finir la partie à l'amiable, sans vainqueur."
        return f"{name} proposes to end the game by consent, unscored."
    if kind == game_pb2.ACTION_KIND_END_ACCEPTED:
        return f"{name} accepte de finir la partie." if fr else f"{name} agrees to end the game."
    if kind == game_pb2.ACTION_KIND_VOTE_CLOSED:
        return vote_closed_text(action, name, lang)
    return ""
