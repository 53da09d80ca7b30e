"""The web door's bounds against one hostile client, on a real gateway process over real
sockets: bodies, envelopes and inflated messages refused from their declared or counted size,
request heads cut at their limit, silent connections closed on a timer, connections counted
only while open, per-browser budgets behind a proxy, and malformed requests answered
INVALID_ARGUMENT (never a 500), each counted in the RPC metrics."""

from __future__ import annotations

import asyncio
import base64
import gzip
import json
import random
import struct
import time
from collections.abc import Iterator
from typing import Any

import pytest
from dominos.v1 import gateway_pb2
from dominos.v1.gateway_connect import DominosServiceClient
from google.rpc import error_details_pb2, status_pb2

from services.client.api import request_id
from testing.cluster import ProcessCluster, clock_env
from testing.procfs import rss_mb
from testing.services import ServiceProcess
from testing.waiting import wait_for

API = "/dominos.v1.DominosService"
LIMIT = 64 * 1024
HEAD_TIMEOUT_S = 1.0
CAPS = {
    "DOMINOS_WEB_HEAD_TIMEOUT_SECONDS": str(HEAD_TIMEOUT_S),
    "DOMINOS_WEB_BODY_TIMEOUT_SECONDS": "1",
    "DOMINOS_CONNECTIONS_PER_ADDRESS": "8",
    "DOMINOS_WEB_TRUSTED_PROXIES": "127.0.0.2",
}


@pytest.fixture(scope="module")
def cluster() -> Iterator[ProcessCluster]:
    started = ProcessCluster.start(env={**clock_env(30, 30, 1), **CAPS}, metrics=True)
    try:
        yield started
    finally:
        started.stop()


@pytest.fixture(scope="module")
def gateway(cluster: ProcessCluster) -> ServiceProcess:
    return cluster.gateways[0]


