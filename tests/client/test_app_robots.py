"""Computer players and the friendly end through the terminal client (issue 20) against a real
cluster (no bots service: a robot's turn is played by the table's short clock, which these
tests never wait for): a practice table from the start screen, started at once with its
robots shown as such, ended at once by consent with F; robots taking the empty seats when
the host starts early from the lobby; a friendly-end vote between two people, refused (and
not proposed twice in a round), then accepted with O. Without a cluster: a seat a robot kept
for good is forgotten, and the sentence says why."""

from __future__ import annotations

from pathlib import Path

import grpc
from dominos.v1 import game_pb2
from textual.pilot import Pilot
from textual.widgets import Button, Select, Static

from services.client import texts
from services.client.api import DominosClient, SeatCredentials
from services.client.app import DominosApp
from services.client.game_screen import GameScreen
from services.client.lobby_screen import LobbyScreen
from services.client.practice_screen import PracticeScreen
from services.client.seats import SeatStore
from services.client.start_screen import StartScreen
from services.client.summaries import unscored_text
from services.client.widgets import widget_text
from services.common.service_errors import Reason, ServiceError
from testing.cluster import ProcessCluster
from testing.waiting import wait_for
from tests.client.pilots import current, seats_text, shows_game, text_of
from tests.client.views import SEAT

SIZE = (80, 24)
SOLID = game_pb2.ROBOT_LEVEL_SOLID


def ended_by_consent(app: DominosApp) -> bool:
    view = current(app)
    return view.phase == game_pb2.PHASE_FINISHED and view.unscored


async def choose(pilot: Pilot[None], app: DominosApp, **values: object) -> None:
    """Set the current screen's selects (by id), one after another."""
    for select_id, value in values.items():
        app.screen.query_one(f"#{select_id}", Select).value = value
        await pilot.pause()


async def test_a_practice_table_starts_at_once_shows_its_robots_and_f_ends_it(
    cluster: ProcessCluster,
) -> None:
    app = DominosApp(cluster.gateways[0].address, lang="fr", player_name="Ana")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.click("#practice")
        await wait_for(lambda: isinstance(app.screen, PracticeScreen), timeout=5)
        await choose(pilot, app, preset="site", seats="3")
        await pilot.click("#play")
        await shows_game(pilot, app)
        view = current(app)
        assert view.phase == game_pb2.PHASE_PLAYING  # started at once: no lobby
        assert list(view.options.practice) == [SOLID, SOLID]
        assert view.options.friendly_end
        assert [bool(s.robot) for s in view.seats] == [False, True, True]
        around = seats_text(app)
        assert around.count("robot solide") == 2, around
        assert "Robot 2" in around and "Robot 3" in around
        assert text_of(app, "vote") == texts.ui("friendly_end_hint", "fr")

        await pilot.press("f")  # the only person at the table: it ends at once
        await wait_for(lambda: ended_by_consent(app), timeout=10, message="ended by consent")
        await pilot.pause()
        assert text_of(app, "summary").startswith(texts.ui("unscored", "fr"))
        assert unscored_text(current(app), "fr") in text_of(app, "summary")


async def test_robots_take_the_empty_seats_when_the_host_starts_early(
    cluster: ProcessCluster,
) -> None:
    app = DominosApp(cluster.gateways[0].address, lang="en", player_name="Ana")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, StartScreen)
        await choose(pilot, app, preset="web_block", seats="3", fill=SOLID)
        await pilot.click("#create")
        await wait_for(lambda: isinstance(app.screen, LobbyScreen) and app.code, timeout=10)
        await pilot.pause()
        lobby = text_of(app, "lobby")
        assert "Empty seats at the start: solid robots take them" in lobby, lobby
        assert "1/3 seated: the host can start now" in lobby
        assert not app.lobby_screen.query_one("#start", Button).disabled
        await pilot.press("s")
        await shows_game(pilot, app)
        view = current(app)
        assert [s.robot for s in view.seats] == [0, SOLID, SOLID]
        assert seats_text(app).count("solid robot") == 2
        assert not app.game_screen.query_one("#vote").display  # not chosen: no friendly end


