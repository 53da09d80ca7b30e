"""All fives through the terminal client against a real cluster: a whole two-seat
``web_fives`` game played through the pilot, the other seat scripted with the gRPC API. The
pilot lays on a short side of the spinner (U/B) whenever the deal lets it, else a scoring
placement, else the first that fits (Enter when it has one end); every view the client got
checks the ends' total as drawn against the points the server scored."""

from __future__ import annotations

import asyncio

from dominos.v1 import game_pb2
from textual.pilot import Pilot
from textual.widgets import Select

from services.client.app import DominosApp
from services.client.fives import END_KEYS, ends_total
from services.client.game_screen import GameScreen
from services.client.last_action import last_action_text
from services.client.tiles import HandItem, hand_items
from testing.cluster import ProcessCluster
from testing.waiting import wait_for
from tests.client.pilots import Bots, current, moved_on, my_turn, shows_game, text_of
from tests.client.test_app_rule_sets import choose_and_create
from tests.client.views import RULE_ID

SIZE = (80, 24)
DONE = (game_pb2.PHASE_FINISHED, game_pb2.PHASE_CLOSED)
SHORT = (game_pb2.END_UP, game_pb2.END_DOWN)


def choose(view: game_pb2.TableView) -> tuple[HandItem, int]:
    """The tile and end the pilot lays: a short side first, then the most points."""
    options = [(item, end, points) for item in hand_items(view) for end, points in
               zip(item.ends, item.points, strict=True)]  # fmt: skip
    short = [o for o in options if o[1] in SHORT]
    item, end, _ = short[0] if short else max(options, key=lambda o: o[2])
    return item, end


async def lay(pilot: Pilot[None], app: DominosApp, item: HandItem, end: int) -> str:
    """Select ``item`` and lay it on ``end`` with its key (Enter when it fits one end only);
    returns the placements line shown for it."""
    view = current(app)
    screen = app.game_screen
    if item.index < 9:
        await pilot.press(str(item.index + 1))
    while screen.selected != item.index:
        await pilot.press("right")
    await pilot.pause()
    shown = text_of(app, "moves")
    key = "enter" if len(item.ends) == 1 else END_KEYS["en"][end].lower()
    await pilot.press(key)
    await moved_on(app, view)
    return shown


async def test_a_whole_two_seat_fives_game_through_the_terminal_client(
    cluster: ProcessCluster,
) -> None:
    address = cluster.gateways[0].address
    bots = Bots.connect(address, ("Ben",))
    app = DominosApp(address, lang="fr", player_name="Ana")
    views: list[game_pb2.TableView] = []
    received = app.apply_view

    def spy(view: game_pb2.TableView, received_at: float | None = None) -> None:
        views.append(view)
        received(view, received_at)

    app.apply_view = spy  # type: ignore[method-assign]
    seen: dict[str, list[str]] = {"ends": [], "moves": [], "summaries": [], "actions": []}
    short_chances = 0
    try:
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            app.screen.query_one("#preset", Select).value = "web_fives"
            await pilot.pause()
            app.screen.query_one("#target", Select).value = 50
            await choose_and_create(pilot, app, "web_fives", "2")
            view = current(app)
            assert (view.rules.preset, view.rules.seats, view.target) == (
                game_pb2.PRESET_WEB_FIVES, 2, 50,
            )  # fmt: skip
            assert view.rules.scoring == game_pb2.SCORING_ALL_FIVES
            assert "Jeu : Tous les cinq · 2 joueurs, face à face" in text_of(app, "lobby")
            await bots.join(app.code)
            await wait_for(lambda: sum(s.occupied for s in current(app).seats) == 2, timeout=10)
            await pilot.pause()
            await pilot.press("s")
            await shows_game(pilot, app)
            assert "G/D/U/B poser" in text_of(app, "keys")

            loop = asyncio.get_running_loop()
            deadline = loop.time() + 300
            while current(app).phase not in DONE:
                assert loop.time() < deadline, "the game did not end in time"
                await wait_for(
                    lambda: my_turn(app) or current(app).phase != game_pb2.PHASE_PLAYING,
                    timeout=30,
                    message="our turn",
                )
                await pilot.pause()
                view = current(app)
                seen["actions"].append(text_of(app, "last-action"))
                if view.phase == game_pb2.PHASE_ROUND_OVER:
                    seen["summaries"].append(text_of(app, "summary"))
                    number = view.round_number

                    def dealt(number: int = number) -> bool:
                        return current(app).phase in DONE or current(app).round_number > number

                    await wait_for(dealt, timeout=30, message="next round")
                    continue
                if view.phase in DONE or not my_turn(app):
                    continue
                if view.open_ends:
                    seen["ends"].append(text_of(app, "ends"))
                if view.legal_moves:
                    item, end = choose(view)
                    short_chances += end in SHORT
                    seen["moves"].append(await lay(pilot, app, item, end))
                    await pilot.pause()
                    seen["actions"].append(text_of(app, "last-action"))
                elif view.can_draw:
                    await pilot.press("t")
                    await moved_on(app, view)
                else:
                    await pilot.press("p")
                    await moved_on(app, view)
            await pilot.pause()
            final = current(app)
            seen["summaries"].append(text_of(app, "summary"))
            assert isinstance(app.screen, GameScreen)
    finally:
        await bots.close()

    assert final.phase == game_pb2.PHASE_FINISHED
    # The ends' total as the client counts it is what the server scored, play after play.
    checked = 0
    for shown in views:
        action = shown.last_action
        if shown.phase != game_pb2.PHASE_PLAYING or action.kind != game_pb2.ACTION_KIND_PLAYED:
            continue
        total = ends_total(shown)
        if action.points:
            assert total == action.points, shown
        else:
            assert total == 0 or total % 5, shown
        checked += 1
    assert checked > 5
    assert all(e.startswith("Bouts : gauche ") and " · total " in e for e in seen["ends"]), seen
    assert all(" → " in m for m in seen["moves"]), seen["moves"]
    scored = [v.last_action for v in views if v.last_action.points]
    assert scored, "nobody scored at once"
    # Every scoring play the client received is told with its points and the ends' total
    # (the screen samples only some of them: which ones depends on the deal).
    for shown in (v for v in views if v.last_action.points):
        told = last_action_text(shown, "fr")
        assert " marque " in told and "(bouts : " in told, told
    short_plays = {
        v.version
        for v in views
        if v.last_action.kind == game_pb2.ACTION_KIND_PLAYED
        and v.last_action.seat == v.your_seat
        and v.last_action.move.end in SHORT
        and not v.last_action.auto_play
    }
    if short_chances:  # the deal let the pilot lay on a short side: it did, with U or B
        assert short_plays, short_chances
        assert any(v.up_arm or v.down_arm for v in views)
    last = seen["summaries"][-1]
    winner = final.seats[final.winner_side].name
    assert f"{winner} gagne la partie avec " in last, last
    if not final.HasField("last_round") or final.last_round.round_number < final.round_number:
        assert "la partie s'arrête là, au milieu de la manche" in last, last
    rounded = [s for s in seen["summaries"] if s.startswith("Manche ")]
    assert all("Arrondi au 5 le plus proche : " in s for s in rounded if "marque" in s), rounded
    assert not any(RULE_ID.search(s) for s in seen["summaries"] + seen["actions"])
    print(f"\nshort-side chances {short_chances}, plays {len(short_plays)}; scored {len(scored)}")
