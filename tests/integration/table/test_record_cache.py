"""The table service's record cache (issue 22): a command starts from the replica's last
record of its table, and the compare-and-set keeps that exact — two replicas playing one
table in turns never lose, double or wrongly refuse a move; a stale or expired cached record
changes nothing it should not."""

from __future__ import annotations

import random
import time
from typing import Any

import grpc
import pytest
from dominos.v1 import gateway_pb2

from services.common.projection import table_view
from services.common.schema import table_key
from services.common.service_errors import Reason, ServiceError
from services.rules import Phase, TableState, Timing, replay
from services.table import metrics
from services.table.application import Policy, TableApp
from services.table.command_log import decode_log
from services.table.record_cache import RecordCache
from services.table.store import Client, TableStore
from testing.secrets import SESSION_SECRETS
from testing.tables import seat_four_at

from .client import rid

LOCAL = Client("ipv4:127.0.0.1", "gw/ipv4:127.0.0.1:4000")
POLICY = Policy(timing=Timing(break_ms=0), token_secret=SESSION_SECRETS.token_secret.encode())


def _count(result: str) -> float:
    return float(metrics.RECORD_CACHE.labels(result)._value.get())


def _turn(state: TableState) -> int:
    """The seat to play in a dealt round."""
    assert state.round is not None
    return state.round.turn


async def _seated_table(app: TableApp) -> tuple[str, list[str]]:
    """A started table of four, made through ``app``: its id and the seats' tokens."""
    created, tokens = await seat_four_at(app, LOCAL)
    await app.seated_command(
        gateway_pb2.StartGameRequest(request_id=rid(), table_id=created.table_id), tokens[0]
    )
    return created.table_id, tokens


async def _move(app: TableApp, store: TableStore, table_id: str, tokens: list[str]) -> int:
    """The seat to play's first legal move (or its pass), sent through ``app``; the version
    it answers."""
    request, token = await _next_move(app, store, table_id, tokens)
    answer = await app.seated_command(request, token)
    return int(answer.view.version)


async def _next_move(
    app: TableApp, store: TableStore, table_id: str, tokens: list[str]
) -> tuple[Any, str]:
    """The seat to play's first legal move (or its pass) on the table in Redis, and the
    seat's token."""
    record = await store.load(table_id)
    assert record is not None
    seat = _turn(record.state)
    view = table_view(record.state, seat, app.now_ms())
    request: Any
    if view.legal_moves:
        move = view.legal_moves[0]
        request = gateway_pb2.PlayTileRequest(
            request_id=rid(), table_id=table_id, tile=move.tile, end=move.end
        )
    else:
        request = gateway_pb2.PassRequest(request_id=rid(), table_id=table_id)
    return request, tokens[seat]


@pytest.fixture
def store(redis_connect: Any) -> TableStore:
    return TableStore(redis_connect("table"))


async def test_the_cached_record_is_exactly_what_redis_holds_after_every_command(
    store: TableStore,
) -> None:
    app = TableApp(store, None, POLICY)
    table_id, tokens = await _seated_table(app)
    for _ in range(60):
        record = await store.load(table_id)
        assert record is not None
        if record.state.phase is Phase.ROUND_OVER:
            assert await app.expire(table_id, record.state.turn_number) is not None
        elif record.state.phase is Phase.PLAYING:
            await _move(app, store, table_id, tokens)
        else:
            break
        # Every field: state, version, clock, seats' nonces, digests and request ids, joins.
        assert app.cache.get(table_id) == await store.load(table_id)
    await app.set_presence(table_id, tokens[2], connected=False)
    assert app.cache.get(table_id) == await store.load(table_id)


