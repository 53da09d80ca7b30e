"""Bad input is answered with a precise status and reason, and changes nothing (issue 3)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import grpc
import pytest
from dominos.v1 import game_pb2, gateway_pb2, table_pb2

from services.common.schema import outbox_key, table_key
from services.common.service_errors import reason_of
from testing.waiting import wait_for

from .client import Seat, TableClient, rid

INVALID = grpc.StatusCode.INVALID_ARGUMENT
DENIED = grpc.StatusCode.PERMISSION_DENIED
PRECONDITION = grpc.StatusCode.FAILED_PRECONDITION


async def snapshot(redis: Any, table_id: str) -> tuple[Any, ...]:
    """Every stored byte of a table (its hash, with state and log, and its outbox), once the
    outbox of its last accepted command is cleared (the publisher clears in the background)."""

    async def outbox_cleared() -> bool:
        return await redis.zcard(outbox_key(table_id)) == 0

    await wait_for(outbox_cleared, timeout=5)
    return (
        await redis.hgetall(table_key(table_id)),
        await redis.zrange(outbox_key(table_id), 0, -1),
    )


async def expect(call: Awaitable[Any], code: grpc.StatusCode, reason: str) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await call
    assert caught.value.code() == code
    assert reason_of(caught.value) == reason


@pytest.fixture
async def started(client: TableClient) -> tuple[list[Seat], game_pb2.TableView]:
    seats = await client.full_table()
    view = await client.start(seats[0])
    return seats, view


def _move(low: int, high: int, end: Any = game_pb2.END_LEFT) -> Any:
    return game_pb2.Move(tile=game_pb2.Tile(low=low, high=high), end=end)


async def test_rejected_commands_get_their_status_and_reason_and_leave_the_table_byte_identical(
    client: TableClient, redis_client: Any, started: tuple[list[Seat], game_pb2.TableView]
) -> None:
    seats, view = started
    table_id = seats[0].table_id
    turn = view.turn_seat
    waiting = seats[(turn + 1) % 4]
    to_play = seats[turn]
    mine = await client.view(to_play)
    not_mine = next(
        t
        for t in (game_pb2.Tile(low=a, high=b) for a in range(7) for b in range(a, 7))
        if t not in list(mine.hand)
    )
    before = await snapshot(redis_client, table_id)
    cases: list[tuple[Callable[[], Awaitable[Any]], grpc.StatusCode, str]] = [
        (lambda: client.pass_(waiting), PRECONDITION, "NOT_YOUR_TURN"),
        (lambda: client.play(waiting, _move(6, 6)), PRECONDITION, "NOT_YOUR_TURN"),
        (lambda: client.pass_(to_play), PRECONDITION, "MUST_PLAY"),  # R9: the opener never passes
        (
            lambda: client.play(to_play, game_pb2.Move(tile=not_mine, end=game_pb2.END_LEFT)),
            PRECONDITION,
            "TILE_NOT_IN_HAND",
        ),
        (lambda: client.play(to_play, _move(5, 3)), INVALID, "TILE_MALFORMED"),
        (lambda: client.play(to_play, _move(2, 7)), INVALID, "TILE_MALFORMED"),
        (lambda: client.play(to_play, _move(1, 2, end=0)), INVALID, "END_MALFORMED"),
        (lambda: client.play(to_play, _move(1, 2, end=9)), INVALID, "END_MALFORMED"),
        (lambda: client.play(Seat(table_id, 0, "x" * 43), _move(1, 2)), DENIED, "TOKEN_INVALID"),
        (lambda: client.play(Seat(table_id, 0, "short"), _move(1, 2)), DENIED, "TOKEN_INVALID"),
        (
            lambda: client.play(Seat(table_id, 0, ""), _move(1, 2)),
            grpc.StatusCode.UNAUTHENTICATED,
            "TOKEN_MISSING",
        ),
        (
            lambda: client.play(Seat("A" * 22, 0, to_play.token), _move(1, 2)),
            grpc.StatusCode.NOT_FOUND,
            "TABLE_NOT_FOUND",
        ),
        (
            lambda: client.play(Seat("bad id", 0, to_play.token), _move(1, 2)),
            INVALID,
            "ID_MALFORMED",
        ),
        (lambda: client.play(to_play, _move(1, 2), request_id=""), INVALID, "REQUEST_ID_MALFORMED"),
        (
            lambda: client.play(to_play, _move(1, 2), request_id="x" * 65),
            INVALID,
            "REQUEST_ID_MALFORMED",
        ),
        (
            lambda: client.play(to_play, _move(1, 2), request_id="é"),
            INVALID,
            "REQUEST_ID_MALFORMED",
        ),
        (
            lambda: client.execute(
                seats[0].token,
                set_target=gateway_pb2.SetTargetRequest(
                    request_id=rid(), table_id=table_id, target=200
                ),
            ),
            PRECONDITION,
            "GAME_ALREADY_STARTED",
        ),
        (
            lambda: client.execute(
                seats[1].token,
                start_game=gateway_pb2.StartGameRequest(request_id=rid(), table_id=table_id),
            ),
            DENIED,
            "NOT_HOST",
        ),
        (
            lambda: client.execute(
                seats[2].token,
                leave_table=gateway_pb2.LeaveTableRequest(request_id=rid(), table_id=table_id),
            ),
            PRECONDITION,
            "GAME_ALREADY_STARTED",
        ),
        (lambda: client.stub.Execute(table_pb2.ExecuteRequest()), INVALID, "COMMAND_MISSING"),
    ]
    for call, code, reason in cases:
        await expect(call(), code, reason)
    assert await snapshot(redis_client, table_id) == before


async def test_a_token_of_another_table_is_refused(client: TableClient) -> None:
    first = await client.full_table()
    second = await client.full_table()
    view = await client.start(first[0])
    stranger = Seat(first[0].table_id, 0, second[view.turn_seat].token)
    await expect(client.pass_(stranger), DENIED, "TOKEN_INVALID")


async def test_lobby_rules_get_their_reasons(client: TableClient, redis_client: Any) -> None:
    host, code, _ = await client.create()
    guest = await client.join(code, "Bo")
    set_target = lambda seat, target: client.execute(  # noqa: E731
        seat.token,
        set_target=gateway_pb2.SetTargetRequest(
            request_id=rid(), table_id=host.table_id, target=target
        ),
    )
    before = await snapshot(redis_client, host.table_id)
    await expect(set_target(host, 75), INVALID, "TARGET_INVALID")
    await expect(set_target(host, 550), INVALID, "TARGET_INVALID")
    await expect(set_target(guest, 200), DENIED, "NOT_HOST")
    await expect(client.start(host), PRECONDITION, "NOT_ENOUGH_PLAYERS")
    await expect(client.join(code, ""), INVALID, "NAME_INVALID")
    await expect(client.join(code, "x" * 25), INVALID, "NAME_INVALID")
    await expect(client.join("IIII0000", "Eve"), INVALID, "ID_MALFORMED")
    await expect(client.join(code, "\u3164"), INVALID, "NAME_INVALID")  # a filler shows nothing
    await expect(client.join(code, "BO"), PRECONDITION, "NAME_TAKEN")  # looks like "Bo"
    await expect(client.join(code, "H\u043est"), PRECONDITION, "NAME_TAKEN")  # Cyrillic o
    assert await snapshot(redis_client, host.table_id) == before
    await client.join(code, "Cy")
    await client.join(code.lower(), "Di")  # codes are case-insensitive
    before = await snapshot(redis_client, host.table_id)
    await expect(client.join(code, "Eve"), PRECONDITION, "TABLE_FULL")  # a fifth join
    assert await snapshot(redis_client, host.table_id) == before


async def test_a_retried_request_id_acts_once_and_returns_the_first_answer(
    client: TableClient, redis_client: Any, started: tuple[list[Seat], game_pb2.TableView]
) -> None:
    seats, view = started
    seat = seats[view.turn_seat]
    mine = await client.view(seat)
    request_id = rid()
    first = await client.play(seat, mine.legal_moves[0], request_id=request_id)
    after_first = await snapshot(redis_client, seat.table_id)
    again = await client.play(seat, mine.legal_moves[0], request_id=request_id)
    assert again.view.version == first.view.version
    assert list(again.view.hand) == list(first.view.hand)
    assert await snapshot(redis_client, seat.table_id) == after_first
    other = mine.legal_moves[1] if len(mine.legal_moves) > 1 else _move(6, 6)
    await expect(
        client.play(seat, other, request_id=request_id),
        grpc.StatusCode.ALREADY_EXISTS,
        "REQUEST_ID_REUSED",
    )
    assert await snapshot(redis_client, seat.table_id) == after_first


async def test_retried_create_and_join_return_the_same_table_seat_and_token(
    client: TableClient,
) -> None:
    create = gateway_pb2.CreateTableRequest(request_id=rid(), host_name="Ana", target=150)
    first = await client.execute(create_table=create)
    again = await client.execute(create_table=create)
    assert (again.table_id, again.seat_token, again.invitation_code) == (
        first.table_id,
        first.seat_token,
        first.invitation_code,
    )
    join = gateway_pb2.JoinTableRequest(
        request_id=rid(), invitation_code=first.invitation_code, player_name="Bo"
    )
    joined = await client.execute(peer="ipv4:10.0.0.2", join_table=join)
    rejoined = await client.execute(peer="ipv4:10.0.0.2", join_table=join)
    assert (
        (rejoined.seat, rejoined.seat_token)
        == (joined.seat, joined.seat_token)
        == (1, joined.seat_token)
    )
    view = await client.view(Seat(first.table_id, 0, first.seat_token))
    assert [s.occupied for s in view.seats] == [True, True, False, False]  # joined once
    other = gateway_pb2.CreateTableRequest(request_id=create.request_id, host_name="Zed")
    await expect(
        client.execute(create_table=other), grpc.StatusCode.ALREADY_EXISTS, "REQUEST_ID_REUSED"
    )


async def test_an_unknown_table_is_not_found(client: TableClient) -> None:
    await expect(
        client.stub.GetView(table_pb2.GetViewRequest(table_id="B" * 22, seat_token="t" * 43)),
        grpc.StatusCode.NOT_FOUND,
        "TABLE_NOT_FOUND",
    )


async def test_guessing_codes_is_rate_limited_per_peer(
    client: TableClient, table_service: Any
) -> None:
    server, _ = table_service
    # A client of the table service without a gateway's connection: its address is its
    # connection, so the smaller of the two budgets applies.
    limits = server.app.policy.limits
    limit = min(limits.join_failures_per_connection, limits.join_failures_per_address)
    _, code, _ = await client.create()
    for i in range(limit):
        guess = "ABCDEFGHJ" + "ABCDEFGHJKMNPQRSTVWXYZ23456789"[i % 30]
        if guess == code:
            continue
        await expect(
            client.join(guess, "Eve", peer="ipv4:203.0.113.9"),
            grpc.StatusCode.NOT_FOUND,
            "CODE_NOT_FOUND",
        )
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await client.join(code, "Eve", peer="ipv4:203.0.113.9")  # even the right code now
    assert caught.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert reason_of(caught.value) == "RATE_LIMITED"
    # Another peer is not affected.
    assert (await client.join(code, "Bo", peer="ipv4:198.51.100.1")).seat == 1


async def test_a_seat_that_left_cannot_act_but_may_repeat_its_leave(client: TableClient) -> None:
    host, code, _ = await client.create()
    guest = await client.join(code, "Bo")
    leave = gateway_pb2.LeaveTableRequest(request_id=rid(), table_id=host.table_id)
    first = await client.execute(guest.token, leave_table=leave)
    again = await client.execute(guest.token, leave_table=leave)
    assert again.version == first.version
    await expect(client.view(guest), DENIED, "TOKEN_INVALID")
    newcomer = await client.join(code, "Cy")
    assert newcomer.seat == 1  # D4: the lowest free seat
    await expect(client.view(guest), DENIED, "TOKEN_INVALID")
