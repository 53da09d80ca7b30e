"""The practice screen (issue 20): play alone against robots at once. Choose the game among
those that offer computer players (the web games, the app's, the site's), its seats (where
the game offers a choice), its target and the robots' level (one for every robot, *solid*
by default); *Play* creates a practice table (``TableOptions.practice``: a robot in every
seat after yours), starts it and opens the game: no invitation, nobody else sits down. At
the site's game the friendly end is on, so ``F`` ends the practice game at once, unscored.
``Escape`` goes back to the start screen."""

from __future__ import annotations

from typing import ClassVar

from dominos.v1 import game_pb2
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.widgets import Button, Label, Select

from services.client import texts
from services.client.base_screen import DominosScreen
from services.client.robots import (
    FRIENDLY_END_PRESETS,
    LEVELS,
    ROBOT_PRESETS,
    level_word,
    practice_options,
)
from services.client.rule_sets import PRESETS, choice_of, preset_name
from services.client.start_screen import offer_preset, seat_options, seats_of
from services.client.texts import Lang
from services.client.widgets import Plain

__all__ = ["PracticeScreen"]


class PracticeScreen(DominosScreen):
    """Choose a practice game (game, seats, target, robots' level) and play it at once."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "back", "Back")]

    def __init__(self, lang: Lang, name: str) -> None:
        super().__init__()
        self.lang = lang
        self.player_name = name

    def compose(self) -> ComposeResult:
        """The form."""
        lang = self.lang
        first = ROBOT_PRESETS[0]
        info = PRESETS[first]
        levels = [(level_word(level, lang, plural=True).capitalize(), level) for level in LEVELS]
        with Vertical(id="practice-form"):
            yield Label(texts.ui("practice_title", lang), id="title")
            yield Plain(texts.ui("practice_intro", lang), id="practice-intro")
            yield Label(texts.ui("practice_label", lang))
            with Horizontal(classes="row"):
                yield Select(
                    [(preset_name(PRESETS[key].preset, lang), key) for key in ROBOT_PRESETS],
                    value=first,
                    allow_blank=False,
                    id="preset",
                )
                seats = seat_options(first, lang)
                yield Select(seats, value=seats[-1][1], allow_blank=False, id="seats")
                yield Select(
                    [(str(t), t) for t in info.targets],
                    value=info.default_target,
                    allow_blank=False,
                    id="target",
                )
                yield Select(
                    levels, value=game_pb2.ROBOT_LEVEL_SOLID, allow_blank=False, id="level"
                )
            with Horizontal(classes="row"):
                yield Button(texts.ui("practice_play", lang), id="play", variant="primary")
                yield Button(texts.ui("practice_back", lang), id="back")
            yield Plain(texts.ui("practice_keys", lang), id="practice-keys")
            yield Plain("", id="error")

    def on_mount(self) -> None:
        """Ready; the game list has the focus."""
        self.ready = True
        self.query_one("#preset", Select).focus()

    def on_select_changed(self, event: Select.Changed) -> None:
        """A game chosen: offer its seats and its targets."""
        if event.select.id == "preset" and isinstance(event.value, str):
            offer_preset(self, event.value, self.lang)

    def chosen(self) -> tuple[int, game_pb2.RuleChoice, game_pb2.TableOptions]:
        """What the form holds: the target, the rule set, the practice options (a robot of
        the chosen level in every seat after the host's; the friendly end at the site's
        game)."""
        preset = self.query_one("#preset", Select).value
        key = preset if isinstance(preset, str) else ROBOT_PRESETS[0]
        seats, teams = seats_of(self.query_one("#seats", Select).value)
        seats = seats or PRESETS[key].seats[-1]
        rules = choice_of(key, seats, teams=teams)
        assert rules is not None  # never the default game
        level = self.query_one("#level", Select).value
        options = practice_options(
            seats, level if isinstance(level, int) else game_pb2.ROBOT_LEVEL_SOLID
        )
        options.friendly_end = key in FRIENDLY_END_PRESETS
        target = self.query_one("#target", Select).value
        return (target if isinstance(target, int) else PRESETS[key].default_target), rules, options

    async def on_button_pressed(self, event: Button.Pressed) -> None:
        """Play, or go back."""
        if event.button.id == "play":
            self.show_error("")
            app = self.dominos
            target, rules, options = self.chosen()
            app.send(app.create_practice(self.player_name, target, rules, options))
        elif event.button.id == "back":
            self.action_back()

    def action_back(self) -> None:
        """Back to the start screen."""
        self.app.pop_screen()

    def show_error(self, message: str) -> None:
        """Say why the practice table could not be created or started."""
        self.query_one("#error", Plain).update(message)
