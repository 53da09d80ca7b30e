"""Everything the reference client says, as pure functions of a ``TableView`` (no I/O, no clock).

The terminal client (:mod:`services.client.tui`) and the demo (:mod:`services.client.bots`)
turn views into words with these functions only, so what a player reads is unit-tested
without a terminal or a cluster. Two languages: French (``"fr"``, the product's language and
the default) and English (``"en"``).

- Numbers are said as dominoes players say them: 0 is *blanc* / *blank*, then *un* … *six*.
- Passes (R10) read like the FAQ, « A passé sur cinq et deux »: the numbers a seat passed on
  during the round, **highest first** (the view lists them ascending, the FAQ's example says
  the higher number first), joined with commas and a final *et* / *and*.
- The countdown (R11) is computed from the view's ``turn_deadline_ms - server_time_ms``
  minus the time elapsed locally since the view was received (monotonic clock), so a skewed
  client clock does not matter; it never goes below zero.
- Round summaries (D1) say how the round ended and why the scoring team scored, and spell
  out the tie rule (R14) when it applied.
- Names, codes and the server's messages are copied into the sentences as they are, unescaped:
  every function returns plain text, never markup, and whoever shows it must not parse it
  (the terminal client's widgets never do, see :class:`services.client.tui.Plain`).
"""

from __future__ import annotations

import math
import textwrap
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, Literal

from dominos.v1 import game_pb2

__all__ = [
    "LANGS",
    "HandItem",
    "Lang",
    "chain_text",
    "ends_text",
    "format_countdown",
    "hand_items",
    "header_text",
    "join_words",
    "labelled",
    "last_action_text",
    "lobby_lines",
    "number_word",
    "passes_in_words",
    "phase_text",
    "remaining_seconds",
    "round_line",
    "round_summary_lines",
    "seat_line",
    "seat_team",
    "team_label",
    "team_members",
    "tile_text",
    "turn_text",
    "ui",
    "winner_text",
]

Lang = Literal["fr", "en"]
LANGS: Final[tuple[Lang, ...]] = ("fr", "en")

_NUMBERS: Final[dict[str, tuple[str, ...]]] = {
    "fr": ("blanc", "un", "deux", "trois", "quatre", "cinq", "six"),
    "en": ("blank", "one", "two", "three", "four", "five", "six"),
}

#: The sentence for each error reason of the contract (``ErrorReason`` without its prefix) and
#: for the failures that carry none (keys in lower case: the gRPC code's name), as
#: ``(French, English)``; see :func:`error_text`.
_ERRORS: Final[dict[str, tuple[str, str]]] = {
    "TARGET_INVALID": (
        "L'objectif va de 50 à 500 points, par pas de 50.",
        "The target is 50 to 500 points, in steps of 50.",
    ),
    "ID_MALFORMED": (
        "Ce code d'invitation n'est pas valable : il a 10 caractères, lettres et chiffres.",
        "That invitation code is not valid: it has 10 characters, letters and digits.",
    ),
    "TOKEN_INVALID": (
        "Votre place à cette table n'est plus valable : vous l'avez quittée, ou l'hôte a "
        "fermé la table.",
        "Your seat at this table is no longer valid: you left it, or the host closed the table.",
    ),
    "NOT_HOST": ("Seul l'hôte peut faire cela.", "Only the host can do that."),
    "TABLE_NOT_FOUND": ("Cette table n'existe plus.", "This table no longer exists."),
    "CODE_NOT_FOUND": (
        "Aucune table ouverte n'a ce code : vérifiez-le.",
        "No open table has this code: check it.",
    ),
    "TABLE_FULL": (
        "Cette table a déjà quatre joueurs.",
        "This table already has four players.",
    ),
    "GAME_ALREADY_STARTED": (
        "La partie a déjà commencé à cette table.",
        "The game has already started at this table.",
    ),
    "NOT_ENOUGH_PLAYERS": (
        "Il faut quatre joueurs assis pour lancer la partie.",
        "Four players must be seated to start the game.",
    ),
    "ROUND_NOT_IN_PLAY": (
        "Aucune manche n'est en cours : attendez la prochaine donne.",
        "No round is in play: wait for the next deal.",
    ),
    "TILE_NOT_IN_HAND": (
        "Ce domino n'est plus dans votre main.",
        "That tile is no longer in your hand.",
    ),
    "GAME_OVER": ("La partie est terminée.", "The game is over."),
    "VERSION_CONFLICT": (
        "La table a changé entre-temps : regardez-la et rejouez.",
        "The table changed meanwhile: look at it and play again.",
    ),
    "REQUEST_ID_REUSED": (
        "Cette demande a déjà servi : recommencez.",
        "That request was already used: try again.",
    ),
    "STREAM_REPLACED": (
        "Cette place est suivie dans une autre fenêtre : celle-ci ne reçoit plus la partie.",
        "This seat is followed in another window: this one no longer receives the game.",
    ),
    "RATE_LIMITED": (
        "Trop de demandes : réessayez dans {seconds} s.",
        "Too many requests: try again in {seconds} s.",
    ),
    "client_bug": (
        "Le serveur ne comprend pas la demande de ce client : mettez le client à jour.",
        "The server does not understand this client's request: update the client.",
    ),
    "unavailable": (
        "Le serveur ne répond pas : vérifiez votre connexion et l'adresse du serveur, puis "
        "réessayez.",
        "The server does not answer: check your connection and the server's address, then "
        "try again.",
    ),
    "cancelled": (
        "La connexion a été interrompue : réessayez.",
        "The connection was interrupted: try again.",
    ),
    "unexpected": (
        "Le serveur a refusé la demande pour une raison inattendue : réessayez.",
        "The server refused the request for an unexpected reason: try again.",
    ),
}

