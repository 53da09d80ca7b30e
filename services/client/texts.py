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

_UI: Final[dict[str, dict[str, str]]] = {
    "title": {"fr": "Dominos", "en": "Dominos"},
    "your_name": {"fr": "Votre nom", "en": "Your name"},
    "target": {"fr": "Objectif", "en": "Target"},
    "create": {"fr": "Créer une table", "en": "Create a table"},
    "code": {"fr": "Code d'invitation", "en": "Invitation code"},
    "join": {"fr": "Rejoindre", "en": "Join"},
    "start": {"fr": "Lancer la partie", "en": "Start the game"},
    "pass": {"fr": "Passer (P)", "en": "Pass (P)"},
    "hand": {"fr": "Votre main", "en": "Your hand"},
    "chain": {"fr": "Chaîne", "en": "Chain"},
    "empty_chain": {
        "fr": "(vide : le premier domino peut être n'importe lequel)",
        "en": "(empty: the first tile may be any tile)",
    },
    "keys": {
        "fr": "←/→ ou 1-7 : choisir · G/L : poser à gauche · D/R : à droite · "
        "Entrée : poser · P : passer · Q : quitter",
        "en": "←/→ or 1-7: select · L/G: play left · R/D: play right · "
        "Enter: play · P: pass · Q: quit",
    },
    "must_play": {
        "fr": "Vous pouvez poser : on ne passe que si rien ne va (R9).",
        "en": "You can play: passing is allowed only when nothing fits (R9).",
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
            who = f"Au tour de {name}" if lang == "fr" else f"{name}'s turn"
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
            f"domino de {_name(view, s.domino_seat)}"
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
