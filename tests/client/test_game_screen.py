"""The game screen (services/client/game_screen.py) on crafted views, at the smallest terminal
it supports (80 x 24): a crowded mid-round table, the end of the game and the history fit
without scrolling or clipping; the newest tile is highlighted; the turn is announced by the
bell and a flash; messages out of turn say so and go stale; robots, a stand-in, the
friendly-end vote and its keys, a game ended by consent."""

from __future__ import annotations

import re

from dominos.v1 import game_pb2
from rich.text import Text
from textual.widgets import Button, Static

from services.client import texts
from services.client.app import DominosApp
from services.client.friendly_end import vote_closed_text
from services.client.robots import clock_time
from services.client.summaries import unscored_text, winner_text
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
    rules_of,
    view_of,
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


# -- robots and the friendly end (issue 20) ---------------------------------------------------


def robot_table(vote: bool, version: int = 3) -> game_pb2.TableView:
    """The crowded table at a site game with the friendly end: a strong robot east, the
    player west dropped and played by a robot meanwhile; with ``vote`` the partner proposed
    the friendly end and it waits for us and west."""
    view = crowded(turn_seat=0 if not vote else 1, version=version)
    view.rules.CopyFrom(rules_of("site", seats=4))
    view.options.friendly_end = True
    view.options.replace_disconnected = game_pb2.ROBOT_LEVEL_SOLID
    view.seats[1].name = "Robot 2"
    view.seats[1].robot = game_pb2.ROBOT_LEVEL_STRONG
    view.seats[3].stand_in = game_pb2.ROBOT_LEVEL_SOLID
    view.seats[3].stand_in_until_ms = 1_700_000_000_000
    if vote:
        view.vote.CopyFrom(
            game_pb2.FriendlyEndVote(
                proposer=2, accepted=[2], waiting=[0, 3], deadline_ms=1_024_000
            )
        )
        view.turn_deadline_ms = 1_024_000
        view.last_action.CopyFrom(
            game_pb2.LastAction(kind=game_pb2.ACTION_KIND_END_PROPOSED, seat=2, until_ms=1_024_000)
        )
    return view


async def test_robots_a_stand_in_and_a_vote_fit_80_by_24_in_both_languages() -> None:
    for lang in texts.LANGS:
        app = DominosApp(lang=lang, connect=False)
        async with app.run_test(size=SMALL) as pilot:
            app.apply_view(robot_table(vote=False))
            await shows_game(pilot, app)
            assert fits(app, (*TABLE_WIDGETS, "vote")) == [], lang
            assert text_of(app, "vote") == texts.ui("friendly_end_hint", lang)
            east, west = text_of(app, "east"), " ".join(text_of(app, "west").split())
            assert east.startswith("Robot 2 (B)\n" + ("robot fort" if lang == "fr" else "strong"))
            clock = clock_time(1_700_000_000_000)
            if lang == "fr":
                assert f"joué par un robot (retour avant {clock})" in west and "absent" not in west
            else:
                assert f"played by a robot (back by {clock})" in west and "away" not in west

            app.apply_view(robot_table(vote=True, version=4))
            await pilot.pause()
            app.game_screen.say(texts.ui("unavailable", lang))  # the longest message
            await pilot.pause()
            widgets = (*(w for w in TABLE_WIDGETS if w != "last-action"), "vote")
            assert fits(app, widgets) == [], lang
            print(f"\n{screen_text(app)}")
            vote = text_of(app, "vote")
            assert vote.endswith(texts.ui("vote_keys", lang))
            assert (
                "on attend : vous et Éric" if lang == "fr" else "waiting for: you and Éric"
            ) in (" ".join(vote.split()))
            paused = texts.ui("vote_paused", lang)
            assert text_of(app, "turn") == f"{paused} — 24 s"
            assert not app.game_screen.query_one("#last-action").display  # the vote says it


async def test_f_proposes_the_friendly_end_only_where_offered_and_o_n_answer_the_vote() -> None:
    app = DominosApp(lang="fr", connect=False)
    sent: list[object] = []

    async def propose_end() -> None:
        sent.append("propose")

    async def answer_end(accept: bool) -> None:
        sent.append(accept)

    app.propose_end = propose_end  # type: ignore[method-assign]
    app.answer_end = answer_end  # type: ignore[method-assign]
    async with app.run_test(size=SMALL) as pilot:
        app.apply_view(crowded(turn_seat=0))  # a classic table: no friendly end
        await shows_game(pilot, app)
        await pilot.press("f")
        await pilot.pause()
        assert text_of(app, "message") == texts.ui("FRIENDLY_END_UNAVAILABLE", "fr")
        await pilot.press("o")
        await pilot.pause()
        assert text_of(app, "message") == texts.ui("NO_VOTE_OPEN", "fr")
        app.apply_view(robot_table(vote=False, version=4))
        await pilot.pause()
        await pilot.press("f")
        await pilot.pause()
        assert sent == ["propose"]

        app.apply_view(robot_table(vote=True, version=5))
        await pilot.pause()
        await pilot.press("f")
        await pilot.pause()
        assert text_of(app, "message") == texts.ui("VOTE_OPEN", "fr")
        app.game_screen.say("")
        await pilot.press("l")  # no move while the game is paused
        await pilot.pause()
        assert text_of(app, "message") == texts.ui("VOTE_OPEN", "fr")
        await pilot.press("o")
        await pilot.press("y")
        await pilot.press("n")
        await pilot.pause()
        assert sent == ["propose", True, True, False]

        ours = robot_table(vote=True, version=6)  # our own proposal, refused
        ours.vote.proposer = 0
        ours.last_action.seat = 0
        app.apply_view(ours)
        refused = robot_table(vote=False, version=7)
        refused.last_action.CopyFrom(
            game_pb2.LastAction(
                kind=game_pb2.ACTION_KIND_VOTE_CLOSED,
                seat=3,
                vote_outcome=game_pb2.VOTE_OUTCOME_REFUSED,
            )
        )
        app.apply_view(refused)
        await pilot.pause()
        assert text_of(app, "vote") == texts.ui("friendly_end_proposed", "fr")
        assert text_of(app, "last-action") == (
            "Éric de la Fontaine refuse de finir la partie : elle reprend."
        )
        await pilot.press("f")  # once a round
        await pilot.pause()
        assert text_of(app, "message") == texts.ui("ALREADY_PROPOSED", "fr")
        assert sent == ["propose", True, True, False]


async def test_a_game_ended_by_consent_says_so_unscored() -> None:
    for lang in texts.LANGS:
        app = DominosApp(lang=lang, connect=False)
        async with app.run_test(size=SMALL) as pilot:
            view = view_of(game_pb2.PHASE_FINISHED, version=9, unscored=True)
            view.options.friendly_end = True
            view.last_action.CopyFrom(
                game_pb2.LastAction(
                    kind=game_pb2.ACTION_KIND_VOTE_CLOSED,
                    seat=1,
                    vote_outcome=game_pb2.VOTE_OUTCOME_ENDED,
                )
            )
            app.apply_view(view)
            await shows_game(pilot, app)
            assert fits(app, ("header", "summary", "south", "keys")) == [], lang
            assert text_of(app, "summary") == unscored_text(view, lang)
            assert "485" in text_of(app, "summary")  # the scores as they stood
            assert not app.game_screen.query_one("#vote").display  # nothing left to end
            ended = game_pb2.LastAction(vote_outcome=game_pb2.VOTE_OUTCOME_ENDED)
            assert text_of(app, "last-action") == vote_closed_text(ended, "", lang)
