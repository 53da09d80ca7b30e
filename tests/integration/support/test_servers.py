"""The server process managers against the real binaries: crash, restart, pause, persistence."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import nats
import pytest
import redis
import redis.asyncio as aioredis
from nats.aio.client import Client as NatsClient
from nats.js.api import StorageType

from services.common.connections import flushed
from testing.redis_cluster import BUS_OFFSET, RedisClusterServers
from testing.secrets import SESSION_SECRETS
from testing.servers import (
    NatsServer,
    RedisServer,
    ServerError,
    claim_port,
    ephemeral_port_floor,
    free_port,
    nats_binary,
)


def ping(server: RedisServer, timeout: float = 2.0) -> bool:
    client = redis.Redis.from_url(
        server.url, socket_timeout=timeout, socket_connect_timeout=timeout
    )
    try:
        return bool(client.ping())
    finally:
        client.close()


@pytest.fixture
def redis_proc(tmp_path: Path) -> Iterator[RedisServer]:
    """A private redis-server (not started) for tests that crash or freeze it."""
    server = RedisServer(data_dir=tmp_path / "redis")
    yield server
    server.stop(timeout=5)


@pytest.fixture
def nats_proc(tmp_path: Path) -> Iterator[NatsServer]:
    """A private nats-server with JetStream (not started) for tests that crash or freeze it."""
    server = NatsServer(data_dir=tmp_path / "nats")
    yield server
    server.stop(timeout=5)


def test_a_nats_server_runs_the_venvs_release_whatever_path_finds_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The cluster, the tests and the load bench's floor pipeline all run the venv's
    nats-server (issue 22: Debian's older one, first on a PATH without the venv, ran the
    bench's floor while the cluster ran the venv's)."""
    venv = nats_binary()
    if venv is None:
        pytest.skip("no nats-server in the venv: every server takes the one on PATH")
    other = tmp_path / "bin" / "nats-server"
    other.parent.mkdir()
    other.write_text("#!/bin/sh\nexit 1\n")
    other.chmod(0o755)
    monkeypatch.setenv("PATH", f"{other.parent}:{os.environ.get('PATH', '')}")
    assert NatsServer(data_dir=tmp_path / "nats").binary == venv
    assert NatsServer(data_dir=tmp_path / "n2", binary=str(other)).binary == str(other)


def test_free_ports_are_distinct() -> None:
    ports = [free_port() for _ in range(50)]
    assert len(set(ports)) == len(ports)


def test_free_ports_are_drawn_below_the_ephemeral_range() -> None:
    # An outbound connection takes its local port from the ephemeral range; a port drawn
    # there could be taken between its choice and the server's bind.
    floor = ephemeral_port_floor()
    assert all(free_port() < floor for _ in range(50))


def test_a_claimed_port_is_never_handed_out() -> None:
    port = free_port()
    assert not claim_port(port)
    assert port not in {free_port(below=port + 1) for _ in range(200)}


def test_cluster_nodes_bus_ports_are_claimed_and_distinct(tmp_path: Path) -> None:
    # A node's bus port (port + 10000) was once handed to the next node as its client port:
    # the first node bound it and the second could not start.
    cluster = RedisClusterServers(SESSION_SECRETS, tmp_path, primaries=6)
    ports = [node.port for node in cluster.nodes]
    buses = [port + BUS_OFFSET for port in ports]
    assert len(set(ports + buses)) == 12
    assert all(bus < ephemeral_port_floor() for bus in buses)
    assert not any(claim_port(bus) for bus in buses)


def test_redis_kill_and_restart_on_the_same_port(redis_proc: RedisServer) -> None:
    redis_proc.start()
    port, first_pid = redis_proc.port, redis_proc.pid
    assert ping(redis_proc)
    redis.Redis.from_url(redis_proc.url).set("k", "v")

    redis_proc.kill()
    assert not redis_proc.running
    with pytest.raises(redis.ConnectionError):
        ping(redis_proc, timeout=0.5)

    redis_proc.restart()
    assert redis_proc.running
    assert redis_proc.port == port
    assert redis_proc.pid != first_pid
    assert ping(redis_proc)
    # No persistence by default: a crash loses everything.
    assert redis.Redis.from_url(redis_proc.url).get("k") is None
    assert "---- starting" in redis_proc.log_text()


def test_redis_appendonly_survives_kill(tmp_path: Path) -> None:
    server = RedisServer(data_dir=tmp_path, appendonly=True, appendfsync="always")
    with server:
        client = redis.Redis.from_url(server.url)
        client.set("k", "v")
        client.close()
        server.kill()
        server.restart()
        client = redis.Redis.from_url(server.url)
        assert client.get("k") == b"v"
        client.close()
    assert not server.running
    assert (tmp_path / "appendonlydir").is_dir()  # a given data dir is kept


