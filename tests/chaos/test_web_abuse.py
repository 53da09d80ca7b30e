"""One hostile client cannot take the web door down: while one address sends gzip bombs,
bodies and envelopes declaring gigabytes, request heads that never end, silent and dribbling
connections and floods of one-shot requests, a victim table of four Connect players on the
same gateway (and the same address: everything here is 127.0.0.1, like neighbours behind one
NAT) plays its games (one after another while the attack lasts) to their end through the web
door, the gateway's memory stays within
:data:`RSS_GROWTH_MB` of its baseline, every attack meets its documented refusal and counter,
and once the attacker stops, the address is not locked out.

The gateway runs the production budgets (every ``DOMINOS_*`` limit at its default) but for a
short head deadline (:data:`HEAD_TIMEOUT_S`), so that silent connections are cut in seconds.
Each attack kind runs in a phase of its own (the gateway's memory measured before, during and
after it), paced, bounded in count and time, and stops by itself; the victim's move → four
views latency is measured before and during the phases. Its ratio is asserted in the long run
only (``DOMINOS_CHAOS_LONG=1``, which repeats the phases and plays more games); the short run
(``make test``) prints it.
"""

from __future__ import annotations

import asyncio
import base64
import json
import random
import socket
import statistics
import struct
import time
import zlib
from collections import Counter
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pyqwest
import pytest
from connectrpc.code import Code
from connectrpc.errors import ConnectError
from dominos.v1 import game_pb2, gateway_pb2
from dominos.v1.gateway_connect import DominosServiceClient
from google.rpc import error_details_pb2, status_pb2

from services.client.api import request_id
from services.common.settings import Settings
from testing.cluster import ProcessCluster, clock_env
from testing.limits import PRODUCTION
from testing.procfs import peak_rss_kb, rss_mb
from testing.services import ServiceProcess
from testing.stats import percentile
from testing.waiting import wait_for

from .reporting import long_enabled, report

API = "/dominos.v1.DominosService"
#: The largest message of the public API, and the ErrorInfo metadata of its refusal.
LIMIT = 64 * 1024
TOO_LARGE = f"REQUEST_TOO_LARGE limit_bytes={LIMIT}"
#: The head deadline of the test's gateway (production's is 10 s), and how late past it a
#: silent connection may still be closed (a loaded machine's scheduling, never the rule).
HEAD_TIMEOUT_S = 2.0
MARGIN_S = 5.0
CAP = Settings().connections_per_address
#: How many times the attack phases run, and how long each phase lasts.
ROUNDS = 3 if long_enabled() else 1
PHASE_S = 8.0 if long_enabled() else 3.0
#: Attacks per second of each paced phase, and how many may be under way at once.
REQUEST_RATE = 40.0
HEAD_RATE = 10.0
ONE_SHOT_RATE = 100.0
AT_ONCE = 4
ENDLESS_HEAD_BYTES = 2**20 + 1
#: Connections held open at once by the silent phase (again and again for its duration).
SILENT = 150
DRIBBLING = 50
#: The victim shares the address, hence its connection cap: the silent connections leave it
#: room (a neighbour holding the whole cap would lock its new connections out until it lets
#: go: that is what a per-address cap means, and :func:`beyond_the_cap` shows it).
VICTIM_ROOM = CAP - SILENT - DRIBBLING
#: The victim: games to a small target (few enough a minute for the per-address creates
#: budget), moves after a fast human's pause, its baseline.
TARGET = 200 if long_enabled() else 50
THINK_S = 0.02
WARMUP_MOVES = 10
BASELINE_MOVES = 200 if long_enabled() else 40
#: How much slower the victim's p99 may get under attack (asserted in the long run only).
SLOWDOWN = 2.0
RSS_GROWTH_MB = 50.0
#: Any one attack phase ends by this (each attack has tighter deadlines of its own).
PHASE_TIMEOUT_S = 60.0
#: The turn clock: long enough that a loaded machine never lets it play for the victim (the
#: games are short for their small target).
TURN_S = 10.0
#: The deadline of the victim's unary calls.
CALL_MS = 10_000


@pytest.fixture(scope="module")
def cluster() -> Iterator[ProcessCluster]:
    started = ProcessCluster.start(
        env={
            **clock_env(TURN_S, TURN_S, 0.2),
            **PRODUCTION,
            "DOMINOS_WEB_HEAD_TIMEOUT_SECONDS": str(HEAD_TIMEOUT_S),
            "DOMINOS_LOG_LEVEL": "warning",
        },
        metrics=True,
    )
    try:
        yield started
    finally:
        started.stop()


