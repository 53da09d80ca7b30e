"""Seat recovery in the terminal client (services/client/app.py) against a real cluster
(S4, D4): the start screen lists the held seats and takes one back with a key, forgetting a
stale one with a sentence; quitting a lobby frees the seat (LeaveTable) and, for the host,
closes the table; quitting mid-game keeps the seat and says how to come back."""

from __future__ import annotations

from pathlib import Path

import grpc
import pytest
from dominos.v1 import game_pb2
from textual.widgets import OptionList, Static

from services.client import texts
from services.client.api import DominosClient
from services.client.app import DominosApp
from services.client.confirm_quit import ConfirmQuit
from services.client.game_screen import GameScreen
from services.client.held_seats import resume_command
from services.client.lobby import code_text
from services.client.lobby_screen import LobbyScreen
from services.client.seats import SeatStore
from services.client.widgets import widget_text
from testing.cluster import ProcessCluster
from testing.waiting import wait_for
from tests.client.pilots import current

SMALL = (80, 24)


async def seated(app: DominosApp) -> None:
    await wait_for(lambda: app.view is not None and app.stream is not None, timeout=10)


async def confirm_quit(app: DominosApp, pilot: object) -> str:
    """Press Q, return the question shown, answer yes, wait for the exit."""
    await pilot.press("q")  # type: ignore[attr-defined]
    await wait_for(lambda: isinstance(app.screen, ConfirmQuit), timeout=5, message="question")
    question = widget_text(app.screen.query_one("#question", Static))
    await pilot.press("o")  # type: ignore[attr-defined]
    await wait_for(lambda: app._exit, timeout=10, message="exit")
    return question


async def test_a_guest_quitting_the_lobby_frees_the_seat_and_forgets_it(
    cluster: ProcessCluster, tmp_path: Path
) -> None:
    address = cluster.gateways[0].address
    host = DominosClient(address)
    try:
        credentials, code, _ = await host.create_table("Ana", 100)
        store = SeatStore(tmp_path / "seats.json")
        app = DominosApp(address, lang="fr", player_name="Éric", join_code=code, seats=store)
        async with app.run_test(size=SMALL) as pilot:
            await seated(app)
            assert store.get(code) is not None
            question = await confirm_quit(app, pilot)
        assert question == texts.ui("quit_lobby", "fr")
        assert store.get(code) is None
        view = await host.view(credentials)
        assert [s.occupied for s in view.seats] == [True, False, False, False]
    finally:
        await host.close()


async def test_the_host_is_warned_that_leaving_the_lobby_closes_the_table(
    cluster: ProcessCluster, tmp_path: Path
) -> None:
    address = cluster.gateways[0].address
    guest = DominosClient(address)
    try:
        store = SeatStore(tmp_path / "seats.json")
        app = DominosApp(address, lang="en", player_name="Ana", create_target=100, seats=store)
        async with app.run_test(size=SMALL) as pilot:
            await seated(app)
            credentials, _ = await guest.join_table(app.code, "Ben")
            await wait_for(lambda: current(app).seats[1].occupied, timeout=10)
            code = app.code
            question = await confirm_quit(app, pilot)
        assert "You are the host: if you leave, the table is closed for every player" in question
        assert store.get(code) is None
        try:
            view = await guest.view(credentials)
        except grpc.aio.AioRpcError as error:  # the seats of a closed table are freed
            assert error.code() == grpc.StatusCode.PERMISSION_DENIED
        else:
            assert view.phase == game_pb2.PHASE_CLOSED
    finally:
        await guest.close()


async def test_quitting_mid_game_keeps_the_seat_and_the_start_screen_takes_it_back(
    cluster: ProcessCluster, tmp_path: Path
) -> None:
    """Held seats are listed on the start screen (code, name, seat, when); Enter on one takes
    it back; one whose table was closed is forgotten when tried, with a sentence."""
    address = cluster.gateways[0].address
    others = DominosClient(address)
    try:
        host, code, _ = await others.create_table("Ana", 50)
        await others.join_table(code, "Ben")
        await others.join_table(code, "Cy")
        store = SeatStore(tmp_path / "seats.json")
        first = DominosApp(address, lang="fr", player_name="Éric", join_code=code, seats=store)
        async with first.run_test(size=SMALL) as pilot:
            await seated(first)
            await others.start(host)
            await wait_for(lambda: isinstance(first.screen, GameScreen), timeout=10)
            question = await confirm_quit(first, pilot)
        assert resume_command(code, address) in question
        assert "la table joue pour vous" in question
        assert resume_command(code, address) in first.farewell
        assert store.get(code) is not None  # still ours

        # A second held seat, at a table its host closes: stale.
        stale_host, stale_code, _ = await others.create_table("Zoé", 50)
        stale_seat, _ = await others.join_table(stale_code, "Éric")
        store.save(stale_code, stale_seat, address, "Éric")
        await others.leave(stale_host)

        again = DominosApp(address, lang="fr", seats=store)
        async with again.run_test(size=SMALL) as pilot:
            await pilot.pause()
            listing = again.screen.query_one("#saved", OptionList)
            assert listing.option_count == 2
            stale_line = str(listing.get_option_at_index(0).prompt)
            assert stale_line.startswith(f"{code_text(stale_code)} · Éric · place 2 · ")
            listing.focus()
            listing.highlighted = 0
            await pilot.press("enter")
            forgotten = texts.ui("seat_forgotten", "fr", code=code_text(stale_code))
            await wait_for(
                lambda: widget_text(again.screen.query_one("#error", Static)) == forgotten,
                timeout=10,
                message="stale seat forgotten",
            )
            assert store.get(stale_code) is None and listing.option_count == 1
            listing.highlighted = 0
            await pilot.press("enter")
            await wait_for(lambda: isinstance(again.screen, GameScreen), timeout=10)
            assert again.credentials is not None and again.credentials.seat == 3
            assert current(again).phase == game_pb2.PHASE_PLAYING
    finally:
        await others.close()


@pytest.mark.parametrize("lang", texts.LANGS)
async def test_an_unreachable_gateway_is_explained_in_the_chosen_language(
    lang: texts.Lang, unused_tcp_port: int
) -> None:
    app = DominosApp(f"127.0.0.1:{unused_tcp_port}", lang=lang, create_target=100)
    async with app.run_test(size=SMALL) as pilot:
        await wait_for(
            lambda: widget_text(app.screen.query_one("#error", Static)),
            timeout=15,
            message="error shown",
        )
        await pilot.pause()
        assert widget_text(app.screen.query_one("#error", Static)) == texts.ui("unavailable", lang)
        assert not isinstance(app.screen, LobbyScreen)