#: Reasons that only a faulty client (or server) produces: one sentence for all of them.
_CLIENT_BUGS: Final = frozenset(
    {
        "REQUEST_ID_MALFORMED",
        "TILE_MALFORMED",
        "END_MALFORMED",
        "COMMAND_MISSING",
        "TOKEN_MISSING",
        "TIMER_STALE",
    }
)

#: Reasons whose sentence is an older interface string (same words wherever they show).
_REASON_KEYS: Final = {
    "MUST_PLAY": "must_play",
    "NOT_YOUR_TURN": "not_your_turn",
    "TILE_DOES_NOT_FIT": "does_not_fit",
    "NAME_INVALID": "name_invalid",
    "NAME_TAKEN": "name_taken",
}

#: gRPC codes (by name) of failures without a reason: the network or the server is away.
_CONNECTION_CODES: Final = frozenset({"UNAVAILABLE", "DEADLINE_EXCEEDED"})

_UI: Final[dict[str, dict[str, str]]] = {
    "title": {"fr": "Dominos", "en": "Dominos"},
    "your_name": {"fr": "Votre nom", "en": "Your name"},
    "target": {"fr": "Objectif", "en": "Target"},
    "create": {"fr": "Créer une table", "en": "Create a table"},
    "code": {"fr": "Code d'invitation", "en": "Invitation code"},
    "join": {"fr": "Rejoindre", "en": "Join"},
    "start": {"fr": "Lancer la partie", "en": "Start the game"},
    "pass": {"fr": "Passer (P)", "en": "Pass (P)"},
    "hand": {"fr": "Main", "en": "Hand"},
    "chain": {"fr": "Chaîne", "en": "Chain"},
    "empty_chain": {
        "fr": "(vide : le premier domino peut être n'importe lequel)",
        "en": "(empty: the first tile may be any tile)",
    },
    "keys": {
        "fr": "←→ 1-7 choisir · G/D gauche/droite · P passer · H historique · Q quitter",
        "en": "←→ 1-7 select · L/R play left/right · P pass · H history · Q quit",
    },
    "must_play": {
        "fr": "Vous pouvez poser : on ne passe que si rien ne va.",
        "en": "You can play: passing is allowed only when nothing fits.",
    },
    "not_your_turn": {"fr": "Ce n'est pas votre tour.", "en": "It is not your turn."},
    "does_not_fit": {
        "fr": "Ce domino ne va pas sur ce bout.",
        "en": "That tile does not fit that end.",
    },
    "pick_end": {
        "fr": "Ce domino va des deux côtés : G (gauche) ou D (droite) ?",
        "en": "That tile fits both ends: L (left) or R (right)?",
    },
    **{key: {"fr": fr, "en": en} for key, (fr, en) in _ERRORS.items()},
    "name_invalid": {
        "fr": "Un nom a de 1 à 24 caractères, dont au moins un visible.",
        "en": "A name has 1 to 24 characters, at least one of them visible.",
    },
    "name_taken": {
        "fr": "Ce nom ressemble trop à celui d'un joueur déjà assis : choisissez-en un autre.",
        "en": "That name looks like the name of a player already seated: choose another one.",
    },
    "reconnecting": {
        "fr": "Connexion perdue, nouvel essai dans {delay} s…",
        "en": "Connection lost, retrying in {delay} s…",
    },
    "resumed": {
        "fr": "Vous reprenez votre place {seat} de la table {code}.",
        "en": "You are back in your seat {seat} at table {code}.",
    },
    "no_saved_seat": {
        "fr": "Aucune place enregistrée pour le code {code} sur cet ordinateur.",
        "en": "No seat is saved for code {code} on this computer.",
    },
    "connected": {"fr": "Connecté", "en": "Connected"},
    "lobby_waiting": {
        "fr": "En attente de joueurs : {n}/4 assis.",
        "en": "Waiting for players: {n}/4 seated.",
    },
    "lobby_ready": {
        "fr": "Quatre joueurs : l'hôte peut lancer la partie.",
        "en": "Four players: the host can start the game.",
    },
    "lobby_host_keys": {
        "fr": "+/- : changer l'objectif · S : lancer (à quatre) · Q : quitter",
        "en": "+/-: change the target · S: start (with four) · Q: quit",
    },
    "lobby_guest": {
        "fr": "L'hôte lancera la partie quand vous serez quatre. Q : quitter",
        "en": "The host will start the game once four are seated. Q: quit",
    },
    "start_keys": {
        "fr": "Tab : champ suivant · Entrée : valider · Ctrl+C : quitter",
        "en": "Tab: next field · Enter: confirm · Ctrl+C: quit",
    },
    "saved_title": {
        "fr": "Vos parties en cours (↑/↓ puis Entrée pour reprendre) :",
        "en": "Your unfinished games (↑/↓ then Enter to resume):",
    },
    "seat_forgotten": {
        "fr": "La place de la table {code} n'est plus valable (table fermée, partie finie ou "
        "place libérée) : elle est oubliée.",
        "en": "Your seat at table {code} is no longer valid (table closed, game over or seat "
        "freed): it is forgotten.",
    },
    "quit_game": {
        "fr": "Quitter la partie ? Votre place reste à vous : la table joue pour vous en "
        "attendant votre retour. Pour revenir :\n{command}",
        "en": "Quit the game? Your seat stays yours: the table plays for you until you come "
        "back. To come back:\n{command}",
    },
    "quit_lobby": {
        "fr": "Quitter la table ? Votre place sera libérée pour un autre joueur.",
        "en": "Leave the table? Your seat will be freed for another player.",
    },
    "quit_lobby_host": {
        "fr": "Vous êtes l'hôte : si vous partez, la table est fermée pour tous les joueurs. "
        "Quitter quand même ?",
        "en": "You are the host: if you leave, the table is closed for every player. Leave anyway?",
    },
    "quit_keys": {
        "fr": "O ou Entrée : quitter · N ou Échap : rester",
        "en": "Y or Enter: quit · N or Escape: stay",
    },
    "come_back": {
        "fr": "Votre place vous attend (la table joue pour vous) : {command}",
        "en": "Your seat is waiting (the table plays for you): {command}",
    },
    "start_needs_four": {
        "fr": "Il faut quatre joueurs pour lancer la partie : {n}/4 assis.",
        "en": "Four players are needed to start the game: {n}/4 seated.",
    },
    "start_host_only": {
        "fr": "Seul l'hôte peut lancer la partie.",
        "en": "Only the host can start the game.",
    },
    "round_not_in_play": {
        "fr": "Aucune manche n'est en cours : attendez la prochaine donne.",
        "en": "No round is in play: wait for the next deal.",
    },
    "history_title": {"fr": "Coups de la manche {n}", "en": "Moves of round {n}"},
    "history_empty": {
        "fr": "(aucun coup vu depuis votre arrivée)",
        "en": "(no move seen since you arrived)",
    },
    "rounds_title": {"fr": "Manches jouées", "en": "Rounds played"},
    "rounds_empty": {"fr": "(aucune manche finie)", "en": "(no round over yet)"},
    "history_keys": {"fr": "H : revenir à la table", "en": "H: back to the table"},
    "partner": {"fr": "partenaire", "en": "partner"},
    "you": {"fr": "vous", "en": "you"},
    "away": {"fr": "absent", "en": "away"},
    "their_turn": {"fr": "à son tour", "en": "to play"},
    "closed": {"fr": "La table est fermée.", "en": "The table is closed."},
    "game_over": {
        "fr": "Partie terminée. Q : quitter",
        "en": "Game over. Q: quit",
    },
    "next_round": {
        "fr": "Manche suivante dans {time}.",
        "en": "Next round in {time}.",
    },
}