# -- the victim ------------------------------------------------------------------------------


def bearer(token: str) -> dict[str, str]:
    return {"authorization": f"Bearer {token}"}


@dataclass
class Victim:
    """Four web players of one table, each with its view stream open; each move is timed
    until all four streams show its version, and labelled with the attack under way."""

    url: str
    transport: pyqwest.HTTPTransport = field(default_factory=pyqwest.HTTPTransport)
    clients: list[Any] = field(default_factory=list)
    table_id: str = ""
    #: By seat: its token and latest view.
    tokens: dict[int, str] = field(default_factory=dict)
    latest: dict[int, game_pb2.TableView] = field(default_factory=dict)
    changed: asyncio.Event = field(default_factory=asyncio.Event)
    readers: list[asyncio.Task[None]] = field(default_factory=list)
    label: str = "warm-up"
    samples: list[tuple[str, float]] = field(default_factory=list)
    finished: int = 0
    overtaken: int = 0

    def __post_init__(self) -> None:
        http = pyqwest.Client(self.transport)
        self.clients = [
            # No default deadline: a view stream lasts the game (each unary call has its own).
            DominosServiceClient(self.url, http_client=http)
            for _ in range(4)
        ]

    async def new_game(self) -> None:
        """A new table: the first player creates it, three join, all four watch, it starts."""
        await self.stop_watching()
        self.latest.clear()
        created = await self.clients[0].create_table(
            gateway_pb2.CreateTableRequest(
                request_id=request_id(), host_name="Victim", target=TARGET
            ),
            timeout_ms=CALL_MS,
        )
        self.table_id = created.table_id
        by_seat = {created.seat: (self.clients[0], created.seat_token)}
        for index in range(1, 4):
            joined = await self.clients[index].join_table(
                gateway_pb2.JoinTableRequest(
                    request_id=request_id(),
                    invitation_code=created.invitation_code,
                    player_name=f"V{index}",
                ),
                timeout_ms=CALL_MS,
            )
            by_seat[joined.seat] = (self.clients[index], joined.seat_token)
        self.tokens = {seat: token for seat, (_, token) in by_seat.items()}
        self.readers = [
            asyncio.create_task(self.read(client, token)) for client, token in by_seat.values()
        ]
        await self.until(lambda: len(self.latest) == 4)
        await self.clients[0].start_game(
            gateway_pb2.StartGameRequest(table_id=self.table_id, request_id=request_id()),
            headers=bearer(created.seat_token),
            timeout_ms=CALL_MS,
        )

    async def read(self, client: Any, token: str) -> None:
        stream = client.watch_table(
            gateway_pb2.WatchTableRequest(table_id=self.table_id),
            headers=bearer(token),
            timeout_ms=None,
        )
        async for message in stream:
            self.latest[message.view.your_seat] = message.view
            self.changed.set()
        raise AssertionError("a view stream of the victim ended")

    async def until(self, condition: Callable[[], bool]) -> None:
        async with asyncio.timeout(30):
            while not condition():
                for reader in self.readers:
                    if reader.done():
                        reader.result()  # a stream that failed fails the victim
                self.changed.clear()
                await self.changed.wait()

    def done(self) -> bool:
        return any(v.phase == game_pb2.PHASE_FINISHED for v in self.latest.values())

    def lowest_version(self) -> int:
        return min((v.version for v in self.latest.values()), default=0)

    def turn(self) -> game_pb2.TableView | None:
        """The view of the seat to play, once all four streams show the same playing
        version (None otherwise)."""
        views = self.latest
        if len(views) < 4 or len({v.version for v in views.values()}) != 1:
            return None
        view = next(iter(views.values()))
        return views[view.turn_seat] if view.phase == game_pb2.PHASE_PLAYING else None

    async def move(self, rng: random.Random) -> None:
        """The seat to play acts after a human's pause (:data:`THINK_S`); wait until all four
        views show it."""
        await asyncio.sleep(THINK_S)  # pacing, not synchronisation
        await self.until(lambda: self.done() or self.turn() is not None)
        view = self.turn()
        if view is None:
            return
        seat = view.your_seat
        client = self.clients[0]
        started = time.perf_counter()
        try:
            if view.legal_moves:
                move = rng.choice(list(view.legal_moves))
                await client.play_tile(
                    gateway_pb2.PlayTileRequest(
                        table_id=self.table_id,
                        request_id=request_id(),
                        tile=move.tile,
                        end=move.end,
                        expected_version=view.version,
                    ),
                    headers=bearer(self.tokens[seat]),
                    timeout_ms=CALL_MS,
                )
            else:
                await client.pass_(
                    gateway_pb2.PassRequest(
                        table_id=self.table_id,
                        request_id=request_id(),
                        expected_version=view.version,
                    ),
                    headers=bearer(self.tokens[seat]),
                    timeout_ms=CALL_MS,
                )
        except ConnectError as error:  # overtaken by the turn clock's auto-play
            assert error.code in (Code.FAILED_PRECONDITION, Code.ABORTED), error
            self.overtaken += 1
            return
        await self.until(lambda: self.lowest_version() > view.version)
        self.samples.append((self.label, time.perf_counter() - started))

    async def step(self, rng: random.Random) -> None:
        """One move, or (the game being over) a new game."""
        if self.done():
            self.finished += 1
            await self.new_game()
        else:
            await self.move(rng)

    async def play_while(self, attack: asyncio.Task[Any], rng: random.Random) -> None:
        """Play on (game after game) while the attack runs, then to the end of the game."""
        while not (attack.done() and self.done()):
            await self.step(rng)
        self.finished += 1

    def times(self, *labels: str) -> list[float]:
        return [seconds for label, seconds in self.samples if label in labels]

    async def stop_watching(self) -> None:
        for reader in self.readers:
            reader.cancel()
        await asyncio.gather(*self.readers, return_exceptions=True)
        self.readers = []

    async def close(self) -> None:
        await self.stop_watching()
        await self.transport.aclose()


