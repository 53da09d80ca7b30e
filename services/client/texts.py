"""The reference client's words: its two languages and the catalogue of interface strings.

The terminal client (:mod:`services.client.app` and its screens) and the demo
(:mod:`services.client.cli`) turn views into words with pure functions only (no I/O, no
clock), so what a player reads is unit-tested without a terminal or a cluster. Two languages:
French (``"fr"``, the product's language and the default) and English (``"en"``). This module
holds the fixed strings (:func:`ui`); the sentences built from a ``TableView`` live by topic
next to it: :mod:`~services.client.words` (numbers, passes), :mod:`~services.client.elision`,
:mod:`~services.client.teams`, :mod:`~services.client.refusals` (errors),
:mod:`~services.client.tiles` (tiles, the hand), :mod:`~services.client.chain`,
:mod:`~services.client.countdown`, :mod:`~services.client.lobby`,
:mod:`~services.client.scores`, :mod:`~services.client.seating` (the table around the
player), :mod:`~services.client.summaries` (round and game ends),
:mod:`~services.client.last_action`, :mod:`~services.client.journal` (the history) and
:mod:`~services.client.held_seats`.

Names, codes and the server's messages are copied into the sentences as they are, unescaped:
every function returns plain text, never markup, and whoever shows it must not parse it (the
terminal client's widgets never do, see :class:`services.client.widgets.Plain`).
"""

from __future__ import annotations

from typing import Final, Literal

__all__ = ["ERROR_SENTENCES", "LANGS", "Lang", "labelled", "ui"]

Lang = Literal["fr", "en"]
LANGS: Final[tuple[Lang, ...]] = ("fr", "en")