def ui(key: str, lang: Lang, **values: object) -> str:
    """The interface string ``key`` in ``lang``, formatted with ``values``."""
    text = _UI[key][lang]
    return text.format(**values) if values else text


def labelled(label: str, value: str, lang: Lang) -> str:
    """``label`` and ``value`` with the colon of the language: ``"Chaîne : …"`` (French puts
    a space before it) / ``"Chain: …"``."""
    return f"{label} : {value}" if lang == "fr" else f"{label}: {value}"


def number_word(number: int, lang: Lang) -> str:
    """A domino number 0..6 in words: ``5`` → ``"cinq"`` / ``"five"``; 0 is blanc / blank."""
    return _NUMBERS[lang][number]


def join_words(words: Sequence[str], lang: Lang) -> str:
    """``["a"]`` → ``"a"``; ``["a", "b"]`` → ``"a et b"``; ``["a", "b", "c"]`` → ``"a, b et c"``
    (``and`` in English, no serial comma)."""
    if not words:
        return ""
    if len(words) == 1:
        return words[0]
    conjunction = " et " if lang == "fr" else " and "
    return ", ".join(words[:-1]) + conjunction + words[-1]


def passes_in_words(passed_on: Sequence[int], lang: Lang) -> str:
    """What a seat passed on this round (R10), highest number first, as the FAQ says it:
    ``[2, 5]`` → « A passé sur cinq et deux » / "Passed on five and two"; ``""`` when the
    seat has not passed."""
    numbers = sorted(set(passed_on), reverse=True)
    if not numbers:
        return ""
    words = join_words([number_word(n, lang) for n in numbers], lang)
    return f"A passé sur {words}" if lang == "fr" else f"Passed on {words}"


def seat_team(seat: int) -> int:
    """The team of a seat (R1): seats 0 and 2 are ``TEAM_A``, 1 and 3 ``TEAM_B``."""
    return game_pb2.TEAM_A if seat % 2 == 0 else game_pb2.TEAM_B


def _letter(team: int) -> str:
    return "A" if team == game_pb2.TEAM_A else "B"


def team_label(team: int, lang: Lang, *, capital: bool = False) -> str:
    """``"équipe A"`` / ``"team A"`` (capitalised on request)."""
    word = "équipe" if lang == "fr" else "team"
    if capital:
        word = word.capitalize()
    return f"{word} {_letter(team)}"


def _name(view: game_pb2.TableView, seat: int) -> str:
    info = view.seats[seat] if seat < len(view.seats) else None
    if info is not None and info.occupied and info.name:
        return info.name
    return f"#{seat}"


def team_members(view: game_pb2.TableView, team: int, lang: Lang) -> str:
    """The two partners' names: ``"Ann et Cid"`` / ``"Ann and Cid"``."""
    seats = (0, 2) if team == game_pb2.TEAM_A else (1, 3)
    return join_words([_name(view, s) for s in seats], lang)