def p50_ms(samples: list[float]) -> float | None:
    return round(statistics.median(samples) * 1000, 2) if samples else None


def p99_ms(samples: list[float]) -> float | None:
    if not samples:
        return None
    return percentile(sorted(int(s * 1e6) for s in samples), 99) / 1000


# -- raw HTTP/1.1 ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Answer:
    """What a connection got: the bytes, whether the gateway closed it, and when."""

    data: bytes
    closed: bool
    seconds: float


async def dial(port: int) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setblocking(False)
    try:
        await asyncio.get_running_loop().sock_connect(sock, ("127.0.0.1", port))
    except BaseException:
        sock.close()
        raise
    return sock


async def send(sock: socket.socket, data: bytes) -> bool:
    """Send ``data``; False when the gateway has closed the connection already."""
    try:
        await asyncio.get_running_loop().sock_sendall(sock, data)
    except (BrokenPipeError, ConnectionResetError):
        return False
    return True


async def until_closed(sock: socket.socket, started: float, within_s: float) -> Answer:
    """Everything the gateway sends until it closes the connection (the kernel hands out
    what arrived before a reset first) or ``within_s`` after ``started`` passes."""
    loop = asyncio.get_running_loop()
    data = bytearray()
    closed = False
    while (left := started + within_s - time.monotonic()) > 0:
        try:
            chunk = await asyncio.wait_for(loop.sock_recv(sock, 65536), left)
        except TimeoutError:
            break
        except ConnectionResetError:
            closed = True
            break
        if not chunk:
            closed = True
            break
        data += chunk
    return Answer(bytes(data), closed, time.monotonic() - started)


async def exchange(port: int, request: bytes, within_s: float = 15.0) -> Answer:
    """Send ``request`` on a new connection; the answer until the gateway closes it."""
    sock = await dial(port)
    started = time.monotonic()
    try:
        await send(sock, request)
        return await until_closed(sock, started, within_s)
    finally:
        sock.close()


def post(
    method: str,
    body: bytes,
    content_type: str = "application/proto",
    *,
    length: int | None = None,
    **headers: str,
) -> bytes:
    lines = [
        f"POST {API}/{method} HTTP/1.1",
        "host: 127.0.0.1",
        "connection: close",
        f"content-type: {content_type}",
        f"content-length: {len(body) if length is None else length}",
        *(f"{name.replace('_', '-')}: {value}" for name, value in headers.items()),
    ]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


def envelope_prefix(method: str, content_type: str) -> bytes:
    """A chunked request whose first (and only) bytes are an envelope prefix declaring a
    4 GiB message: the gateway must answer without waiting for (or buffering) it."""
    head = (
        f"POST {API}/{method} HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: {content_type}\r\n"
        "transfer-encoding: chunked\r\n\r\n"
    ).encode()
    return head + b"5\r\n" + struct.pack(">BI", 0, 2**32 - 1) + b"\r\n"


def _dechunked(body: bytes) -> bytes:
    out = bytearray()
    while body:
        size_line, _, rest = body.partition(b"\r\n")
        size = int(size_line.split(b";")[0] or b"0", 16)
        if size == 0:
            break
        out += rest[:size]
        body = rest[size + 2 :]
    return bytes(out)