#: The sentence for each error reason of the contract (``ErrorReason`` without its prefix) and
#: for the failures that carry none (keys in lower case: the gRPC code's name), as
#: ``(French, English)``; see :func:`services.client.refusals.error_text`.
ERROR_SENTENCES: Final[dict[str, tuple[str, str]]] = {
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
        "Toutes les places de cette table sont prises.",
        "Every seat at this table is taken.",
    ),
    "GAME_ALREADY_STARTED": (
        "La partie a déjà commencé à cette table.",
        "The game has already started at this table.",
    ),
    "NOT_ENOUGH_PLAYERS": (
        "Toutes les places doivent être prises pour lancer la partie.",
        "Every seat must be taken to start the game.",
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
    "RULES_INVALID": (
        "Ces règles ne permettent pas ce choix (joueurs, dominos ou temps de jeu).",
        "These rules do not offer that choice (players, tiles or turn time).",
    ),
    "RULES_UNAVAILABLE": (
        "Ce jeu n'est pas encore disponible : choisissez-en un autre.",
        "This game is not available yet: choose another one.",
    ),
    "MUST_DRAW": (
        "Aucun domino ne va : piochez d'abord.",
        "No tile fits: draw first.",
    ),
    "CANNOT_DRAW": (
        "La pioche est vide, ou ce jeu n'en a pas.",
        "The stock is empty, or this game has none.",
    ),
    "ROBOTS_UNAVAILABLE": (
        "Ce jeu ne se joue pas avec des robots : choisissez-en un autre.",
        "This game is not played with robots: choose another one.",
    ),
    "FRIENDLY_END_UNAVAILABLE": (
        "La fin amiable n'est pas proposée à cette table (seulement au jeu du site, quand "
        "l'hôte l'a choisie).",
        "The friendly end is not offered at this table (only at the site game, when the host "
        "chose it).",
    ),
    "VOTE_OPEN": (
        "Un vote pour finir la partie est en cours : attendez qu'il soit clos.",
        "A vote to end the game is open: wait until it closes.",
    ),
    "ALREADY_PROPOSED": (
        "Vous avez déjà proposé de finir la partie dans cette manche : attendez la suivante.",
        "You already proposed to end the game this round: wait for the next one.",
    ),
    "NO_VOTE_OPEN": (
        "Aucun vote n'attend votre réponse.",
        "No vote is waiting for your answer.",
    ),
    "ROBOT_SEAT": (
        "Un robot a pris votre place pour de bon : vous n'êtes pas revenu à temps.",
        "A robot took your seat for good: you did not come back in time.",
    ),
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
    "REQUEST_MALFORMED": (
        "Le serveur n'a pas compris la demande : mettez le client à jour.",
        "The server could not read the request: update the client.",
    ),
    "REQUEST_TOO_LARGE": (
        "La demande est trop grande pour le serveur : mettez le client à jour.",
        "The request is too large for the server: update the client.",
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

_UI: Final[dict[str, dict[str, str]]] = {
    "title": {"fr": "Dominos", "en": "Dominos"},
    "your_name": {"fr": "Votre nom", "en": "Your name"},
    "target": {"fr": "Objectif", "en": "Target"},
    "create": {"fr": "Créer une table", "en": "Create a table"},
    "code": {"fr": "Code d'invitation", "en": "Invitation code"},
    "join": {"fr": "Rejoindre", "en": "Join"},
    "start": {"fr": "Lancer la partie", "en": "Start the game"},
    "pass": {"fr": "Passer (P)", "en": "Pass (P)"},
    "draw": {"fr": "Piocher (T)", "en": "Draw (T)"},
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
    "keys_draw": {
        "fr": "←→ choisir · G/D poser · T piocher · P passer · H historique · Q quitter",
        "en": "←→ select · L/R play left/right · T draw · P pass · H history · Q quit",
    },
    "keys_fives": {
        "fr": "←→ choisir · G/D/U/B poser · T piocher · P passer · H historique · Q quitter",
        "en": "←→ select · L/R/U/B play · T draw · P pass · H history · Q quit",
    },
    "pick_end_of": {
        "fr": "Ce domino va sur plusieurs bouts : {ends} ?",
        "en": "That tile fits several ends: {ends}?",
    },
    "cannot_draw_fits": {
        "fr": "Un domino va : on ne pioche que si rien ne va.",
        "en": "A tile fits: you draw only when nothing fits.",
    },
    "no_stock": {
        "fr": "Ce jeu n'a pas de pioche.",
        "en": "This game has no stock.",
    },
    "stock_empty": {
        "fr": "La pioche est vide : passez (P).",
        "en": "The stock is empty: pass (P).",
    },
    "draw_first": {
        "fr": "Rien ne va : piochez (T).",
        "en": "Nothing fits: draw (T).",
    },
    "rules_label": {"fr": "Jeu · joueurs · objectif", "en": "Game · players · target"},
    "seats_default": {"fr": "{n} joueurs", "en": "{n} players"},
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
    **{key: {"fr": fr, "en": en} for key, (fr, en) in ERROR_SENTENCES.items()},
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
    "lobby_waiting_n": {
        "fr": "En attente de joueurs : {n}/{total} assis.",
        "en": "Waiting for players: {n}/{total} seated.",
    },
    "lobby_ready_n": {
        "fr": "Les {word} places sont prises : l'hôte peut lancer la partie.",
        "en": "All {word} seats are taken: the host can start the game.",
    },
    "lobby_host_keys_n": {
        "fr": "S : lancer (à {word}) · Q : quitter",
        "en": "S: start (with {word}) · Q: quit",
    },
    "lobby_host_keys_target_n": {
        "fr": "+/- : changer l'objectif · S : lancer (à {word}) · Q : quitter",
        "en": "+/-: change the target · S: start (with {word}) · Q: quit",
    },
    "lobby_guest_n": {
        "fr": "L'hôte lancera la partie quand les {word} places seront prises. Q : quitter",
        "en": "The host will start the game once all {word} seats are taken. Q: quit",
    },
    "start_needs_n": {
        "fr": "Il faut {word} joueurs pour lancer la partie : {n}/{total} assis.",
        "en": "The game needs {word} players to start: {n}/{total} seated.",
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
    "quit_game_robot": {
        "fr": "Quitter la partie ? {robot} joue pour vous : revenez dans les {time}, sinon "
        "il garde votre place pour de bon. Pour revenir :\n{command}",
        "en": "Quit the game? {robot} plays for you: come back within {time}, or it keeps "
        "your seat for good. To come back:\n{command}",
    },
    "come_back_robot": {
        "fr": "{robot} joue pour vous : revenez dans les {time}, sinon il garde votre "
        "place. {command}",
        "en": "{robot} plays for you: come back within {time}, or it keeps your seat. {command}",
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
    "practice": {"fr": "S'entraîner contre des robots", "en": "Practice against robots"},
    "practice_title": {
        "fr": "Entraînement contre des robots",
        "en": "Practice against robots",
    },
    "practice_intro": {
        "fr": "Vous jouez seul contre des robots : la partie commence tout de suite, personne "
        "d'autre ne s'assoit.",
        "en": "You play alone against robots: the game starts at once, nobody else sits down.",
    },
    "practice_label": {
        "fr": "Jeu · joueurs · objectif · niveau des robots",
        "en": "Game · players · target · robots' level",
    },
    "practice_play": {"fr": "Jouer", "en": "Play"},
    "practice_back": {"fr": "Retour", "en": "Back"},
    "practice_keys": {
        "fr": "Tab : champ suivant · Entrée : valider · Échap : retour · Ctrl+C : quitter",
        "en": "Tab: next field · Enter: confirm · Escape: back · Ctrl+C: quit",
    },
    "fill_off": {"fr": "Places vides : attendre", "en": "Empty seats: wait"},
    "fill_on": {"fr": "Places vides : {robots}", "en": "Empty seats: {robots}"},
    "replace_off": {"fr": "Joueur parti : la table joue", "en": "Player drops: table plays"},
    "replace_on": {"fr": "Joueur parti : {robot}", "en": "Player drops: {robot}"},
    "friendly_off": {"fr": "Fin amiable : non", "en": "Friendly end: no"},
    "friendly_on": {"fr": "Fin amiable : oui", "en": "Friendly end: yes"},
    "lobby_target_key": {"fr": "+/- : changer l'objectif", "en": "+/-: change the target"},
    "lobby_host_keys_fill": {
        "fr": "S : lancer maintenant ({robots} aux places vides) · Q : quitter",
        "en": "S: start now ({robots} in the empty seats) · Q: quit",
    },
    "lobby_waiting_fill": {
        "fr": "{n}/{total} assis : l'hôte peut lancer maintenant, des {robots} prendront les "
        "places vides.",
        "en": "{n}/{total} seated: the host can start now, {robots} will take the empty seats.",
    },
    "lobby_guest_fill": {
        "fr": "L'hôte peut lancer la partie à tout moment : des robots prendront les places "
        "vides. Q : quitter",
        "en": "The host may start at any time: robots will take the empty seats. Q: quit",
    },
    "friendly_end_hint": {
        "fr": "F : proposer de finir la partie à l'amiable (sans vainqueur, si tous sont d'accord)",
        "en": "F: propose to end the game by consent (unscored, if everyone agrees)",
    },
    "friendly_end_proposed": {
        "fr": "Fin amiable déjà proposée dans cette manche : F de nouveau à la suivante.",
        "en": "Friendly end already proposed this round: F again from the next one.",
    },
    "vote_keys": {
        "fr": "O : accepter (fin sans vainqueur) · N : refuser",
        "en": "Y: accept (ends unscored) · N: refuse",
    },
    "vote_waiting": {
        "fr": "Vous avez accepté : on attend les autres.",
        "en": "You agreed: waiting for the others.",
    },
    "vote_paused": {
        "fr": "Partie en pause : vote en cours",
        "en": "Game paused: vote in progress",
    },
    "unscored": {
        "fr": "La partie s'est arrêtée d'un commun accord : elle ne compte pas, sans vainqueur.",
        "en": "The game ended by consent: it counts for nothing, nobody won.",
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
