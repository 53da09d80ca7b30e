"""The start screen: your name; create a table choosing its game (the presets this server
plays, the default game first), its seats (where the game offers a choice: 2, 3 or 4, and at
the site's game 4 in pairs or each for themselves) and its target (the game's range: 50 to
500 in steps of 50 for the default game), or join one with an invitation code; below, the
unfinished games this computer holds a seat at (``seats.json``,
:mod:`services.client.seats`): ``↑``/``↓`` then ``Enter`` takes one back. A seat that no
longer works (table gone, game over, seat freed) is forgotten when tried, and a sentence
says so.

With a game that offers computer players (issue 20: the web games, the app's, the site's;
never the default game nor the family game) a row of options shows under the game: robots
of a chosen level take the empty seats when the host starts early, a robot of a chosen
level plays for a player who drops; at the site's game also the friendly end. *Practice
against robots* opens the practice screen
(:class:`~services.client.practice_screen.PracticeScreen`)."""

from __future__ import annotations

import time

from dominos.v1 import game_pb2
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.css.query import NoMatches
from textual.widgets import Button, Input, Label, OptionList, Select
from textual.widgets.option_list import Option

from services.client import texts
from services.client.base_screen import DominosScreen
from services.client.held_seats import saved_seat_text
from services.client.robots import (
    FRIENDLY_END_PRESETS,
    LEVELS,
    ROBOT_PRESETS,
    robot_label,
    robots_label,
    table_options,
)
from services.client.rule_sets import PLAYABLE, PRESETS, choice_of, preset_name
from services.client.seats import SavedSeat
from services.client.texts import Lang
from services.client.widgets import Plain

__all__ = ["SOLO_FOUR", "TARGETS", "StartScreen", "offer_preset", "seat_options", "seats_of"]

TARGETS: tuple[int, ...] = tuple(range(50, 501, 50))
"""The targets a host may choose (R16)."""

#: The seats option of the site's game at four without partners.
SOLO_FOUR = "4s"


def seat_options(preset: str, lang: Lang) -> list[tuple[str, str]]:
    """The seat choices of a preset, as ``(label, value)``: ``"3 joueurs"``; the site's game
    offers four in pairs and four each for themselves."""
    options = []
    for seats in PRESETS[preset].seats:
        if preset == "site" and seats == 4:
            pairs = "4 en équipes" if lang == "fr" else "4 in teams"
            solo = "4 chacun pour soi" if lang == "fr" else "4 each alone"
            options += [(pairs, "4"), (solo, SOLO_FOUR)]
        else:
            options.append((texts.ui("seats_default", lang, n=seats), str(seats)))
    return options


def seats_of(value: object) -> tuple[int, bool | None]:
    """A seats choice (the select's value) as its seat count and teams choice: ``"4s"`` is
    four without partners (None: the preset's default)."""
    if value == SOLO_FOUR:
        return 4, False
    return (int(value), None) if isinstance(value, str) and value.isdigit() else (0, None)


def offer_preset(screen: DominosScreen, key: str, lang: Lang) -> None:
    """A game chosen on ``screen``: its ``#seats`` select offers the game's seats (four, in
    pairs at the site's game, by default), its ``#target`` select the game's targets."""
    info = PRESETS[key]
    seats = screen.query_one("#seats", Select)
    options = seat_options(key, lang)
    seats.set_options(options)
    seats.value = options[-1][1] if key != "site" else "4"
    seats.disabled = len(options) == 1
    target = screen.query_one("#target", Select)
    target.set_options([(str(t), t) for t in info.targets])
    target.value = info.default_target
    target.disabled = len(info.targets) == 1


def _level_choices(key: str, lang: Lang) -> list[tuple[str, int]]:
    """The choices of an options select: off first, then each level."""
    if key == "fill":
        on = [(texts.ui("fill_on", lang, robots=robots_label(lv, lang)), lv) for lv in LEVELS]
    else:
        on = [(texts.ui("replace_on", lang, robot=robot_label(lv, lang)), lv) for lv in LEVELS]
    return [(texts.ui(f"{key}_off", lang), 0), *on]