def test_start_without_waiting_then_wait_ready(nats_proc: NatsServer) -> None:
    nats_proc.start(wait=False)
    assert nats_proc.running
    nats_proc.wait_ready(timeout=10)
    assert nats_proc.probe(timeout=2)


def test_redis_pause_and_resume(redis_proc: RedisServer) -> None:
    redis_proc.start()
    redis_proc.pause()
    assert redis_proc.paused
    with pytest.raises(redis.TimeoutError):
        ping(redis_proc, timeout=0.3)
    redis_proc.resume()
    assert not redis_proc.paused
    assert ping(redis_proc)


def test_stop_terminates_even_a_paused_server(redis_proc: RedisServer) -> None:
    redis_proc.start()
    redis_proc.pause()
    assert redis_proc.stop(timeout=5) == 0
    assert not redis_proc.running


def test_ensure_running_undoes_chaos(redis_proc: RedisServer) -> None:
    redis_proc.start()
    redis_proc.pause()
    redis_proc.ensure_running()
    assert ping(redis_proc)
    redis_proc.kill()
    redis_proc.ensure_running()
    assert ping(redis_proc)


def test_start_failure_reports_the_log(tmp_path: Path) -> None:
    server = RedisServer(data_dir=tmp_path, extra_args=["--no-such-option", "1"])
    with pytest.raises(ServerError, match="no-such-option"):
        server.start(timeout=5)
    assert not server.running


def test_port_in_use_fails_fast(redis_proc: RedisServer, tmp_path: Path) -> None:
    redis_proc.start()
    clash = RedisServer(port=redis_proc.port, data_dir=tmp_path / "clash")
    with pytest.raises(ServerError, match="already in use"):
        clash.start(timeout=5)
    assert not clash.running
    assert ping(redis_proc)


async def test_nats_jetstream_stream_survives_kill(nats_proc: NatsServer) -> None:
    nats_proc.start()
    client: NatsClient = await nats.connect(nats_proc.url, allow_reconnect=False)
    js = client.jetstream()
    await js.add_stream(name="ORDERS", subjects=["orders.>"], storage=StorageType.FILE)
    ack = await js.publish("orders.1", b"one", headers={"Nats-Msg-Id": "t1:1"})
    assert ack.seq == 1
    await client.close()

    assert any(nats_proc.store_dir.rglob("*.blk")), "JetStream must store in the data dir"
    nats_proc.kill()
    assert not nats_proc.running
    with pytest.raises(OSError):
        nats_proc.probe(timeout=0.5)
    nats_proc.restart()

    client = await nats.connect(nats_proc.url, allow_reconnect=False)
    try:
        js = client.jetstream()
        info = await js.stream_info("ORDERS")
        assert info.state.messages == 1
        message = await js.get_msg("ORDERS", 1)
        assert message.data == b"one"
        # De-duplication by message id still works after the crash.
        again = await js.publish("orders.1", b"one", headers={"Nats-Msg-Id": "t1:1"})
        assert again.duplicate
    finally:
        await client.close()


def test_nats_pause_and_resume(nats_proc: NatsServer) -> None:
    nats_proc.start()
    assert nats_proc.probe(timeout=2)
    nats_proc.pause()
    with pytest.raises(TimeoutError):
        nats_proc.probe(timeout=0.3)
    nats_proc.resume()
    nats_proc.wait_ready(timeout=5)
    assert nats_proc.probe(timeout=2)


def test_nats_without_jetstream(tmp_path: Path) -> None:
    with NatsServer(data_dir=tmp_path, jetstream=False) as server:
        assert "-js" not in server.command()
        assert server.probe(timeout=2)


@pytest.mark.parametrize("run", [1, 2])
async def test_redis_client_fixture_starts_empty(run: int, redis_client: aioredis.Redis) -> None:
    assert await redis_client.dbsize() == 0
    await redis_client.set(f"left-over-{run}", "x")
    assert await redis_client.ping()


@pytest.mark.parametrize("run", [1, 2])
async def test_nats_client_fixture_starts_without_streams(
    run: int, nats_client: NatsClient
) -> None:
    js = nats_client.jetstream()
    assert await js.streams_info() == []
    await js.add_stream(name=f"LEFTOVER{run}", subjects=[f"leftover.{run}"])
    await nats_client.publish(f"leftover.{run}", b"x")
    await flushed(nats_client)
    assert nats_client.is_connected


def test_session_servers_are_shared(
    redis_server: RedisServer, nats_server: NatsServer, tmp_path: Path
) -> None:
    assert redis_server.running
    assert nats_server.running
    assert redis_server.url.startswith("redis://127.0.0.1:")
    assert nats_server.url.startswith("nats://127.0.0.1:")
    assert redis_server.data_dir != tmp_path
