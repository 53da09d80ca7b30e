"""The web edge against the gRPC door, in one run on one cluster of real processes.

Per protocol — gRPC (the gateway's own port), Connect with binary and with JSON messages,
gRPC-Web (the web edge's port) — two latencies, rounds alternating the protocols' order so
that each sees the same machine:

- ``unary``: a seat's ``GetTableView``, one call in flight (client send → answer);
- ``move``: a move of a whole game played over that protocol, four seats each watching its
  view stream on it: ``PlayTile``/``Pass`` sent → the mover's own stream delivers the new
  version (the path a browser player waits on).

    python -m bench.web_bench [--calls 1000] [--games 2] [--rounds 2] [--json PATH]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

from connectrpc.protocol import ProtocolType
from dominos.v1 import game_pb2, gateway_pb2
from dominos.v1.gateway_connect import DominosServiceClient

from bench.common import write_json
from services.client.api import DominosClient, SeatCredentials, request_id
from testing.cluster import ProcessCluster, clock_env
from testing.players import seat_four
from testing.stats import summary_ms

PROTOCOLS = ("grpc", "connect_proto", "connect_json", "grpc_web")


class Door:
    """The public API through one protocol: the calls the bench makes."""

    def __init__(self, protocol: str, cluster: ProcessCluster) -> None:
        self.protocol = protocol
        self._grpc = DominosClient(cluster.gateway_address) if protocol == "grpc" else None
        self._web = (
            None
            if protocol == "grpc"
            else DominosServiceClient(
                cluster.web_url,
                protocol=ProtocolType.GRPC_WEB if protocol == "grpc_web" else ProtocolType.CONNECT,
                proto_json=protocol == "connect_json",
                send_compression=None,
                accept_compression=(),
                timeout_ms=10_000,
            )
        )

    @staticmethod
    def _headers(seat: SeatCredentials) -> dict[str, str]:
        return {"authorization": f"Bearer {seat.token}"}

    async def view(self, seat: SeatCredentials) -> game_pb2.TableView:
        request = gateway_pb2.GetTableViewRequest(table_id=seat.table_id)
        if self._grpc is not None:
            return await self._grpc.view(seat)
        assert self._web is not None
        return (await self._web.get_table_view(request, headers=self._headers(seat))).view

    async def act(self, seat: SeatCredentials, view: game_pb2.TableView) -> None:
        """The first legal move (or a pass), sent with the view's version."""
        move = view.legal_moves[0] if view.legal_moves else None
        play = (
            gateway_pb2.PlayTileRequest(
                table_id=seat.table_id,
                request_id=request_id(),
                tile=move.tile,
                end=move.end,
                expected_version=view.version,
            )
            if move is not None
            else None
        )
        pass_ = gateway_pb2.PassRequest(
            table_id=seat.table_id, request_id=request_id(), expected_version=view.version
        )
        if self._grpc is not None:
            stub, metadata = self._grpc.stub, seat.metadata()
            if play is not None:
                await stub.PlayTile(play, metadata=metadata, timeout=10)
            else:
                await stub.Pass(pass_, metadata=metadata, timeout=10)
            return
        assert self._web is not None
        if play is not None:
            await self._web.play_tile(play, headers=self._headers(seat))
        else:
            await self._web.pass_(pass_, headers=self._headers(seat))

    def watch(self, seat: SeatCredentials) -> AsyncIterator[Any]:
        if self._grpc is not None:
            return self._grpc.watch(seat)
        assert self._web is not None
        return self._web.watch_table(
            gateway_pb2.WatchTableRequest(table_id=seat.table_id),
            headers=self._headers(seat),
            timeout_ms=None,
        )

    async def close(self) -> None:
        if self._grpc is not None:
            await self._grpc.close()
        if self._web is not None:
            await self._web.close()


async def _timed(samples: list[int], call: Callable[[], Awaitable[Any]]) -> Any:
    started = time.perf_counter_ns()
    result = await call()
    samples.append(time.perf_counter_ns() - started)
    return result


async def measure_unary(door: Door, seat: SeatCredentials, calls: int) -> list[int]:
    samples: list[int] = []
    for _ in range(calls):
        await _timed(samples, lambda: door.view(seat))
    return samples