class StartScreen(DominosScreen):
    """Create a table (name, target), join one (name, invitation code), or take back a seat
    held at an unfinished game (the list below, from the seat store)."""

    def __init__(self, lang: Lang, name: str) -> None:
        super().__init__()
        self.lang = lang
        self.player_name = name

    def compose(self) -> ComposeResult:
        """The form, then the held seats."""
        lang = self.lang
        with Vertical(id="start-form"):
            yield Label(texts.ui("title", lang), id="title")
            yield Label(texts.ui("your_name", lang))
            yield Input(value=self.player_name, max_length=24, id="name")
            yield Label(texts.ui("rules_label", lang))
            with Horizontal(classes="row"):
                yield Select(
                    [(preset_name(PRESETS[key].preset, lang), key) for key in PLAYABLE],
                    value="classic",
                    allow_blank=False,
                    id="preset",
                )
                yield Select(
                    seat_options("classic", lang), value="4", allow_blank=False, id="seats"
                )
                yield Select(
                    [(str(t), t) for t in TARGETS], value=100, allow_blank=False, id="target"
                )
                yield Button(texts.ui("create", lang), id="create", variant="primary")
            with Vertical(id="options"):  # games with robots only
                with Horizontal(classes="options-row"):
                    yield Select(
                        _level_choices("fill", lang),
                        value=0,
                        allow_blank=False,
                        compact=True,
                        id="fill",
                    )
                    yield Select(
                        _level_choices("replace", lang),
                        value=0,
                        allow_blank=False,
                        compact=True,
                        id="replace",
                    )
                yield Select(
                    [(texts.ui("friendly_off", lang), 0), (texts.ui("friendly_on", lang), 1)],
                    value=0,
                    allow_blank=False,
                    compact=True,
                    id="friendly",
                )
            yield Label(texts.ui("code", lang))
            with Horizontal(classes="row"):
                yield Input(max_length=16, id="code")
                yield Button(texts.ui("join", lang), id="join")
                yield Button(texts.ui("practice", lang), id="practice")
            yield Plain(texts.ui("saved_title", lang), id="saved-title")
            yield OptionList(id="saved")
            yield Plain(texts.ui("start_keys", lang), id="start-keys")
            yield Plain("", id="error")

    def on_mount(self) -> None:
        """List the held seats."""
        self.ready = True
        self.query_one("#seats", Select).disabled = True  # the default game: four
        self._show_options("classic")
        self.refresh_saved()

    def on_select_changed(self, event: Select.Changed) -> None:
        """A game chosen: offer its seats, its targets and, with robots, its options."""
        if event.select.id != "preset" or not isinstance(event.value, str):
            return
        offer_preset(self, event.value, self.lang)
        self._show_options(event.value)

    def _show_options(self, preset: str) -> None:
        """The options row only for games with robots; the friendly end only at the site's."""
        self.query_one("#options").display = preset in ROBOT_PRESETS
        self.query_one("#friendly").display = preset in FRIENDLY_END_PRESETS

    def _preset(self) -> str:
        preset = self.query_one("#preset", Select).value
        return preset if isinstance(preset, str) else "classic"

    def chosen_rules(self) -> game_pb2.RuleChoice | None:
        """The rule set the form holds (None: the default game, as before rule sets)."""
        preset = self._preset()
        if preset == "classic":
            return None
        seats, teams = seats_of(self.query_one("#seats", Select).value)
        return choice_of(preset, seats, teams=teams)

    def chosen_options(self) -> game_pb2.TableOptions | None:
        """The options the form holds (None: none, and always with a game without robots:
        the client never asks for a robot where the game has none)."""
        preset = self._preset()
        if preset not in ROBOT_PRESETS:
            return None

        def chosen(select_id: str) -> int:
            value = self.query_one(f"#{select_id}", Select).value
            return value if isinstance(value, int) else 0

        friendly = preset in FRIENDLY_END_PRESETS and bool(chosen("friendly"))
        return table_options(chosen("fill"), chosen("replace"), friendly)

    def refresh_saved(self) -> None:
        """Redraw the list of held seats from the store (hidden when there are none)."""
        try:
            listing = self.query_one("#saved", OptionList)
        except NoMatches:
            return
        store = self.dominos.seats
        saved = store.all() if store is not None else []
        now = time.time()
        listing.set_options(
            Option(Content(self._seat_text(seat, now)), id=seat.code) for seat in saved
        )
        listing.display = bool(saved)
        self.query_one("#saved-title", Plain).display = bool(saved)

    def _seat_text(self, seat: SavedSeat, now: float) -> str:
        age = now - seat.saved_at
        return saved_seat_text(seat.code, seat.name, seat.seat, age, self.lang)

    async def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        """Enter on a held seat takes it back."""
        if event.option.id:
            app = self.dominos
            app.send(app.resume(event.option.id))

    async def on_button_pressed(self, event: Button.Pressed) -> None:
        """Create or join with what the form holds."""
        app = self.dominos
        name = self.query_one("#name", Input).value.strip()
        if event.button.id == "create":
            target = self.query_one("#target", Select).value
            chosen = int(target) if isinstance(target, int) else 100
            app.send(app.create_table(name, chosen, self.chosen_rules(), self.chosen_options()))
        elif event.button.id == "join":
            app.send(app.join_table(self.query_one("#code", Input).value, name))
        elif event.button.id == "practice":
            self.show_error("")
            app.open_practice(name)

    async def on_input_submitted(self, event: Input.Submitted) -> None:
        """Enter in the code field joins."""
        if event.input.id == "code" and event.value.strip():
            app = self.dominos
            app.send(app.join_table(event.value, self.query_one("#name", Input).value.strip()))

    def show_error(self, message: str) -> None:
        """Say why creating, joining or resuming failed."""
        self.query_one("#error", Plain).update(message)
