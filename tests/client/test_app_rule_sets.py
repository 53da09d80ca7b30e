"""Rule sets through the terminal client (issue 19) against a real cluster: whole games of a
three-seat family draw game and a two-seat site game played through the pilot, the other
seats scripted with the gRPC API (they draw too), the pilot drawing with T and Enter; the
lobby's rule set and seat count; refused rule choices as sentences."""

from __future__ import annotations

import asyncio

from dominos.v1 import game_pb2
from textual.pilot import Pilot
from textual.widgets import Button, Select, Static

from services.client.app import DominosApp
from services.client.lobby_screen import LobbyScreen
from services.client.rule_sets import choice_of
from services.client.start_screen import StartScreen
from services.client.tiles import hand_items
from services.client.widgets import widget_text
from testing.cluster import ProcessCluster
from testing.waiting import wait_for
from tests.client.pilots import Bots, current, moved_on, my_turn, shows_game, text_of
from tests.client.views import RULE_ID

SIZE = (110, 40)
DONE = (game_pb2.PHASE_FINISHED, game_pb2.PHASE_CLOSED)


async def lay_first_playable(pilot: Pilot[None], app: DominosApp) -> None:
    """Select the first playable tile (number key, or arrows past nine) and lay it."""
    view = current(app)
    item = next(i for i in hand_items(view) if i.playable)
    if item.index < 9:
        await pilot.press(str(item.index + 1))
    while app.game_screen.selected != item.index:
        await pilot.press("right")
    await pilot.press("l" if game_pb2.END_LEFT in item.ends else "r")
    await moved_on(app, view)


async def play_the_whole_game(pilot: Pilot[None], app: DominosApp) -> dict[str, list[str]]:
    """Our turns until the game is over: lay, else draw (T and Enter by turns), else pass;
    returns what was seen."""
    seen: dict[str, list[str]] = {"summaries": [], "drew": [], "headers": []}
    draws = 0
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 240
    while current(app).phase not in DONE:
        assert loop.time() < deadline, "the game did not end in time"
        await wait_for(
            lambda: my_turn(app) or current(app).phase != game_pb2.PHASE_PLAYING,
            timeout=30,
            message="our turn",
        )
        await pilot.pause()
        view = current(app)
        if view.phase == game_pb2.PHASE_ROUND_OVER:
            seen["summaries"].append(text_of(app, "summary"))
            number = view.round_number

            def dealt(number: int = number) -> bool:
                return current(app).phase in DONE or current(app).round_number > number

            await wait_for(dealt, timeout=30, message="next round")
            continue
        if not my_turn(app):
            continue
        if view.legal_moves:
            await lay_first_playable(pilot, app)
        elif view.can_draw:
            assert app.game_screen.query_one("#pass", Button).disabled
            assert not app.game_screen.query_one("#draw", Button).disabled
            await pilot.press("t" if draws % 2 == 0 else "enter")
            await moved_on(app, view)
            await pilot.pause()
            draws += 1
            seen["drew"].append(text_of(app, "last-action"))
            seen["headers"].append(text_of(app, "header"))
        else:
            assert view.can_pass, view
            assert not app.game_screen.query_one("#pass", Button).disabled
            await pilot.press("p")
            await moved_on(app, view)
    await pilot.pause()
    seen["summaries"].append(text_of(app, "summary"))
    return seen


async def choose_and_create(pilot: Pilot[None], app: DominosApp, preset: str, seats: str) -> None:
    await pilot.pause()
    screen = app.screen
    assert isinstance(screen, StartScreen)
    screen.query_one("#preset", Select).value = preset
    await pilot.pause()
    screen.query_one("#seats", Select).value = seats
    await pilot.pause()
    await pilot.click("#create")
    await wait_for(lambda: isinstance(app.screen, LobbyScreen) and app.code, timeout=10)
    await pilot.pause()


