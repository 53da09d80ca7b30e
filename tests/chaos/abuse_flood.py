"""The attacker of ``test_abuse.py``, as a process of its own (so that its CPU is not the
victim's event loop): from one address, paced floods of creates, wrong codes, lobby churn,
view streams, connections and presence flapping for ``--seconds``; prints what each flood
was answered, as JSON on stdout.

    python -m tests.chaos.abuse_flood --near HOST:PORT --far HOST:PORT --seconds 8 --rate 40
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import grpc

from services.client.api import DominosClient, SeatCredentials
from services.client.stream import error_reason
from services.common.credentials import CODE_ALPHABET, CODE_LENGTH
from services.common.service_errors import limit_of
from testing.players import seat_four


@dataclass
class Outcomes:
    """What each flood was answered, as ``CODE reason limit`` strings."""

    seen: dict[str, Counter[str]] = field(default_factory=dict)

    def add(self, flood: str, outcome: str) -> None:
        self.seen.setdefault(flood, Counter())[outcome] += 1

    def record(self, flood: str, error: BaseException | None) -> None:
        if error is None:
            self.add(flood, "OK")
        elif isinstance(error, grpc.aio.AioRpcError):
            parts = [error.code().name, error_reason(error) or "", limit_of(error) or ""]
            self.add(flood, " ".join(p for p in parts if p))
        else:
            self.add(flood, type(error).__name__)


async def paced(until: float, rate: float, body: Callable[[], Awaitable[None]]) -> None:
    """Run ``body`` at most ``rate`` times a second until the monotonic time ``until``."""
    period = 1 / rate
    next_at = time.monotonic()
    while time.monotonic() < until:
        await body()
        next_at += period
        await asyncio.sleep(max(0.0, next_at - time.monotonic()))


async def call(outcomes: Outcomes, flood: str, call: Awaitable[Any]) -> None:
    try:
        await call
    except grpc.aio.AioRpcError as error:
        outcomes.record(flood, error)
    else:
        outcomes.record(flood, None)


def wrong_code(rng: random.Random) -> str:
    return "".join(rng.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))


async def floods(
    attacker: DominosClient, far: str, lobby: list[SeatCredentials], seconds: float, rate: float
) -> Outcomes:
    """Every flood at once, for ``seconds``, each at most ``rate`` requests a second."""
    outcomes = Outcomes()
    until = time.monotonic() + seconds
    rng = random.Random(15)
    host = lobby[0]
    held: list[Any] = []
    channels: list[DominosClient] = []

    async def creates() -> None:
        await call(outcomes, "creates", attacker.create_table("Flood"))

    async def codes() -> None:
        await call(outcomes, "codes", attacker.join_table(wrong_code(rng), "Eve"))

    target = [100]

    async def churn() -> None:
        target[0] = 150 if target[0] == 100 else 100
        await call(outcomes, "churn", attacker.set_target(host, target[0]))

    stream_client = DominosClient(far)

    async def streams() -> None:
        # One token opens streams and keeps them: the newest replaces the oldest.
        stream = stream_client.watch(lobby[1])
        held.append(stream)
        try:
            await asyncio.wait_for(stream.read(), timeout=5)
            outcomes.add("streams", "opened")
        except grpc.aio.AioRpcError as error:
            outcomes.record("streams", error)
        while len(held) > 4:
            # Beyond the seat's four, the oldest must have ended (replaced, or refused).
            old = held.pop(0)
            try:
                async with asyncio.timeout(1):
                    while await old.read() is not grpc.aio.EOF:
                        pass  # views it received before it ended
                outcomes.add("streams ended", "OK")
            except grpc.aio.AioRpcError as error:
                outcomes.record("streams ended", error)
            except TimeoutError:
                # Refused opens replace no stream once their own slot is freed: the last
                # streams opened before the seat's budget ran out stay live, rightly.
                outcomes.add("streams ended", "still open")
                old.cancel()

    async def connections() -> None:
        client = DominosClient(far)
        channels.append(client)
        await call(outcomes, "connections", client.view(lobby[2]))

    async def flapping() -> None:
        stream = attacker.watch(lobby[3])
        try:
            await asyncio.wait_for(stream.read(), timeout=5)
            outcomes.add("flapping", "OK")
        except grpc.aio.AioRpcError as error:
            outcomes.record("flapping", error)
        finally:
            stream.cancel()

    try:
        await asyncio.gather(
            *(
                paced(until, rate, body)
                for body in (creates, codes, churn, streams, connections, flapping)
            )
        )
    finally:
        for stream in held:
            stream.cancel()
        await stream_client.close()
        for client in channels:
            await client.close()
    return outcomes


async def run(near: str, far: str, seconds: float, rate: float) -> dict[str, dict[str, int]]:
    """The attacker's lobby (its seats feed the stream and flapping floods), then the floods."""
    attacker = DominosClient(near)
    try:
        lobby = await seat_four([attacker], ["Mallory", "M1", "M2", "M3"])
        print("ready", flush=True)
        outcomes = await floods(attacker, far, lobby.seats, seconds, rate)
    finally:
        await attacker.close()
    return {flood: dict(counts) for flood, counts in outcomes.seen.items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--near", required=True, help="the gateway of the victim")
    parser.add_argument("--far", required=True, help="the gateway the capped floods go to")
    parser.add_argument("--seconds", type=float, required=True)
    parser.add_argument("--rate", type=float, required=True)
    args = parser.parse_args(argv)
    outcomes = asyncio.run(run(args.near, args.far, args.seconds, args.rate))
    print(json.dumps(outcomes), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