def _error_info(details: list[dict[str, str]]) -> str:
    """The ``reason`` and metadata of the ErrorInfo among Connect JSON error details."""
    for detail in details:
        if detail.get("type") == "google.rpc.ErrorInfo":
            info = error_details_pb2.ErrorInfo.FromString(
                base64.b64decode(detail["value"] + "=" * (-len(detail["value"]) % 4))
            )
            return _info_text(info)
    return "no-error-info"


def _info_text(info: error_details_pb2.ErrorInfo) -> str:
    assert info.domain == "dominos.v1", info
    metadata = " ".join(f"{k}={v}" for k, v in sorted(info.metadata.items()))
    return f"{info.reason} {metadata}".strip()


def outcome(answer: Answer) -> str:
    """What an attack got, in a word or a few: the status line's code, the refusal's code
    and reason in the caller's protocol, and whether the gateway closed the connection."""
    closed = "closed" if answer.closed else "open"
    if not answer.data:
        return f"no answer, {closed}"
    head, _, body = answer.data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    if not lines[0].startswith("HTTP/1.1 "):
        return f"not HTTP, {closed}"
    status = lines[0].split(" ", 2)[1]
    headers = {k.strip().lower(): v.strip() for k, _, v in (x.partition(":") for x in lines[1:])}
    if headers.get("transfer-encoding") == "chunked":
        body = _dechunked(body)
    kind = headers.get("content-type", "").split(";")[0]
    words = [status]
    if kind == "application/json" and status != "200":
        error = json.loads(body)
        words += [error["code"], _error_info(error.get("details", []))]
    elif kind.startswith("application/connect+"):
        flags, length = struct.unpack(">BI", body[:5])
        end = json.loads(body[5 : 5 + length])
        assert flags == 0x02, answer  # one end-of-stream envelope
        if "error" in end:
            words += ["end-stream", end["error"]["code"], _error_info(end["error"]["details"])]
    elif kind.startswith("application/grpc-web"):
        words += [f"grpc-status {headers.get('grpc-status')}"]
        if "grpc-status-details-bin" in headers:
            status_detail = status_pb2.Status.FromString(
                base64.b64decode(headers["grpc-status-details-bin"])
            )
            info = error_details_pb2.ErrorInfo()
            words += [_info_text(info) if status_detail.details[0].Unpack(info) else "?"]
    return f"{' '.join(words)}, {closed}"


# -- the attacks -----------------------------------------------------------------------------


def gzip_bomb() -> bytes:
    """About 60 KB of gzip that inflates to 60 MB of zeros."""
    deflater = zlib.compressobj(9, zlib.DEFLATED, 31)
    zeros = bytes(2**20)
    return b"".join(deflater.compress(zeros) for _ in range(60)) + deflater.flush()


async def paced(rate: float, at_once: int, attack: Callable[[int], Awaitable[str]]) -> list[str]:
    """Attacks started at ``rate`` per second for :data:`PHASE_S` (``at_once`` at most under
    way); their outcomes."""
    gate = asyncio.Semaphore(at_once)
    started = time.monotonic()
    tasks: list[asyncio.Task[str]] = []

    async def one(index: int) -> str:
        try:
            return await attack(index)
        finally:
            gate.release()

    try:
        for index in range(int(PHASE_S * rate)):
            await asyncio.sleep(max(0.0, started + index / rate - time.monotonic()))  # pacing
            await gate.acquire()
            tasks.append(asyncio.create_task(one(index)))
        return list(await asyncio.gather(*tasks))
    finally:
        for task in tasks:
            task.cancel()


BOMB_KINDS = ("gzip bomb", "declared 4 GiB")


async def bombs(port: int, bomb: bytes) -> list[str]:
    """Connect unary CreateTable bodies of gzip inflating to 60 MB, and bodies declaring
    4 GiB in their ``Content-Length`` (none of it sent), in turn."""
    requests = {
        "gzip bomb": post(
            "CreateTable", bomb, content_encoding="gzip", connect_protocol_version="1"
        ),
        "declared 4 GiB": post("CreateTable", b"", length=4 * 2**30),
    }

    async def attack(index: int) -> str:
        kind = BOMB_KINDS[index % len(BOMB_KINDS)]
        return f"{kind}: {outcome(await exchange(port, requests[kind]))}"

    return await paced(REQUEST_RATE, AT_ONCE, attack)


ENVELOPE_KINDS = {
    "connect stream WatchTable": ("WatchTable", "application/connect+proto"),
    "grpc-web WatchTable": ("WatchTable", "application/grpc-web+proto"),
    "grpc-web CreateTable": ("CreateTable", "application/grpc-web+proto"),
}
ENVELOPE_NAMES = sorted(ENVELOPE_KINDS)


