"""Scripted players that survive faults: they reconnect their view stream with backoff to any
live gateway, and retry a command with the SAME request id on UNAVAILABLE or
DEADLINE_EXCEEDED (the contract makes that safe: a repeated request id acts once).

A player records every view it receives (for the audit against the command log), every
command the cluster acknowledged (an OK response: it must be in the log for good), and every
status that breaks the contract (UNKNOWN, INTERNAL, ...). Every await is bounded: a call by
its deadline, a stream read by ``stall_s`` (then the stream is dropped and reopened), the
whole game by the caller's deadline.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

import grpc
from dominos.v1 import game_pb2, gateway_pb2

from services.client.api import DominosClient, SeatCredentials, request_id
from services.rules import Command, Pass, Play, Start
from services.rules.tiles import tile_index
from testing.players import DONE, Lobby, seat_four
from testing.waiting import wait_for

T = TypeVar("T")

RETRYABLE = (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED)
#: Statuses a command may meet under faults without breaking the contract: the retryable
#: ones, a turn overtaken by an auto-play (FAILED_PRECONDITION) and contention (ABORTED).
EXPECTED = (*RETRYABLE, grpc.StatusCode.FAILED_PRECONDITION, grpc.StatusCode.ABORTED)


class Overtaken(Exception):
    """The command was refused because the table moved on (auto-play, next round)."""


@dataclass(frozen=True)
class Ack:
    """A command the cluster acknowledged (OK): it must be in the table's log at ``version``."""

    table_id: str
    seat: int
    request_id: str
    command: Command
    version: int
    at: float


@dataclass
class Stats:
    """What the player met."""

    retries: int = 0
    reconnects: int = 0
    stale_streams: int = 0
    overtaken: int = 0
    statuses: Counter[str] = field(default_factory=Counter)
    unexpected: list[str] = field(default_factory=list)


class ChaosPlayer:
    """One seat, played through whichever gateway is alive."""

    def __init__(
        self,
        name: str,
        seed: int,
        gateways: Callable[[], list[str]],
        *,
        call_timeout: float = 6.0,
        stall_s: float = 12.0,
        act: bool = True,
    ) -> None:
        self.name = name
        self.rng = random.Random(seed)
        self.gateways = gateways
        self.call_timeout = call_timeout
        self.stall_s = stall_s
        self.act = act
        self.credentials: SeatCredentials | None = None
        self.views: list[game_pb2.TableView] = []
        self.order_violations: list[str] = []
        self.acks: list[Ack] = []
        self.stats = Stats()
        self.latest: game_pb2.TableView | None = None
        self.finished = asyncio.Event()
        self._changed = asyncio.Event()
        self._clients: dict[str, DominosClient] = {}
        self._address: str | None = None

    @property
    def seat(self) -> int:
        assert self.credentials is not None
        return self.credentials.seat

    @property
    def table_id(self) -> str:
        assert self.credentials is not None
        return self.credentials.table_id

    # -- connections ---------------------------------------------------------------------

    def client(self, rotate: bool = False) -> DominosClient:
        """A client of the current gateway (another live one when ``rotate``)."""
        live = self.gateways() or list(self._clients) or []
        assert live, "no gateway address at all"
        if rotate or self._address not in live:
            others = [a for a in live if a != self._address] or live
            self._address = self.rng.choice(others)
        assert self._address is not None
        if self._address not in self._clients:
            self._clients[self._address] = DominosClient(self._address, timeout=self.call_timeout)
        return self._clients[self._address]

    async def close(self) -> None:
        for client in self._clients.values():
            with contextlib.suppress(Exception):
                await client.close()
        self._clients.clear()

    async def retrying(
        self,
        call: Callable[[DominosClient], Awaitable[T]],
        *,
        deadline: float,
        what: str,
    ) -> T:
        """``call`` until it answers, retrying (same request: the caller fixed its id) on
        UNAVAILABLE / DEADLINE_EXCEEDED / ABORTED with backoff, on another gateway each time.
        FAILED_PRECONDITION raises :class:`Overtaken`; anything else is a contract breach."""
        delay = 0.05
        rotate = False
        while True:
            try:
                return await call(self.client(rotate))
            except grpc.aio.AioRpcError as error:
                code = error.code()
                self.stats.statuses[f"{what} {code.name}"] += 1
                if code == grpc.StatusCode.FAILED_PRECONDITION:
                    raise Overtaken(error.details()) from None
                if code not in (*RETRYABLE, grpc.StatusCode.ABORTED):
                    self.stats.unexpected.append(f"{what}: {code.name} {error.details()}")
                    raise
                if time.monotonic() > deadline:
                    raise
                self.stats.retries += 1
                rotate = code != grpc.StatusCode.ABORTED
                await asyncio.sleep(delay * (0.5 + self.rng.random()))
                delay = min(delay * 2, 1.0)

    # -- playing ---------------------------------------------------------------------------

    async def run(self, deadline: float) -> None:
        """Watch and act until the game is over or ``deadline`` (monotonic) passes."""
        tasks = [asyncio.create_task(self._watch(deadline))]
        if self.act:
            tasks.append(asyncio.create_task(self._act(deadline)))
        try:
            remaining = max(deadline - time.monotonic(), 0.1)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.finished.wait(), timeout=remaining)
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

    def _record(self, view: game_pb2.TableView, previous: int, first: bool) -> None:
        if first and view.version < previous:
            self.order_violations.append(
                f"reopened stream went back: v{previous} -> v{view.version}"
            )
        if not first and view.version <= previous:
            self.order_violations.append(f"stream not increasing: v{previous} -> v{view.version}")
        self.views.append(view)
        if self.latest is None or view.version > self.latest.version:
            self.latest = view
            self._changed.set()
        if view.phase in DONE:
            self.finished.set()

    async def _watch(self, deadline: float) -> None:
        assert self.credentials is not None
        delay = 0.05
        rotate = False
        while not self.finished.is_set() and time.monotonic() < deadline:
            call = self.client(rotate).watch(self.credentials)
            previous = self.latest.version if self.latest is not None else 0
            first = True
            try:
                while True:
                    message = await asyncio.wait_for(call.read(), timeout=self.stall_s)
                    if message is grpc.aio.EOF:
                        break
                    self._record(message.view, previous, first)
                    previous, first, delay = message.view.version, False, 0.05
                    if self.finished.is_set():
                        return
                rotate = False
            except TimeoutError:
                self.stats.stale_streams += 1
                rotate = True
            except grpc.aio.AioRpcError as error:
                self.stats.statuses[f"watch {error.code().name}"] += 1
                if error.code() not in (*RETRYABLE, grpc.StatusCode.CANCELLED):
                    self.stats.unexpected.append(f"watch: {error.code().name} {error.details()}")
                rotate = True
            finally:
                call.cancel()
            self.stats.reconnects += 1
            await asyncio.sleep(delay * (0.5 + self.rng.random()))
            delay = min(delay * 2, 1.0)

    async def _act(self, deadline: float) -> None:
        acted = 0
        while not self.finished.is_set():
            await self._changed.wait()
            self._changed.clear()
            view = self.latest
            if view is None or view.version <= acted:
                continue
            if view.phase != game_pb2.PHASE_PLAYING or view.turn_seat != self.seat:
                continue
            acted = view.version
            await self.move(view, deadline)

    async def move(self, view: game_pb2.TableView, deadline: float) -> None:
        """Play a random legal move of ``view`` (or pass), retrying with one request id."""
        assert self.credentials is not None
        creds = self.credentials
        rid = request_id()
        command: Command
        if view.legal_moves:
            move = self.rng.choice(list(view.legal_moves))
            command = Play(self.seat, tile_index(move.tile.low, move.tile.high), int(move.end))

            def call(client: DominosClient) -> Awaitable[game_pb2.TableView]:
                return client.play(creds, move, rid=rid)
        else:
            command = Pass(self.seat)

            def call(client: DominosClient) -> Awaitable[game_pb2.TableView]:
                return client.pass_turn(creds, rid=rid)

        try:
            reply = await self.retrying(call, deadline=deadline, what="move")
        except Overtaken:
            self.stats.overtaken += 1
            return
        except grpc.aio.AioRpcError:
            return
        self.acks.append(
            Ack(self.table_id, self.seat, rid, command, int(reply.version), time.time())
        )