def tile_text(low: int, high: int) -> str:
    """A tile as drawn: ``[6|3]``."""
    return f"[{low}|{high}]"


def chain_text(view: game_pb2.TableView, lang: Lang) -> str:
    """The chain from left to right, each tile oriented as laid, or a note when empty."""
    if not view.chain:
        return ui("empty_chain", lang)
    return "".join(tile_text(p.left, p.right) for p in view.chain)


def ends_text(view: game_pb2.TableView, lang: Lang) -> str:
    """The two open ends (R8): ``"Bout gauche : 6 · bout droit : 1"``; ``""`` when empty."""
    if not view.HasField("left_end") or not view.HasField("right_end"):
        return ""
    if lang == "fr":
        return f"Bout gauche : {view.left_end} · bout droit : {view.right_end}"
    return f"Left end: {view.left_end} · right end: {view.right_end}"


def header_text(view: game_pb2.TableView, lang: Lang) -> str:
    """Target (R16), round and both teams' scores with their players."""
    a, b = game_pb2.TEAM_A, game_pb2.TEAM_B
    target = "Objectif" if lang == "fr" else "Target"
    round_word = "Manche" if lang == "fr" else "Round"
    parts = [f"{target} {view.target}"]
    if view.round_number:
        parts.append(f"{round_word} {view.round_number}")
    parts.append(
        f"{team_label(a, lang, capital=True)} ({team_members(view, a, lang)}) {view.score_team_a}"
    )
    parts.append(
        f"{team_label(b, lang, capital=True)} ({team_members(view, b, lang)}) {view.score_team_b}"
    )
    return " · ".join(parts)


def seat_line(view: game_pb2.TableView, seat: int, lang: Lang) -> str:
    """One seat as every player sees it (S6): turn marker, name, team, host, "you", tiles
    left, connection, and the passes in words (R10).

    e.g. ``"▶ Bob (équipe B) · 5 dominos · A passé sur cinq et deux"``.
    """
    info = view.seats[seat]
    marker = (
        "▶"
        if view.phase == game_pb2.PHASE_PLAYING
        and view.HasField("turn_seat")
        and view.turn_seat == seat
        else " "
    )
    if not info.occupied:
        return f"{marker} {'(place libre)' if lang == 'fr' else '(empty seat)'}"
    tags = [team_label(seat_team(seat), lang)]
    if info.host:
        tags.append("hôte" if lang == "fr" else "host")
    if seat == view.your_seat:
        tags.append("vous" if lang == "fr" else "you")
    parts = [f"{marker} {info.name} ({', '.join(tags)})"]
    if view.phase != game_pb2.PHASE_WAITING:
        count = info.tile_count
        if lang == "fr":
            parts.append(f"{count} domino{'s' if count > 1 else ''}")
        else:
            parts.append(f"{count} tile{'s' if count != 1 else ''}")
    if not info.connected:
        parts.append("déconnecté" if lang == "fr" else "disconnected")
    passes = passes_in_words(list(info.passed_on), lang)
    if passes:
        parts.append(passes)
    return " · ".join(parts)


def remaining_seconds(view: game_pb2.TableView, received_at: float, now: float) -> float | None:
    """Seconds left on the running clock (R11 turn, or D1 break), or None when none runs.

    ``turn_deadline_ms - server_time_ms`` is the time left when the server sent the view;
    ``now - received_at`` (both from the client's monotonic clock) is what has elapsed
    since. Never negative.
    """
    if view.turn_deadline_ms <= 0 or view.server_time_ms <= 0:
        return None
    left = (view.turn_deadline_ms - view.server_time_ms) / 1000.0 - (now - received_at)
    return max(0.0, left)


def format_countdown(seconds: float) -> str:
    """Whole seconds, rounded up so "0 s" means the time is over: ``27.2`` → ``"28 s"``;
    a minute or more as ``m:ss``: ``65`` → ``"1:05"``."""
    whole = max(0, math.ceil(seconds - 1e-9))
    if whole >= 60:
        return f"{whole // 60}:{whole % 60:02d}"
    return f"{whole} s"


def turn_text(view: game_pb2.TableView, remaining: float | None, lang: Lang) -> str:
    """Whose turn it is and the countdown: ``"À vous de jouer — 27 s"`` /
    ``"Bob's turn — 12 s"``; between rounds, when the next round is dealt; ``""`` otherwise."""
    clock = f" — {format_countdown(remaining)}" if remaining is not None else ""
    if view.phase == game_pb2.PHASE_PLAYING and view.HasField("turn_seat"):
        if view.turn_seat == view.your_seat:
            who = "À vous de jouer" if lang == "fr" else "Your turn"
        else:
            name = _name(view, view.turn_seat)
            who = f"Au tour {de(name)}" if lang == "fr" else f"{name}'s turn"
        return who + clock
    if view.phase == game_pb2.PHASE_ROUND_OVER and remaining is not None:
        return ui("next_round", lang, time=format_countdown(remaining))
    return ""


@dataclass(frozen=True)
class HandItem:
    """One tile of the player's hand, with the ends it may go on now (from ``legal_moves``)."""

    index: int
    low: int
    high: int
    ends: tuple[game_pb2.End, ...]

    @property
    def playable(self) -> bool:
        """Whether the tile may be laid now."""
        return bool(self.ends)

    @property
    def text(self) -> str:
        """``"[6|3]"``."""
        return tile_text(self.low, self.high)