async def envelopes(port: int) -> list[str]:
    """Connect streaming and gRPC-Web requests whose envelope declares a 4 GiB message."""

    async def attack(index: int) -> str:
        kind = ENVELOPE_NAMES[index % len(ENVELOPE_NAMES)]
        request = envelope_prefix(*ENVELOPE_KINDS[kind])
        return f"{kind}: {outcome(await exchange(port, request))}"

    return await paced(REQUEST_RATE, AT_ONCE, attack)


async def endless_heads(port: int) -> list[str]:
    """Request heads whose last header line grows past 1 MB, sent 16 KB at a time."""

    async def attack(_: int) -> str:
        sock = await dial(port)
        started = time.monotonic()
        try:
            sent = 0
            chunk = b"a" * 16384
            if await send(sock, f"POST {API}/CreateTable HTTP/1.1\r\nx-endless: ".encode()):
                while sent < ENDLESS_HEAD_BYTES and await send(sock, chunk):
                    sent += len(chunk)
            return outcome(await until_closed(sock, started, 15.0))
        finally:
            sock.close()

    return await paced(HEAD_RATE, 2, attack)


async def silent_once(port: int) -> list[Answer]:
    """:data:`SILENT` connections that send nothing and :data:`DRIBBLING` that send a head
    a byte every half second, all open at once, each until the gateway closes it (or the
    head deadline and its margin pass)."""
    loop = asyncio.get_running_loop()
    within_s = HEAD_TIMEOUT_S + MARGIN_S

    async def quiet() -> Answer:
        sock = await dial(port)
        try:
            return await until_closed(sock, time.monotonic(), within_s)
        finally:
            sock.close()

    async def dribble() -> Answer:
        sock = await dial(port)
        started = time.monotonic()
        try:
            for byte in b"GET /healthz HTTP/1.1\r\nx-slow: " + b"a" * 100:
                if time.monotonic() - started > within_s or not await send(sock, bytes([byte])):
                    break
                try:  # a byte every half second (pacing), unless the gateway answers first
                    first = await asyncio.wait_for(loop.sock_recv(sock, 65536), 0.5)
                except TimeoutError:
                    continue
                except ConnectionResetError:
                    return Answer(b"", True, time.monotonic() - started)
                if not first:
                    return Answer(b"", True, time.monotonic() - started)
                rest = await until_closed(sock, started, within_s)
                return Answer(first + rest.data, rest.closed, rest.seconds)
            return await until_closed(sock, started, within_s)
        finally:
            sock.close()

    return list(
        await asyncio.gather(
            *(quiet() for _ in range(SILENT)), *(dribble() for _ in range(DRIBBLING))
        )
    )


MALFORMED = "400 invalid_argument REQUEST_MALFORMED, closed"
GET_OF_THE_API = f"GET {API}/CreateTable HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: close\r\n\r\n"
#: One-shot requests by name, and what each must get.
ONE_SHOT_KINDS: dict[str, tuple[bytes, str]] = {
    "server info": (post("GetServerInfo", b""), "200, closed"),
    "protobuf garbage": (post("CreateTable", b"\xff\xff\xff\xff"), MALFORMED),
    "invalid json": (post("CreateTable", b"{not json", "application/json"), MALFORMED),
    "unknown json field": (
        post("CreateTable", b'{"hostName": "Eve", "nope": 1}', "application/json"),
        MALFORMED,
    ),
    "unsupported content type": (post("CreateTable", b"hello", "text/plain"), MALFORMED),
    "GET": (GET_OF_THE_API.encode(), MALFORMED),
}
ONE_SHOT_NAMES = sorted(ONE_SHOT_KINDS)


async def one_shots(port: int) -> list[str]:
    """One-shot requests (``Connection: close``), a few at a time: a valid GetServerInfo
    and malformed CreateTables (protobuf garbage, invalid JSON, an unknown JSON field, an
    unsupported content type, a GET)."""

    async def attack(index: int) -> str:
        name = ONE_SHOT_NAMES[index % len(ONE_SHOT_NAMES)]
        return f"{name}: {outcome(await exchange(port, ONE_SHOT_KINDS[name][0]))}"

    return await paced(ONE_SHOT_RATE, AT_ONCE, attack)


# -- phases and what they measure ------------------------------------------------------------


