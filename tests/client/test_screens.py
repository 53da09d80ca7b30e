"""The terminal client's screens on crafted views, at the smallest terminal it supports
(80 x 24): everything essential fits without scrolling or clipping (lobby, a crowded
mid-round table, the end of the game, the start screen with held seats, the history); the
turn is announced by the bell and a flash; messages out of turn say so and go stale; Start
with fewer than four says why; quitting asks first and Ctrl+C works everywhere.

What needs a cluster (leaving a lobby, the held seats taken back, a real mid-round table) is
in test_recovery.py and test_capture.py."""

from __future__ import annotations

import re
from pathlib import Path

from dominos.v1 import game_pb2
from rich.text import Text
from textual.widgets import Static

from services.client import texts
from services.client.api import SeatCredentials
from services.client.seats import SeatStore
from services.client.tui import ConfirmQuit, DominosApp, StartScreen, screen_text, widget_text
from testing.waiting import wait_for
from tests.client.pilots import fits, shows_game, text_of

SMALL = (80, 24)
LONG_NAMES = ("Ana", "Benoît-Alexandre Dupont", "Chloé-Marguerite", "Éric de la Fontaine")
TABLE_WIDGETS = (
    "header", "north", "west", "east", "chain", "ends", "south", "hand", "turn", "pass",
    "message", "last-action", "keys",
)  # fmt: skip
SEAT = SeatCredentials("t" * 22, 0, "token")


def view_of(phase: int, your_seat: int = 0, **fields: object) -> game_pb2.TableView:
    view = game_pb2.TableView(
        table_id="t",
        version=fields.pop("version", 3),  # type: ignore[arg-type]
        phase=phase,  # type: ignore[arg-type]
        target=500,
        your_seat=your_seat,
        round_number=12,
        opener_seat=3,
        server_time_ms=1_000_000,
        turn_deadline_ms=1_030_000,
        score_team_a=485,
        score_team_b=470,
    )
    for seat, name in enumerate(LONG_NAMES):
        view.seats.add(
            seat=seat, occupied=True, name=name, host=seat == 0, tile_count=7, connected=True
        )
    for name, value in fields.items():
        setattr(view, name, value)
    return view


def crowded(turn_seat: int = 0, version: int = 3) -> game_pb2.TableView:
    """A long chain with every double, a full hand, passes on every side, someone away."""
    view = view_of(game_pb2.PHASE_PLAYING, turn_seat=turn_seat, version=version)
    chain = [
        (5, 5), (5, 3), (3, 3), (3, 6), (6, 6), (6, 1), (1, 1), (1, 4), (4, 4), (4, 2),
        (2, 2), (2, 0), (0, 0), (0, 6), (6, 5), (5, 1), (1, 3), (3, 4), (4, 6), (6, 2), (2, 5),
    ]  # fmt: skip
    for left, right in chain:
        view.chain.add(left=left, right=right, seat=1)
    view.left_end, view.right_end = 5, 5
    for low, high in ((0, 1), (0, 2), (1, 2), (3, 5), (4, 5), (0, 3), (2, 6)):
        view.hand.add(low=low, high=high)
    if turn_seat == 0:
        view.legal_moves.add(tile=game_pb2.Tile(low=3, high=5), end=game_pb2.END_LEFT)
        view.legal_moves.add(tile=game_pb2.Tile(low=4, high=5), end=game_pb2.END_RIGHT)
    for seat, numbers in ((1, [2, 4, 5, 6]), (2, [1, 3, 6]), (3, [0, 1, 2, 3, 4])):
        view.seats[seat].passed_on.extend(numbers)
        view.seats[seat].tile_count = 3
    view.seats[3].connected = False
    view.last_action.kind = game_pb2.ACTION_KIND_PLAYED
    view.last_action.seat = 3
    view.last_action.auto_play = game_pb2.AUTO_PLAY_CAUSE_AWAY
    view.last_action.move.tile.low, view.last_action.move.tile.high = 2, 5
    view.last_action.move.end = game_pb2.END_RIGHT
    return view


