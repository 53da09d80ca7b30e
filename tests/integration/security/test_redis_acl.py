"""Zero trust inside the cluster, Redis: every connection authenticates as one identity and
may use only the keys and commands its service uses (``services/common/cluster_auth/redis.py``).

The session's ``redis_server`` runs with the cluster's ACL file. Each service's real code runs
here as its own user (the table service's store through ``TableApp``, the timer's claims, the
gateway's ``LeaseKeeper``), and what it must not do is refused: the gateway cannot write a
table's state nor read its nonces, neither the gateway nor the timer can write a table, no
service can run an operator's command. Then TLS: ``rediss://`` with the CA, refused without.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
import redis.asyncio as aioredis
from dominos.v1 import gateway_pb2
from redis.exceptions import AuthenticationError, ResponseError

from services.common.cluster_auth.nats import TlsFiles
from services.common.cluster_auth.redis import REDIS_ACLS
from services.common.cluster_auth.secrets import SERVICES, ClusterSecrets
from services.common.connections import connect_redis
from services.common.presence import PresenceLeases
from services.common.schema import (
    code_key,
    deadlines_key,
    outbox_key,
    pending_key,
    presence_key,
    presence_leases_key,
    shard_of,
    table_key,
)
from services.common.service_errors import ServiceError
from services.common.settings import Settings
from services.gateway.presence import LeaseKeeper
from services.table.application import TableApp
from services.table.server import policy_from
from services.table.store import Client, TableStore
from services.timer.claims import TimerStore
from testing.certificates import Certificates, make_certificates
from testing.servers import RedisServer, ServerError

T = "t" * 22  # a table id
#: The indexes of T's shard.
DEADLINES_KEY = deadlines_key(shard_of(T))
PENDING_KEY = pending_key(shard_of(T))
PRESENCE_KEY = presence_key(shard_of(T))
#: The client of the table user's creates and joins (its budgets run as the table user too).
CLIENT = Client("ipv4:10.0.0.1", "gw/ipv4:10.0.0.1:4000")
Connect = Callable[[str], Any]

#: What a refusal looks like: NOPERM for a command or key, or the script's own error when a
#: command a script runs is refused (``redis.call`` is checked against the caller's ACL).
DENIED = r"NOPERM|no permissions|can't run this command|can't access"


async def denied(call: Awaitable[Any]) -> None:
    with pytest.raises(ResponseError, match=DENIED):
        await call


def table_app(client: Any) -> TableApp:
    """A table-service replica without a publisher, on ``client`` (the ``table`` user)."""
    settings = Settings(token_secret="a-test-token-secret-of-the-table-service")
    return TableApp(TableStore(client), None, policy_from(settings))


def _text(value: str | bytes) -> str:
    return value.decode() if isinstance(value, bytes) else value


def rid() -> str:
    return f"acl-{time.monotonic_ns()}-0123456789abcdef"


# -- who may connect ---------------------------------------------------------------------


async def test_an_anonymous_client_is_refused(redis_server: RedisServer) -> None:
    client = aioredis.Redis.from_url(redis_server.url)
    try:
        with pytest.raises(AuthenticationError):
            await client.ping()
        with pytest.raises(AuthenticationError):
            await client.get(table_key(T))
    finally:
        await client.aclose()


async def test_nobody_can_become_the_default_user(redis_server: RedisServer) -> None:
    for password in ("", "nopass", "not-the-password"):
        client = aioredis.Redis.from_url(f"redis://default:{password}@{redis_server.address}/0")
        try:
            with pytest.raises(AuthenticationError):
                await client.ping()
        finally:
            await client.aclose()
    # RESET turns a connection back into ``default``: unauthenticated again.
    client = aioredis.Redis.from_url(redis_server.url_for("admin"), single_connection_client=True)
    try:
        await client.execute_command("RESET")
        with pytest.raises(AuthenticationError):
            await client.ping()
    finally:
        await client.aclose()


@pytest.mark.parametrize("identity", ["default", "table", "timer", "gateway", "admin"])
async def test_a_wrong_password_is_refused(redis_server: RedisServer, identity: str) -> None:
    client = aioredis.Redis.from_url(
        f"redis://{identity}:not-the-password@{redis_server.address}/0"
    )
    try:
        with pytest.raises(AuthenticationError):
            await client.ping()
    finally:
        await client.aclose()


async def test_a_password_opens_only_its_own_identity(
    redis_server: RedisServer, cluster_secrets: ClusterSecrets
) -> None:
    gateway_password = cluster_secrets.redis_passwords["gateway"]
    client = aioredis.Redis.from_url(f"redis://admin:{gateway_password}@{redis_server.address}/0")
    try:
        with pytest.raises(AuthenticationError):
            await client.ping()
    finally:
        await client.aclose()


@pytest.mark.parametrize("identity", SERVICES)
async def test_each_identity_connects_as_the_services_do(
    redis_connect: Connect, redis_client: Any, identity: str
) -> None:
    client = redis_connect(identity)
    assert await client.ping()  # the pool's handshake, then the health check's command
    # The server sees the connection as that user.
    listed = await redis_client.client_list()
    assert identity in {entry["user"] for entry in listed}


# -- the table service ---------------------------------------------------------------------


async def test_the_table_user_runs_the_table_service_store(
    redis_connect: Connect, redis_client: Any
) -> None:
    table = redis_connect("table")
    app = table_app(table)
    store = app.store
    request = gateway_pb2.CreateTableRequest(request_id=rid(), host_name="Ana")
    created = await app.create_table(request, CLIENT)
    table_id = created.table_id
    # The same create request again finds the table it made (created_by).
    assert (await app.create_table(request, CLIENT)).table_id == table_id
    # Joins: the join lookup script, then commits without a code or create request ("" keys).
    for name in ("Bo", "Cy", "Di"):
        joined = await app.join_table(
            gateway_pb2.JoinTableRequest(
                request_id=rid(), invitation_code=created.invitation_code, player_name=name
            ),
            CLIENT,
        )
    assert joined.view.version == 4
    # A wrong code is counted against the peer (joinfail key).
    with pytest.raises(ServiceError):
        await app.join_table(
            gateway_pb2.JoinTableRequest(
                request_id=rid(), invitation_code="ZZZZZ-ZZZZZ", player_name="Ed"
            ),
            Client("ipv4:10.0.0.2", "gw/ipv4:10.0.0.2:4000"),
        )
    # After a SCRIPT FLUSH (a Redis restart, a failover) the scripts are loaded again.
    await redis_client.script_flush()
    version = await app.set_presence(table_id, joined.seat_token, True)
    assert version == 5
    # The relay's side: outbox, pending index, clearing; the log; the gauges; presence.
    assert len(await store.outbox(table_id)) == 5  # nothing was published (no publisher)
    assert table_id in await store.pending_tables(int(time.time() * 1000) + 60_000)
    await store.mark_published({table_id: 5})
    assert await store.outbox(table_id) == []
    await store.forget_pending(table_id)
    assert await store.read_log(table_id)
    assert (await store.tables_by_phase(int(time.time() * 1000)))["waiting"] == 1
    assert await store.table_exists(table_id)
    assert await store.code_taken(created.invitation_code)
    assert not await PresenceLeases(table).held(table_id, 0)
    loaded = await store.load(table_id)
    assert loaded is not None and loaded.version == 5
    # The admin sees what the table user wrote.
    assert int(await redis_client.hget(table_key(table_id), "v")) == 5
    assert await redis_client.get(code_key(created.invitation_code)) == table_id.encode()


async def test_the_table_user_reads_no_deadline_index_and_writes_no_lease(
    redis_connect: Connect, redis_client: Any
) -> None:
    table = redis_connect("table")
    await denied(table.zrange(DEADLINES_KEY, 0, -1))
    await denied(table.hset(presence_leases_key(T), "0", "forged"))
    await denied(table.zadd(PRESENCE_KEY, {f"{T}:0": 1}))
    await denied(table.set(f"dominos:{{{T}}}:timerlease", "1"))


# -- the timer service ---------------------------------------------------------------------


async def test_the_timer_user_runs_the_sweep_the_claims_and_the_lease_expiry(
    redis_connect: Connect, redis_client: Any
) -> None:
    # A running clock as the table service leaves it: turn number and kind, the deadline.
    await redis_client.hset(table_key(T), mapping={"v": 9, "tn": 7, "dk": 1, "n0": "nonce"})
    await redis_client.zadd(DEADLINES_KEY, {T: 1000})
    timer = TimerStore(redis_connect("timer"))
    assert await timer.index_page(shard_of(T), 2000, 0, 10) == [(T, 1000)]
    assert await timer.clocks([T, "x" * 22]) == [(7, 1), None]
    assert await timer.claim([(T, 1000, 7)], lease_ms=5000) == [1]
    assert await timer.claim([(T, 1000, 7)], lease_ms=5000) == [0]  # already claimed
    assert await timer.claim([(T, 1000, 6)], lease_ms=5000) == [-1]  # the table moved on
    # A gateway's lease ran out: one sweep claims it.
    await PresenceLeases(redis_connect("gateway")).renew(T, 2, "gw:1", 1)
    await asyncio.sleep(0.01)
    assert await PresenceLeases(redis_connect("timer")).claim_expired(
        int(time.time() * 1000) + 1000
    ) == [(T, 2)]
    assert await redis_client.hget(presence_leases_key(T), "2") is None


async def test_the_timer_user_cannot_write_a_table(
    redis_connect: Connect, redis_client: Any
) -> None:
    await redis_client.hset(table_key(T), mapping={"v": 9, "tn": 7})
    timer = redis_connect("timer")
    await denied(timer.hset(table_key(T), "v", 10))
    await denied(timer.hdel(table_key(T), "v"))
    await denied(timer.delete(table_key(T)))
    await denied(timer.pexpire(table_key(T), 1))
    # Its scripts may be called with a table's key, but the commands they run are checked
    # against its own rights: a script cannot write the table for it either.
    forge = timer.register_script("return redis.call('HSET', KEYS[1], 'v', '99')")
    await denied(forge(keys=[table_key(T)]))
    # HDEL is the timer's (on presence leases), not on a table's hash.
    erase = timer.register_script("return redis.call('HDEL', KEYS[1], 'v')")
    await denied(erase(keys=[table_key(T)]))
    await denied(timer.eval("return redis.call('HSET', KEYS[1], 'v', '99')", 1, table_key(T)))
    # Nor the deadline index, the outbox, the codes.
    await denied(timer.zadd(DEADLINES_KEY, {T: 1}))
    await denied(timer.zrem(DEADLINES_KEY, T))
    await denied(timer.zrange(outbox_key(T), 0, -1))
    await denied(timer.get(code_key("ABCD-EFGH")))
    assert await redis_client.hget(table_key(T), "v") == b"9"


# -- the gateway ---------------------------------------------------------------------------


async def test_the_gateway_user_takes_renews_and_releases_its_leases(
    redis_connect: Connect, redis_client: Any
) -> None:
    keeper = LeaseKeeper(PresenceLeases(redis_connect("gateway")), ttl_ms=5000)
    await keeper.take(T, 1, "gw:1")
    await keeper.take(T, 3, "gw:3")
    await keeper.renew_all()
    assert set(await redis_client.hkeys(presence_leases_key(T))) == {b"1|gw:1", b"3|gw:3"}
    assert await redis_client.zcard(PRESENCE_KEY) == 2
    assert await keeper.release("gw:1")
    assert await redis_client.hkeys(presence_leases_key(T)) == [b"3|gw:3"]
    assert await redis_client.zscore(PRESENCE_KEY, f"{T}:1") is None


async def test_the_gateway_user_cannot_touch_a_table_nor_read_its_nonces(
    redis_connect: Connect, redis_client: Any
) -> None:
    await redis_client.hset(table_key(T), mapping={"v": 9, "n0": "nonce", "h0": "digest"})
    await redis_client.zadd(DEADLINES_KEY, {T: 1000})
    gateway = redis_connect("gateway")
    # No read of the table hash at all (nonces, token digests, state).
    await denied(gateway.hget(table_key(T), "n0"))
    await denied(gateway.hmget(table_key(T), ["n0", "h0"]))
    await denied(gateway.hgetall(table_key(T)))
    # No write.
    await denied(gateway.hset(table_key(T), "v", 10))
    await denied(gateway.hdel(table_key(T), "n0"))
    await denied(gateway.delete(table_key(T)))
    await denied(gateway.eval("return redis.call('HSET', KEYS[1], 'v', '99')", 1, table_key(T)))
    # Its scripts cannot be called with a table's key...
    forge = gateway.register_script("return redis.call('HSET', KEYS[1], 'v', '99')")
    await denied(forge(keys=[table_key(T)]))
    # ...nor reach one they were not called with.
    sneak = gateway.register_script(f"return redis.call('HGET', '{table_key(T)}', 'n0')")
    await denied(sneak(keys=[presence_leases_key(T)]))
    # The deadline index, the outbox and the pending index are out of reach too.
    await denied(gateway.zrange(DEADLINES_KEY, 0, -1))
    await denied(gateway.zadd(DEADLINES_KEY, {T: 1}))
    await denied(gateway.zrem(DEADLINES_KEY, T))
    await denied(gateway.zrange(outbox_key(T), 0, -1))
    await denied(gateway.zadd(PENDING_KEY, {T: 1}))
    await denied(gateway.set(f"dominos:{{{T}}}:timerlease", "7"))
    assert await redis_client.hgetall(table_key(T)) == {
        b"v": b"9",
        b"n0": b"nonce",
        b"h0": b"digest",
    }
    assert await redis_client.zscore(DEADLINES_KEY, T) == 1000


# -- what no service may do ----------------------------------------------------------------

OPERATOR_COMMANDS = [
    ("FLUSHALL",),
    ("KEYS", "*"),
    ("SCAN", "0"),
    ("CONFIG", "GET", "*"),
    ("ACL", "LIST"),
    ("SCRIPT", "FLUSH"),
    ("FLUSHDB",),
    ("SWAPDB", "0", "1"),
    ("CLIENT", "LIST"),
    ("INFO",),
    ("SELECT", "1"),
    ("MONITOR",),
    ("SUBSCRIBE", "dominos"),
    ("EVAL", "return 1", "0"),
]


@pytest.mark.parametrize("identity", SERVICES)
@pytest.mark.parametrize("command", OPERATOR_COMMANDS, ids=lambda c: " ".join(c[:2]))
async def test_no_service_runs_an_operators_command(
    redis_connect: Connect, identity: str, command: tuple[str, ...]
) -> None:
    client = redis_connect(identity)
    await denied(client.execute_command(*command))


async def test_no_service_is_granted_a_dangerous_or_admin_command(redis_client: Any) -> None:
    flagged = set()
    for category in ("dangerous", "admin", "pubsub", "blocking"):
        flagged |= {_text(name) for name in await redis_client.acl_cat(category)}
    for identity, acl in REDIS_ACLS.items():
        assert not set(acl.commands) & flagged, identity


async def test_the_server_has_exactly_the_cluster_users(redis_client: Any) -> None:
    users = {_text(name) for name in await redis_client.acl_users()}
    assert users == {"default", "table", "timer", "gateway", "bots", "admin"}
    default = await redis_client.acl_getuser("default")
    assert "off" in default["flags"]


# -- the test server: readiness, restart ----------------------------------------------------


async def test_an_acl_server_keeps_the_scripts_writes_and_its_users_across_a_crash(
    tmp_path: Path, cluster_secrets: ClusterSecrets
) -> None:
    server = RedisServer(
        data_dir=tmp_path, appendonly=True, appendfsync="always", secrets=cluster_secrets
    )
    await asyncio.to_thread(server.start)
    try:
        assert server.acl_path.stat().st_mode & 0o777 == 0o600
        assert cluster_secrets.redis_passwords["admin"] not in server.acl_path.read_text()
        # A script's writes reach the append-only file as one MULTI/EXEC block (replayed as
        # ``default`` on a restart: see DEFAULT_USER_LINE), a single write as itself.
        gateway = connect_redis(Settings(redis_url=server.url_for("gateway")))
        await PresenceLeases(gateway).renew(T, 0, "gw:0", 60_000)
        await gateway.zadd(PRESENCE_KEY, {"single": 1})
        await gateway.aclose()
        await asyncio.to_thread(server.kill)
        await asyncio.to_thread(server.restart)  # ready: the probe authenticated as admin
        admin = aioredis.Redis.from_url(server.url_for("admin"))
        assert await admin.hget(presence_leases_key(T), "0|gw:0") is not None
        assert await admin.zscore(PRESENCE_KEY, f"{T}:0") is not None
        assert await admin.zscore(PRESENCE_KEY, "single") == 1
        await admin.aclose()
        anonymous = aioredis.Redis.from_url(server.url)
        with pytest.raises(AuthenticationError):
            await anonymous.ping()
        await anonymous.aclose()
    finally:
        await asyncio.to_thread(server.cleanup)


# -- TLS -------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def certificates(tmp_path_factory: pytest.TempPathFactory) -> Certificates:
    return make_certificates(tmp_path_factory.mktemp("redis-certificates"))


async def _tls_server(tmp_path: Path, secrets: ClusterSecrets, tls: TlsFiles) -> RedisServer:
    server = RedisServer(data_dir=tmp_path / "redis", secrets=secrets, tls=tls)
    try:
        await asyncio.to_thread(server.start)
    except ServerError as exc:
        if "tls" in server.log_text().lower() and "not" in server.log_text().lower():
            pytest.skip(f"this redis-server has no TLS support: {exc}")
        raise
    return server


async def test_over_tls_a_client_that_trusts_the_ca_connects_and_others_are_refused(
    tmp_path: Path, certificates: Certificates, cluster_secrets: ClusterSecrets
) -> None:
    # The CA lets the readiness probe verify the server; clients bring their own trust.
    tls = TlsFiles(certificates.server_cert, certificates.server_key, certificates.ca)
    server = await _tls_server(tmp_path, cluster_secrets, tls)
    try:
        url = server.url_for("gateway")
        assert url.startswith("rediss://gateway:")
        # The services' connection, configured as in production (DOMINOS_REDIS_CA_FILE).
        settings = Settings(redis_url=url, redis_ca_file=str(certificates.ca))
        client = connect_redis(settings)
        try:
            keeper = LeaseKeeper(PresenceLeases(client), ttl_ms=5000)
            await keeper.take(T, 0, "gw:tls")
            assert await keeper.release("gw:tls")
        finally:
            await client.aclose()
        # Without the CA (the system's CAs only), the server's certificate is not trusted.
        untrusting = connect_redis(Settings(redis_url=url))
        try:
            with pytest.raises(Exception, match=r"(?i)certificate verify failed"):
                await untrusting.ping()
        finally:
            await untrusting.aclose()
        # A plain-text client gets no answer it can use.
        plain = aioredis.Redis.from_url(
            url.replace("rediss://", "redis://"), socket_timeout=2, socket_connect_timeout=2
        )
        try:
            with pytest.raises(Exception):  # noqa: B017 (connection reset or timeout)
                await plain.ping()
        finally:
            await plain.aclose()
    finally:
        await asyncio.to_thread(server.cleanup)