@dataclass
class Phase:
    """One attack kind's runs (one per round): their outcomes, and the gateway's memory
    before the first, at its peak during any, and after the last."""

    name: str
    outcomes: Counter[str] = field(default_factory=Counter)
    rss_before_mb: float = 0.0
    rss_peak_mb: float = 0.0
    rss_after_mb: float = 0.0
    seconds: float = 0.0

    def total(self) -> int:
        return self.outcomes.total()

    def figures(self) -> dict[str, Any]:
        return {
            "rss_before_mb": round(self.rss_before_mb, 1),
            "rss_peak_mb": round(self.rss_peak_mb, 1),
            "rss_after_mb": round(self.rss_after_mb, 1),
            "seconds": round(self.seconds, 2),
            "outcomes": dict(self.outcomes),
        }


async def run_phase(
    phase: Phase, pid: int, victim: Victim, attack: Callable[[], Awaitable[list[str]]]
) -> None:
    """Run ``attack`` while sampling the gateway's resident memory every 20 ms."""
    victim.label = phase.name
    before = rss_mb(pid)
    phase.rss_before_mb = before if not phase.outcomes else phase.rss_before_mb
    peak = before
    stop = asyncio.Event()

    async def watch_memory() -> None:
        nonlocal peak
        while not stop.is_set():
            peak = max(peak, rss_mb(pid))
            await asyncio.sleep(0.02)  # a sampling period, not synchronisation

    sampler = asyncio.create_task(watch_memory())
    started = time.monotonic()
    try:
        async with asyncio.timeout(PHASE_TIMEOUT_S):
            phase.outcomes.update(await attack())
    finally:
        stop.set()
        await sampler
    phase.seconds += time.monotonic() - started
    phase.rss_peak_mb = max(phase.rss_peak_mb, peak, rss_mb(pid))
    phase.rss_after_mb = rss_mb(pid)


def sample(page: str, series: str) -> float:
    for line in page.splitlines():
        if line.startswith(series + " "):
            return float(line.rsplit(" ", 1)[1])
    return 0.0


def closed_for(reason: str) -> str:
    return f'dominos_gateway_web_connections_closed_total{{reason="{reason}"}}'


def refused_for(reason: str) -> str:
    return f'dominos_gateway_web_requests_refused_total{{reason="{reason}"}}'


def handled(code: str, method: str, kind: str = "unary") -> str:
    return (
        f'dominos_grpc_server_handled_total{{grpc_code="{code}",grpc_method="{method}",'
        f'grpc_service="dominos.v1.DominosService",grpc_type="{kind}"}}'
    )


OPEN_GAUGE = "dominos_gateway_web_connections"
#: The counters the attacks must move, by a short name.
COUNTED = {
    "closed head_too_large": closed_for("head_too_large"),
    "closed head_timeout": closed_for("head_timeout"),
    "closed connections_per_address": closed_for("connections_per_address"),
    "refused request_too_large": refused_for("request_too_large"),
    "refused request_malformed": refused_for("request_malformed"),
    "handled RESOURCE_EXHAUSTED CreateTable": handled("RESOURCE_EXHAUSTED", "CreateTable"),
    "handled RESOURCE_EXHAUSTED WatchTable": handled(
        "RESOURCE_EXHAUSTED", "WatchTable", "server_stream"
    ),
    "handled INVALID_ARGUMENT CreateTable": handled("INVALID_ARGUMENT", "CreateTable"),
}


def moved(before: str, after: str) -> dict[str, float]:
    return {
        name: sample(after, series) - sample(before, series) for name, series in COUNTED.items()
    }


async def fresh_client_calls(gateway: ServiceProcess) -> bool:
    """A new client of the same address, on a new connection, creates a table."""
    transport = pyqwest.HTTPTransport()
    try:
        web = DominosServiceClient(
            gateway.web_url, timeout_ms=10_000, http_client=pyqwest.Client(transport)
        )
        created = await web.create_table(
            gateway_pb2.CreateTableRequest(request_id=request_id(), host_name="Neighbour")
        )
        return bool(created.table_id)
    finally:
        await transport.aclose()


async def served_and_kept(sock: socket.socket) -> bool:
    """Ask ``/healthz`` on ``sock`` and read the whole answer; False when the gateway closed
    the connection instead (nothing answered)."""
    loop = asyncio.get_running_loop()
    await send(sock, b"GET /healthz HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n")
    data = b""
    try:
        while not data.endswith(b"\r\n0\r\n\r\n"):  # the end of its chunked "ok"
            chunk = await asyncio.wait_for(loop.sock_recv(sock, 4096), 10)
            if not chunk:
                break
            data += chunk
    except ConnectionResetError:
        pass
    assert not data or data.startswith(b"HTTP/1.1 200"), data
    return bool(data)