async def seat_chaos_players(players: Sequence[ChaosPlayer], target: int, deadline: float) -> Lobby:
    """The first player creates a table, the three others join it (:func:`seat_four`), each
    step retried as above; every player gets its credentials."""

    def send(seat: int, what: str, call: Callable[[DominosClient], Awaitable[T]]) -> Awaitable[T]:
        return players[seat].retrying(call, deadline=deadline, what=what)

    lobby = await seat_four(send, [p.name for p in players], target)
    for player, credentials in zip(players, lobby.seats, strict=True):
        player.credentials = credentials
    return lobby


async def start_game(host: ChaosPlayer, deadline: float) -> None:
    """The host starts the game (retried with one request id)."""
    creds = host.credentials
    assert creds is not None
    rid = request_id()

    async def start(client: DominosClient) -> Any:
        request = gateway_pb2.StartGameRequest(request_id=rid, table_id=creds.table_id)
        return await client.stub.StartGame(
            request, metadata=creds.metadata(), timeout=client.timeout
        )

    started = await host.retrying(start, deadline=deadline, what="start")
    host.acks.append(
        Ack(creds.table_id, 0, rid, Start(0, 0), int(started.view.version), time.time())
    )


@dataclass
class Game:
    """Four players of one table."""

    players: list[ChaosPlayer]
    target: int
    task: asyncio.Task[None] | None = None
    idle: bool = False

    @property
    def table_id(self) -> str:
        return self.players[0].table_id

    @property
    def version(self) -> int:
        latest = [p.latest.version for p in self.players if p.latest is not None]
        return max(latest, default=0)

    @property
    def finished(self) -> bool:
        """Whether every player saw the end (never, for an idle table: nobody watches)."""
        return not self.idle and all(p.finished.is_set() for p in self.players)

    async def close(self) -> None:
        for player in self.players:
            await player.close()


async def start_games(
    count: int,
    gateways: Callable[[], list[str]],
    *,
    target: int,
    deadline: float,
    seed: int = 0,
    idle: int = 0,
) -> list[Game]:
    """Seat ``count`` played tables and ``idle`` idle ones, and start them all.

    The players of a played table watch and act until ``deadline``. Nobody watches or acts
    at an idle table: every seat is away, so the table plays itself by auto-play on the
    timer (R11, S3, D1), at one move per away turn, for longer than any test lasts.
    """
    games = [
        Game(
            [
                ChaosPlayer(f"G{seed + g}P{i}", (seed + g) * 10 + i, gateways, act=g < count)
                for i in range(4)
            ],
            target,
            idle=g >= count,
        )
        for g in range(count + idle)
    ]
    await asyncio.gather(*(seat_chaos_players(g.players, target, deadline) for g in games))
    played = [g for g in games if not g.idle]
    for game in played:

        async def run(g: Game = game) -> None:
            await asyncio.gather(*(p.run(deadline) for p in g.players))

        game.task = asyncio.create_task(run())
    players = [p for g in played for p in g.players]
    await wait_for(lambda: all(p.latest is not None for p in players), timeout=30)
    await asyncio.gather(*(start_game(g.players[0], deadline) for g in games))
    return games
