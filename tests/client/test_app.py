"""The terminal client (services/client/app.py) driven by textual's Pilot.

The first tests run the real app against a real cluster of separate processes (Redis, NATS,
table, timer, gateway), its three other seats played by scripted clients that act at once:
the lobby's Start rule (R3), the countdown (R11), the Pass button disabled while a play is
possible and enabled otherwise (R9), passes in words (R10), the end-of-round summary (D1),
and a gateway restart survived (S4). Turns are long (30 s) so nothing is auto-played while
the test looks. The last tests show crafted views (a blocked tie is too rare to wait for);
names that textual would read as markup are in test_widgets.py.
"""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import grpc
from dominos.v1 import game_pb2
from textual.widgets import Button, Static

from services.client import texts
from services.client.api import DominosClient
from services.client.app import DominosApp
from services.client.seats import SeatStore
from services.client.widgets import screen_text, widget_text
from services.client.words import passes_in_words
from services.common.service_errors import Reason, ServiceError
from testing.cluster import ProcessCluster
from testing.waiting import wait_for
from tests.client.pilots import (
    TURN_S,
    Bots,
    create_and_start,
    current,
    moved_on,
    my_turn,
    play_first_legal,
    shows_game,
    text_of,
)
from tests.client.views import crafted

SIZE = (110, 40)


def pass_button(app: DominosApp) -> Button:
    return app.game_screen.query_one("#pass", Button)


async def test_lobby_start_rule_countdown_pass_button_passes_in_words_and_summary(
    cluster: ProcessCluster, bots: Bots
) -> None:
    app = DominosApp(cluster.gateways[0].address, lang="fr", player_name="Alice")
    async with app.run_test(size=SIZE) as pilot:
        await create_and_start(pilot, app, bots)
        assert "Objectif 500" in text_of(app, "header")
        assert "Équipe A (nous) 0 · Équipe B 0" in text_of(app, "header")
        assert "Bot2 (A, partenaire)" in text_of(app, "north")  # across the table
        assert text_of(app, "west").startswith("Bot3 (B)")  # plays before us
        assert text_of(app, "east").startswith("Bot1 (B)")  # plays after us

        await wait_for(lambda: my_turn(app), timeout=15, message="first turn")
        await pilot.pause()
        # R11: the countdown shows and counts down.
        turn = text_of(app, "turn")
        match = re.fullmatch(r"À vous de jouer — (\d+) s", turn)
        assert match, turn
        first = int(match.group(1))
        assert 0 < first <= TURN_S

        def counted_down() -> bool:
            shown = re.search(r"(\d+) s$", text_of(app, "turn"))
            return shown is not None and int(shown.group(1)) < first

        await wait_for(counted_down, timeout=3, interval=0.1, message="countdown")

        # Play until the app's seat cannot play; Pass stays disabled while it can (R9).
        summaries: list[str] = []
        plays = 0
        passed = False
        loop = asyncio.get_running_loop()
        deadline = loop.time() + 150
        while not passed:
            assert loop.time() < deadline, "no pass situation found in time"
            await wait_for(
                lambda: my_turn(app) or current(app).phase == game_pb2.PHASE_ROUND_OVER,
                timeout=20,
                message="our turn",
            )
            await pilot.pause()
            view = current(app)
            if view.phase == game_pb2.PHASE_ROUND_OVER:
                summaries.append(text_of(app, "summary"))
                await wait_for(lambda: my_turn(app), timeout=20, message="next round")
                continue
            if view.can_pass:
                assert not view.legal_moves
                assert not pass_button(app).disabled
                # A play key does nothing useful; P passes.
                await pilot.press("p")
                await moved_on(app, view)
                await pilot.pause()
                passed = True
            else:
                assert view.legal_moves
                assert pass_button(app).disabled
                await pilot.press("p")  # refused by the client itself
                await pilot.pause()
                assert "on ne passe que si rien ne va" in text_of(app, "message")
                assert current(app).version == view.version
                await play_first_legal(pilot, app)
                plays += 1

        # R10: our pass is shown in words next to our name, numbers highest first.
        mine = current(app).seats[0]
        assert mine.passed_on
        words = passes_in_words(list(mine.passed_on), "fr")
        assert words.startswith("A passé sur ")
        assert words in text_of(app, "south"), text_of(app, "south")
        print(f"\n--- after {plays} plays, the pass ---\n{screen_text(app)}")

        # D1: play the round to its end; the summary says how it ended, in words.
        round_number = current(app).round_number
        while current(app).phase == game_pb2.PHASE_PLAYING:
            await wait_for(
                lambda: my_turn(app) or current(app).phase != game_pb2.PHASE_PLAYING,
                timeout=20,
            )
            await pilot.pause()
            view = current(app)
            if not my_turn(app):
                break
            if view.can_pass:
                await pilot.press("p")
                await moved_on(app, view)
            else:
                await play_first_legal(pilot, app)
        await wait_for(lambda: current(app).phase != game_pb2.PHASE_PLAYING, timeout=20)
        await pilot.pause()
        view = current(app)
        summary = text_of(app, "summary")
        assert summary.startswith(f"Manche {view.last_round.round_number} : "), summary
        assert view.last_round.round_number >= round_number - 1
        assert ("domino !" in summary) or ("bloquée" in summary)
        assert f"Score : A {view.score_team_a} · B {view.score_team_b}" in summary
        if view.last_round.tie_rule_applied:
            assert "la manche revient à l'équipe qui a posé le dernier domino" in summary
        else:
            assert "égalité parfaite" not in summary
        assert text_of(app, "turn").startswith("Manche suivante dans ")
        for earlier in summaries:
            assert earlier.startswith("Manche ")


