"""The game screen (services/client/game_screen.py) on crafted views, at the smallest terminal
it supports (80 x 24): a crowded mid-round table, the end of the game and the history fit
without scrolling or clipping; the newest tile is highlighted; the turn is announced by the
bell and a flash; messages out of turn say so and go stale."""

from __future__ import annotations

import re

from dominos.v1 import game_pb2
from rich.text import Text
from textual.widgets import Button, Static

from services.client import texts
from services.client.app import DominosApp
from services.client.summaries import winner_text
from services.client.widgets import screen_text, widget_text
from testing.waiting import wait_for
from tests.client.pilots import fits, shows_game, text_of
from tests.client.views import (
    LONG_NAMES,
    SMALL,
    TABLE_WIDGETS,
    crowded,
    finished,
    ruled_summary,
    ruled_view,
)


async def test_a_crowded_mid_round_table_fits_80_by_24_in_both_languages() -> None:
    for lang in texts.LANGS:
        app = DominosApp(lang=lang, connect=False)
        async with app.run_test(size=SMALL) as pilot:
            app.apply_view(crowded())
            await shows_game(pilot, app)
            app.game_screen.say(texts.ui("unavailable", lang))  # the longest message
            await pilot.pause()
            assert fits(app, TABLE_WIDGETS) == [], lang
            shown = screen_text(app)
            print(f"\n{shown}")
            hand = text_of(app, "hand")
            assert all(f"{i}:[" in hand for i in range(1, 8)), hand
            assert "\n" not in hand  # the seven tiles on one line
            assert "Chloé-Marguerite" in text_of(app, "north")
            assert text_of(app, "west").startswith("Éric de la")
            assert text_of(app, "east").startswith("Benoît-Alexan")
            assert ("absent" if lang == "fr" else "away") in text_of(app, "west")
            assert texts.ui("keys", lang) in shown
            assert not re.search(r"\([RSD]\d+\)", shown)  # no rule ids on screen


async def test_the_end_of_the_game_fits_80_by_24_with_the_winner_and_the_hands() -> None:
    for lang in texts.LANGS:
        app = DominosApp(lang=lang, connect=False)
        async with app.run_test(size=SMALL) as pilot:
            app.apply_view(finished())
            await shows_game(pilot, app)
            assert fits(app, ("header", "summary", "south", "keys")) == [], lang
            summary = text_of(app, "summary")
            assert winner_text(app.view, lang) in summary  # type: ignore[arg-type]
            assert ("Mains restantes" if lang == "fr" else "Hands left") in summary


async def test_the_history_panel_fits_80_by_24_and_h_toggles_it() -> None:
    app = DominosApp(lang="fr", connect=False)
    async with app.run_test(size=SMALL) as pilot:
        for version in range(3, 30):
            view = crowded(turn_seat=version % 4, version=version)
            app.apply_view(view)
        await shows_game(pilot, app)
        await pilot.press("h")
        await pilot.pause()
        history = app.game_screen.query_one("#history", Static)
        assert history.display and not app.game_screen.query_one("#middle").display
        assert fits(app, ("header", "history", "south", "hand", "keys")) == []
        shown = widget_text(history)
        assert "Coups de la manche 12" in shown and "Manches jouées" in shown
        await pilot.press("h")
        await pilot.pause()
        assert not history.display and app.game_screen.query_one("#middle").display


async def test_the_newest_tile_is_highlighted_in_the_chain() -> None:
    app = DominosApp(lang="fr", connect=False)
    async with app.run_test(size=SMALL) as pilot:
        app.apply_view(crowded())
        await shows_game(pilot, app)
        chain = app.game_screen.query_one("#chain", Static).content
        assert isinstance(chain, Text)
        marked = {chain.plain[span.start : span.end] for span in chain.spans}
        assert marked == {"[2|5]"}  # laid last, on the right end


async def test_your_turn_rings_the_bell_and_flashes_the_turn_line_once() -> None:
    app = DominosApp(lang="fr", connect=False)
    bells: list[None] = []
    app.bell = lambda: bells.append(None)  # type: ignore[method-assign]
    async with app.run_test(size=SMALL) as pilot:
        app.apply_view(crowded(turn_seat=3, version=3))
        await shows_game(pilot, app)
        assert bells == []
        app.apply_view(crowded(turn_seat=0, version=4))
        await pilot.pause()
        turn = app.game_screen.query_one("#turn", Static)
        assert bells == [None] and turn.has_class("flash")
        app.apply_view(crowded(turn_seat=0, version=5))  # still our turn: no second bell
        await pilot.pause()
        assert bells == [None]
        await wait_for(lambda: not turn.has_class("flash"), timeout=5, message="flash ends")


async def test_playing_out_of_turn_says_it_is_not_your_turn_until_the_state_changes() -> None:
    app = DominosApp(lang="fr", connect=False)
    async with app.run_test(size=SMALL) as pilot:
        app.apply_view(crowded(turn_seat=2, version=3))
        await shows_game(pilot, app)
        for key in ("enter", "l", "p"):
            app.game_screen.say("")
            await pilot.press(key)
            await pilot.pause()
            assert text_of(app, "message") == "Ce n'est pas votre tour.", key
        presence = crowded(turn_seat=2, version=4)
        presence.seats[1].connected = False
        app.apply_view(presence)  # nothing changed in the game: the message holds
        await pilot.pause()
        assert text_of(app, "message") == "Ce n'est pas votre tour."
        moved = crowded(turn_seat=3, version=5)
        moved.chain.add(left=5, right=0, seat=2)
        app.apply_view(moved)
        await pilot.pause()
        assert text_of(app, "message") == ""


