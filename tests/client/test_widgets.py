"""Names are text, never markup (services/client/widgets.py, :class:`Plain`): names that
textual would read as markup neither crash a screen, nor run an action, nor style what
follows; a refusal shows a sentence, never the raw gRPC text, and statuses stay plain."""

from __future__ import annotations

import grpc
import pytest
from dominos.v1 import game_pb2
from textual.content import Content
from textual.widgets import Static

from services.client import texts
from services.client.app import DominosApp
from services.client.game_screen import GameScreen
from services.client.lobby_screen import LobbyScreen
from services.client.widgets import screen_text, widget_text
from tests.client.pilots import shows_game, text_of
from tests.client.views import crafted

SIZE = (110, 40)


#: Names a player may choose that textual would read as markup: one that closes what is not
#: open (MarkupError: the client crashed on every redraw), a link running an action, styles
#: left open, textual's own ``$variable`` and spaced tags (which rich's ``escape`` misses).
MARKUP_NAMES = ("[/]", "[@click=app.quit]Bob[/]", "[reverse]X", "[bold", "[$error]Z", "[ bold]W")

#: The game screen's widgets that name the partner (seat 2, across the table from seat 0).
NAME_WIDGETS = ("north", "turn", "last-action", "summary")


def named(phase: int, names: tuple[str, str, str, str], **fields: object) -> game_pb2.TableView:
    view = crafted(phase, **fields)
    for seat, name in enumerate(names):
        view.seats[seat].name = name
    return view


def domino_by(view: game_pb2.TableView, seat: int) -> None:
    """A round summary naming ``seat`` (domino) and every hand, and a last action by it."""
    view.last_round.CopyFrom(
        game_pb2.RoundSummary(
            round_number=4,
            outcome=game_pb2.ROUND_OUTCOME_DOMINO,
            scoring_team=game_pb2.TEAM_B if seat % 2 else game_pb2.TEAM_A,
            points=9,
            domino_seat=seat,
            opener_seat=3,
            hands=[game_pb2.RevealedHand(seat=s, points=s) for s in range(4)],
        )
    )
    view.last_action.kind = game_pb2.ACTION_KIND_PASSED
    view.last_action.seat = seat
    view.last_action.passed_on.append(5)


def plain_widget(app: DominosApp, widget_id: str) -> Static:
    playing = app.view is not None and app.view.phase != game_pb2.PHASE_WAITING
    screen: GameScreen | LobbyScreen = app.game_screen if playing else app.lobby_screen
    return screen.query_one(f"#{widget_id}", Static)


def spans_of(widget: Static) -> list[object]:
    """The styles and actions the widget's content carries (none for plain text)."""
    visual = widget.visual
    assert isinstance(visual, Content), type(visual)
    return list(visual.spans)


async def test_a_name_closing_unopened_markup_does_not_crash_any_screen() -> None:
    app = DominosApp(lang="en", connect=False)
    async with app.run_test(size=SIZE) as pilot:
        app.code = "[/]"  # the invitation code and table id come from the server too
        app.apply_view(named(game_pb2.PHASE_WAITING, ("Ann", "[/]", "[b]x[/i]", "Dee")))
        await pilot.pause()
        lobby = text_of(app, "lobby")
        assert "Invitation code: [/]" in lobby
        assert "\n  [/] (team B)" in lobby and "\n  [b]x[/i] (team A)" in lobby

        # The game screen redraws every name on every view (and on every reconnection).
        view = named(
            game_pb2.PHASE_ROUND_OVER, ("Ann", "[/]", "[b]x[/i]", "Dee"), version=4, turn_seat=1
        )
        domino_by(view, 1)
        app.apply_view(view)
        await shows_game(pilot, app)
        assert text_of(app, "north") == "[b]x[/i] (A, partner) · 3 tiles"
        assert text_of(app, "east").startswith("[/] (B)\n3 tiles")
        assert text_of(app, "last-action") == "[/] passed on five."
        summary = text_of(app, "summary")
        assert "Round 4: domino! [/] (team B) laid their last tile." in summary
        assert "Hands left: Ann — (0); [/] — (1); [b]x[/i] — (2); Dee — (3)" in summary
        app.apply_view(
            named(game_pb2.PHASE_FINISHED, ("Ann", "[/]", "[b]x[/i]", "Dee"), version=5, winner=2)
        )
        await pilot.pause()
        assert "Team B ([/] and Dee) wins the game" in text_of(app, "summary")
        assert "[/]" in screen_text(app)
        assert app.is_running


