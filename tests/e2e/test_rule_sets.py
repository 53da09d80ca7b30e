"""Rule sets through the gateway (issue 19, D9): a table created with a preset plays a whole
game with its seats, stock, draws and scoring; refusals of bad choices; the timer plays an
idle seat's turns, drawing as the seed says. Every service is a separate process."""

from __future__ import annotations

import asyncio
import random
from typing import Any

import grpc
import pytest
from dominos.v1 import game_pb2, gateway_pb2
from google.rpc import error_details_pb2

from services.client.api import DominosClient, SeatCredentials, request_id
from services.common.service_errors import reason_of, status_of
from services.rules.tiles import HIGH, LOW, tiles_of
from testing.waiting import wait_for

from .conftest import E2ECluster
from .test_games import hands_by_version

DONE = (game_pb2.PHASE_FINISHED, game_pb2.PHASE_CLOSED)


async def seat_table(
    client: DominosClient, choice: game_pb2.RuleChoice, target: int = 0
) -> list[SeatCredentials]:
    """The host creates a table with ``choice``; the other seats join it."""
    created = await client.stub.CreateTable(
        gateway_pb2.CreateTableRequest(
            request_id=request_id(), host_name="Ana", target=target, rules=choice
        ),
        timeout=10,
    )
    seats = [SeatCredentials(created.table_id, 0, created.seat_token)]
    for name in ("Ben", "Chloé", "Dan")[: created.view.rules.seats - 1]:
        joined = await client.stub.JoinTable(
            gateway_pb2.JoinTableRequest(
                request_id=request_id(), invitation_code=created.invitation_code, player_name=name
            ),
            timeout=10,
        )
        seats.append(SeatCredentials(joined.table_id, joined.seat, joined.seat_token))
    return seats


async def act(client: DominosClient, seat: SeatCredentials, view: game_pb2.TableView) -> None:
    """A random legal move, else a draw, else a pass, sent with the view's version."""
    common: dict[str, Any] = {
        "table_id": seat.table_id,
        "request_id": request_id(),
        "expected_version": view.version,
    }
    metadata = seat.metadata()
    try:
        if view.legal_moves:
            move = random.Random(view.version).choice(list(view.legal_moves))
            request = gateway_pb2.PlayTileRequest(tile=move.tile, end=move.end, **common)
            await client.stub.PlayTile(request, metadata=metadata, timeout=10)
        elif view.can_draw:
            draw = gateway_pb2.DrawTileRequest(**common)
            await client.stub.DrawTile(draw, metadata=metadata, timeout=10)
        else:
            assert view.can_pass, view
            await client.stub.Pass(gateway_pb2.PassRequest(**common), metadata=metadata, timeout=10)
    except grpc.aio.AioRpcError as error:  # overtaken by a timeout's auto-play
        assert error.code() in (grpc.StatusCode.ABORTED, grpc.StatusCode.FAILED_PRECONDITION)


async def follow(
    client: DominosClient,
    seat: SeatCredentials,
    *,
    acts: bool = True,
    views: list[game_pb2.TableView] | None = None,
) -> list[game_pb2.TableView]:
    """Every view of the seat's stream until the game is over (appended to ``views`` as they
    come, when given), acting on its turns (not while a friendly-end vote pauses the game)."""
    views = [] if views is None else views
    acted = -1
    call = client.watch(seat)
    try:
        async for message in call:
            view = message.view
            views.append(view)
            if view.phase in DONE:
                return views
            mine = view.phase == game_pb2.PHASE_PLAYING and view.turn_seat == seat.seat
            if acts and mine and view.version != acted and not view.HasField("vote"):
                acted = view.version
                await act(client, seat, view)
    finally:
        call.cancel()
    return views


