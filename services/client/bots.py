"""Scripted clients for development: four of them play a whole game against a running cluster.

**A development tool, never a player (S2).** Scripted clients exist to demonstrate and test a
cluster: they create their own private table and fill it themselves. They never join a table
created by a person, and nothing in the product lets them complete one.

A :class:`ScriptedSeat` is an ordinary client of the public API: it watches its seat's view
stream (reconnecting like the terminal client, :class:`~services.client.stream.ViewStream`)
and, on its turn, lays a random legal tile (``legal_moves``), draws when nothing fits and the
stock holds tiles (``can_draw``), or passes when nothing fits
(``can_pass``, R9). :func:`run_demo` seats four of them, starts the game and reports every
round as it ends through a callback.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import grpc
from dominos.v1 import game_pb2

from services.client.api import DominosClient, SeatCredentials
from services.client.stream import Backoff, ViewStream, retry_command

__all__ = ["S2_WARNING", "DemoResult", "ScriptedSeat", "run_demo", "seat_scripted_table"]

S2_WARNING = (
    "Warning: scripted clients are a development tool. They play only at a table they create "
    "and fill themselves; they never fill seats of real tables (S2: no robots)."
)


@dataclass
class ScriptedSeat:
    """One seat played by a script through the gateway at ``address``.

    ``seed`` makes its choices reproducible; ``act=False`` makes it watch only (a seat that
    never acts is played by the table when its turn runs out, R11).
    """

    name: str
    address: str
    seed: int = 0
    act: bool = True
    credentials: SeatCredentials | None = None
    client: DominosClient | None = None
    last: game_pb2.TableView | None = None
    views: int = 0
    on_view: Callable[[game_pb2.TableView], None] | None = None
    watching: asyncio.Event = field(default_factory=asyncio.Event, repr=False)
    _stream: ViewStream | None = field(default=None, repr=False)
    _acted_at: int = -1

    def connect(self) -> DominosClient:
        """Open the channel to the gateway."""
        self.client = DominosClient(self.address)
        return self.client

    async def run(self) -> game_pb2.TableView | None:
        """Watch (reconnecting) and act on this seat's turns until the table is over;
        returns the last view."""
        assert self.client is not None and self.credentials is not None
        rng = random.Random(self.seed)
        pending: set[asyncio.Task[None]] = set()

        def seen(view: game_pb2.TableView) -> None:
            self.last = view
            self.views += 1
            self.watching.set()
            if self.on_view is not None:
                self.on_view(view)
            if (
                self.act
                and view.phase == game_pb2.PHASE_PLAYING
                and view.HasField("turn_seat")
                and view.turn_seat == view.your_seat
                and view.version != self._acted_at
            ):
                self._acted_at = view.version
                task = asyncio.create_task(self._act(view, rng))
                pending.add(task)
                task.add_done_callback(pending.discard)

        self._stream = ViewStream(self.client, self.credentials, seen, backoff=Backoff(maximum=2.0))
        try:
            return await self._stream.run()
        finally:
            for task in pending:
                task.cancel()

    async def _act(self, view: game_pb2.TableView, rng: random.Random) -> None:
        client, seat = self.client, self.credentials
        assert client is not None and seat is not None
        try:
            if view.legal_moves:
                move = rng.choice(list(view.legal_moves))
                await retry_command(lambda rid: client.play(seat, move, rid))
            elif view.can_draw:
                await retry_command(lambda rid: client.draw(seat, rid))
            elif view.can_pass:
                await retry_command(lambda rid: client.pass_turn(seat, rid))
        except grpc.aio.AioRpcError as error:
            # FAILED_PRECONDITION: the view was overtaken (the turn timed out and the table
            # played); go on. Anything else (the gateway stayed away through every retry):
            # act again when the reconnected stream shows this turn again.
            if error.code() != grpc.StatusCode.FAILED_PRECONDITION:
                self._acted_at = -1

    async def close(self) -> None:
        """Close the channel."""
        if self.client is not None:
            await self.client.close()


async def seat_scripted_table(
    seats: list[ScriptedSeat], target: int
) -> tuple[str, game_pb2.TableView]:
    """The first seat creates a table with ``target`` (R16) and the others join it with its
    invitation code (S1); returns the code and the host's first view."""
    host = seats[0]
    assert host.client is not None
    host.credentials, code, view = await host.client.create_table(host.name, target)
    for seat in seats[1:]:
        assert seat.client is not None
        seat.credentials, _ = await seat.client.join_table(code, seat.name)
    return code, view


@dataclass
class DemoResult:
    """The end of a demo game: the final view (PHASE_FINISHED) and every round's summary view."""

    final: game_pb2.TableView
    rounds: list[game_pb2.TableView]


async def run_demo(
    address: str,
    target: int = 100,
    *,
    seed: int | None = None,
    on_round: Callable[[game_pb2.TableView], None] | None = None,
    time_limit: float = 600.0,
) -> DemoResult:
    """Four scripted seats play one whole game at ``address``; ``on_round(view)`` is called
    once per ended round with the view that carries its summary. Raises ``TimeoutError``
    when the game is not over after ``time_limit`` seconds."""
    base = random.randrange(1 << 30) if seed is None else seed
    seats = [ScriptedSeat(f"Demo-{i + 1}", address, base + i) for i in range(4)]
    rounds: list[game_pb2.TableView] = []
    reported: set[int] = set()

    def report(view: game_pb2.TableView) -> None:
        if not view.HasField("last_round"):
            return
        number = view.last_round.round_number
        if number in reported:
            return
        reported.add(number)
        rounds.append(view)
        if on_round is not None:
            on_round(view)

    seats[0].on_view = report
    for seat in seats:
        seat.connect()
    tasks: list[asyncio.Task[game_pb2.TableView | None]] = []
    try:
        async with asyncio.timeout(time_limit):
            await seat_scripted_table(seats, target)
            tasks = [asyncio.create_task(s.run()) for s in seats]
            # Start once every seat watches (so every seat is connected, S3).
            ready: asyncio.Future[Any] = asyncio.ensure_future(
                asyncio.gather(*(s.watching.wait() for s in seats))
            )
            await asyncio.wait([ready, *tasks], return_when=asyncio.FIRST_COMPLETED)
            if not ready.done():
                ready.cancel()
                for task in tasks:
                    if task.done():
                        task.result()  # a stream that failed first: raise its error
                raise RuntimeError("a scripted seat stopped watching before the start")
            host = seats[0]
            assert host.client is not None and host.credentials is not None
            await host.client.start(host.credentials)
            results = await asyncio.gather(*tasks)
    finally:
        for task in tasks:
            task.cancel()
        for seat in seats:
            await seat.close()
    final = results[0]
    assert final is not None
    return DemoResult(final, rounds)
