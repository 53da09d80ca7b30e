"""The terminal client's screenshot, ``docs/screenshots/terminal-80x24.svg``: the real client
at 80 x 24, mid-round, against a real local cluster (Redis, NATS, table, timer, gateway as
processes, from :mod:`testing.cluster`), its three other seats scripted.

Regenerate it with::

    .venv/bin/python -m tests.client.capture            # French, the default
    .venv/bin/python -m tests.client.capture --lang en --out /tmp/en.svg

:func:`capture_mid_round` is also run by tests/client/test_capture.py, which checks that the
mid-round table fits the terminal.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import cast

from dominos.v1 import game_pb2

from services.client.app import DominosApp
from services.client.texts import LANGS, Lang
from services.client.widgets import screen_text
from testing.cluster import ProcessCluster, clock_env
from testing.waiting import wait_for
from tests.client.pilots import (
    AWAY_S,
    BREAK_S,
    TURN_S,
    Bots,
    current,
    fits,
    my_turn,
    play_our_turn,
    shows_game,
)

ROOT = Path(__file__).resolve().parents[2]
SCREENSHOT = ROOT / "docs" / "screenshots" / "terminal-80x24.svg"
SIZE = (80, 24)
#: The widgets a mid-round table must show whole.
ESSENTIAL = (
    "header", "north", "west", "east", "chain", "ends", "south", "hand", "turn", "pass",
    "last-action", "keys",
)  # fmt: skip


async def capture_mid_round(
    address: str, path: Path, *, lang: Lang = "fr", min_chain: int = 8
) -> str:
    """Play a table through the real client at ``address`` (the host, Ana; three scripted
    seats) until it is the client's turn with at least ``min_chain`` tiles laid, then save
    the screen as SVG to ``path``; returns the screen as text. Raises AssertionError when
    an essential part of the table does not fit 80 x 24."""
    bots = Bots.connect(address, ("Ben", "Chloé", "Éric"))
    app = DominosApp(address, lang=lang, player_name="Ana", create_target=100)
    try:
        async with app.run_test(size=SIZE) as pilot:
            await wait_for(lambda: app.code, timeout=10, message="table created")
            await bots.join(app.code)
            await wait_for(lambda: sum(s.occupied for s in current(app).seats) == 4, timeout=10)
            await pilot.pause()
            await pilot.press("s")
            await shows_game(pilot, app)
            while True:
                await wait_for(
                    lambda: my_turn(app) or current(app).phase == game_pb2.PHASE_FINISHED,
                    timeout=30,
                    message="our turn",
                )
                await pilot.pause()
                if len(current(app).chain) >= min_chain or not my_turn(app):
                    break
                await play_our_turn(pilot, app)
            await pilot.pause()
            problems = fits(app, ESSENTIAL)
            assert not problems, problems
            path.parent.mkdir(parents=True, exist_ok=True)
            app.save_screenshot(filename=path.name, path=str(path.parent))
            return screen_text(app)
    finally:
        await bots.close()


def main(argv: Sequence[str] | None = None) -> int:
    """Start a local cluster, capture the screenshot, stop the cluster."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--out", type=Path, default=SCREENSHOT, help=f"default {SCREENSHOT}")
    parser.add_argument("--lang", choices=LANGS, default="fr")
    args = parser.parse_args(argv)
    cluster = ProcessCluster.start(env={**clock_env(TURN_S, AWAY_S, BREAK_S)})
    try:
        text = asyncio.run(
            capture_mid_round(cluster.gateways[0].address, args.out, lang=cast(Lang, args.lang))
        )
    finally:
        cluster.stop()
    print(text)
    print(f"saved {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