def hand_items(view: game_pb2.TableView) -> list[HandItem]:
    """The hand in the view's order (ascending), each tile with its legal ends (R8, R9)."""
    ends: dict[tuple[int, int], list[game_pb2.End]] = {}
    for move in view.legal_moves:
        ends.setdefault((move.tile.low, move.tile.high), []).append(move.end)
    return [
        HandItem(i, t.low, t.high, tuple(sorted(ends.get((t.low, t.high), []))))
        for i, t in enumerate(view.hand)
    ]


def code_text(code: str) -> str:
    """An invitation code as players read it out: two groups of five (``ABCDE-23456``); a
    code of another length as it is. Typing it back, dashes and spaces do not matter."""
    if len(code) == 10 and code.isalnum():
        return f"{code[:5]}-{code[5:]}"
    return code


def lobby_lines(view: game_pb2.TableView, code: str, lang: Lang) -> list[str]:
    """The lobby (S1, R3): invitation code, target, seats, and what happens next."""
    seated = sum(1 for s in view.seats if s.occupied)
    code = code_text(code)
    if lang == "fr":
        lines = [f"Code d'invitation : {code}", f"Objectif : {view.target} points"]
    else:
        lines = [f"Invitation code: {code}", f"Target: {view.target} points"]
    lines += [seat_line(view, seat, lang) for seat in range(len(view.seats))]
    lines.append(ui("lobby_ready" if seated == 4 else "lobby_waiting", lang, n=seated))
    return lines


def _outcome_line(view: game_pb2.TableView, summary: game_pb2.RoundSummary, lang: Lang) -> str:
    number = summary.round_number
    if summary.outcome == game_pb2.ROUND_OUTCOME_DOMINO:
        seat = summary.domino_seat
        who = f"{_name(view, seat)} ({team_label(seat_team(seat), lang)})"
        if lang == "fr":
            return f"Manche {number} : domino ! {who} a posé son dernier domino."
        return f"Round {number}: domino! {who} laid their last tile."
    if lang == "fr":
        head = f"Manche {number} : bloquée, les quatre joueurs ont passé l'un après l'autre"
        tail = ", égalité parfaite." if _is_tie(summary) else "."
    else:
        head = f"Round {number}: blocked, the four players passed one after another"
        tail = ", a perfect tie." if _is_tie(summary) else "."
    return head + tail


def _is_tie(summary: game_pb2.RoundSummary) -> bool:
    return summary.tie_rule_applied or summary.outcome == game_pb2.ROUND_OUTCOME_BLOCKED_TIE


def _why_line(view: game_pb2.TableView, summary: game_pb2.RoundSummary, lang: Lang) -> str:
    scorer = team_label(summary.scoring_team, lang)
    scorer_cap = team_label(summary.scoring_team, lang, capital=True)
    points = summary.points
    pts = _points(points, lang)
    if summary.outcome == game_pb2.ROUND_OUTCOME_DOMINO:
        opponents = (1, 3) if summary.scoring_team == game_pb2.TEAM_A else (0, 2)
        detail = " + ".join(f"{_name(view, s)} {_hand_points(summary, s)}" for s in opponents)
        if lang == "fr":
            return (
                f"L'{scorer} marque {pts} : ce qui reste dans les mains des deux "
                f"adversaires ({detail}). La main du partenaire ne compte pas."
            )
        return (
            f"{scorer_cap} scores {pts}: what is left in both opponents' hands "
            f"({detail}). The partner's tiles do not count."
        )
    a, b = summary.team_a_pips, summary.team_b_pips
    if _is_tie(summary):
        if lang == "fr":
            return (
                f"Chaque équipe a {_points(a, lang)} en main, égalité parfaite : la manche "
                f"revient à l'équipe qui a posé le dernier domino, l'{scorer}, qui marque "
                f"le total de l'autre équipe : {pts}."
            )
        return (
            f"Each team holds {_points(a, lang)}, a perfect tie: the round goes to the team "
            f"that laid the last tile, {scorer}, which scores the other team's total: {pts}."
        )
    if lang == "fr":
        return (
            f"Points en main : équipe A {a}, équipe B {b}. L'équipe la plus légère, "
            f"l'{scorer}, marque le total de l'autre : {pts}."
        )
    return (
        f"Points in hand: team A {a}, team B {b}. The lighter team, {scorer}, scores the "
        f"other team's total: {pts}."
    )


def _points(points: int, lang: Lang) -> str:
    if lang == "fr":
        return f"{points} point{'s' if points > 1 else ''}"
    return f"{points} point{'s' if points != 1 else ''}"


def _hand_points(summary: game_pb2.RoundSummary, seat: int) -> int:
    for hand in summary.hands:
        if hand.seat == seat:
            return int(hand.points)
    return 0


def _hands_line(view: game_pb2.TableView, summary: game_pb2.RoundSummary, lang: Lang) -> str:
    parts = []
    for hand in sorted(summary.hands, key=lambda h: h.seat):
        tiles = " ".join(tile_text(t.low, t.high) for t in hand.tiles) or "—"
        parts.append(f"{_name(view, hand.seat)} {tiles} ({hand.points})")
    if lang == "fr":
        return "Mains restantes : " + " ; ".join(parts)
    return "Hands left: " + "; ".join(parts)


