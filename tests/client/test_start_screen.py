"""The start screen (services/client/start_screen.py): with held seats and an error it fits
80 x 24 (with the site game's options too), Ctrl+C quits it even from a text field, robot
options show only with the games that have robots (never classic nor the family game) and
go with the creation."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from dominos.v1 import game_pb2
from textual.widgets import Select

from services.client import texts
from services.client.app import DominosApp
from services.client.robots import ROBOT_PRESETS
from services.client.rule_sets import PLAYABLE
from services.client.seats import SeatStore
from services.client.start_screen import StartScreen
from services.client.widgets import screen_text
from testing.waiting import wait_for
from tests.client.pilots import fits
from tests.client.views import SEAT, SMALL


async def test_the_start_screen_with_held_seats_and_an_error_fits_80_by_24(
    tmp_path: Path,
) -> None:
    store = SeatStore(tmp_path / "seats.json")
    for code in ("AAAAA22222", "BBBBB22222", "CCCCC22222", "DDDDD22222"):
        store.save(code, SEAT, "gw", "Chloé-Marguerite")
    app = DominosApp(lang="fr", connect=False, seats=store)
    async with app.run_test(size=SMALL) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, StartScreen)
        app.screen.show_error(texts.ui("seat_forgotten", "fr", code="AAAAA-22222"))
        await pilot.pause()
        assert fits(app, ("name", "target", "create", "code", "join", "saved", "error")) == []
        shown = screen_text(app)
        assert "DDDDD-22222 · Chloé-Marguerite · place 1 · à l'instant" in shown
        assert "Ctrl+C : quitter" in shown


async def test_ctrl_c_quits_the_start_screen_even_from_a_text_field() -> None:
    app = DominosApp(lang="fr", connect=False)
    async with app.run_test(size=SMALL) as pilot:
        await pilot.pause()
        assert app.focused is not None and app.focused.id == "name"
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert app._exit
    assert app.return_code == 0


async def choose(app: DominosApp, pilot: Any, preset: str) -> StartScreen:
    screen = app.screen
    assert isinstance(screen, StartScreen)
    screen.query_one("#preset", Select).value = preset
    await pilot.pause()
    return screen


async def test_robot_options_are_offered_only_with_the_games_that_have_robots() -> None:
    app = DominosApp(lang="fr", connect=False)
    async with app.run_test(size=SMALL) as pilot:
        await pilot.pause()
        for preset in PLAYABLE:
            screen = await choose(app, pilot, preset)
            options = screen.query_one("#options")
            assert options.display == (preset in ROBOT_PRESETS), preset
            assert screen.query_one("#friendly").display == (preset == "site"), preset
            for select_id in ("fill", "replace", "friendly"):  # even if hidden selects hold them
                screen.query_one(f"#{select_id}", Select).value = 1
            chosen = screen.chosen_options()
            if preset in ("classic", "family_draw"):
                assert chosen is None, preset  # never a robot where the game has none
            else:
                assert chosen is not None and chosen.fill_empty_seats == 1, preset
                assert chosen.replace_disconnected == 1
                assert chosen.friendly_end == (preset == "site"), preset
            for select_id in ("fill", "replace", "friendly"):
                screen.query_one(f"#{select_id}", Select).value = 0
            assert screen.chosen_options() is None  # nothing chosen: no options at all


async def test_create_sends_the_robot_options_chosen_with_the_game() -> None:
    app = DominosApp(lang="en", connect=False, player_name="Ana")
    created: list[tuple[object, ...]] = []

    async def create_table(
        name: str,
        target: int,
        rules: game_pb2.RuleChoice | None = None,
        options: game_pb2.TableOptions | None = None,
    ) -> None:
        created.append((name, target, rules, options))

    app.create_table = create_table  # type: ignore[method-assign]
    async with app.run_test(size=SMALL) as pilot:
        await pilot.pause()
        screen = await choose(app, pilot, "web_block")
        screen.query_one("#fill", Select).value = game_pb2.ROBOT_LEVEL_SOLID
        screen.query_one("#replace", Select).value = game_pb2.ROBOT_LEVEL_STRONG
        await pilot.pause()
        assert "Empty seats: solid robots" in screen_text(app)
        assert "Player drops: strong robot" in screen_text(app)
        await pilot.click("#create")
        await wait_for(lambda: created, timeout=5, message="create")
    name, target, rules, options = created[0]
    assert (name, target) == ("Ana", 100)
    assert isinstance(rules, game_pb2.RuleChoice) and rules.preset == game_pb2.PRESET_WEB_BLOCK
    assert isinstance(options, game_pb2.TableOptions)
    assert options.fill_empty_seats == game_pb2.ROBOT_LEVEL_SOLID
    assert options.replace_disconnected == game_pb2.ROBOT_LEVEL_STRONG
    assert not options.friendly_end and not options.practice


async def test_the_site_games_options_with_held_seats_and_an_error_fit_80_by_24(
    tmp_path: Path,
) -> None:
    for lang in texts.LANGS:
        store = SeatStore(tmp_path / f"seats-{lang}.json")
        for code in ("AAAAA22222", "BBBBB22222", "CCCCC22222", "DDDDD22222"):
            store.save(code, SEAT, "gw", "Chloé-Marguerite")
        app = DominosApp(lang=lang, connect=False, seats=store)
        async with app.run_test(size=SMALL) as pilot:
            await pilot.pause()
            screen = await choose(app, pilot, "site")
            screen.query_one("#fill", Select).value = game_pb2.ROBOT_LEVEL_BEGINNER  # longest
            screen.show_error(texts.ui("seat_forgotten", lang, code="AAAAA-22222"))
            await pilot.pause()
            widgets = ("name", "target", "create", "fill", "replace", "friendly", "code", "join")
            assert fits(app, (*widgets, "practice", "saved", "error")) == [], lang
            print(f"\n{screen_text(app)}")
            assert texts.ui("friendly_off", lang) in screen_text(app)
            assert texts.ui("practice", lang) in screen_text(app)
