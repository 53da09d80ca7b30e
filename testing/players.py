"""Scripted players of the public API, and the one way to seat four of them at a table.

:func:`seat_four` creates a table and joins its three other seats, each request sent the way
the caller says: straight to a client (end-to-end tests, benchmarks) or retried through
whichever gateway is alive (the chaos suite's :class:`~testing.chaos_players.ChaosPlayer`).

:class:`Player` is a real gRPC client of the gateway that watches its view stream and plays
random legal moves, checking every view it receives against SPEC (:func:`check_view`); a
view that breaks it fails the player's task. :func:`play_game` plays one whole game with
four of them.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

import grpc
from dominos.v1 import game_pb2, gateway_pb2

from services.client.api import DominosClient, SeatCredentials, request_id
from testing.waiting import wait_for

__all__ = [
    "DONE",
    "PLAYING",
    "Lobby",
    "Player",
    "Send",
    "all_messages",
    "check_view",
    "play_game",
    "seat_four",
    "seat_players",
]

T = TypeVar("T")

PLAYING = game_pb2.PHASE_PLAYING
DONE = (game_pb2.PHASE_FINISHED, game_pb2.PHASE_CLOSED)


# -- seating ------------------------------------------------------------------------------


class Send(Protocol):
    """How seat ``seat`` (0 the host, then 1..3 in joining order) sends one request: ``call``
    on a client of the caller's choice, tried once or retried (``what`` names the request)."""

    def __call__(
        self, seat: int, what: str, call: Callable[[DominosClient], Awaitable[T]]
    ) -> Awaitable[T]: ...


def straight_to(clients: Sequence[DominosClient]) -> Send:
    """Seat ``k`` sends its request once, on ``clients[k % len(clients)]``."""

    def send(seat: int, what: str, call: Callable[[DominosClient], Awaitable[T]]) -> Awaitable[T]:
        return call(clients[seat % len(clients)])

    return send


@dataclass(frozen=True)
class Lobby:
    """A table whose four seats are taken (not started yet)."""

    #: The credentials in joining order: the host's first.
    seats: list[SeatCredentials]
    code: str

    @property
    def host(self) -> SeatCredentials:
        """The host's credentials (it may start the game)."""
        return self.seats[0]


async def seat_four(
    clients: Sequence[DominosClient] | Send, names: Sequence[str], target: int = 0
) -> Lobby:
    """``names[0]`` creates a table (``target``: 0 for the default, R16), the three others join
    it with its invitation code (S1). ``clients``: one client per seat (or fewer, shared
    round-robin), or a :class:`Send` that decides how each request goes. Every request keeps
    one request id however often it is sent, so a retried one acts once."""
    send = straight_to(clients) if isinstance(clients, Sequence) else clients
    host_rid = request_id()

    async def create(client: DominosClient) -> Any:
        request = gateway_pb2.CreateTableRequest(
            request_id=host_rid, host_name=names[0], target=target
        )
        return await client.stub.CreateTable(request, timeout=client.timeout)

    created = await send(0, "create", create)
    seats = [SeatCredentials(created.table_id, created.seat, created.seat_token)]
    for seat, name in enumerate(names[1:4], start=1):
        rid = request_id()

        async def join(client: DominosClient, name: str = name, rid: str = rid) -> Any:
            request = gateway_pb2.JoinTableRequest(
                request_id=rid, invitation_code=created.invitation_code, player_name=name
            )
            return await client.stub.JoinTable(request, timeout=client.timeout)

        joined = await send(seat, "join", join)
        seats.append(SeatCredentials(joined.table_id, joined.seat, joined.seat_token))
    return Lobby(seats, created.invitation_code)


# -- a player that checks what it sees ---------------------------------------------------------


def tile_key(low: int, high: int) -> tuple[int, int]:
    return (min(low, high), max(low, high))


def tiles_shown(view: game_pb2.TableView) -> dict[str, set[tuple[int, int]]]:
    """Every tile a view mentions, by where it appears."""
    return {
        "hand": {tile_key(t.low, t.high) for t in view.hand},
        "moves": {tile_key(m.tile.low, m.tile.high) for m in view.legal_moves},
        "chain": {tile_key(p.left, p.right) for p in view.chain},
        "action": (
            {tile_key(view.last_action.move.tile.low, view.last_action.move.tile.high)}
            if view.last_action.kind == game_pb2.ACTION_KIND_PLAYED
            else set()
        ),
        "summary": {tile_key(t.low, t.high) for hand in view.last_round.hands for t in hand.tiles},
    }


