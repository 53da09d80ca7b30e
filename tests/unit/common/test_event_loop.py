"""``DOMINOS_EVENT_LOOP`` picks the loop a service runs on (services.common.entrypoint)."""

from __future__ import annotations

import asyncio

import pytest
import uvloop

from services.common.entrypoint import run_loop


@pytest.mark.parametrize(
    ("name", "loop_type"),
    [("uvloop", uvloop.Loop), ("asyncio", asyncio.BaseEventLoop)],
)
def test_a_service_runs_on_the_event_loop_its_settings_name(
    name: str, loop_type: type[asyncio.AbstractEventLoop]
) -> None:
    seen: list[asyncio.AbstractEventLoop] = []

    async def main() -> None:
        seen.append(asyncio.get_running_loop())

    run_loop(name, main())
    assert len(seen) == 1 and isinstance(seen[0], loop_type)
    assert (name == "uvloop") == isinstance(seen[0], uvloop.Loop)