async def test_a_whole_three_seat_family_draw_game_through_the_terminal_client(
    cluster: ProcessCluster,
) -> None:
    address = cluster.gateways[0].address
    bots = Bots.connect(address, ("Ben", "Chloé"))
    app = DominosApp(address, lang="fr", player_name="Alice")
    try:
        async with app.run_test(size=SIZE) as pilot:
            await choose_and_create(pilot, app, "family_draw", "3")
            assert current(app).rules.preset == game_pb2.PRESET_FAMILY_DRAW
            lobby = text_of(app, "lobby")
            assert (
                "Jeu : Pioche en famille · 3 joueurs, chacun pour soi · 5 dominos chacun · "
                "avec pioche" in lobby
            ), lobby
            assert "Objectif : 100 points (fixé par ce jeu)" in lobby
            assert "En attente de joueurs : 1/3 assis." in lobby
            await pilot.press("s")
            await pilot.pause()
            assert text_of(app, "message") == (
                "Il faut trois joueurs pour lancer la partie : 1/3 assis."
            )
            await bots.join(app.code)
            await wait_for(lambda: sum(s.occupied for s in current(app).seats) == 3, timeout=10)
            await pilot.pause()
            assert not app.lobby_screen.query_one("#start", Button).disabled
            assert "Les trois places sont prises" in text_of(app, "lobby")
            await pilot.press("s")
            await shows_game(pilot, app)
            assert text_of(app, "east").startswith("Ben")  # plays after us
            assert text_of(app, "west").startswith("Chloé")
            assert not app.game_screen.query_one("#north").display

            seen = await play_the_whole_game(pilot, app)
            final = current(app)
            assert final.phase == game_pb2.PHASE_FINISHED
            assert seen["drew"], "the pilot never drew"
            assert all(line.startswith("Alice a pioché ") for line in seen["drew"]), seen
            assert any("Pioche " in header for header in seen["headers"])
            summaries = seen["summaries"]
            assert all(s.startswith("Manche ") for s in summaries[:-1])
            assert any("Scores : Alice " in s for s in summaries)
            winner = final.seats[final.winner_side].name
            assert f"{winner} gagne la partie avec " in summaries[-1]
            assert not any(RULE_ID.search(s) for s in summaries)
            assert any(m.kind == game_pb2.ACTION_KIND_DREW for m in app.journal.moves) or any(
                "a pioché" in s for s in seen["drew"]
            )
    finally:
        await bots.close()


async def test_a_whole_two_seat_site_game_through_the_terminal_client(
    cluster: ProcessCluster,
) -> None:
    address = cluster.gateways[0].address
    bots = Bots.connect(address, ("Ben",))
    app = DominosApp(address, lang="en", player_name="Alice")
    try:
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            app.screen.query_one("#preset", Select).value = "site"
            await pilot.pause()
            # 150 points: several rounds, so that a deal where the pilot always fits does not
            # leave the draw untested (a one-round game to 50 sometimes never drew).
            app.screen.query_one("#target", Select).value = 150
            await choose_and_create(pilot, app, "site", "2")
            view = current(app)
            assert (view.rules.preset, view.rules.seats, view.target) == (
                game_pb2.PRESET_SITE, 2, 150,
            )  # fmt: skip
            assert "Game: Site game · 2 players, one against one" in text_of(app, "lobby")
            await bots.join(app.code)
            await wait_for(lambda: sum(s.occupied for s in current(app).seats) == 2, timeout=10)
            await pilot.pause()
            await pilot.press("s")
            await shows_game(pilot, app)
            assert text_of(app, "north").startswith("Ben")  # the opponent across
            assert not app.game_screen.query_one("#west").display

            seen = await play_the_whole_game(pilot, app)
            final = current(app)
            assert final.phase == game_pb2.PHASE_FINISHED
            assert seen["drew"], "the pilot never drew"
            assert all(line.startswith("Alice drew ") for line in seen["drew"]), seen
            winner = final.seats[final.winner_side].name
            assert f"{winner} wins the game with " in seen["summaries"][-1]
            await pilot.press("h")
            await pilot.pause()
            history = widget_text(app.game_screen.query_one("#history", Static))
            assert "Rounds played" in history
    finally:
        await bots.close()


async def test_refused_rule_choices_are_sentences(cluster: ProcessCluster) -> None:
    address = cluster.gateways[0].address
    for choice, expected in (
        (choice_of("family_draw", seats=5), "This game is not played with that many players."),
        (
            choice_of("app", hand_size=6),
            "This game does not deal that many tiles with that many players.",
        ),
    ):
        app = DominosApp(address, lang="en", player_name="Alice", create_target=100,
                         create_rules=choice)  # fmt: skip
        async with app.run_test(size=SIZE) as pilot:
            shown = app
            await wait_for(
                lambda: widget_text(shown.screen.query_one("#error", Static)) != "",  # noqa: B023
                timeout=10,
                message="refusal",
            )
            await pilot.pause()
            assert widget_text(app.screen.query_one("#error", Static)) == expected
            assert isinstance(app.screen, StartScreen)