def round_summary_lines(view: game_pb2.TableView, lang: Lang) -> list[str]:
    """The end-of-round summary (D1) of ``view.last_round``: how it ended, who scored how
    many points and why (R12, R13), the tie rule spelled out when it applied (R14), the hands
    left, the scores; ``[]`` when the view carries no summary."""
    if not view.HasField("last_round"):
        return []
    summary = view.last_round
    lines = [_outcome_line(view, summary, lang), _why_line(view, summary, lang)]
    if summary.hands:
        lines.append(_hands_line(view, summary, lang))
    colon = " : " if lang == "fr" else ": "
    lines.append(f"Score{colon}A {view.score_team_a} · B {view.score_team_b}")
    return lines


def round_line(view: game_pb2.TableView, lang: Lang) -> str:
    """One line per finished round, for the demo's log: number, opener, how it ended, the
    scoring team and points, the scores."""
    if not view.HasField("last_round"):
        return ""
    s = view.last_round
    opener = _name(view, s.opener_seat)
    if s.outcome == game_pb2.ROUND_OUTCOME_DOMINO:
        how = (
            f"domino {de(_name(view, s.domino_seat))}"
            if lang == "fr"
            else f"domino by {_name(view, s.domino_seat)}"
        )
    elif _is_tie(s):
        how = (
            "bloquée, égalité parfaite (au dernier domino posé)"
            if lang == "fr"
            else "blocked, perfect tie (to the team of the last tile)"
        )
    else:
        how = "bloquée" if lang == "fr" else "blocked"
    scorer = team_label(s.scoring_team, lang, capital=True)
    if lang == "fr":
        return (
            f"Manche {s.round_number} · ouverte par {opener} · {how} · {scorer} "
            f"+{s.points} · score A {view.score_team_a} · B {view.score_team_b}"
        )
    return (
        f"Round {s.round_number} · opened by {opener} · {how} · {scorer} +{s.points} · "
        f"score A {view.score_team_a} · B {view.score_team_b}"
    )


def winner_text(view: game_pb2.TableView, lang: Lang) -> str:
    """The winner (R17) once the game is over: ``"L'équipe A (Ann et Cid) gagne la partie,
    105 à 80."``; ``""`` before."""
    if view.phase != game_pb2.PHASE_FINISHED or view.winner == game_pb2.TEAM_UNSPECIFIED:
        return ""
    a, b = view.score_team_a, view.score_team_b
    high, low = (a, b) if view.winner == game_pb2.TEAM_A else (b, a)
    members = team_members(view, view.winner, lang)
    if lang == "fr":
        return f"L'{team_label(view.winner, lang)} ({members}) gagne la partie, {high} à {low}."
    return (
        f"{team_label(view.winner, lang, capital=True)} ({members}) wins the game, {high} to {low}."
    )


def last_action_text(view: game_pb2.TableView, lang: Lang) -> str:
    """What just happened, for the game screen: a tile laid (and on which end), a pass (in
    words, R10), a deal; says when the table played for the seat (R11, S3). ``""`` for
    changes that need no sentence (presence, lobby)."""
    action = view.last_action
    seat = action.seat if action.HasField("seat") else None
    name = _name(view, seat) if seat is not None else ""
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
        left = action.move.end == game_pb2.END_LEFT
        if lang == "fr":
            return f"{name} a posé {tile} {'à gauche' if left else 'à droite'}{auto}."
        return f"{name} laid {tile} on the {'left' if left else 'right'}{auto}."
    if action.kind == game_pb2.ACTION_KIND_PASSED:
        words = join_words(
            [number_word(n, lang) for n in sorted(set(action.passed_on), reverse=True)], lang
        )
        if lang == "fr":
            return f"{name} a passé sur {words}{auto}."
        return f"{name} passed on {words}{auto}."
    if action.kind == game_pb2.ACTION_KIND_ROUND_DEALT:
        opener = _name(view, view.opener_seat)
        if lang == "fr":
            return f"Nouvelle donne : {opener} ouvre la manche {view.round_number}."
        return f"New deal: {opener} opens round {view.round_number}."
    return ""


def phase_text(view: game_pb2.TableView, lang: Lang) -> str:
    """A short status for phases without a turn: closed table, game over."""
    if view.phase == game_pb2.PHASE_CLOSED:
        return ui("closed", lang)
    if view.phase == game_pb2.PHASE_FINISHED:
        return winner_text(view, lang)
    return ""


# -- errors -----------------------------------------------------------------------------------


def error_key(reason: str | None, code: str) -> str:
    """The interface string that explains a failed call, from its contract ``reason``
    (``ErrorInfo.reason``, e.g. ``"NOT_YOUR_TURN"``) and, for failures without one, its gRPC
    ``code`` name. Decided on the reason first, never on the message text (client guide,
    "Errors"): a known reason has its own sentence; the reasons only a faulty client causes
    share one; UNAVAILABLE (with or without the reason) and DEADLINE_EXCEEDED say the server
    does not answer; an unknown reason (a newer server) falls back on its code."""
    if reason in _REASON_KEYS:
        return _REASON_KEYS[reason]
    if reason in _CLIENT_BUGS:
        return "client_bug"
    if reason == "UNAVAILABLE" or code in _CONNECTION_CODES:
        return "unavailable"
    if reason in _ERRORS:
        return reason
    if code == "CANCELLED":
        return "cancelled"
    if code in ("INVALID_ARGUMENT", "UNAUTHENTICATED", "UNIMPLEMENTED"):
        return "client_bug"
    return "unexpected"