async def test_a_serialised_answer_is_the_seats_view_of_the_table_as_committed(
    store: TableStore,
) -> None:
    """``execute_serialized`` (what the servicer sends, issue 22) answers each move with the
    acting seat's view of the version in Redis (never another seat's hand, S6), a repeated
    request with the same, a create or join with its whole response."""
    app = TableApp(store, None, POLICY)
    table_id, tokens = await _seated_table(app)
    for _ in range(12):
        request, token = await _next_move(app, store, table_id, tokens)
        seat = tokens.index(token)
        raw = await app.execute_serialized(request, token, LOCAL)
        answer = type(request).__name__.replace("Request", "Response")
        view = getattr(gateway_pb2, answer).FromString(raw).view
        record = await store.load(table_id)
        assert record is not None
        assert view == table_view(record.state, seat, view.server_time_ms)
        assert int(view.your_seat) == seat
        again = await app.execute_serialized(request, token, LOCAL)  # a retry: same version
        assert getattr(gateway_pb2, answer).FromString(again).view.version == view.version
    made = await app.execute_serialized(
        gateway_pb2.CreateTableRequest(request_id=rid() + rid(), host_name="Eve"), "", LOCAL
    )
    created = gateway_pb2.CreateTableResponse.FromString(made)
    assert created.seat_token and created.view.your_seat == 0


async def test_two_replicas_in_turn_never_lose_double_or_wrongly_refuse_a_move(
    store: TableStore,
) -> None:
    replicas = [TableApp(store, None, POLICY), TableApp(store, None, POLICY)]
    table_id, tokens = await _seated_table(replicas[0])
    rng = random.Random(22)
    versions = []
    behind = 0  # moves sent to the replica that did not write the last version
    last = replicas[0]
    for _ in range(40):
        record = await store.load(table_id)
        assert record is not None
        if record.state.phase is not Phase.PLAYING:
            break
        # Whichever replica gets the move, its cached record may be moves behind: the move
        # (legal on the table as it is) must still be applied, once.
        chosen = rng.choice(replicas)
        behind += chosen is not last
        versions.append(await _move(chosen, store, table_id, tokens))
        last = chosen
    assert behind >= 10
    assert versions == list(range(versions[0], versions[0] + len(versions)))
    loaded = await store.load(table_id)
    assert loaded is not None
    assert replay(decode_log(await store.read_log(table_id))) == loaded.state


async def test_a_move_over_a_stale_cached_record_is_committed_over_the_table_in_redis(
    store: TableStore,
) -> None:
    first, second = TableApp(store, None, POLICY), TableApp(store, None, POLICY)
    table_id, tokens = await _seated_table(first)
    await _move(second, store, table_id, tokens)  # the second replica caches the table
    request, token = await _next_move(second, store, table_id, tokens)
    # The first replica records a presence change: the move is as legal as before, but the
    # second replica's record is one version behind; its commit is refused, then redone.
    mover = tokens.index(token)
    other = tokens[(mover + 1) % 4]
    cached = second.cache.get(table_id)
    at = await first.set_presence(table_id, other, connected=True)
    assert cached is not None and at == cached.version + 1
    stale = _count("stale")
    answer = await second.seated_command(request, token)
    assert answer.view.version == at + 1
    assert _count("stale") == stale + 1
    assert second.cache.get(table_id) == await store.load(table_id)


async def test_a_refusal_over_a_current_cached_record_is_the_refusal_redis_gives(
    store: TableStore,
) -> None:
    app = TableApp(store, None, POLICY)
    table_id, tokens = await _seated_table(app)
    record = await store.load(table_id)
    assert record is not None
    wrong = (_turn(record.state) + 1) % 4
    misses = _count("miss")
    with pytest.raises(ServiceError) as refused:
        await app.seated_command(
            gateway_pb2.PassRequest(request_id=rid(), table_id=table_id), tokens[wrong]
        )
    assert refused.value.code is grpc.StatusCode.FAILED_PRECONDITION
    assert refused.value.reason is Reason.NOT_YOUR_TURN
    assert _count("miss") == misses + 1  # decided again over the table read from Redis
    assert await store.load(table_id) == record  # nothing written


async def test_a_cached_table_that_expired_in_redis_is_not_found_and_not_written_back(
    store: TableStore, redis_client: Any
) -> None:
    app = TableApp(store, None, POLICY)
    table_id, tokens = await _seated_table(app)
    assert app.cache.get(table_id) is not None
    request, token = await _next_move(app, store, table_id, tokens)
    await redis_client.delete(table_key(table_id))  # its lifetime ran out
    with pytest.raises(ServiceError) as refused:
        await app.seated_command(request, token)
    assert refused.value.reason is Reason.TABLE_NOT_FOUND
    assert not await redis_client.exists(table_key(table_id))
    assert app.cache.get(table_id) is None