def check_view(view: game_pb2.TableView, seat: int, target: int, turn_ms: int) -> None:
    """What SPEC promises about any view a seat receives."""
    assert view.your_seat == seat
    assert view.target == target  # R16
    assert len(view.seats) == 4
    assert [s.team for s in view.seats] == [
        game_pb2.TEAM_A,
        game_pb2.TEAM_B,
        game_pb2.TEAM_A,
        game_pb2.TEAM_B,
    ]  # R1
    for info in view.seats:
        assert list(info.passed_on) == sorted(set(info.passed_on))  # R10
        assert all(0 <= n <= 6 for n in info.passed_on)
    if view.phase == PLAYING:
        shown = tiles_shown(view)
        # S6: nothing but the own hand and the laid tiles; no summary while a round is live.
        assert shown["summary"] == set()
        assert not view.HasField("last_round")
        assert shown["moves"] <= shown["hand"]
        assert shown["action"] <= shown["chain"]
        assert not shown["hand"] & shown["chain"]
        assert view.seats[seat].tile_count == len(view.hand)
        assert sum(s.tile_count for s in view.seats) + len(view.chain) == 28  # R5
        assert view.HasField("turn_seat")
        assert 0 < view.turn_deadline_ms - view.server_time_ms <= turn_ms + 50  # R11
        mine = view.turn_seat == seat
        assert view.can_pass == (mine and not view.legal_moves)  # R9
        if not mine:
            assert not view.legal_moves
    if view.phase in (game_pb2.PHASE_ROUND_OVER, game_pb2.PHASE_FINISHED):
        assert view.HasField("last_round")
        summary = view.last_round
        assert summary.scoring_team in (game_pb2.TEAM_A, game_pb2.TEAM_B)  # R15
        assert summary.tie_rule_applied == (
            summary.outcome == game_pb2.ROUND_OUTCOME_BLOCKED_TIE
        )  # R14
    if view.phase == game_pb2.PHASE_FINISHED:
        assert max(view.score_team_a, view.score_team_b) >= target  # R17
        assert view.winner != game_pb2.TEAM_UNSPECIFIED


@dataclass
class Player:
    """One seat played by a script through the gateway."""

    name: str
    address: str
    seed: int
    target: int = 50
    turn_ms: int = 2000
    credentials: SeatCredentials | None = None
    views: list[game_pb2.TableView] = field(default_factory=list)
    client: DominosClient | None = None
    act: bool = True

    def connect(self, address: str | None = None) -> DominosClient:
        if address is not None:
            self.address = address
        self.client = DominosClient(self.address)
        return self.client

    @property
    def seat(self) -> int:
        assert self.credentials is not None
        return self.credentials.seat

    async def play_until_done(self, stop_after_versions: int | None = None) -> None:
        """Watch the stream, check every view, act on this seat's turns; returns when the
        stream ends (game over) or after ``stop_after_versions`` views."""
        assert self.client is not None and self.credentials is not None
        rng = random.Random(self.seed)
        acted_at = -1
        call = self.client.watch(self.credentials)
        previous = self.views[-1].version if self.views else 0
        first = True
        try:
            async for message in call:
                view = message.view
                # A new stream starts at the current version (maybe one already seen before
                # the reconnection); from then on, no duplicate and no going back.
                assert view.version >= previous if first else view.version > previous
                first, previous = False, view.version
                self.views.append(view)
                check_view(view, self.seat, self.target, self.turn_ms)
                if (
                    self.act
                    and view.phase == PLAYING
                    and view.turn_seat == self.seat
                    and view.version != acted_at
                ):
                    acted_at = view.version
                    await self._act(view, rng)
                if stop_after_versions is not None and len(self.views) >= stop_after_versions:
                    return
        finally:
            call.cancel()

    async def _act(self, view: game_pb2.TableView, rng: random.Random) -> None:
        assert self.client is not None and self.credentials is not None
        try:
            if view.legal_moves:
                await self.client.play(self.credentials, rng.choice(list(view.legal_moves)))
            else:
                await self.client.pass_turn(self.credentials)
        except grpc.aio.AioRpcError as error:
            # The view was overtaken (a timeout auto-played): the engine refused; go on.
            assert error.code() == grpc.StatusCode.FAILED_PRECONDITION, error

    async def close(self) -> None:
        if self.client is not None:
            await self.client.close()


async def seat_players(players: Sequence[Player], target: int) -> Lobby:
    """The first player creates the table, the three others join with its code (each through
    its own client); every player gets its credentials."""
    clients: list[DominosClient] = []
    for player in players:
        assert player.client is not None
        clients.append(player.client)
    lobby = await seat_four(clients, [p.name for p in players], target)
    for player, credentials in zip(players, lobby.seats, strict=True):
        player.credentials = credentials
    return lobby


async def play_game(addresses: list[str], seed: int, target: int = 50) -> list[Player]:
    """Four players on the given gateways (round-robin) play one whole game."""
    players = [
        Player(f"P{seed}-{i}", addresses[i % len(addresses)], seed * 10 + i, target)
        for i in range(4)
    ]
    for player in players:
        player.connect()
    try:
        await seat_players(players, target)
        tasks = [asyncio.create_task(p.play_until_done()) for p in players]
        await _wait_all_watching(players)
        host = players[0]
        assert host.client is not None and host.credentials is not None
        await host.client.start(host.credentials)
        await asyncio.wait_for(asyncio.gather(*tasks), timeout=120)
    finally:
        for player in players:
            await player.close()
    return players


async def _wait_all_watching(players: list[Player]) -> None:
    """Until every player's stream delivered its first view."""
    await wait_for(lambda: all(p.views for p in players), timeout=10)


def all_messages(players: list[Player]) -> list[tuple[int, Any]]:
    """``(seat, view)`` of every message every player received."""
    return [(p.seat, v) for p in players for v in p.views]