def _drawn_table(name: str, seats: int) -> game_pb2.TableView:
    """A mid-round table of ``seats`` seats with long names, a long chain, a hand grown by
    draws (eleven tiles, none fits), the stock, and a draw just made."""
    view = ruled_view(name, seats, names=LONG_NAMES)
    view.turn_seat = 0
    view.can_draw = True
    base = crowded()
    view.chain.extend(base.chain)
    view.left_end, view.right_end = 5, 5
    for low, high in ((0, 1), (0, 2), (1, 2), (0, 3), (2, 6), (0, 4), (1, 6), (2, 3), (0, 6),
                      (3, 4), (4, 6)):  # fmt: skip
        view.hand.add(low=low, high=high)
    for seat in range(1, seats):
        view.seats[seat].passed_on.extend([1, 3, 6])
    view.seats[seats - 1].connected = False
    view.last_action.kind = game_pb2.ACTION_KIND_DREW
    view.last_action.seat = 0
    view.last_action.drawn = 1
    return view


async def test_a_three_seat_draw_table_fits_80_by_24_in_both_languages() -> None:
    for lang in texts.LANGS:
        app = DominosApp(lang=lang, connect=False)
        async with app.run_test(size=SMALL) as pilot:
            app.apply_view(_drawn_table("family_draw", 3))
            await shows_game(pilot, app)
            app.game_screen.say(texts.ui("unavailable", lang))
            await pilot.pause()
            widgets = (*(w for w in TABLE_WIDGETS if w != "north"), "draw")
            assert fits(app, widgets) == [], lang
            shown = screen_text(app)
            print(f"\n{shown}")
            screen = app.game_screen
            assert not screen.query_one("#north").display  # nobody across at three
            assert text_of(app, "east").startswith("Benoît-Alexan")  # plays after us
            assert text_of(app, "west").startswith("Chloé-Margue")
            assert ("score : 30" if lang == "fr" else "score: 30") in text_of(app, "east")
            assert ("Pioche 6" if lang == "fr" else "Stock 6") in text_of(app, "header")
            assert not screen.query_one("#draw", Button).disabled
            assert screen.query_one("#pass", Button).disabled
            assert texts.ui("keys_draw", lang) in shown
            assert ("a pioché un domino" if lang == "fr" else "drew a tile") in shown
            assert "11:[" in text_of(app, "hand")
            assert not re.search(r"\([RSD]\d+\)", shown)


async def test_a_two_seat_table_fits_80_by_24_with_the_opponent_across() -> None:
    for lang in texts.LANGS:
        app = DominosApp(lang=lang, connect=False)
        async with app.run_test(size=SMALL) as pilot:
            app.apply_view(_drawn_table("site", 2))
            await shows_game(pilot, app)
            app.game_screen.say(texts.ui("unavailable", lang))
            await pilot.pause()
            widgets = (*(w for w in TABLE_WIDGETS if w not in ("west", "east")), "draw")
            assert fits(app, widgets) == [], lang
            print(f"\n{screen_text(app)}")
            assert text_of(app, "north").startswith("Benoît-Alexandre Dupont")
            assert not app.game_screen.query_one("#west").display
            assert not app.game_screen.query_one("#east").display


async def test_a_three_seat_round_summary_and_the_winner_fit_80_by_24() -> None:
    for lang in texts.LANGS:
        app = DominosApp(lang=lang, connect=False)
        async with app.run_test(size=SMALL) as pilot:
            view = ruled_view("web_draw", 3, game_pb2.PHASE_FINISHED, names=LONG_NAMES)
            ruled_summary(view, game_pb2.ROUND_OUTCOME_BLOCKED, 20, [3, 10, 13], 0)
            view.phase = game_pb2.PHASE_FINISHED
            view.winner_side = 1
            app.apply_view(view)
            await shows_game(pilot, app)
            assert fits(app, ("header", "summary", "south", "keys")) == [], lang
            summary = text_of(app, "summary")
            assert winner_text(view, lang) in summary
            assert "23 - 3 = 20" in summary


async def test_t_and_enter_draw_only_when_nothing_fits() -> None:
    app = DominosApp(lang="fr", connect=False)
    sent: list[str] = []

    async def draw_turn() -> None:
        sent.append("draw")

    app.draw_turn = draw_turn  # type: ignore[method-assign]
    async with app.run_test(size=SMALL) as pilot:
        view = _drawn_table("family_draw", 3)
        app.apply_view(view)
        await shows_game(pilot, app)
        await pilot.press("t")
        await pilot.press("enter")
        await pilot.pause()
        assert sent == ["draw", "draw"]
        await pilot.press("p")
        await pilot.pause()
        assert text_of(app, "message") == "Rien ne va : piochez (T)."
        fits_now = _drawn_table("family_draw", 3)
        fits_now.version = 8
        fits_now.can_draw = False
        fits_now.legal_moves.add(tile=game_pb2.Tile(low=0, high=1), end=game_pb2.END_LEFT)
        app.apply_view(fits_now)
        await pilot.pause()
        await pilot.press("t")
        await pilot.pause()
        assert sent == ["draw", "draw"]
        assert text_of(app, "message") == "Un domino va : on ne pioche que si rien ne va."