async def measure_game(door: Door, cluster: ProcessCluster, seed: int) -> list[int]:
    """One game over ``door``; per move, send → the mover's stream shows a newer version."""
    grpc_client = DominosClient(cluster.gateway_address)
    lobby = await seat_four([grpc_client], [f"W{seed}-{i}" for i in range(4)], target=50)
    latest: list[game_pb2.TableView | None] = [None] * 4
    changed = asyncio.Event()

    async def follow(seat: int) -> None:
        async for message in door.watch(lobby.seats[seat]):
            latest[seat] = message.view
            changed.set()
            if message.view.phase in (game_pb2.PHASE_FINISHED, game_pb2.PHASE_CLOSED):
                return

    async def at_least(seat: int, version: int) -> game_pb2.TableView:
        """The seat's latest view once its version is ``version`` or newer."""
        while (view := latest[seat]) is None or view.version < version:
            changed.clear()
            try:
                await asyncio.wait_for(changed.wait(), timeout=30)
            except TimeoutError:
                dead = [t.exception() for t in streams if t.done()]
                got = [v.version if v else None for v in latest]
                raise TimeoutError(f"seat {seat} never reached {version}: {got} {dead}") from None
        return view

    streams = [asyncio.create_task(follow(s)) for s in range(4)]
    samples: list[int] = []
    try:
        for seat in range(4):
            await at_least(seat, 0)
        started_at = await grpc_client.start(lobby.host)
        version = started_at.version
        while True:
            view0 = await at_least(0, version)
            if view0.phase == game_pb2.PHASE_FINISHED:
                break
            version = view0.version + 1
            if view0.phase != game_pb2.PHASE_PLAYING or not view0.HasField("turn_seat"):
                continue  # a round break: the next round's deal comes by itself
            seat = view0.turn_seat
            view = await at_least(seat, view0.version)
            started = time.perf_counter_ns()
            await door.act(lobby.seats[seat], view)
            await at_least(seat, view.version + 1)
            samples.append(time.perf_counter_ns() - started)
    finally:
        for task in streams:
            task.cancel()
        await asyncio.gather(*streams, return_exceptions=True)
        await grpc_client.close()
    return samples


async def bench(calls: int, games: int, rounds: int) -> dict[str, Any]:
    cluster = ProcessCluster.start(env=clock_env(45.0, 5.0, 0.0))
    pooled: dict[str, dict[str, list[int]]] = {p: {"unary": [], "move": []} for p in PROTOCOLS}
    try:
        host = DominosClient(cluster.gateway_address)
        lobby = await seat_four([host], ["A", "B", "C", "D"])
        await host.close()
        for k in range(rounds):
            for protocol in PROTOCOLS if k % 2 == 0 else tuple(reversed(PROTOCOLS)):
                door = Door(protocol, cluster)
                try:
                    await measure_unary(door, lobby.host, 50)  # warm the connection
                    pooled[protocol]["unary"] += await measure_unary(door, lobby.host, calls)
                    for g in range(games):
                        pooled[protocol]["move"] += await measure_game(door, cluster, k * 100 + g)
                finally:
                    await door.close()
    finally:
        cluster.stop()
    return {
        protocol: {
            kind: summary_ms(samples) | {"n": len(samples)} for kind, samples in kinds.items()
        }
        for protocol, kinds in pooled.items()
    }


def print_report(figures: dict[str, Any]) -> None:
    print(f"{'protocol':<14} {'latency':<6} {'n':>6} {'p50':>8} {'p90':>8} {'p99':>8}  (ms)")
    for protocol, kinds in figures.items():
        for kind, f in kinds.items():
            print(
                f"{protocol:<14} {kind:<6} {f['n']:>6} {f['p50']:>8.2f} {f['p90']:>8.2f} "
                f"{f['p99']:>8.2f}"
            )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--games", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    figures = asyncio.run(bench(args.calls, args.games, args.rounds))
    print_report(figures)
    write_json(args.json, figures)
    return 0


if __name__ == "__main__":
    sys.exit(main())