async def test_the_client_survives_a_gateway_restart(cluster: ProcessCluster, bots: Bots) -> None:
    app = DominosApp(cluster.gateways[0].address, lang="en", player_name="Alice")
    async with app.run_test(size=SIZE) as pilot:
        await create_and_start(pilot, app, bots)
        await wait_for(lambda: my_turn(app), timeout=15, message="first turn")
        assert app.stream is not None and app.stream.streams_opened == 1
        before = current(app).version

        await asyncio.to_thread(cluster.gateways[0].stop)
        await wait_for(lambda: app.status.startswith("Connection lost"), timeout=10, message="lost")
        await asyncio.to_thread(cluster.gateways[0].start)
        await wait_for(
            lambda: (
                app.stream is not None
                and app.stream.streams_opened >= 2
                and app.status.startswith("Connected")
            ),
            timeout=20,
            message="reconnected",
        )
        assert any(s.startswith("Connection lost, retrying in") for s in app.status_log)
        # Resumed from the new stream's first view: the same round, nothing lost.
        view = current(app)
        assert view.version >= before
        assert view.phase == game_pb2.PHASE_PLAYING
        await wait_for(lambda: bots.all_watching_again, timeout=15, message="bots back")

        # And the game goes on: our move, then the bots' (they reconnected too).
        await wait_for(lambda: my_turn(app), timeout=15)
        await pilot.pause()
        view = current(app)
        if view.can_pass:
            await pilot.press("p")
        else:
            await play_first_legal(pilot, app)
        await wait_for(lambda: current(app).version >= view.version + 2, timeout=15)
        assert re.search(r"(Your turn|'s turn|Next round in) ", text_of(app, "turn"))


async def test_a_blocked_tie_summary_states_the_tie_rule() -> None:
    app = DominosApp(lang="fr", connect=False)
    async with app.run_test(size=SIZE) as pilot:
        view = crafted(game_pb2.PHASE_ROUND_OVER, score_team_a=60, score_team_b=75)
        view.last_round.CopyFrom(
            game_pb2.RoundSummary(
                round_number=4,
                outcome=game_pb2.ROUND_OUTCOME_BLOCKED_TIE,
                scoring_team=game_pb2.TEAM_B,
                points=17,
                team_a_pips=17,
                team_b_pips=17,
                last_tile_team=game_pb2.TEAM_B,
                tie_rule_applied=True,
                opener_seat=3,
            )
        )
        app.apply_view(view)
        await shows_game(pilot, app)
        summary = text_of(app, "summary")
        assert "égalité parfaite : la manche revient à l'équipe qui a posé le dernier domino" in (
            summary
        )
        assert "l'équipe B, qui marque le total de l'autre équipe : 17 points" in summary
        assert text_of(app, "turn") == "Manche suivante dans 12 s."
        assert pass_button(app).disabled