async def beyond_the_cap(gateway: ServiceProcess) -> dict[str, Any]:
    """The attacker fills the address's connection cap with idle keep-alive connections
    (each served one request): the next one is closed at accept, unanswered; the moment the
    attacker closes them, none counts any more."""
    held: list[socket.socket] = []
    refused_at: int | None = None
    try:
        for index in range(CAP + 10):
            sock = await dial(gateway.web_port)
            try:
                kept = await served_and_kept(sock)
            except BaseException:
                sock.close()
                raise
            if not kept:
                sock.close()
                refused_at = index
                break
            held.append(sock)
        open_while_held = sample(gateway.scrape(), OPEN_GAUGE)
    finally:
        for sock in held:
            sock.close()
    await wait_for(
        lambda: sample(gateway.scrape(), OPEN_GAUGE) == 0,
        timeout=10,
        message="the attacker's connections uncounted",
    )
    return {"held": len(held), "refused_at": refused_at, "open_while_held": open_while_held}


# -- the test --------------------------------------------------------------------------------


def named(outcomes: Counter[str]) -> dict[str, Counter[str]]:
    """``{"kind: outcome": n}`` as ``{kind: {outcome: n}}``."""
    by_kind: dict[str, Counter[str]] = {}
    for key, count in outcomes.items():
        kind, _, got = key.partition(": ")
        by_kind.setdefault(kind, Counter())[got] += count
    return by_kind


