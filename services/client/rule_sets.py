"""Rule sets (D9) as the client shows them: the presets a host may choose, their names in
both languages and what they offer (seats, targets); a table's rule set in words for the
lobby; the sides that score (two teams, or one per seat); a refused rule choice in words.

A view without ``rules`` (an older server, or a crafted test view) is the default game:
four seats in two teams.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from dominos.v1 import game_pb2

from services.client.teams import seat_name, team_label, team_members
from services.client.texts import Lang, labelled

__all__ = [
    "PLAYABLE",
    "PRESETS",
    "PresetInfo",
    "choice_of",
    "count_word",
    "has_stock",
    "has_teams",
    "preset_info",
    "preset_name",
    "rules_invalid_text",
    "rules_lines",
    "seat_count",
    "side_label",
    "side_of",
    "side_scores",
    "target_invalid_text",
]


@dataclass(frozen=True)
class PresetInfo:
    """What a preset offers at creation (as docs/rules.md lists it)."""

    key: str
    preset: int
    names: tuple[str, str]
    seats: tuple[int, ...]
    min_target: int
    max_target: int
    step: int = 50

    @property
    def targets(self) -> tuple[int, ...]:
        """The targets a host may choose."""
        return tuple(range(self.min_target, self.max_target + 1, self.step))

    @property
    def default_target(self) -> int:
        """100 when the preset allows it, else its lowest target."""
        return 100 if 100 in self.targets else self.min_target


PRESETS: Final[dict[str, PresetInfo]] = {
    info.key: info
    for info in (
        PresetInfo("classic", game_pb2.PRESET_CLASSIC, ("Classique", "Classic"), (4,), 50, 500),
        PresetInfo(
            "family_draw",
            game_pb2.PRESET_FAMILY_DRAW,
            ("Pioche en famille", "Family draw"),
            (2, 3, 4),
            100,
            100,
        ),
        PresetInfo(
            "web_draw", game_pb2.PRESET_WEB_DRAW, ("Pioche", "Draw game"), (2, 3, 4), 50, 500
        ),
        PresetInfo(
            "web_block", game_pb2.PRESET_WEB_BLOCK, ("Bloqué", "Block game"), (2, 3, 4), 50, 500
        ),
        PresetInfo(
            "web_fives",
            game_pb2.PRESET_WEB_FIVES,
            ("Tous les cinq", "All fives"),
            (2, 3, 4),
            50,
            500,
        ),
        PresetInfo("app", game_pb2.PRESET_APP, ("Jeu de l'appli", "App game"), (2, 3, 4), 50, 150),
        PresetInfo("site", game_pb2.PRESET_SITE, ("Jeu du site", "Site game"), (2, 3, 4), 50, 300),
    )
}

#: The presets this server plays, in the order the start screen lists them.
PLAYABLE: Final[tuple[str, ...]] = (
    "classic", "family_draw", "web_draw", "web_block", "web_fives", "app", "site",
)  # fmt: skip

_BY_VALUE: Final = {info.preset: info for info in PRESETS.values()}

_COUNTS: Final = {
    "fr": ("zéro", "un", "deux", "trois", "quatre"),
    "en": ("zero", "one", "two", "three", "four"),
}


def count_word(n: int, lang: Lang) -> str:
    """0..4 in words (``"trois"`` / ``"three"``), larger numbers as digits."""
    words = _COUNTS[lang]
    return words[n] if 0 <= n < len(words) else str(n)


def preset_info(preset: int) -> PresetInfo:
    """The preset of a ``Preset`` value (unspecified: classic)."""
    return _BY_VALUE.get(preset, PRESETS["classic"])


def preset_name(preset: int, lang: Lang) -> str:
    """The preset's name in ``lang``: ``"Pioche en famille"`` / ``"Family draw"``."""
    fr, en = preset_info(preset).names
    return fr if lang == "fr" else en


