"""What a client saw of the game (:class:`Journal`: the moves of the current round, draws
included, with what robots and the friendly end did, and the result of every finished round)
and the history panel drawn from it."""

from __future__ import annotations

from dataclasses import dataclass, field

from dominos.v1 import game_pb2

from services.client.fives import is_fives
from services.client.last_action import last_action_text
from services.client.rule_sets import has_teams, side_scores
from services.client.teams import seat_name, team_label
from services.client.texts import Lang, ui

__all__ = ["Journal", "RoundResult", "history_lines", "move_line", "round_result_line"]


@dataclass(frozen=True)
class RoundResult:
    """A finished round as the history lists it."""

    number: int
    scoring_team: int
    points: int
    score_a: int
    score_b: int
    blocked: bool
    #: Without teams: the scoring seat (None: nobody scored), every seat's score and name.
    teams: bool = True
    scoring_side: int | None = None
    scores: tuple[int, ...] = field(default=())
    names: tuple[str, ...] = field(default=())
    #: Under all fives: the round's points before rounding to the nearest 5 (else None).
    unrounded: int | None = None


#: What the history lists: the moves, and what robots and the friendly end did (issue 20).
_MOVES = (
    game_pb2.ACTION_KIND_PLAYED, game_pb2.ACTION_KIND_PASSED, game_pb2.ACTION_KIND_DREW,
    game_pb2.ACTION_KIND_ROBOT_SEATED, game_pb2.ACTION_KIND_HANDED_OVER,
    game_pb2.ACTION_KIND_END_PROPOSED, game_pb2.ACTION_KIND_END_ACCEPTED,
    game_pb2.ACTION_KIND_VOTE_CLOSED,
)  # fmt: skip


class Journal:
    """What a client saw of the game: the moves of the current round (each view's
    ``last_action``, in version order, once per version) and the result of every finished
    round. A client that arrived or came back mid-game knows what it saw since."""

    def __init__(self) -> None:
        self.round_number = 0
        self.moves: list[game_pb2.LastAction] = []
        self.rounds: dict[int, RoundResult] = {}
        self._version = 0

    def record(self, view: game_pb2.TableView) -> None:
        """Take in a view (older or repeated versions are ignored)."""
        if view.version <= self._version:
            return
        self._version = view.version
        if view.round_number != self.round_number:
            self.round_number = view.round_number
            self.moves = []
        action = view.last_action
        previous = self.moves[-1] if self.moves else None
        if (
            action.kind == game_pb2.ACTION_KIND_DREW
            and previous is not None
            and previous.kind == game_pb2.ACTION_KIND_DREW
            and previous.seat == action.seat
        ):
            previous.drawn += max(1, action.drawn)  # one seat's draws in a row: one line
        elif action.kind in _MOVES:
            copy = game_pb2.LastAction()
            copy.CopyFrom(action)
            self.moves.append(copy)
        if view.HasField("last_round"):
            summary = view.last_round
            seats = range(len(view.seats))
            self.rounds[summary.round_number] = RoundResult(
                summary.round_number,
                summary.scoring_team,
                summary.points,
                view.score_team_a,
                view.score_team_b,
                summary.outcome != game_pb2.ROUND_OUTCOME_DOMINO,
                teams=has_teams(view),
                scoring_side=summary.scoring_side if summary.HasField("scoring_side") else None,
                scores=tuple(side_scores(view)),
                names=tuple(seat_name(view, s) for s in seats),
                unrounded=summary.unrounded_points if is_fives(view) else None,
            )

    def shown_action(self, view: game_pb2.TableView) -> game_pb2.LastAction:
        """The view's last action as the game screen says it: a seat's draws in a row count
        together ("Ben a pioché 3 dominos")."""
        action = view.last_action
        if action.kind == game_pb2.ACTION_KIND_DREW and self.moves:
            newest = self.moves[-1]
            if newest.kind == game_pb2.ACTION_KIND_DREW and newest.seat == action.seat:
                return newest
        return action

    def newest_play(self) -> game_pb2.Move | None:
        """The move of the newest tile laid this round, or None."""
        for action in reversed(self.moves):
            if action.kind == game_pb2.ACTION_KIND_PLAYED:
                return action.move
        return None


def move_line(view: game_pb2.TableView, action: game_pb2.LastAction, lang: Lang) -> str:
    """One move of the history, as :func:`last_action_text` says it."""
    shown = game_pb2.TableView()
    shown.CopyFrom(view)
    shown.last_action.CopyFrom(action)
    return last_action_text(shown, lang)


def round_result_line(result: RoundResult, lang: Lang) -> str:
    """``"Manche 2 · équipe B +17 (bloquée) · A 40 · B 37"`` / ``"Round 2 · team B +17 …"``;
    under all fives with the points before rounding: ``"Ana +20 (18 arrondis à 20)"``."""
    word = "Manche" if lang == "fr" else "Round"
    how = ""
    if result.blocked:
        how = " (bloquée)" if lang == "fr" else " (blocked)"
    if result.unrounded is not None and result.unrounded != result.points:
        raw = result.unrounded
        rounded = f"arrondi{'s' if raw > 1 else ''} à" if lang == "fr" else "rounded to"
        how += f" ({raw} {rounded} {result.points})"
    if not result.teams:
        if result.scoring_side is None:
            scorer = "personne ne marque" if lang == "fr" else "nobody scores"
        else:
            scorer = f"{_name(result, result.scoring_side)} +{result.points}"
        scores = " · ".join(
            f"{_name(result, side)} {score}" for side, score in enumerate(result.scores)
        )
        return f"{word} {result.number} · {scorer}{how} · {scores}"
    return (
        f"{word} {result.number} · {team_label(result.scoring_team, lang)} +{result.points}"
        f"{how} · A {result.score_a} · B {result.score_b}"
    )


def _name(result: RoundResult, seat: int) -> str:
    return result.names[seat] if seat < len(result.names) else f"#{seat}"


def history_lines(journal: Journal, view: game_pb2.TableView, lang: Lang, height: int) -> list[str]:
    """The history panel in at most ``height`` lines: the rounds played (newest last), then
    the moves of the current round, the newest kept when they do not all fit."""
    rounds = [round_result_line(r, lang) for _, r in sorted(journal.rounds.items())]
    rounds = rounds or [ui("rounds_empty", lang)]
    rounds = rounds[-max(1, height // 3) :]
    head = [ui("rounds_title", lang), *rounds, ui("history_title", lang, n=view.round_number)]
    moves = [move_line(view, a, lang) for a in journal.moves] or [ui("history_empty", lang)]
    room = max(1, height - len(head))
    return head + moves[-room:]