async def test_one_hostile_web_client_cannot_take_the_web_door_down(
    cluster: ProcessCluster,
) -> None:
    """The victim plays to the end, memory stays bounded, every attack gets its refusal,
    the counters move and the address is not locked out afterwards."""
    assert VICTIM_ROOM >= 32
    gateway = cluster.gateways[0]
    port, pid = gateway.web_port, gateway.pid
    bomb = await asyncio.to_thread(gzip_bomb)
    assert len(bomb) <= LIMIT  # under the body bound: refused while inflating
    rng = random.Random(18)
    victim = Victim(gateway.web_url)
    phases = {
        name: Phase(name)
        for name in ("gzip bombs", "4 GiB envelopes", "endless heads", "silent", "one-shots")
    }
    longest_silent = 0.0

    async def silent() -> list[str]:
        nonlocal longest_silent
        answers: list[Answer] = []
        started = time.monotonic()
        while time.monotonic() - started < PHASE_S:
            answers += await silent_once(port)
        longest_silent = max([longest_silent, *(a.seconds for a in answers)])
        return [outcome(a) for a in answers]

    async def attack() -> None:
        for _ in range(ROUNDS):
            await run_phase(phases["gzip bombs"], pid, victim, lambda: bombs(port, bomb))
            await run_phase(phases["4 GiB envelopes"], pid, victim, lambda: envelopes(port))
            await run_phase(phases["endless heads"], pid, victim, lambda: endless_heads(port))
            await run_phase(phases["silent"], pid, victim, silent)
            await run_phase(phases["one-shots"], pid, victim, lambda: one_shots(port))
        victim.label = "after"

    try:
        await victim.new_game()
        for _ in range(WARMUP_MOVES):
            await victim.step(rng)
        victim.label = "baseline"
        while len(victim.times("baseline")) < BASELINE_MOVES:
            await victim.step(rng)
        page_before = gateway.scrape()
        rss_base = rss_mb(pid)
        hwm_base = (peak_rss_kb(pid) or 0) / 1024
        attacking = asyncio.create_task(attack())
        playing = asyncio.create_task(victim.play_while(attacking, rng))
        try:
            done, _ = await asyncio.wait(
                {attacking, playing}, return_when=asyncio.FIRST_EXCEPTION, timeout=240
            )
            for task in done:
                task.result()  # the first failure, of the attacker or of the victim
            await asyncio.wait_for(attacking, timeout=60)
            await asyncio.wait_for(playing, timeout=120)  # the last game, to its end
        finally:
            attacking.cancel()
            playing.cancel()
        hwm_after = (peak_rss_kb(pid) or 0) / 1024
        rss_end = rss_mb(pid)
        neighbour_after_attack = await fresh_client_calls(gateway)
    finally:
        await victim.close()
    await wait_for(
        lambda: sample(gateway.scrape(), OPEN_GAUGE) == 0,
        timeout=10,
        message="every web connection closed",
    )
    cap = await beyond_the_cap(gateway)
    neighbour_after_cap = await fresh_client_calls(gateway)
    counters = moved(page_before, gateway.scrape())

    baseline = victim.times("baseline")
    during = victim.times(*phases)
    # The peak: the sampled one, or VmHWM if it passed its baseline (a spike between samples).
    peak = max([p.rss_peak_mb for p in phases.values()] + [hwm_after * (hwm_after > hwm_base)])
    figures: dict[str, Any] = {
        "rounds": ROUNDS,
        "phase_s": PHASE_S,
        "games_finished": victim.finished,
        "moves_overtaken": victim.overtaken,
        "baseline_moves": len(baseline),
        "baseline_p50_ms": p50_ms(baseline),
        "baseline_p99_ms": p99_ms(baseline),
        "attack_moves": len(during),
        "attack_p50_ms": p50_ms(during),
        "attack_p99_ms": p99_ms(during),
        "p99_ratio": round((p99_ms(during) or 0) / (p99_ms(baseline) or 1), 2),
        "per_phase_moves_p50_p99_ms": {
            name: (len(victim.times(name)), p50_ms(victim.times(name)), p99_ms(victim.times(name)))
            for name in phases
        },
        "rss_baseline_mb": round(rss_base, 1),
        "rss_peak_growth_mb": round(peak - rss_base, 1),
        "rss_end_mb": round(rss_end, 1),
        "vmhwm_before_after_mb": (round(hwm_base, 1), round(hwm_after, 1)),
        "phases": {name: phase.figures() for name, phase in phases.items()},
        "longest_silent_s": round(longest_silent, 2),
        "beyond_cap": cap,
        "counters_moved": counters,
    }
    report("web abuse (long)" if long_enabled() else "web abuse (short)", **figures)

    # The victim's games reached their end, through the attack.
    assert victim.finished >= 1 and victim.done(), figures
    assert len(during) >= 20, figures
    if long_enabled():
        assert (p99_ms(during) or 0) <= SLOWDOWN * (p99_ms(baseline) or 0), figures
    # Memory: bounded by the gateway's bounds, not by what the attacker claims to send.
    assert peak - rss_base <= RSS_GROWTH_MB, figures
    # Every attack got its documented refusal, and the gateway closed its connection.
    too_large_unary = f"429 resource_exhausted {TOO_LARGE}, closed"
    bombed = named(phases["gzip bombs"].outcomes)
    assert set(bombed) == set(BOMB_KINDS), bombed
    assert all(set(got) == {too_large_unary} for got in bombed.values()), bombed
    enveloped = named(phases["4 GiB envelopes"].outcomes)
    assert enveloped.keys() == ENVELOPE_KINDS.keys(), enveloped
    for kind, got in enveloped.items():
        refusal = (
            f"200 end-stream resource_exhausted {TOO_LARGE}, closed"
            if kind.startswith("connect")
            else f"200 grpc-status 8 {TOO_LARGE}, closed"
        )
        assert set(got) == {refusal}, enveloped
    assert set(phases["endless heads"].outcomes) == {"431, closed"}, phases["endless heads"]
    assert set(phases["silent"].outcomes) == {"408, closed"}, phases["silent"]
    assert longest_silent <= HEAD_TIMEOUT_S + MARGIN_S
    shots = named(phases["one-shots"].outcomes)
    assert {kind: set(got) for kind, got in shots.items()} == {
        kind: {expected} for kind, (_, expected) in ONE_SHOT_KINDS.items()
    }, shots
    # ... each counted.
    too_large = phases["gzip bombs"].total() + phases["4 GiB envelopes"].total()
    malformed = phases["one-shots"].total() - shots["server info"].total()
    created = phases["gzip bombs"].total() + enveloped["grpc-web CreateTable"].total()
    watched = phases["4 GiB envelopes"].total() - enveloped["grpc-web CreateTable"].total()
    assert counters["refused request_too_large"] == too_large, counters
    assert counters["refused request_malformed"] == malformed, counters
    assert counters["closed head_too_large"] == phases["endless heads"].total(), counters
    assert counters["closed head_timeout"] >= phases["silent"].total(), counters
    assert counters["handled RESOURCE_EXHAUSTED CreateTable"] >= created, counters
    assert counters["handled RESOURCE_EXHAUSTED WatchTable"] >= watched, counters
    assert counters["handled INVALID_ARGUMENT CreateTable"] >= malformed, counters
    # One connection beyond the cap is closed at accept, unanswered, and counted; once the
    # attacker lets go, a neighbour of the same address calls again (no lock-out).
    assert cap["held"] == cap["refused_at"] == cap["open_while_held"] == CAP, cap
    assert counters["closed connections_per_address"] >= 1, counters
    assert neighbour_after_attack and neighbour_after_cap
