"""Zero trust on the bus: every NATS connection authenticates, and each identity may publish
and subscribe only where its service must (services/common/cluster_auth/nats.py).

A refused publish or subscription does not close the connection: the server answers
``-ERR 'Permissions Violation ...'``, which nats-py hands to the error callback. Each test
waits for that answer, then shows the forged message reached nobody: a genuine message
sent afterwards is the only one an ``admin`` observer receives.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import nats
import pytest
from dominos.v1 import events_pb2, game_pb2
from nats.aio.client import Client as NatsClient

from services.bots.consumer import RobotTurnConsumer
from services.common.bus import (
    CLOCK_SUBJECT,
    ROBOT_CONSUMER,
    ROBOT_STREAM,
    ROBOT_SUBJECT,
    TABLE_STREAM,
    TABLE_SUBJECT_PREFIX,
    TIMER_CONSUMER,
    TIMER_STREAM,
    TIMER_SUBJECT,
    delivery_subject,
    ensure_robot_stream,
    ensure_table_stream,
    ensure_timer_stream,
    message_id,
    reply_inbox_prefix,
    table_subject,
)
from services.common.cluster_auth.nats import TlsFiles
from services.common.cluster_auth.secrets import ClusterSecrets
from services.common.connections import connect_nats, flushed, nats_tls_context
from services.common.settings import Settings
from services.table.timer_consumer import TimerConsumer
from testing.certificates import Certificates, make_certificates
from testing.servers import NatsServer
from testing.waiting import wait_for

TABLE_ID = "t" * 22
#: Time a refused JetStream request waits for the answer that never comes.
REFUSED_TIMEOUT_S = 0.3

Connect = Callable[..., Awaitable[NatsClient]]


@dataclass
class Conn:
    """A connection as one identity, with the errors the server sent it."""

    nc: NatsClient
    errors: list[Exception] = field(default_factory=list)

    def violations(self) -> list[str]:
        """The permission violations reported so far (nats-py lower-cases them)."""
        return [str(e).lower() for e in self.errors if "permissions violation" in str(e).lower()]

    async def violated(self, what: str, subject: str) -> None:
        """Wait until the server refused ``what`` (``publish``/``subscription``) on
        ``subject`` (or on a subject starting with it)."""
        expected = f'permissions violation for {what} to "{subject.lower()}'
        await wait_for(
            lambda: any(expected in v for v in self.violations()), timeout=5, message=expected
        )


async def connect_as(nats_connect: Connect, identity: str) -> Conn:
    conn = Conn(cast(NatsClient, None))

    async def on_error(error: Exception) -> None:
        conn.errors.append(error)

    conn.nc = await nats_connect(identity, error_cb=on_error)
    return conn


async def collect(nc: NatsClient, subject: str) -> list[bytes]:
    """Every payload ``nc`` receives on ``subject`` from now on (subscription confirmed)."""
    received: list[bytes] = []

    async def on_message(msg: Any) -> None:
        received.append(msg.data)

    await nc.subscribe(subject, cb=on_message)
    await flushed(nc)
    return received


# -- authentication ----------------------------------------------------------------------


async def test_an_anonymous_client_is_refused(nats_server: NatsServer) -> None:
    with pytest.raises(nats.errors.Error, match=r"(?i)authorization violation"):
        await nats.connect(nats_server.url, allow_reconnect=False, connect_timeout=2)


@pytest.mark.parametrize("case", ["a wrong password", "another identity's password"])
async def test_a_wrong_password_is_refused(
    case: str, nats_server: NatsServer, cluster_secrets: ClusterSecrets
) -> None:
    password = "0" * 48 if case == "a wrong password" else cluster_secrets.nats_passwords["admin"]
    url = f"nats://gateway:{password}@{nats_server.address}"
    with pytest.raises(nats.errors.Error, match=r"(?i)authorization violation"):
        await nats.connect(url, allow_reconnect=False, connect_timeout=2)


# -- who may publish what ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("intruder", "subject", "owner"),
    [
        ("gateway", table_subject(TABLE_ID), "table"),
        ("timer", table_subject(TABLE_ID), "table"),
        ("gateway", TIMER_SUBJECT, "timer"),
        ("table", TIMER_SUBJECT, "timer"),
        ("bots", table_subject(TABLE_ID), "table"),
        ("bots", TIMER_SUBJECT, "timer"),
        ("bots", ROBOT_SUBJECT, "table"),
        ("gateway", ROBOT_SUBJECT, "table"),
        ("timer", CLOCK_SUBJECT, "table"),
        ("gateway", CLOCK_SUBJECT, "table"),
        ("bots", CLOCK_SUBJECT, "table"),
    ],
)
async def test_only_the_owning_service_publishes_its_subject(
    intruder: str, subject: str, owner: str, nats_connect: Connect, nats_client: NatsClient
) -> None:
    received = await collect(nats_client, subject)  # admin: sees everything
    forger = await connect_as(nats_connect, intruder)
    await forger.nc.publish(subject, b"forged")
    await flushed(forger.nc)
    await forger.violated("publish", subject)
    assert forger.nc.is_connected  # refused, not disconnected
    genuine = await connect_as(nats_connect, owner)
    await genuine.nc.publish(subject, b"genuine")
    await flushed(genuine.nc)
    await wait_for(lambda: received, timeout=5)
    assert received == [b"genuine"]
    assert genuine.violations() == []


async def test_a_gateway_cannot_listen_beyond_the_table_events(nats_connect: Connect) -> None:
    gateway = await connect_as(nats_connect, "gateway")
    # Expiries, other clients' replies (JetStream answers, deliveries, and the work queues'
    # deliveries at their fixed, known subjects), the JetStream API.
    work_queues = (delivery_subject(TIMER_CONSUMER), delivery_subject(ROBOT_CONSUMER))
    for subject in (TIMER_SUBJECT, "_INBOX.>", *work_queues, "$JS.API.>", "$JS.ACK.>", ">"):
        await gateway.nc.subscribe(subject)
        await flushed(gateway.nc)
        await gateway.violated("subscription", subject)


async def test_the_timer_service_cannot_listen_to_any_table_event(nats_connect: Connect) -> None:
    """The timer schedules clocks from the deadline index and the announced ``TableClock``s
    (ids and deadlines): it hears no table event (every hand is in them), nor the expiries
    it publishes for the table service."""
    timer = await connect_as(nats_connect, "timer")
    for subject in (table_subject(TABLE_ID), TABLE_SUBJECT_PREFIX + ">", TIMER_SUBJECT, ">"):
        await timer.nc.subscribe(subject)
        await flushed(timer.nc)
        await timer.violated("subscription", subject)


#: The work-queue consumer whose deliveries each service reads (the timer reads none).
WORK_QUEUE_OF = {"table": TIMER_CONSUMER, "timer": None, "bots": ROBOT_CONSUMER}


@pytest.mark.parametrize("identity", ["table", "timer", "bots"])
async def test_a_service_cannot_listen_to_another_services_replies_or_deliveries(
    identity: str, nats_connect: Connect
) -> None:
    """Each service's JetStream answers and acknowledgements come back under its own inbox
    prefix (``_INBOX.<identity>``), each work queue delivers on its own subject: no other
    service may subscribe to them (with one ``_INBOX.>`` for every service, a compromised
    bots service could read the table service's acknowledgements and expiries)."""
    conn = await connect_as(nats_connect, identity)
    others = [other for other in WORK_QUEUE_OF if other != identity]
    subjects = [
        "_INBOX.>",
        "_INBOX.*.>",
        *(f"{reply_inbox_prefix(other)}.>" for other in others),
        *(delivery_subject(c) for o in others if (c := WORK_QUEUE_OF[o]) is not None),
    ]
    for subject in subjects:
        await conn.nc.subscribe(subject)
        await flushed(conn.nc)
        await conn.violated("subscription", subject)
    assert conn.nc.is_connected


@pytest.mark.parametrize("identity", ["table", "timer", "bots"])
async def test_a_service_connection_has_its_own_inboxes_and_its_jetstream_calls_work(
    identity: str, nats_server: NatsServer
) -> None:
    """The services' own connection (``connect_nats``) makes every inbox under the
    identity's prefix, so its JetStream calls are answered under the permissions above (a
    refused reply subscription would leave them waiting until their timeout)."""
    nc = await connect_nats(
        Settings(nats_url=nats_server.url_for(identity)), f"pytest-{identity}", identity=identity
    )
    try:
        assert nc.new_inbox().startswith(f"_INBOX.{identity}.")
        ensure = {"table": ensure_table_stream, "timer": ensure_timer_stream}.get(
            identity, ensure_robot_stream
        )
        await ensure(nc.jetstream(timeout=2))  # a JetStream API request and its answer
        if identity == "table":
            ack = await nc.jetstream(timeout=2).publish(
                table_subject(TABLE_ID), b"v1", headers={"Nats-Msg-Id": message_id(TABLE_ID, 1)}
            )
            assert ack.stream == TABLE_STREAM
    finally:
        await nc.close()


# -- JetStream: nobody but admin reads the history --------------------------------------


async def test_the_bots_service_cannot_listen_to_any_table_event_issue_20(
    nats_connect: Connect,
) -> None:
    """A robot decides from its seat's view only: the bots service hears no table event
    (every hand is in them), no expiry and nobody else's replies."""
    bots = await connect_as(nats_connect, "bots")
    for subject in (table_subject(TABLE_ID), TABLE_SUBJECT_PREFIX + ">", TIMER_SUBJECT, ">"):
        await bots.nc.subscribe(subject)
        await flushed(bots.nc)
        await bots.violated("subscription", subject)


@pytest.mark.parametrize("identity", ["gateway", "timer", "table", "bots"])
async def test_no_service_can_replay_the_table_history(
    identity: str, nats_connect: Connect, nats_client: NatsClient
) -> None:
    """The stream keeps the last hour of every table (every hand): no service reads it back,
    creates a consumer on it, or changes it."""
    table = await connect_as(nats_connect, "table")
    await ensure_table_stream(table.nc.jetstream())
    await table.nc.jetstream().publish(
        table_subject(TABLE_ID), b"a hand", headers={"Nats-Msg-Id": message_id(TABLE_ID, 1)}
    )
    reader = await connect_as(nats_connect, identity)
    js = reader.nc.jetstream(timeout=REFUSED_TIMEOUT_S)
    attempts: dict[str, Callable[[], Awaitable[Any]]] = {
        "STREAM.INFO": lambda: js.stream_info(TABLE_STREAM),
        "STREAM.MSG.GET": lambda: js.get_last_msg(TABLE_STREAM, table_subject(TABLE_ID)),
        "CONSUMER.INFO": lambda: js.pull_subscribe(
            table_subject(TABLE_ID), durable="thief", stream=TABLE_STREAM
        ),
        "CONSUMER.CREATE": lambda: js.subscribe(
            TABLE_SUBJECT_PREFIX + ">", stream=TABLE_STREAM, ordered_consumer=True
        ),
        "STREAM.PURGE": lambda: js.purge_stream(TABLE_STREAM),
        "STREAM.DELETE": lambda: js.delete_stream(TABLE_STREAM),
    }
    for api, attempt in attempts.items():
        with pytest.raises(Exception):  # noqa: B017 - the answer never comes: a timeout
            await attempt()
        await reader.violated("publish", f"$JS.API.{api}.{TABLE_STREAM}")
    admin = nats_client.jetstream()
    assert await admin.consumers_info(TABLE_STREAM) == []
    assert (await admin.stream_info(TABLE_STREAM)).state.messages == 1
    assert table.violations() == []


# -- what each service needs, it may do --------------------------------------------------


class RecordingConsumer(TimerConsumer):
    """The table service's timer consumer (its real JetStream binding) with a recording
    handler instead of a table application."""

    def __init__(self, nc: NatsClient) -> None:
        super().__init__(cast(Any, None), cast(Any, None), nc)
        self.handled: list[events_pb2.TimerExpired] = []

    async def handle(self, expired: events_pb2.TimerExpired) -> bool:
        self.handled.append(expired)
        return True


async def test_each_service_may_do_what_its_code_does(
    nats_connect: Connect, nats_client: NatsClient
) -> None:
    table, timer, gateway = [
        await connect_as(nats_connect, identity) for identity in ("table", "timer", "gateway")
    ]
    to_gateway = await collect(gateway.nc, table_subject(TABLE_ID))
    to_timer = await collect(timer.nc, CLOCK_SUBJECT)

    # The table service: creates (or converges) its stream and publishes table events.
    table_js = table.nc.jetstream()
    await ensure_table_stream(table_js)
    await table_js.update_stream((await nats_client.jetstream().stream_info(TABLE_STREAM)).config)
    ack = await table_js.publish(
        table_subject(TABLE_ID), b"version 1", headers={"Nats-Msg-Id": message_id(TABLE_ID, 1)}
    )
    assert ack.stream == TABLE_STREAM
    # ... and announces the clocks ending soon to the timer service (core NATS).
    await table.nc.publish(CLOCK_SUBJECT, b"clock of version 1")
    await wait_for(lambda: to_gateway == [b"version 1"] and to_timer == [b"clock of version 1"])

    # The timer stream: either service may create it first; the timer service publishes
    # expiries; every table replica binds the shared durable consumer and acknowledges.
    await ensure_timer_stream(table_js)
    timer_js = timer.nc.jetstream()
    await ensure_timer_stream(timer_js)
    await timer_js.update_stream((await nats_client.jetstream().stream_info(TIMER_STREAM)).config)
    first = RecordingConsumer(table.nc)
    await first.start()  # creates the durable
    second_replica = await connect_as(nats_connect, "table")
    second = RecordingConsumer(second_replica.nc)
    await second.start()  # binds the existing one
    expired = events_pb2.TimerExpired(table_id=TABLE_ID, turn_number=7)
    published = await timer_js.publish(TIMER_SUBJECT, expired.SerializeToString())
    await wait_for(lambda: first.handled + second.handled == [expired], timeout=5)

    async def acknowledged() -> bool:
        info = await nats_client.jetstream().consumer_info(TIMER_STREAM, TIMER_CONSUMER)
        return info.ack_floor.stream_seq == published.seq and info.num_ack_pending == 0

    await wait_for(acknowledged, timeout=5)
    await first.stop()
    await second.stop()

    # The robots' queue (issue 20): the table service creates it and publishes turns; the
    # bots service creates it too, binds the shared durable consumer and acknowledges.
    await ensure_robot_stream(table_js)
    bots = await connect_as(nats_connect, "bots")
    played: list[events_pb2.RobotTurn] = []

    class Player:
        async def play(self, turn: events_pb2.RobotTurn) -> str:
            played.append(turn)
            return "moved"

    robots = RobotTurnConsumer(cast(Any, Player()), bots.nc)
    await robots.start()
    turn = events_pb2.RobotTurn(
        table_id=TABLE_ID, version=3, seat=1, level=game_pb2.ROBOT_LEVEL_SOLID
    )
    sent = await table_js.publish(
        ROBOT_SUBJECT, turn.SerializeToString(), headers={"Nats-Msg-Id": message_id(TABLE_ID, 3)}
    )
    await wait_for(lambda: played == [turn], timeout=5)

    async def turn_acknowledged() -> bool:
        info = await nats_client.jetstream().consumer_info(ROBOT_STREAM, ROBOT_CONSUMER)
        return info.ack_floor.stream_seq == sent.seq and info.num_ack_pending == 0

    await wait_for(turn_acknowledged, timeout=5)
    await robots.stop()
    for conn in (table, timer, gateway, second_replica, bots):
        assert conn.violations() == []


# -- TLS ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def certificates(tmp_path_factory: pytest.TempPathFactory) -> Certificates:
    return make_certificates(tmp_path_factory.mktemp("certificates"))


async def _tls_server(tmp_path: Path, secrets: ClusterSecrets, tls: TlsFiles) -> NatsServer:
    server = NatsServer(data_dir=tmp_path / "nats", secrets=secrets, tls=tls, jetstream=False)
    await asyncio.to_thread(server.start)
    return server


async def _round_trip(nc: NatsClient) -> None:
    received = await collect(nc, "tls.check")
    await nc.publish("tls.check", b"over tls")
    await wait_for(lambda: received == [b"over tls"], timeout=5)


async def test_over_tls_a_client_that_trusts_the_ca_connects_and_others_are_refused(
    tmp_path: Path, certificates: Certificates, cluster_secrets: ClusterSecrets
) -> None:
    tls = TlsFiles(certificates.server_cert, certificates.server_key)
    server = await _tls_server(tmp_path, cluster_secrets, tls)
    try:
        url = server.url_for("admin")
        assert url.startswith("tls://admin:")
        # The services' connection, configured as in production (DOMINOS_NATS_CA_FILE).
        settings = Settings(nats_url=url, nats_ca_file=str(certificates.ca))
        nc = await connect_nats(settings, "pytest-tls", identity="admin")
        try:
            await _round_trip(nc)
        finally:
            await nc.close()
        # Without the CA (the system's CAs only), the server's certificate is not trusted.
        with pytest.raises(Exception, match=r"(?i)certificate verify failed"):
            await nats.connect(url, allow_reconnect=False, connect_timeout=2)
    finally:
        await asyncio.to_thread(server.cleanup)


async def test_with_mutual_tls_a_client_needs_a_certificate_from_the_ca(
    tmp_path: Path, certificates: Certificates, cluster_secrets: ClusterSecrets
) -> None:
    tls = TlsFiles(
        certificates.server_cert, certificates.server_key, certificates.ca, verify_clients=True
    )
    server = await _tls_server(tmp_path, cluster_secrets, tls)
    try:
        url = server.url_for("admin")
        settings = Settings(
            nats_url=url,
            nats_ca_file=str(certificates.ca),
            nats_cert_file=str(certificates.client_cert),
            nats_key_file=str(certificates.client_key),
        )
        nc = await connect_nats(settings, "pytest-mtls", identity="admin")
        try:
            await _round_trip(nc)
        finally:
            await nc.close()
        # Trusting the server is not enough: the server wants the client's certificate.
        no_certificate = Settings(nats_url=url, nats_ca_file=str(certificates.ca))
        with pytest.raises(Exception):  # noqa: B017 - the server ends the handshake
            await nats.connect(
                url,
                tls=nats_tls_context(no_certificate),
                allow_reconnect=False,
                connect_timeout=2,
            )
    finally:
        await asyncio.to_thread(server.cleanup)