async def test_a_replica_without_a_cache_reads_every_command_from_redis(
    store: TableStore,
) -> None:
    app = TableApp(store, None, POLICY, cache=RecordCache(capacity=0))
    hits = _count("hit")
    table_id, tokens = await _seated_table(app)
    await _move(app, store, table_id, tokens)
    assert _count("hit") == hits
    assert app.cache.get(table_id) is None


async def test_a_version_number_reused_after_redis_lost_writes_is_not_taken_for_the_cached_one(
    store: TableStore, redis_client: Any
) -> None:
    """Redis can lose its last writes (a failover before replication, a restart without
    persistence); another replica may then write the same version number with other content.
    A replica whose cache holds the lost version must not take the new one for it: the
    compare-and-set checks the version's commit time too, so the move is decided again over
    the table in Redis and the log still replays to the state."""
    first = TableApp(store, None, POLICY)
    # The other replica's clock is a second ahead: its commits carry another time.
    second = TableApp(store, None, POLICY, clock=lambda: time.time() + 1.0)
    table_id, tokens = await _seated_table(first)
    key = table_key(table_id)
    saved = await redis_client.dump(key)
    played = await _move(first, store, table_id, tokens)  # cached by the first replica only
    await redis_client.restore(key, 0, saved, replace=True)  # that write is lost
    # The second replica writes the same version number: a pass of another seat's, or the
    # same seat's other move (it did not see the lost one).
    assert await _move(second, store, table_id, tokens) == played
    cached, stored = first.cache.get(table_id), await store.load(table_id)
    assert cached is not None and stored is not None
    assert cached.version == stored.version and cached.last_time_ms != stored.last_time_ms
    stale = _count("stale")
    answer = await first.seated_command(*await _next_move(first, store, table_id, tokens))
    assert answer.view.version == played + 1
    assert _count("stale") == stale + 1
    loaded = await store.load(table_id)
    assert loaded is not None
    assert replay(decode_log(await store.read_log(table_id))) == loaded.state
    assert first.cache.get(table_id) == loaded


async def test_a_token_revoked_through_another_replica_is_refused_where_its_seat_is_cached(
    store: TableStore,
) -> None:
    """Trust at the table over stale caches (D7): Cy leaves and Eve takes his seat through
    one replica while the other still caches Cy as the seat's holder. On that replica Cy's
    token is refused at every door and writes nothing; Eve's token is the seat's."""
    first, second = TableApp(store, None, POLICY), TableApp(store, None, POLICY)
    created, tokens = await seat_four_at(first, LOCAL)
    table_id, cy = created.table_id, tokens[2]
    cached = first.cache.get(table_id)
    await second.seated_command(
        gateway_pb2.LeaveTableRequest(request_id=rid(), table_id=table_id), cy
    )
    eve = await second.join_table(
        gateway_pb2.JoinTableRequest(
            request_id=rid(), player_name="Eve", invitation_code=created.invitation_code
        ),
        LOCAL,
    )
    assert eve.seat == 2
    assert first.cache.get(table_id) == cached  # the first replica still holds Cy's seat
    record = await store.load(table_id)
    doors = {
        "leave": lambda: first.seated_command(
            gateway_pb2.LeaveTableRequest(request_id=rid(), table_id=table_id), cy
        ),
        "presence": lambda: first.set_presence(table_id, cy, connected=False),
        "view": lambda: first.view(table_id, cy),
    }
    for door, call in doors.items():
        with pytest.raises(ServiceError) as refused:
            await call()
        assert refused.value.reason is Reason.TOKEN_INVALID, door
    assert await store.load(table_id) == record  # nothing written
    view = await first.view(table_id, eve.seat_token)
    assert view.your_seat == 2 and view.seats[2].name == "Eve"
    left = await first.seated_command(
        gateway_pb2.LeaveTableRequest(request_id=rid(), table_id=table_id), eve.seat_token
    )
    assert record is not None and left.version == record.version + 1
    freed = await store.load(table_id)
    assert freed is not None and freed.state.names[2] == ""