def error_text(
    reason: str | None, code: str, lang: Lang, *, retry_after: float | None = None
) -> str:
    """The sentence, in ``lang``, for a failed call (see :func:`error_key`); a rate limit says
    how long to wait (``retry_after``, the ``RetryInfo`` delay, rounded up; 1 s at least)."""
    key = error_key(reason, code)
    if key == "RATE_LIMITED":
        return ui(key, lang, seconds=max(1, math.ceil(retry_after or 1)))
    return ui(key, lang)


# -- French elision ---------------------------------------------------------------------------

#: First letters before which French drops the e of « de », « le », « que »: the vowels
#: (accents ignored) and h, taken as mute (« d'Hugo »), which is the common case for names.
_ELIDING_LETTERS: Final = frozenset("aeiouhœæ")


def elides(word: str) -> bool:
    """Whether a French word or name starting so takes an elided article or preposition:
    ``"Ana"``, ``"Éric"``, ``"Hugo"``, ``"Œdipe"`` do; ``"Chloé"``, ``"Bot1"``, ``"[x]"``,
    ``""`` do not (accents are ignored: the first letter is compared without them)."""
    if not word:
        return False
    base = unicodedata.normalize("NFD", word[0])[0].lower()
    return base in _ELIDING_LETTERS


def elide(particle: str, word: str) -> str:
    """``particle`` (« de », « que », « le »…) before ``word``, elided when French wants it:
    ``elide("de", "Ana")`` → ``"d'Ana"``, ``elide("de", "Chloé")`` → ``"de Chloé"``. The
    capital of the particle is kept (``"De"`` → ``"D'"``)."""
    if particle[-1:].lower() == "e" and elides(word):
        return f"{particle[:-1]}'{word}"
    return f"{particle} {word}"


def de(name: str) -> str:
    """« de » before a name, elided: ``"d'Ana"``, ``"d'Éric"``, ``"de Chloé"``."""
    return elide("de", name)


# -- saved seats and quitting -----------------------------------------------------------------


def ago_text(seconds: float, lang: Lang) -> str:
    """How long ago, roughly: ``"à l'instant"`` under a minute, then minutes, hours, days
    (``"il y a 5 min"`` / ``"5 min ago"``)."""
    whole = max(0, int(seconds))
    if whole < 60:
        return "à l'instant" if lang == "fr" else "just now"
    for size, unit in ((86400, "j" if lang == "fr" else "d"), (3600, "h"), (60, "min")):
        if whole >= size:
            amount = f"{whole // size} {unit}"
            return f"il y a {amount}" if lang == "fr" else f"{amount} ago"
    raise AssertionError("unreachable")  # pragma: no cover


def saved_seat_text(code: str, name: str, seat: int, age_seconds: float, lang: Lang) -> str:
    """One held seat on the start screen: ``"ABCDE-23456 · Chloé · place 3 · il y a 5 min"``
    (seats are counted from 1 for people)."""
    seat_word = "place" if lang == "fr" else "seat"
    return " · ".join(
        [code_text(code), name or "?", f"{seat_word} {seat + 1}", ago_text(age_seconds, lang)]
    )


def resume_command(code: str, gateway: str | None = None) -> str:
    """The command that takes a seat back: ``"dominos play --resume ABCDE23456"``, with
    ``--gateway`` when the server is not the default one (``gateway`` None)."""
    where = f" --gateway {gateway}" if gateway else ""
    return f"dominos play{where} --resume {code}"


# -- the table around the player --------------------------------------------------------------


def relative_seats(your_seat: int) -> dict[str, int]:
    """Where each seat sits as seen from ``your_seat`` (turn order goes round the table):
    ``south`` is you, ``east`` plays after you, ``north`` is your partner across (R1),
    ``west`` plays before you."""
    return {
        "south": your_seat % 4,
        "east": (your_seat + 1) % 4,
        "north": (your_seat + 2) % 4,
        "west": (your_seat + 3) % 4,
    }


def _is_turn(view: game_pb2.TableView, seat: int) -> bool:
    return (
        view.phase == game_pb2.PHASE_PLAYING
        and view.HasField("turn_seat")
        and view.turn_seat == seat
    )


def seat_facts(view: game_pb2.TableView, seat: int, lang: Lang) -> list[str]:
    """What the table shows of a seat, one fact a line: its name with its team letter (and
    "partner"/"you" as seen from the view's seat), the tiles it holds (after the start),
    "away" when disconnected (S3), "to play" on its turn, and its passes in words (R10).
    Names are copied as typed."""
    info = view.seats[seat] if seat < len(view.seats) else None
    if info is None or not info.occupied:
        return ["(place libre)" if lang == "fr" else "(empty seat)"]
    tags = [_letter(seat_team(seat))]
    if seat == view.your_seat:
        tags.append(ui("you", lang))
    elif seat_team(seat) == seat_team(view.your_seat):
        tags.append(ui("partner", lang))
    facts = [f"{'▶ ' if _is_turn(view, seat) else ''}{info.name} ({', '.join(tags)})"]
    if view.phase != game_pb2.PHASE_WAITING:
        count = info.tile_count
        if lang == "fr":
            facts.append(f"{count} domino{'s' if count > 1 else ''}")
        else:
            facts.append(f"{count} tile{'s' if count != 1 else ''}")
    if not info.connected:
        facts.append(ui("away", lang))
    if _is_turn(view, seat):
        facts.append(ui("their_turn", lang))
    passes = passes_in_words(list(info.passed_on), lang)
    if passes:
        facts.append(passes)
    return facts


