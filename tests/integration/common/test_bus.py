"""The streams' creation at start against a real NATS server that is slow to answer."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import nats
import pytest
from structlog.testing import capture_logs

from services.common.bus import TABLE_STREAM, ensure_table_stream
from testing.servers import NatsServer
from testing.waiting import wait_for


@pytest.fixture
def nats_proc(tmp_path: Path) -> Iterator[NatsServer]:
    """A private nats-server with JetStream, started, for a test that freezes it."""
    server = NatsServer(data_dir=tmp_path / "nats")
    server.start()
    yield server
    server.stop(timeout=5)


async def test_stream_creation_outlasts_a_server_that_does_not_answer_in_time(
    nats_proc: NatsServer,
) -> None:
    # A replica starting while NATS is slow (the HA run saw a replica restarted) retries the
    # stream call instead of exiting.
    client = await nats.connect(nats_proc.url, allow_reconnect=False)
    try:
        js = client.jetstream(timeout=0.3)
        nats_proc.pause()
        try:
            with capture_logs() as logs:
                creation = asyncio.create_task(ensure_table_stream(js))
                await wait_for(
                    lambda: any(entry["event"] == "nats.stream_retry" for entry in logs),
                    timeout=5,
                    message="a retry after the first call timed out",
                )
                assert not creation.done()
        finally:
            nats_proc.resume()
        await asyncio.wait_for(creation, timeout=15)
        info = await client.jetstream().stream_info(TABLE_STREAM)
        assert info.config.name == TABLE_STREAM
        retry = next(entry for entry in logs if entry["event"] == "nats.stream_retry")
        assert retry["stream"] == TABLE_STREAM and retry["attempt"] == 1
    finally:
        await client.close()


async def test_stream_creation_gives_up_after_its_attempts(nats_proc: NatsServer) -> None:
    client = await nats.connect(nats_proc.url, allow_reconnect=False)
    try:
        js = client.jetstream(timeout=0.2)
        nats_proc.pause()
        try:
            with pytest.raises(nats.errors.TimeoutError):
                await asyncio.wait_for(ensure_table_stream(js), timeout=30)
        finally:
            nats_proc.resume()
    finally:
        await client.close()