async def test_a_friendly_end_vote_refused_then_accepted_between_two_people(
    cluster: ProcessCluster,
) -> None:
    address = cluster.gateways[0].address
    ben = DominosClient(address)
    app = DominosApp(address, lang="fr", player_name="Ana")
    try:
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            await choose(pilot, app, preset="site", seats="2", friendly=1)
            await pilot.click("#create")
            await wait_for(lambda: isinstance(app.screen, LobbyScreen) and app.code, timeout=10)
            ben_seat, _ = await ben.join_table(app.code, "Ben")
            await wait_for(lambda: all(s.occupied for s in current(app).seats), timeout=10)
            await pilot.pause()
            assert "Fin amiable : possible" in text_of(app, "lobby")
            await pilot.press("s")
            await shows_game(pilot, app)

            await pilot.press("f")
            await wait_for(lambda: current(app).HasField("vote"), timeout=10, message="vote")
            await pilot.pause()
            assert text_of(app, "vote").splitlines() == [
                "Fin amiable proposée par vous · on attend : Ben",
                texts.ui("vote_waiting", "fr"),
            ]
            assert text_of(app, "turn").startswith(texts.ui("vote_paused", "fr"))
            await ben.answer_end(ben_seat, accept=False)
            await wait_for(lambda: not current(app).HasField("vote"), timeout=10, message="closed")
            await pilot.pause()
            assert text_of(app, "last-action") == "Ben refuse de finir la partie : elle reprend."
            assert current(app).phase == game_pb2.PHASE_PLAYING
            assert text_of(app, "vote") == texts.ui("friendly_end_proposed", "fr")
            await pilot.press("f")  # once a round
            await pilot.pause()
            assert text_of(app, "message") == texts.ui("ALREADY_PROPOSED", "fr")
            assert not current(app).HasField("vote")

            await ben.propose_end(ben_seat)
            await wait_for(lambda: current(app).HasField("vote"), timeout=10, message="vote 2")
            await pilot.pause()
            assert text_of(app, "vote").splitlines()[-1] == texts.ui("vote_keys", "fr")
            await pilot.press("o")
            await wait_for(lambda: ended_by_consent(app), timeout=10, message="ended")
            await pilot.pause()
            assert isinstance(app.screen, GameScreen)
            assert text_of(app, "summary").startswith(texts.ui("unscored", "fr"))
            assert text_of(app, "last-action") == (
                "Tout le monde est d'accord : la partie s'arrête, sans vainqueur."
            )
    finally:
        await ben.close()


# -- a seat a robot kept (no cluster: a fake gateway refuses with ROBOT_SEAT) -------------------


def robot_seat_error() -> grpc.aio.AioRpcError:
    error = ServiceError(grpc.StatusCode.PERMISSION_DENIED, Reason.ROBOT_SEAT, "kept")
    return grpc.aio.AioRpcError(
        error.code,
        grpc.aio.Metadata(),
        grpc.aio.Metadata(*error.trailing_metadata()),
        error.message,
    )


class RobotKept:
    """A gateway for which the saved seat is a robot's now: reads and streams refused."""

    async def view(self, seat: SeatCredentials) -> game_pb2.TableView:
        raise robot_seat_error()

    def watch(self, seat: SeatCredentials) -> RobotKept:
        return self

    def __aiter__(self) -> RobotKept:
        return self

    async def __anext__(self) -> object:
        raise robot_seat_error()

    def cancel(self) -> None:
        """Nothing to cancel."""

    async def close(self) -> None:
        """Nothing to close."""


async def test_a_seat_a_robot_kept_is_forgotten_with_a_sentence_that_says_so(
    tmp_path: Path,
) -> None:
    store = SeatStore(tmp_path / "seats.json")
    store.save("ABCDE23456", SEAT, "gw", "Ana")
    app = DominosApp(lang="fr", connect=False, seats=store)
    async with app.run_test(size=SIZE) as pilot:
        app.client = RobotKept()  # type: ignore[assignment]
        await pilot.pause()
        assert not await app.resume("ABCDE23456")
        await pilot.pause()
        shown = widget_text(app.screen.query_one("#error", Static))
        assert shown.startswith(texts.ui("ROBOT_SEAT", "fr")) and "oubliée" in shown
        assert store.get("ABCDE23456") is None

        store.save("ABCDE23456", SEAT, "gw", "Ana")  # mid-game, the stream ends: same
        app.code, app.credentials = "ABCDE23456", SEAT
        await app._watch()
        assert store.get("ABCDE23456") is None
        assert app.status == texts.ui("ROBOT_SEAT", "fr")