def seat_column(view: game_pb2.TableView, seat: int, lang: Lang, width: int) -> list[str]:
    """:func:`seat_facts` as a column ``width`` characters wide (west and east of the
    table): each fact wrapped between words, a word longer than the column cut."""
    lines: list[str] = []
    for fact in seat_facts(view, seat, lang):
        lines += textwrap.wrap(fact, width=max(1, width), break_on_hyphens=False) or [""]
    return lines


def seat_strip(view: game_pb2.TableView, seat: int, lang: Lang) -> str:
    """:func:`seat_facts` on one line, joined by `` · `` (north and south of the table)."""
    return " · ".join(seat_facts(view, seat, lang))


@dataclass(frozen=True)
class ChainDrawing:
    """The chain drawn in rows of text. ``rows`` are the lines as shown; ``newest`` the
    ``(row, start, end)`` character ranges covering the newest tile (to highlight it)."""

    rows: list[str]
    newest: list[tuple[int, int, int]]


def _tile_cells(left: int, right: int) -> tuple[str, str, str]:
    """A tile in three rows: a plain tile lies along the chain, ``[6|3]`` on the middle row;
    a double stands across it, its two halves above and below (R8's "across")."""
    if left == right:
        return (f"┌{left}┐", "├─┤", f"└{right}┘")
    return ("     ", f"[{left}|{right}]", "     ")


def chain_drawing(
    chain: Sequence[tuple[int, int]], width: int, newest: int | None = None
) -> ChainDrawing:
    """Lay out the chain (``(left, right)`` halves, left to right) in ``width`` columns:
    tiles separated by a space and wrapped only between tiles, never inside one; doubles
    drawn across (:func:`_tile_cells`), so a line holding one takes three rows, a line
    without any one row. ``newest`` is the index in ``chain`` of the tile laid last."""
    lines: list[list[int]] = [[]]
    used = 0
    for index, (left, right) in enumerate(chain):
        size = 3 if left == right else 5
        if lines[-1] and used + 1 + size > width:
            lines.append([])
            used = 0
        used += size + (1 if lines[-1] else 0)
        lines[-1].append(index)
    rows: list[str] = []
    marks: list[tuple[int, int, int]] = []
    for line in lines:
        cells = [_tile_cells(*chain[i]) for i in line]
        tall = any(chain[i][0] == chain[i][1] for i in line)
        shown = (0, 1, 2) if tall else (1,)
        offset = 0
        for position, index in enumerate(line):
            size = len(cells[position][1])
            if index == newest:
                marks += [(len(rows) + r, offset, offset + size) for r in range(len(shown))]
            offset += size + 1
        for r in shown:
            rows.append(" ".join(cell[r] for cell in cells).rstrip())
    return ChainDrawing(rows if chain else [], marks)


def newest_index(view: game_pb2.TableView, played: game_pb2.Move | None) -> int | None:
    """The index in the chain of the tile ``played`` (the newest move seen, or None): at the
    left end when it went left, at the right end otherwise; None when that end holds
    another tile (the move is of an earlier round)."""
    if played is None or not view.chain:
        return None
    index = 0 if played.end == game_pb2.END_LEFT else len(view.chain) - 1
    tile = view.chain[index]
    if sorted((tile.left, tile.right)) != [played.tile.low, played.tile.high]:
        return None
    return index


def score_line(view: game_pb2.TableView, lang: Lang) -> str:
    """The header of the table, short enough for 80 columns: target (R16), round, both
    teams' scores, yours first named: ``"Objectif 100 · Manche 2 · Nous (A) 35 · Eux (B) 20"``."""
    target = "Objectif" if lang == "fr" else "Target"
    round_word = "Manche" if lang == "fr" else "Round"
    parts = [f"{target} {view.target}"]
    if view.round_number:
        parts.append(f"{round_word} {view.round_number}")
    mine = seat_team(view.your_seat)
    scores = {game_pb2.TEAM_A: view.score_team_a, game_pb2.TEAM_B: view.score_team_b}
    for team in sorted(scores, key=lambda t: t != mine):
        label = team_label(team, lang, capital=True)
        who = ("nous" if lang == "fr" else "us") if team == mine else None
        parts.append(f"{label}{f' ({who})' if who else ''} {scores[team]}")
    return " · ".join(parts)


# -- the round's moves and the rounds played --------------------------------------------------


@dataclass(frozen=True)
class RoundResult:
    """A finished round as the history lists it."""

    number: int
    scoring_team: int
    points: int
    score_a: int
    score_b: int
    blocked: bool


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
        if action.kind in (game_pb2.ACTION_KIND_PLAYED, game_pb2.ACTION_KIND_PASSED):
            copy = game_pb2.LastAction()
            copy.CopyFrom(action)
            self.moves.append(copy)
        if view.HasField("last_round"):
            summary = view.last_round
            self.rounds[summary.round_number] = RoundResult(
                summary.round_number,
                summary.scoring_team,
                summary.points,
                view.score_team_a,
                view.score_team_b,
                summary.outcome != game_pb2.ROUND_OUTCOME_DOMINO,
            )

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
    """``"Manche 2 · équipe B +17 (bloquée) · A 40 · B 37"`` / ``"Round 2 · team B +17 …"``."""
    word = "Manche" if lang == "fr" else "Round"
    how = ""
    if result.blocked:
        how = " (bloquée)" if lang == "fr" else " (blocked)"
    return (
        f"{word} {result.number} · {team_label(result.scoring_team, lang)} +{result.points}"
        f"{how} · A {result.score_a} · B {result.score_b}"
    )


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