async def exchange(
    port: int, request: bytes, *, source: str = "127.0.0.1", read_s: float = 10.0
) -> bytes:
    """Send ``request`` on a new connection; everything the gateway answers until it closes
    the connection or ``read_s`` passes."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port, local_addr=(source, 0))
    try:
        writer.write(request)
        await writer.drain()
        answer = bytearray()
        deadline = time.monotonic() + read_s
        while (left := deadline - time.monotonic()) > 0:
            try:
                chunk = await asyncio.wait_for(reader.read(65536), left)
            except (TimeoutError, ConnectionResetError):
                break
            if not chunk:
                break
            answer += chunk
            if _complete(bytes(answer)):
                break
        return bytes(answer)
    finally:
        writer.close()


def _complete(answer: bytes) -> bool:
    _, sep, body = answer.partition(b"\r\n\r\n")
    if not sep:
        return False
    headers = headers_of(answer)
    if "content-length" in headers:
        return len(body) >= int(headers["content-length"])
    return headers.get("transfer-encoding") == "chunked" and body.endswith(b"0\r\n\r\n")


def body_of(answer: bytes) -> bytes:
    """The body of an answer, chunked or not."""
    body = answer.partition(b"\r\n\r\n")[2]
    if headers_of(answer).get("transfer-encoding") != "chunked":
        return body
    out = bytearray()
    while body:
        size_line, _, rest = body.partition(b"\r\n")
        size = int(size_line.split(b";")[0], 16)
        if size == 0:
            break
        out += rest[:size]
        body = rest[size + 2 :]
    return bytes(out)


def post(
    method: str,
    body: bytes,
    content_type: str = "application/proto",
    headers: dict[str, str] | None = None,
    *,
    length: int | None = None,
) -> bytes:
    lines = [
        f"POST {API}/{method} HTTP/1.1",
        "host: 127.0.0.1",
        f"content-type: {content_type}",
        f"content-length: {len(body) if length is None else length}",
        *(f"{name}: {value}" for name, value in {"connection": "close", **(headers or {})}.items()),
    ]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


def status_of(answer: bytes) -> int:
    return int(answer.split(b" ", 2)[1]) if answer.startswith(b"HTTP/1.1 ") else 0


def headers_of(answer: bytes) -> dict[str, str]:
    head = answer.partition(b"\r\n\r\n")[0].decode("latin-1").split("\r\n")[1:]
    return {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in head)}


def connect_error(answer: bytes) -> tuple[str, str, dict[str, str]]:
    """``(code, ErrorInfo.reason, ErrorInfo.metadata)`` of a Connect unary error body."""
    error = json.loads(body_of(answer))
    for detail in error.get("details", ()):
        if detail["type"] == "google.rpc.ErrorInfo":
            info = error_details_pb2.ErrorInfo.FromString(base64.b64decode(detail["value"] + "=="))
            return error["code"], info.reason, dict(info.metadata)
    return error["code"], "", {}


def sample(page: str, series: str) -> float:
    for line in page.splitlines():
        if line.startswith(series + " "):
            return float(line.rsplit(" ", 1)[1])
    return 0.0


def handled(code: str, method: str, kind: str = "unary") -> str:
    return (
        f'dominos_grpc_server_handled_total{{grpc_code="{code}",grpc_method="{method}",'
        f'grpc_service="dominos.v1.DominosService",grpc_type="{kind}"}}'
    )


def create_request() -> bytes:
    return gateway_pb2.CreateTableRequest(
        request_id=request_id(), host_name="Ana", target=100
    ).SerializeToString()


# -- bodies -----------------------------------------------------------------------------------


async def test_a_body_declared_over_the_limit_is_refused_before_it_is_sent(
    gateway: ServiceProcess,
) -> None:
    answer = await exchange(gateway.web_port, post("CreateTable", b"", length=4 * 2**30))
    assert status_of(answer) == 429
    assert connect_error(answer) == (
        "resource_exhausted",
        "REQUEST_TOO_LARGE",
        {"limit_bytes": str(LIMIT)},
    )
    assert headers_of(answer)["connection"] == "close"


async def test_a_gzip_bomb_is_refused_without_being_inflated(gateway: ServiceProcess) -> None:
    bomb = gzip.compress(b"\0" * (60 * 2**20), compresslevel=9)
    assert len(bomb) < LIMIT
    before = rss_mb(gateway.pid)
    for _ in range(3):
        answer = await exchange(
            gateway.web_port, post("CreateTable", bomb, headers={"content-encoding": "gzip"})
        )
        assert status_of(answer) == 429
        assert connect_error(answer)[1] == "REQUEST_TOO_LARGE"
    # Inflated whole, one bomb alone would add 60 MB.
    assert rss_mb(gateway.pid) - before < 20


async def test_a_small_gzip_message_is_inflated_and_served(gateway: ServiceProcess) -> None:
    answer = await exchange(
        gateway.web_port,
        post("CreateTable", gzip.compress(create_request()), headers={"content-encoding": "gzip"}),
    )
    assert status_of(answer) == 200
    reply = gateway_pb2.CreateTableResponse.FromString(body_of(answer))
    assert reply.table_id


@pytest.mark.parametrize(
    "content_type", ["application/connect+proto", "application/grpc-web+proto"]
)
async def test_an_envelope_declaring_4_gib_is_refused_from_its_prefix(
    gateway: ServiceProcess, content_type: str
) -> None:
    # Chunked, and only the prefix sent: the refusal comes without the gateway waiting for
    # (or buffering) the declared bytes.
    head = (
        f"POST {API}/WatchTable HTTP/1.1\r\nhost: x\r\ncontent-type: {content_type}\r\n"
        "transfer-encoding: chunked\r\n\r\n"
    ).encode()
    prefix = struct.pack(">BI", 0, 2**32 - 1)
    answer = await exchange(gateway.web_port, head + b"5\r\n" + prefix + b"\r\n", read_s=5)
    assert status_of(answer) == 200
    if content_type.startswith("application/grpc-web"):
        headers = headers_of(answer)
        assert headers["grpc-status"] == "8"
        status = status_pb2.Status.FromString(base64.b64decode(headers["grpc-status-details-bin"]))
        info = error_details_pb2.ErrorInfo()
        assert status.details[0].Unpack(info)
        assert info.reason == "REQUEST_TOO_LARGE"
    else:
        chunk = body_of(answer)
        flags, length = struct.unpack(">BI", chunk[:5])
        assert flags == 2
        assert json.loads(chunk[5 : 5 + length])["error"]["code"] == "resource_exhausted"


# -- heads and silence ------------------------------------------------------------------------


async def test_a_head_that_never_ends_is_cut_at_its_limit(gateway: ServiceProcess) -> None:
    before = rss_mb(gateway.pid)
    reader, writer = await asyncio.open_connection("127.0.0.1", gateway.web_port)
    try:
        writer.write(b"GET / HTTP/1.1\r\nx-endless: ")
        sent = 0
        with pytest.raises((ConnectionResetError, BrokenPipeError)):
            while sent < 64 * 2**20:  # the gateway closes long before
                writer.write(b"a" * 65536)
                await writer.drain()
                sent += 65536
        answer = await reader.read()
    except ConnectionResetError:
        answer = b"HTTP/1.1 431"  # reset before the answer could be read: closed all the same
    finally:
        writer.close()
    assert status_of(answer) == 431
    assert sent < 16 * 2**20  # what the kernel's buffers took before the close
    assert rss_mb(gateway.pid) - before < 20


async def test_a_silent_connection_is_closed_at_the_head_deadline(
    gateway: ServiceProcess,
) -> None:
    started = time.monotonic()
    answer = await exchange(gateway.web_port, b"", read_s=HEAD_TIMEOUT_S + 10)
    assert status_of(answer) == 408
    assert time.monotonic() - started < HEAD_TIMEOUT_S + 5


async def test_a_head_dribbled_a_byte_at_a_time_is_closed_at_the_head_deadline(
    gateway: ServiceProcess,
) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", gateway.web_port)
    started = time.monotonic()
    try:
        closed = False
        for byte in b"GET / HTTP/1.1\r\nx-slow: " + b"a" * 1000:
            writer.write(bytes([byte]))
            try:
                chunk = await asyncio.wait_for(reader.read(1024), 0.2)
            except TimeoutError:
                continue
            except ConnectionResetError:
                chunk = b""
            assert not chunk or chunk.startswith(b"HTTP/1.1 408")
            closed = True
            break
        assert closed
        assert time.monotonic() - started < HEAD_TIMEOUT_S + 5
    finally:
        writer.close()


async def test_stray_line_breaks_do_not_keep_a_connection_open(gateway: ServiceProcess) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", gateway.web_port)
    started = time.monotonic()
    try:
        while time.monotonic() - started < HEAD_TIMEOUT_S + 5:
            writer.write(b"\r\n")
            try:
                if await asyncio.wait_for(reader.read(1024), 0.2) == b"":
                    break
            except TimeoutError:
                continue
            except ConnectionResetError:
                break
        else:
            pytest.fail("the connection stayed open")
    finally:
        writer.close()


# -- connections --------------------------------------------------------------------------------


async def open_idle(port: int, count: int) -> list[Any]:
    return [await asyncio.open_connection("127.0.0.1", port) for _ in range(count)]


async def closed_at_once(port: int) -> bool:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        return await asyncio.wait_for(reader.read(1), 0.5) == b""
    except ConnectionResetError:
        return True
    except TimeoutError:
        return False
    finally:
        writer.close()


async def test_only_open_connections_count_and_one_shot_requests_never_lock_out(
    cluster: ProcessCluster,
) -> None:
    # Heads may take long here: only the per-address cap closes these idle connections.
    gateway = cluster.add("gateway", {**CAPS, "DOMINOS_WEB_HEAD_TIMEOUT_SECONDS": "60"})
    try:
        # 100 one-shot requests, each closing its connection: none counts afterwards.
        one_shot = post("CreateTable", b"\xff", headers={"connection": "close"})
        for _ in range(100):
            assert status_of(await exchange(gateway.web_port, one_shot)) == 400
        assert (
            status_of(await exchange(gateway.web_port, post("CreateTable", create_request())))
            == 200
        )
        # Eight open connections are the address's cap: a ninth is closed as it opens ...
        idle = await open_idle(gateway.web_port, 8)
        assert await closed_at_once(gateway.web_port)
        # ... and one that closes frees its place at once.
        idle[0][1].close()
        await wait_for(lambda: _not(closed_at_once(gateway.web_port)), timeout=10, interval=0.1)
        for _, writer in idle[1:]:
            writer.close()
        page = gateway.scrape()
        assert sample(page, 'dominos_gateway_refused_total{limit="connections_per_address"}') >= 1
    finally:
        gateway.stop()
        cluster.replicas.remove(gateway)


async def _not(check: Any) -> bool:
    return not await check


# -- budgets behind a proxy ---------------------------------------------------------------------


async def join(
    port: int, code: str, instance: str | None, name: str = "Bea"
) -> tuple[int, tuple[str, str, dict[str, str]] | None]:
    headers = {"x-forwarded-for": "198.51.100.23"}
    if instance is not None:
        headers["x-dominos-client"] = instance
    body = gateway_pb2.JoinTableRequest(
        request_id=request_id(), invitation_code=code, player_name=name
    ).SerializeToString()
    answer = await exchange(port, post("JoinTable", body, headers=headers), source="127.0.0.2")
    status = status_of(answer)
    return status, (connect_error(answer) if status != 200 else None)


@pytest.mark.parametrize("instance", ["tab-one-0123456789", None])
async def test_a_browser_guessing_codes_behind_a_proxy_never_locks_out_its_neighbours(
    cluster: ProcessCluster, gateway: ServiceProcess, instance: str | None
) -> None:
    """Every browser behind the trusted proxy (127.0.0.2) comes from one address: the one
    guessing spends its own per-connection budget, and a neighbour with the right code
    joins at once."""
    web = DominosServiceClient(gateway.web_url, timeout_ms=10_000)
    created = await web.create_table(
        gateway_pb2.CreateTableRequest(request_id=request_id(), host_name="Ana", target=100)
    )
    refusals = []
    for _ in range(8):
        status, error = await join(gateway.web_port, "ZZZZZZZZZZ", instance)
        assert status != 200
        refusals.append(error[1] if error else "")
    if instance is not None:  # its own budget is spent after five wrong codes
        assert refusals[:5] == ["CODE_NOT_FOUND"] * 5
        assert refusals[5:] == ["RATE_LIMITED"] * 3
    else:  # no instance id: each request counts as a connection of its own
        assert refusals == ["CODE_NOT_FOUND"] * 8
    status, error = await join(
        gateway.web_port, created.invitation_code, "tab-two-0123456789", name="Chloé"
    )
    assert (status, error) == (200, None)


# -- malformed requests -------------------------------------------------------------------------

MALFORMED: dict[str, tuple[str, bytes, str, dict[str, str]]] = {
    "invalid json": ("CreateTable", b"{not json", "application/json", {}),
    "deep nesting": ("CreateTable", b'{"hostName": ' + b"[" * 20000, "application/json", {}),
    "unknown field": ("CreateTable", b'{"hostName": "Ana", "nope": 1}', "application/json", {}),
    "bad enum string": ("CreateTable", b'{"rules": {"preset": "NOPE"}}', "application/json", {}),
    "protobuf garbage": ("CreateTable", b"\xff\xff\xff\xff", "application/proto", {}),
    "gzip garbage": (
        "CreateTable",
        b"\x1f\x8b garbage",
        "application/proto",
        {"content-encoding": "gzip"},
    ),
    "unknown encoding": ("CreateTable", b"x", "application/proto", {"content-encoding": "br"}),
    "unknown content type": ("CreateTable", b"", "text/plain", {}),
    "grpc over http/1.1": ("CreateTable", b"\0\0\0\0\0", "application/grpc", {}),
    "truncated envelope": ("WatchTable", b"\0\0\0", "application/connect+proto", {}),
    "two envelopes": ("WatchTable", b"\0\0\0\0\0" * 2, "application/connect+proto", {}),
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
async def test_a_malformed_request_is_answered_invalid_argument_and_counted(
    gateway: ServiceProcess, case: str
) -> None:
    method, body, content_type, headers = MALFORMED[case]
    kind = "server_stream" if method == "WatchTable" else "unary"
    before = gateway.scrape()
    answer = await exchange(gateway.web_port, post(method, body, content_type, headers))
    if content_type == "application/connect+proto":
        assert status_of(answer) == 200
        envelope = body_of(answer)
        error = json.loads(envelope[5 : 5 + struct.unpack(">I", envelope[1:5])[0]])["error"]
        assert error["code"] == "invalid_argument"
    else:
        assert status_of(answer) == 400
        code, reason, _ = connect_error(answer)
        assert (code, reason) == ("invalid_argument", "REQUEST_MALFORMED")
        assert "Traceback" not in answer.decode("latin-1")
    after = gateway.scrape()
    series = handled("INVALID_ARGUMENT", method, kind)
    assert sample(after, series) == sample(before, series) + 1


async def test_a_get_of_the_api_is_malformed(gateway: ServiceProcess) -> None:
    answer = await exchange(
        gateway.web_port,
        f"GET {API}/CreateTable?message=e30&encoding=json HTTP/1.1\r\nhost: x\r\n\r\n".encode(),
    )
    assert status_of(answer) == 400
    assert connect_error(answer)[1] == "REQUEST_MALFORMED"


def _fuzz_request(rng: random.Random) -> bytes:
    method = rng.choice(["CreateTable", "JoinTable", "WatchTable", "PlayTile", "Nope"])
    content_type = rng.choice(
        [
            "application/proto",
            "application/json",
            "application/connect+proto",
            "application/connect+json",
            "application/grpc-web+proto",
            "application/grpc-web",
            "application/grpc-web-text",
            "application/grpc",
            "",
            "application/json; charset=utf-8",
        ]
    )
    size = rng.choice([0, 1, 5, 7, 64, 1000])
    body = bytes(rng.getrandbits(8) for _ in range(size))
    if rng.random() < 0.4:
        body = (
            struct.pack(
                ">BI", rng.choice([0, 1, 2, 0x80, 0xFF]), rng.choice([0, 3, len(body), 2**31])
            )
            + body
        )
    if rng.random() < 0.2:
        body = gzip.compress(body)
    headers = {}
    for name in ("content-encoding", "connect-content-encoding", "grpc-encoding"):
        if rng.random() < 0.2:
            headers[name] = rng.choice(["gzip", "identity", "br", "zstd", "\u00e9"])
    if rng.random() < 0.2:
        headers["connect-protocol-version"] = rng.choice(["1", "2", "x"])
    if rng.random() < 0.2:
        headers["authorization"] = rng.choice(["Bearer x", "Basic y", "Bearer " + "z" * 5000])
    if rng.random() < 0.1:
        headers["x-dominos-client"] = rng.choice(["ok-instance-1234", "bad!", "x" * 100])
    return post(method, body, content_type, headers)


async def test_the_web_door_never_answers_500_to_random_requests(
    gateway: ServiceProcess,
) -> None:
    rng = random.Random(20261207)
    statuses: dict[int, int] = {}
    for _ in range(300):
        answer = await exchange(gateway.web_port, _fuzz_request(rng), read_s=5)
        status = status_of(answer)
        statuses[status] = statuses.get(status, 0) + 1
        assert status != 500, answer[:500]
        assert status != 0, "no answer"
    assert 400 in statuses
    assert gateway.alive