def choice_of(
    preset: str = "classic",
    seats: int = 0,
    hand_size: int = 0,
    turn_seconds: int = 0,
    teams: bool | None = None,
) -> game_pb2.RuleChoice | None:
    """The ``RuleChoice`` of a creation (None for the default game exactly as before rule
    sets: classic with nothing adjusted)."""
    if preset == "classic" and not (seats or hand_size or turn_seconds) and teams is None:
        return None
    choice = game_pb2.RuleChoice(seats=seats, hand_size=hand_size, turn_seconds=turn_seconds)
    choice.preset = PRESETS[preset].preset  # type: ignore[assignment]
    if teams is not None:
        choice.teams = teams
    return choice


# -- sides ----------------------------------------------------------------------------------


def has_stock(rules: game_pb2.RuleSet) -> bool:
    """Whether the rule set deals a stock to draw from (``draw`` with tiles left undealt: the
    app's game at four seats of seven tiles has none)."""
    return rules.draw and rules.seats * rules.hand_size + rules.set_aside < 28


def seat_count(view: game_pb2.TableView) -> int:
    """The seats of the table (``RuleSet.seats``; four for a view without rules)."""
    return view.rules.seats or len(view.seats) or 4


def has_teams(view: game_pb2.TableView) -> bool:
    """Whether partners play together (a view without rules: the default game, in teams)."""
    return view.rules.teams if view.rules.seats else True


def side_of(view: game_pb2.TableView, seat: int) -> int:
    """The side ``seat`` scores for: its team's index (0: A, 1: B) with teams, else itself."""
    return seat % 2 if has_teams(view) else seat


def side_scores(view: game_pb2.TableView) -> list[int]:
    """Every side's score, index = side."""
    if view.side_scores:
        return list(view.side_scores)
    if has_teams(view):
        return [view.score_team_a, view.score_team_b]
    return [s.score for s in view.seats]


def side_label(view: game_pb2.TableView, side: int, lang: Lang, *, capital: bool = False) -> str:
    """A side as players name it: ``"équipe A"`` with teams, the player's name without."""
    if has_teams(view):
        team = game_pb2.TEAM_A if side == 0 else game_pb2.TEAM_B
        return team_label(team, lang, capital=capital)
    return seat_name(view, side)


def side_members(view: game_pb2.TableView, side: int, lang: Lang) -> str:
    """The players of a team (``"Ann et Cid"``), or the seat's name."""
    if has_teams(view):
        return team_members(view, game_pb2.TEAM_A if side == 0 else game_pb2.TEAM_B, lang)
    return seat_name(view, side)


# -- the lobby --------------------------------------------------------------------------------


def _tiles(n: int, lang: Lang) -> str:
    if lang == "fr":
        return f"{n} domino{'s' if n > 1 else ''}"
    return f"{n} tile{'s' if n != 1 else ''}"