async def test_a_name_with_a_click_action_is_shown_as_typed_and_clicking_it_does_nothing() -> None:
    name = "[@click=app.quit]Bob[/]"
    app = DominosApp(lang="en", connect=False)
    async with app.run_test(size=SIZE) as pilot:
        app.apply_view(named(game_pb2.PHASE_WAITING, ("Ann", name, "Cid", "Dee")))
        await pilot.pause()
        lobby = plain_widget(app, "lobby")
        assert f"\n  {name} (team B)\n" in widget_text(lobby)
        assert spans_of(lobby) == []  # no link, no style
        # Where "Bob" would be drawn if the name were markup (row 3: code, target, Ann, Bob).
        assert await pilot.click("#lobby", offset=(4, 3))
        await pilot.pause()
        assert app.is_running

        app.apply_view(named(game_pb2.PHASE_PLAYING, ("Ann", "Cid", name, "Dee"), turn_seat=2))
        await shows_game(pilot, app)
        north = plain_widget(app, "north")
        assert f"▶ {name} (A, partner)" in widget_text(north)
        assert text_of(app, "turn") == f"{name}'s turn — 12 s"
        assert spans_of(north) == [] and spans_of(plain_widget(app, "turn")) == []
        assert await pilot.click("#north", offset=(SIZE[0] // 2, 0))
        await pilot.pause()
        assert app.is_running
        assert f"{name} (A, partner)" in screen_text(app)


@pytest.mark.parametrize("name", MARKUP_NAMES)
async def test_markup_in_a_name_neither_styles_nor_hides_what_follows(name: str) -> None:
    app = DominosApp(lang="fr", connect=False)
    async with app.run_test(size=SIZE) as pilot:
        app.apply_view(named(game_pb2.PHASE_WAITING, (name, "Bob", "Cid", "Dee")))
        await pilot.pause()
        lobby = plain_widget(app, "lobby")
        assert f"  {name} (équipe A, hôte, vous)\n  Bob (équipe B)" in widget_text(lobby)
        assert spans_of(lobby) == []

        # Playing, its turn, with the last round's summary still shown: every widget names it.
        view = named(game_pb2.PHASE_PLAYING, ("Ann", "Bob", name, "Dee"), version=4, turn_seat=2)
        domino_by(view, 2)
        app.apply_view(view)
        await shows_game(pilot, app)
        for widget_id in NAME_WIDGETS:
            widget = plain_widget(app, widget_id)
            assert name in widget_text(widget), widget_id
            assert spans_of(widget) == [], widget_id
        shown = screen_text(app)
        assert f"{name} (A, partenaire) · 3 dominos" in shown
        assert f"{name} a passé sur cinq." in shown


async def test_refusals_show_a_sentence_never_the_raw_grpc_text_and_statuses_stay_plain() -> None:
    message = "[/]no [@click=app.quit]such[/] table [reverse]"
    app = DominosApp(lang="en", connect=False, player_name="[@click=app.quit]Bob[/]")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert "[@click=app.quit]Bob[/]" in screen_text(app)  # the name field, as typed

        async def refused() -> None:
            raise grpc.aio.AioRpcError(
                grpc.StatusCode.NOT_FOUND, grpc.aio.Metadata(), grpc.aio.Metadata(), message
            )

        await app._command(refused)  # on the start screen
        await pilot.pause()
        error = app.screen.query_one("#error", Static)
        assert widget_text(error) == texts.ui("unexpected", "en")
        assert "NOT_FOUND" not in screen_text(app) and "such" not in screen_text(app)
        assert app.is_running

        app.apply_view(crafted(game_pb2.PHASE_WAITING))
        await pilot.pause()
        app.set_status(message)  # text from outside still shows as typed, never as markup
        await pilot.pause()
        assert text_of(app, "status") == message
        assert spans_of(plain_widget(app, "status")) == []

        app.apply_view(crafted(game_pb2.PHASE_PLAYING, version=4, turn_seat=1))
        await shows_game(pilot, app)
        await app._command(refused)  # on the game screen: under the Pass button
        await pilot.pause()
        assert text_of(app, "message") == texts.ui("unexpected", "en")
        assert "NOT_FOUND" not in screen_text(app)