async def test_pass_is_enabled_only_when_nothing_fits_with_passes_in_english() -> None:
    app = DominosApp(lang="en", connect=False)
    async with app.run_test(size=SIZE) as pilot:
        stuck = crafted(game_pb2.PHASE_PLAYING, turn_seat=0, left_end=5, right_end=2)
        stuck.chain.add(left=5, right=2, seat=3)
        stuck.hand.add(low=0, high=1)
        stuck.can_pass = True
        stuck.seats[1].passed_on.extend([2, 5])
        app.apply_view(stuck)
        await shows_game(pilot, app)
        assert not pass_button(app).disabled
        east = text_of(app, "east")
        assert east.startswith("Bob (B)\n3 tiles\n"), east
        assert "Passed on five and two" in " ".join(east.split()), east
        assert text_of(app, "turn") == "Your turn — 12 s"
        assert "1:[0|1] " in text_of(app, "hand")

        playable = crafted(game_pb2.PHASE_PLAYING, version=4, turn_seat=0, left_end=5, right_end=2)
        playable.hand.add(low=2, high=4)
        playable.legal_moves.add(tile=game_pb2.Tile(low=2, high=4), end=game_pb2.END_RIGHT)
        app.apply_view(playable)
        await pilot.pause()
        assert pass_button(app).disabled
        assert ">1:[2|4]*" in text_of(app, "hand")


# -- a refused name, a held seat taken back ------------------------------------------------------


async def test_a_name_refused_as_looking_like_a_seated_one_is_explained() -> None:
    app = DominosApp(lang="fr", connect=False)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        taken = ServiceError(grpc.StatusCode.FAILED_PRECONDITION, Reason.NAME_TAKEN, "[/]")

        async def refused() -> None:
            raise grpc.aio.AioRpcError(
                taken.code,
                grpc.aio.Metadata(),
                grpc.aio.Metadata(*taken.trailing_metadata()),
                taken.message,
            )

        await app._command(refused)
        await pilot.pause()
        assert widget_text(app.screen.query_one("#error", Static)) == texts.ui("name_taken", "fr")


async def test_a_closed_client_gets_its_seat_back_by_joining_again(
    cluster: ProcessCluster, tmp_path: Path
) -> None:
    """S4: a player whose client was closed mid-game types the code again and takes back
    their seat (the token was saved), instead of GAME_ALREADY_STARTED."""
    address = cluster.gateways[0].address
    others = DominosClient(address)
    try:
        host, code, _ = await others.create_table("Ana", 50)
        await others.join_table(code, "Ben")
        await others.join_table(code, "Cy")
        store = SeatStore(tmp_path / "seats.json")
        first = DominosApp(address, lang="fr", player_name="Chloé", join_code=code, seats=store)
        async with first.run_test(size=SIZE):
            await wait_for(lambda: first.view is not None, timeout=10, message="seated")
            assert first.credentials is not None
            seat, token = first.credentials.seat, first.credentials.token
        await others.start(host)
        again = DominosApp(address, lang="fr", player_name="Chloé", join_code=code, seats=store)
        async with again.run_test(size=SIZE):
            await wait_for(lambda: again.view is not None, timeout=10, message="resumed")
            assert again.credentials is not None
            assert (again.credentials.seat, again.credentials.token) == (seat, token)
            assert current(again).phase == game_pb2.PHASE_PLAYING
            assert current(again).your_seat == seat
            assert "Vous reprenez votre place" in again.status_log[0]
        unknown = DominosApp(address, lang="fr", resume_code="ZZZZZZZZZZ", seats=store)
        async with unknown.run_test(size=SIZE) as pilot:
            await pilot.pause()
            assert "Aucune place enregistrée pour le code ZZZZZZZZZZ" in screen_text(unknown)
    finally:
        await others.close()