def finished(version: int = 9) -> game_pb2.TableView:
    view = view_of(game_pb2.PHASE_FINISHED, version=version, winner=game_pb2.TEAM_A)
    view.score_team_a = 512
    lost = [(4, 6), (5, 6), (1, 5)]
    hands = [
        game_pb2.RevealedHand(
            seat=s,
            points=27 if s % 2 else 0,
            tiles=[game_pb2.Tile(low=a, high=b) for a, b in lost] if s % 2 else [],
        )
        for s in range(4)
    ]
    view.last_round.CopyFrom(
        game_pb2.RoundSummary(
            round_number=12,
            outcome=game_pb2.ROUND_OUTCOME_DOMINO,
            scoring_team=game_pb2.TEAM_A,
            points=27,
            domino_seat=2,
            opener_seat=3,
            hands=hands,
        )
    )
    return view


async def test_the_lobby_fits_80_by_24() -> None:
    app = DominosApp(lang="fr", connect=False)
    async with app.run_test(size=SMALL) as pilot:
        app.code = "ABCDE23456"
        app.apply_view(view_of(game_pb2.PHASE_WAITING))
        await pilot.pause()
        app.set_status("Connecté · 127.0.0.1:50051")
        app.lobby_screen.say(texts.ui("unavailable", "fr"))  # the longest message
        await pilot.pause()
        assert fits(app, ("lobby", "start", "lobby-hint", "message", "status")) == []
        shown = screen_text(app)
        assert "Code d'invitation : ABCDE-23456" in shown
        assert "Éric de la Fontaine (équipe B)" in shown
        assert texts.ui("lobby_host_keys", "fr") in shown


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
            assert texts.winner_text(app.view, lang) in summary  # type: ignore[arg-type]
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


async def test_start_with_fewer_than_four_says_why_to_the_host_and_a_guest() -> None:
    app = DominosApp(lang="fr", connect=False)
    async with app.run_test(size=SMALL) as pilot:
        view = view_of(game_pb2.PHASE_WAITING)
        view.seats[2].Clear()
        view.seats[3].Clear()
        app.apply_view(view)
        await pilot.pause()
        await pilot.press("s")
        await pilot.pause()
        assert (
            text_of(app, "message") == "Il faut quatre joueurs pour lancer la partie : 2/4 assis."
        )
        guest = view_of(game_pb2.PHASE_WAITING, your_seat=1, version=4)
        app.apply_view(guest)
        await pilot.pause()
        assert text_of(app, "message") == ""  # two more seated: the old reason is gone
        await pilot.press("s")
        await pilot.pause()
        assert text_of(app, "message") == "Seul l'hôte peut lancer la partie."


async def test_ctrl_c_quits_the_start_screen_even_from_a_text_field() -> None:
    app = DominosApp(lang="fr", connect=False)
    async with app.run_test(size=SMALL) as pilot:
        await pilot.pause()
        assert app.focused is not None and app.focused.id == "name"
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert app._exit
    assert app.return_code == 0


async def test_quitting_mid_game_asks_first_and_says_how_to_come_back() -> None:
    app = DominosApp("gw.example:443", lang="fr", connect=False)
    async with app.run_test(size=SMALL) as pilot:
        app.credentials, app.code = SEAT, "ABCDE23456"
        app.apply_view(crowded(turn_seat=2))
        await shows_game(pilot, app)
        await pilot.press("q")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmQuit)
        question = widget_text(app.screen.query_one("#question", Static))
        command = "dominos play --gateway gw.example:443 --resume ABCDE23456"
        assert question.endswith(f"Pour revenir :\n{command}")  # on its own line, to copy
        assert "la table joue pour vous" in question
        assert command in screen_text(app)
        await pilot.press("n")
        await pilot.pause()
        assert not isinstance(app.screen, ConfirmQuit) and not app._exit
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmQuit)
        await pilot.press("ctrl+c")  # a second Ctrl+C: yes
        await wait_for(lambda: app._exit, timeout=5, message="exit")
    assert command in app.farewell and "la table joue pour vous" in app.farewell


async def test_quitting_a_finished_game_asks_nothing() -> None:
    app = DominosApp(lang="en", connect=False)
    async with app.run_test(size=SMALL) as pilot:
        app.credentials, app.code = SEAT, "ABCDE23456"
        app.apply_view(finished())
        await shows_game(pilot, app)
        await pilot.press("q")
        await pilot.pause()
        assert app._exit and app.farewell == ""
