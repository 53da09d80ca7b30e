"""Computer players through the gateway (issue 20, D10, D11): a practice table played to its
end, a robot in an empty seat at an early start, a robot standing in for a player who
dropped and the seat handed back on return (mid-turn too), the friendly end accepted,
refused and timed out, and the default rule set refusing every robot option (S2). Every
service is a separate process; the robots are the bots service's, acting through the table
service's RobotService."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import grpc
import pytest
from dominos.v1 import game_pb2, gateway_pb2
from google.rpc import error_details_pb2

from services.client.api import DominosClient, SeatCredentials, request_id
from services.common.service_errors import reason_of, status_of
from testing.cluster import ProcessCluster, clock_env
from testing.waiting import wait_for

from .test_rule_sets import act, follow
from .test_web_edge import sample

#: A robot thinks 0.3 s; its seat's short clock (the fallback) is 1.5 s.
THINK_S = 0.3
AWAY_S = 1.5
DONE = (game_pb2.PHASE_FINISHED, game_pb2.PHASE_CLOSED)
SITE_2 = game_pb2.RuleChoice(preset=game_pb2.PRESET_SITE, seats=2)
SITE_PAIRS = game_pb2.RuleChoice(preset=game_pb2.PRESET_SITE, seats=4, teams=True)
STRONG = game_pb2.ROBOT_LEVEL_STRONG
SOLID = game_pb2.ROBOT_LEVEL_SOLID


@pytest.fixture(scope="module")
def cluster() -> Iterator[ProcessCluster]:
    started = ProcessCluster.start(
        env={
            **clock_env(4.0, AWAY_S, 0.2),
            "DOMINOS_PRESENCE_LEASE_SECONDS": "1.5",
            "DOMINOS_ROBOT_THINK_MIN_SECONDS": str(THINK_S),
            "DOMINOS_ROBOT_THINK_MAX_SECONDS": str(THINK_S),
            "DOMINOS_LOG_LEVEL": "info",
        },
        bots=1,
        metrics=True,
    )
    try:
        yield started
    finally:
        started.stop()
    assert not any(process.alive for process in started.started), "a replica outlived stop()"


async def create(
    client: DominosClient,
    rules: game_pb2.RuleChoice,
    options: game_pb2.TableOptions,
    target: int = 50,
) -> gateway_pb2.CreateTableResponse:
    return await client.stub.CreateTable(
        gateway_pb2.CreateTableRequest(
            request_id=request_id(), host_name="Ana", target=target, rules=rules, options=options
        ),
        timeout=10,
    )


async def join(client: DominosClient, code: str, name: str) -> SeatCredentials:
    joined = await client.stub.JoinTable(
        gateway_pb2.JoinTableRequest(
            request_id=request_id(), invitation_code=code, player_name=name
        ),
        timeout=10,
    )
    return SeatCredentials(joined.table_id, joined.seat, joined.seat_token)


def robot_moves(views: list[game_pb2.TableView], seat: int) -> list[game_pb2.LastAction]:
    """The moves of ``seat`` seen in ``views`` that nobody's clock made (a robot's own)."""
    kinds = (game_pb2.ACTION_KIND_PLAYED, game_pb2.ACTION_KIND_PASSED, game_pb2.ACTION_KIND_DREW)
    seen: dict[int, game_pb2.LastAction] = {}
    for view in views:
        action = view.last_action
        if action.kind in kinds and action.seat == seat:
            seen[view.version] = action
    return [a for a in seen.values() if a.auto_play == game_pb2.AUTO_PLAY_CAUSE_UNSPECIFIED]


def refusal(error: grpc.aio.AioRpcError) -> tuple[grpc.StatusCode, str | None, str]:
    status = status_of(error)
    field = ""
    if status is not None:
        for detail in status.details:
            info = error_details_pb2.ErrorInfo()
            if detail.Unpack(info):
                field = info.metadata.get("field", "")
    return error.code(), reason_of(error), field


async def test_a_practice_table_plays_to_its_end_with_the_robots_own_moves(
    cluster: ProcessCluster,
) -> None:
    """D10: the host alone with a robot of the chosen level; the robot acts through the bots
    service (its moves are its own, not the table's clock), shown as a robot all along."""
    client = DominosClient(cluster.gateway_address)
    try:
        options = game_pb2.TableOptions(practice=[STRONG])
        fives = game_pb2.RuleChoice(preset=game_pb2.PRESET_WEB_FIVES, seats=2)
        created = await create(client, fives, options)
        assert created.view.seats[1].robot == STRONG and created.view.seats[1].connected
        assert created.view.options.practice == [STRONG]
        host = SeatCredentials(created.table_id, 0, created.seat_token)
        views: list[game_pb2.TableView] = []
        task = asyncio.create_task(follow(client, host, views=views))
        await wait_for(lambda: bool(views), timeout=10)
        await client.start(host)
        await asyncio.wait_for(task, timeout=120)
    finally:
        await client.close()
    final = views[-1]
    assert final.phase == game_pb2.PHASE_FINISHED and final.HasField("winner_side")
    assert all(v.seats[1].robot == STRONG for v in views)
    assert len(robot_moves(views, 1)) >= 5
    assert not any(v.hand and v.your_seat != 0 for v in views)


async def test_an_early_start_seats_a_robot_in_the_empty_seat_which_then_plays(
    cluster: ProcessCluster,
) -> None:
    """Seed 002: the host starts before everyone came; the computer takes the empty seat."""
    client = DominosClient(cluster.gateway_address)
    try:
        choice = game_pb2.RuleChoice(preset=game_pb2.PRESET_WEB_DRAW, seats=3)
        created = await create(client, choice, game_pb2.TableOptions(fill_empty_seats=SOLID))
        host = SeatCredentials(created.table_id, 0, created.seat_token)
        guest = await join(client, created.invitation_code, "Ben")
        views: list[list[game_pb2.TableView]] = [[], []]
        tasks = [
            asyncio.create_task(follow(client, seat, views=views[i]))
            for i, seat in enumerate((host, guest))
        ]
        await wait_for(lambda: all(views), timeout=10)
        started = await client.start(host)
        assert started.seats[2].robot == SOLID and started.seats[2].name.startswith("Robot")
        assert started.phase == game_pb2.PHASE_PLAYING
        await wait_for(lambda: len(robot_moves(views[0], 2)) >= 3, timeout=60)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    finally:
        await client.close()


async def test_a_dropped_player_is_played_by_a_robot_and_gets_the_seat_back_mid_turn(
    cluster: ProcessCluster,
) -> None:
    """Seed 004: a robot replaces the player who lost the connection at once (no 5-second
    away turns), and hands the seat back the moment they return, during their own turn too:
    the robot's late move is refused and the player moves."""
    client = DominosClient(cluster.gateway_address)
    try:
        options = game_pb2.TableOptions(replace_disconnected=STRONG, return_seconds=120)
        created = await create(client, SITE_2, options)
        host = SeatCredentials(created.table_id, 0, created.seat_token)
        guest = await join(client, created.invitation_code, "Ben")
        host_views: list[game_pb2.TableView] = []
        host_task = asyncio.create_task(follow(client, host, views=host_views))
        guest_stream = client.watch(guest)
        await guest_stream.read()

        async def both_connected() -> bool:
            return all(s.connected for s in (await client.view(host)).seats)

        await wait_for(both_connected, timeout=10)
        await client.start(host)
        # The guest drops: a robot plays for them at once, its moves its own.
        guest_stream.cancel()

        async def stood_in() -> bool:
            return (await client.view(host)).seats[1].stand_in == STRONG

        await wait_for(stood_in, timeout=10)
        view = await client.view(host)
        assert view.seats[1].stand_in_until_ms > view.server_time_ms + 100_000
        await wait_for(lambda: len(robot_moves(host_views, 1)) >= 2, timeout=60)
        # Back during its own turn, before the robot's 0.3 s thought ends: the seat is theirs.
        handed_back = None
        for _ in range(10):

            def robots_turn() -> bool:
                last = host_views[-1] if host_views else None
                return last is not None and last.turn_seat == 1 and last.seats[1].stand_in != 0

            await wait_for(robots_turn, timeout=30)
            guest_stream = client.watch(guest)
            first = (await guest_stream.read()).view
            while not first.seats[1].connected:  # the stream's presence lands a version later
                first = (await asyncio.wait_for(guest_stream.read(), timeout=5)).view
            playing = first.phase == game_pb2.PHASE_PLAYING and first.turn_seat == 1
            if playing and first.seats[1].stand_in == game_pb2.ROBOT_LEVEL_UNSPECIFIED:
                handed_back = first
                break
            guest_stream.cancel()  # the robot was quicker this time: drop again, retry
            await wait_for(stood_in, timeout=10)
        assert handed_back is not None, "the player never came back during their own turn"
        await asyncio.sleep(THINK_S * 3)  # the robot's thought is over: its move was refused
        now = await client.view(guest)
        assert now.turn_seat == 1 and now.seats[1].stand_in == game_pb2.ROBOT_LEVEL_UNSPECIFIED
        assert robot_moves([now], 1) == [] or now.last_action.seat != 1
        await act(client, guest, now)  # the player's own move is accepted
        assert (await client.view(guest)).version > now.version
        guest_stream.cancel()
        host_task.cancel()
        await asyncio.gather(host_task, return_exceptions=True)
    finally:
        await client.close()
    assert sample(cluster.bots[0].scrape(), 'dominos_bots_turns_total{outcome="stale"}') >= 1


async def _three_humans(client: DominosClient) -> tuple[list[SeatCredentials], list[Any]]:
    options = game_pb2.TableOptions(friendly_end=True, vote_seconds=10)
    site_3 = game_pb2.RuleChoice(preset=game_pb2.PRESET_SITE, seats=3)
    created = await create(client, site_3, options, target=300)
    host = SeatCredentials(created.table_id, 0, created.seat_token)
    seats = [host]
    for name in ("Ben", "Chloé"):
        seats.append(await join(client, created.invitation_code, name))
    streams = [client.watch(seat) for seat in seats]
    for stream in streams:
        await stream.read()

    async def both_connected() -> bool:
        return all(s.connected for s in (await client.view(host)).seats)

    await wait_for(both_connected, timeout=10)
    await client.start(host)
    return seats, streams


async def _propose(client: DominosClient, seat: SeatCredentials) -> game_pb2.TableView:
    reply = await client.stub.ProposeFriendlyEnd(
        gateway_pb2.ProposeFriendlyEndRequest(request_id=request_id(), table_id=seat.table_id),
        metadata=seat.metadata(),
        timeout=10,
    )
    return reply.view


async def _answer(client: DominosClient, seat: SeatCredentials, accept: bool) -> Any:
    return await client.stub.AnswerFriendlyEnd(
        gateway_pb2.AnswerFriendlyEndRequest(
            request_id=request_id(), table_id=seat.table_id, accept=accept
        ),
        metadata=seat.metadata(),
        timeout=10,
    )


async def test_a_friendly_end_accepted_refused_and_timed_out(cluster: ProcessCluster) -> None:
    """D11: a proposal pauses the game; every human accepting ends it unscored; a refusal
    or the time limit resumes it; each step is a public event."""
    client = DominosClient(cluster.gateway_address)
    try:
        (host, guest, third), streams = await _three_humans(client)
        voting = await _propose(client, host)
        assert voting.vote.proposer == 0 and list(voting.vote.waiting) == [1, 2]
        assert (
            not voting.legal_moves and voting.last_action.kind == game_pb2.ACTION_KIND_END_PROPOSED
        )
        refused = (await _answer(client, guest, False)).view
        assert not refused.HasField("vote") and refused.phase == game_pb2.PHASE_PLAYING
        assert refused.last_action.vote_outcome == game_pb2.VOTE_OUTCOME_REFUSED
        with pytest.raises(grpc.aio.AioRpcError) as again:  # once per seat per round
            await _propose(client, host)
        assert refusal(again.value)[:2] == (grpc.StatusCode.FAILED_PRECONDITION, "ALREADY_PROPOSED")
        await _propose(client, guest)
        with pytest.raises(grpc.aio.AioRpcError) as twice:
            await _propose(client, third)
        assert refusal(twice.value)[:2] == (grpc.StatusCode.FAILED_PRECONDITION, "VOTE_OPEN")

        async def expired() -> bool:
            view = await client.view(host)
            return view.last_action.vote_outcome == game_pb2.VOTE_OUTCOME_EXPIRED

        await wait_for(expired, timeout=20)
        assert (await client.view(host)).phase == game_pb2.PHASE_PLAYING
        await _propose(client, third)
        accepted = (await _answer(client, host, True)).view
        assert accepted.phase == game_pb2.PHASE_PLAYING and list(accepted.vote.waiting) == [1]
        ended = (await _answer(client, guest, True)).view
        assert ended.phase == game_pb2.PHASE_FINISHED and ended.unscored
        assert not ended.HasField("winner_side")
        assert ended.last_action.vote_outcome == game_pb2.VOTE_OUTCOME_ENDED
        for stream in streams:  # each step reached both players as a public event
            kinds, outcomes = set(), set()
            while True:
                view = (await asyncio.wait_for(stream.read(), timeout=10)).view
                kinds.add(view.last_action.kind)
                outcomes.add(view.last_action.vote_outcome)
                if view.phase in DONE:
                    break
            assert game_pb2.ACTION_KIND_END_PROPOSED in kinds
            assert outcomes >= {
                game_pb2.VOTE_OUTCOME_REFUSED,
                game_pb2.VOTE_OUTCOME_EXPIRED,
                game_pb2.VOTE_OUTCOME_ENDED,
            }
            stream.cancel()
    finally:
        await client.close()


@pytest.mark.parametrize(
    "options",
    [
        game_pb2.TableOptions(practice=[SOLID, SOLID, SOLID]),
        game_pb2.TableOptions(fill_empty_seats=SOLID),
        game_pb2.TableOptions(replace_disconnected=SOLID),
    ],
    ids=["practice", "fill", "replace"],
)
async def test_the_default_rule_set_refuses_every_robot_option_s2(
    cluster: ProcessCluster, options: game_pb2.TableOptions
) -> None:
    client = DominosClient(cluster.gateway_address)
    try:
        for rules in (None, game_pb2.RuleChoice(preset=game_pb2.PRESET_CLASSIC)):
            request = gateway_pb2.CreateTableRequest(
                request_id=request_id(), host_name="Ana", options=options
            )
            if rules is not None:
                request.rules.CopyFrom(rules)
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                await client.stub.CreateTable(request, timeout=10)
            assert refusal(refused.value) == (
                grpc.StatusCode.FAILED_PRECONDITION,
                "ROBOTS_UNAVAILABLE",
                "robots",
            )
        friendly = gateway_pb2.CreateTableRequest(
            request_id=request_id(),
            host_name="Ana",
            options=game_pb2.TableOptions(friendly_end=True),
        )
        with pytest.raises(grpc.aio.AioRpcError) as no_friendly:
            await client.stub.CreateTable(friendly, timeout=10)
        assert refusal(no_friendly.value)[1] == "FRIENDLY_END_UNAVAILABLE"
    finally:
        await client.close()