async def play_whole_game(
    e2e: E2ECluster, choice: game_pb2.RuleChoice, target: int = 0, idle: int = -1
) -> tuple[list[SeatCredentials], list[list[game_pb2.TableView]]]:
    client = DominosClient(e2e.gateway_address)
    try:
        seats = await seat_table(client, choice, target)
        tasks = [
            asyncio.create_task(follow(client, seat, acts=seat.seat != idle)) for seat in seats
        ]

        async def everyone_connected() -> bool:
            view = await client.view(seats[0])
            return all(s.connected for s in view.seats)

        await wait_for(everyone_connected, timeout=10)
        await client.start(seats[0])
        # A game with an idle seat waits out its every turn (2 s each): up to ~2 minutes
        # on a slow machine, seen at 117 s; the bound stays under pytest's 300 s.
        results = await asyncio.wait_for(asyncio.gather(*tasks), timeout=240)
    finally:
        await client.close()
    return seats, list(results)


@pytest.mark.parametrize(
    ("choice", "target", "sides"),
    [
        (game_pb2.RuleChoice(preset=game_pb2.PRESET_FAMILY_DRAW, seats=3), 0, 3),
        (game_pb2.RuleChoice(preset=game_pb2.PRESET_WEB_BLOCK, seats=2), 50, 2),
        (game_pb2.RuleChoice(preset=game_pb2.PRESET_APP, seats=4, hand_size=5), 50, 2),
        (game_pb2.RuleChoice(preset=game_pb2.PRESET_SITE, seats=2), 50, 2),
        (game_pb2.RuleChoice(preset=game_pb2.PRESET_WEB_FIVES, seats=2), 50, 2),
    ],
    ids=["family_draw-3", "web_block-2", "app-4-teams-5", "site-2", "web_fives-2"],
)
async def test_a_preset_table_plays_a_whole_game_through_the_gateway(
    e2e: E2ECluster, choice: game_pb2.RuleChoice, target: int, sides: int
) -> None:
    """D9: the rule set chosen at creation is in every view; the table starts when its seats
    are taken; draws are public as counts only; the game ends when a side reaches the
    target; no seat ever sees another's tile or the stock's."""
    seats, results = await play_whole_game(e2e, choice, target)
    finals = [views[-1] for views in results]
    first = finals[0]
    assert all(v.phase == game_pb2.PHASE_FINISHED for v in finals)
    assert all(v.rules.preset == choice.preset for views in results for v in views)
    assert len(first.seats) == first.rules.seats == len(seats)
    assert len(first.side_scores) == sides
    assert first.HasField("winner_side")
    assert first.side_scores[first.winner_side] >= first.target
    assert {tuple(v.side_scores) for v in finals} == {tuple(first.side_scores)}
    actions = [v.last_action for views in results for v in views]
    # A seat draws only when its own view offers it (no tile fits, stock left); a game may
    # well end without anyone needing to, so the check follows the offers, not the stock.
    offered = any(v.can_draw for views in results for v in views)
    drew = [a for a in actions if a.kind == game_pb2.ACTION_KIND_DREW]
    assert bool(drew) == offered
    assert all(a.drawn >= 1 for a in drew)
    assert first.rules.draw or not offered
    if first.rules.scoring == game_pb2.SCORING_ALL_FIVES:
        # All fives: points scored at once by plays; every legal move says its points.
        scored = [a.points for a in actions if a.kind == game_pb2.ACTION_KIND_PLAYED]
        assert any(scored) and all(p % 5 == 0 for p in scored)
        assert all(m.points % 5 == 0 for views in results for v in views for m in v.legal_moves)
    truth = await hands_by_version(e2e.redis.url_for("admin"), seats[0].table_id)
    for seat, views in zip(seats, results, strict=True):
        for view in views:
            if view.phase != game_pb2.PHASE_PLAYING:
                continue
            hand = {(LOW[t], HIGH[t]) for t in tiles_of(truth[view.version][seat.seat])}
            assert {(t.low, t.high) for t in view.hand} == hand