def rules_lines(view: game_pb2.TableView, lang: Lang) -> list[str]:
    """The table's rule set in words, two lines: the game (its name, the seats, the tiles,
    the stock) and the target with the range the host may choose.

    e.g. ``["Jeu : Pioche en famille · 3 joueurs, chacun pour soi · 5 dominos chacun ·
    pioche", "Objectif : 100 points (fixé par ce jeu)"]``."""
    rules = view.rules
    seats = seat_count(view)
    fr = lang == "fr"
    name = preset_name(rules.preset, lang)
    if has_teams(view):
        who = f"{seats} joueurs en deux équipes" if fr else f"{seats} players in two teams"
    elif seats == 2:
        who = "2 joueurs, face à face" if fr else "2 players, one against one"
    else:
        who = f"{seats} joueurs, chacun pour soi" if fr else f"{seats} players, each for themselves"
    hand = rules.hand_size or 7
    parts = [name, who, f"{_tiles(hand, lang)} {'chacun' if fr else 'each'}"]
    if rules.seats and has_stock(rules):
        parts.append("avec pioche" if fr else "with a stock")
    elif rules.seats:
        stock = "sans pioche" if fr else "no stock"
        undealt = rules.set_aside or max(0, 28 - seats * hand)
        if undealt:
            aside = _tiles(undealt, lang)
            stock += f" ({aside} mis de côté)" if fr else f" ({aside} set aside)"
        parts.append(stock)
    low, high = rules.min_target or 50, rules.max_target or 500
    step = rules.target_step or 50
    target = f"{view.target} points"
    if low == high:
        target += " (fixé par ce jeu)" if fr else " (fixed by this game)"
    elif fr:
        target += f" (de {low} à {high}, par {step})"
    else:
        target += f" ({low} to {high}, in steps of {step})"
    lines = [labelled("Jeu" if fr else "Game", " · ".join(parts), lang)]
    target_line = labelled("Objectif" if fr else "Target", target, lang)
    if rules.preset == game_pb2.PRESET_SITE and rules.turn_seconds:  # the table's choice
        target_line += f" · {rules.turn_seconds} s {'par tour' if fr else 'a turn'}"
    lines.append(target_line)
    return lines


# -- refusals -------------------------------------------------------------------------------

_FIELDS: Final[dict[str, tuple[str, str]]] = {
    "preset": (
        "Ce jeu n'existe pas : choisissez-en un de la liste.",
        "No such game: choose one from the list.",
    ),
    "seats": (
        "Ce jeu ne se joue pas à ce nombre de joueurs.",
        "This game is not played with that many players.",
    ),
    "hand_size": (
        "Ce jeu ne donne pas ce nombre de dominos à ce nombre de joueurs.",
        "This game does not deal that many tiles with that many players.",
    ),
    "turn_seconds": (
        "Ce jeu ne permet pas ce temps de jeu (ou ne laisse pas la table le choisir).",
        "This game does not allow that turn time (or does not let the table choose it).",
    ),
    "teams": (
        "Ce jeu ne permet pas ce choix d'équipes (les équipes se jouent à quatre).",
        "This game does not allow that choice of teams (teams play at four).",
    ),
    "practice": (
        "Une table d'entraînement a un robot, d'un niveau connu, à chaque place sauf la vôtre.",
        "A practice table has a robot, of a known level, in every seat but yours.",
    ),
    "fill_empty_seats": (
        "Ce niveau de robot n'existe pas pour les places vides : choisissez-en un de la liste.",
        "No such robot level for the empty seats: choose one from the list.",
    ),
    "replace_disconnected": (
        "Ce niveau de robot n'existe pas pour remplacer un joueur : choisissez-en un de la liste.",
        "No such robot level to replace a player: choose one from the list.",
    ),
    "return_seconds": (
        "Le temps pour revenir va de 1 à 15 minutes.",
        "The time to come back is 1 to 15 minutes.",
    ),
    "vote_seconds": (
        "Le temps pour voter va de 10 à 120 secondes.",
        "The time to vote is 10 to 120 seconds.",
    ),
}


def rules_invalid_text(field: str, lang: Lang) -> str | None:
    """The sentence for a rule choice refused on ``field`` (``ErrorInfo.metadata["field"]``
    of RULES_INVALID), or None for a field this client does not know."""
    pair = _FIELDS.get(field)
    if pair is None:
        return None
    return pair[0] if lang == "fr" else pair[1]


def target_invalid_text(info: PresetInfo, lang: Lang) -> str:
    """A refused target, with the preset's range."""
    low, high, step = info.min_target, info.max_target, info.step
    if low == high:
        if lang == "fr":
            return f"L'objectif de ce jeu est fixé à {low} points."
        return f"This game's target is fixed at {low} points."
    if lang == "fr":
        return f"L'objectif de ce jeu va de {low} à {high} points, par pas de {step}."
    return f"This game's target is {low} to {high} points, in steps of {step}."