async def test_an_idle_seat_is_played_by_the_timer_drawing_until_a_tile_fits(
    e2e: E2ECluster,
) -> None:
    """R11 under a rule set with a stock: the table draws for an idle seat until a tile
    fits, then lays it, or passes with the stock empty; the game still ends."""
    # web_draw keeps the operator's turn time (short here); site would set its own 45 s.
    choice = game_pb2.RuleChoice(preset=game_pb2.PRESET_WEB_DRAW, seats=2)
    _, results = await play_whole_game(e2e, choice, target=50, idle=1)
    actions = [v.last_action for v in results[0]]
    auto = [a for a in actions if a.seat == 1 and a.auto_play]
    assert auto and results[0][-1].phase == game_pb2.PHASE_FINISHED
    assert any(a.kind == game_pb2.ACTION_KIND_PLAYED for a in auto)


INVALID = "INVALID_ARGUMENT"
UNKNOWN_PRESET: Any = 99
Choice = game_pb2.RuleChoice
#: (the choice, the target, the refusal: code, reason, field), by case.
CLASSIC, APP, SITE = game_pb2.PRESET_CLASSIC, game_pb2.PRESET_APP, game_pb2.PRESET_SITE
REFUSED = {
    "classic-2-seats": (Choice(preset=CLASSIC, seats=2), 0, "RULES_INVALID", "seats"),
    "app-6-tiles": (Choice(preset=APP, hand_size=6), 0, "RULES_INVALID", "hand_size"),
    "site-500-s": (Choice(preset=SITE, turn_seconds=500), 0, "RULES_INVALID", "turn_seconds"),
    "unknown-preset": (Choice(preset=UNKNOWN_PRESET), 0, "RULES_INVALID", "preset"),
    "app-target-200": (Choice(preset=APP), 200, "TARGET_INVALID", "target"),
    "fives-5-seats": (
        Choice(preset=game_pb2.PRESET_WEB_FIVES, seats=5),
        0,
        "RULES_INVALID",
        "seats",
    ),
}


@pytest.mark.parametrize("case", REFUSED)
async def test_a_rule_choice_outside_its_preset_is_refused_with_the_field_named(
    e2e: E2ECluster, case: str
) -> None:
    """D9: a preset adjusts only within its system's ranges; the refusal names the field."""
    choice, target, reason, field = REFUSED[case]
    client = DominosClient(e2e.gateway_address)
    try:
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await client.stub.CreateTable(
                gateway_pb2.CreateTableRequest(
                    request_id=request_id(), host_name="Eve", target=target, rules=choice
                ),
                timeout=10,
            )
    finally:
        await client.close()
    code = INVALID
    assert (refused.value.code().name, reason_of(refused.value)) == (code, reason)
    assert error_info(refused.value).metadata["field"] == field


def error_info(error: grpc.aio.AioRpcError) -> error_details_pb2.ErrorInfo:
    status = status_of(error)
    assert status is not None
    for detail in status.details:
        info = error_details_pb2.ErrorInfo()
        if detail.Unpack(info):
            return info
    raise AssertionError("no ErrorInfo")


async def test_a_draw_out_of_place_is_refused_and_changes_nothing(e2e: E2ECluster) -> None:
    """DrawTile on a table without a stock: CANNOT_DRAW or MUST_PLAY, the version unchanged."""
    client = DominosClient(e2e.gateway_address)
    try:
        seats = await seat_table(client, game_pb2.RuleChoice(preset=game_pb2.PRESET_CLASSIC))
        start = await client.start(seats[0])
        turn = seats[start.turn_seat]
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await client.stub.DrawTile(
                gateway_pb2.DrawTileRequest(table_id=turn.table_id, request_id=request_id()),
                metadata=turn.metadata(),
                timeout=10,
            )
        assert reason_of(refused.value) in ("CANNOT_DRAW", "MUST_PLAY")
        assert (await client.view(seats[0])).version == start.version
    finally:
        await client.close()
