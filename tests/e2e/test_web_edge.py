"""The web edge (issue 18, item 3): the public API over Connect and gRPC-Web, on each
gateway's second port, through the same code as the gRPC door — real processes, real HTTP
clients (``connect-python``'s), no browser (the browser test plays through it in tests/web).
"""

from __future__ import annotations

import asyncio
import random
import signal
import urllib.error
import urllib.request
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from connectrpc.code import Code
from connectrpc.errors import ConnectError
from connectrpc.protocol import ProtocolType
from dominos.v1 import game_pb2, gateway_pb2
from dominos.v1.gateway_connect import DominosServiceClient
from google.rpc import error_details_pb2

from services.client.api import request_id
from testing.cluster import ProcessCluster, clock_env
from testing.players import DONE, PLAYING, check_view, tiles_shown
from testing.waiting import wait_for

TURN_S = 3.0
TARGET = 50


@pytest.fixture(scope="module")
def web_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("web")
    (root / "index.html").write_text("<!doctype html><title>Dominos</title>")
    (root / "assets").mkdir()
    (root / "assets" / "app-1234.js").write_text("console.log('dominos')")
    return root


@pytest.fixture(scope="module")
def cluster(web_root: Path) -> Iterator[ProcessCluster]:
    started = ProcessCluster.start(
        env={**clock_env(TURN_S, 0.3, 0.2), "DOMINOS_WEB_ROOT": str(web_root)}, metrics=True
    )
    try:
        yield started
    finally:
        started.stop()


def client(cluster: ProcessCluster, protocol: ProtocolType = ProtocolType.CONNECT) -> Any:
    return DominosServiceClient(cluster.web_url, protocol=protocol, timeout_ms=10_000)


def bearer(token: str) -> dict[str, str]:
    return {"authorization": f"Bearer {token}"}


def error_info(error: ConnectError) -> error_details_pb2.ErrorInfo:
    for detail in error.details:
        info = error_details_pb2.ErrorInfo()
        if detail.Unpack(info):
            return info
    raise AssertionError(f"no ErrorInfo in {error!r}")


async def seat_four(clients: list[Any]) -> tuple[str, list[gateway_pb2.JoinTableResponse]]:
    created = await clients[0].create_table(
        gateway_pb2.CreateTableRequest(request_id=request_id(), host_name="Ana", target=TARGET)
    )
    seats: list[Any] = [created]
    for index, name in enumerate(("Bea", "Chloé", "Dan"), start=1):
        seats.append(
            await clients[index].join_table(
                gateway_pb2.JoinTableRequest(
                    request_id=request_id(),
                    invitation_code=created.invitation_code,
                    player_name=name,
                )
            )
        )
    return created.table_id, seats


async def play_seat(
    web: Any, table_id: str, seat: int, token: str, rng: random.Random
) -> list[game_pb2.TableView]:
    """Watch over the web edge and play random legal moves until the game is over."""
    views: list[game_pb2.TableView] = []
    acted = -1
    stream: AsyncIterator[Any] = web.watch_table(
        gateway_pb2.WatchTableRequest(table_id=table_id), headers=bearer(token), timeout_ms=None
    )
    async for message in stream:
        view = message.view
        check_view(view, seat, TARGET, int(TURN_S * 1000))
        views.append(view)
        if view.phase in DONE:
            break
        if view.phase == PLAYING and view.turn_seat == seat and view.version != acted:
            acted = view.version
            try:
                if view.legal_moves:
                    move = rng.choice(list(view.legal_moves))
                    await web.play_tile(
                        gateway_pb2.PlayTileRequest(
                            table_id=table_id,
                            request_id=request_id(),
                            tile=move.tile,
                            end=move.end,
                            expected_version=view.version,
                        ),
                        headers=bearer(token),
                    )
                else:
                    await web.pass_(
                        gateway_pb2.PassRequest(
                            table_id=table_id,
                            request_id=request_id(),
                            expected_version=view.version,
                        ),
                        headers=bearer(token),
                    )
            except ConnectError as error:  # overtaken by a timeout's auto-play
                assert error.code in (Code.FAILED_PRECONDITION, Code.ABORTED), error
    return views


async def test_four_browsers_play_a_whole_game_over_connect_and_grpc_web(
    cluster: ProcessCluster,
) -> None:
    """S1-S2 through the web edge: two seats speak Connect, two gRPC-Web; every view passes
    the same checks as on the gRPC door, and no seat ever sees another's hand."""
    protocols = [ProtocolType.CONNECT, ProtocolType.GRPC_WEB] * 2
    clients = [client(cluster, protocol) for protocol in protocols]
    table_id, seats = await seat_four(clients)
    tasks = [
        asyncio.create_task(
            play_seat(clients[s], table_id, s, seats[s].seat_token, random.Random(s))
        )
        for s in range(4)
    ]
    host = bearer(seats[0].seat_token)

    async def all_watching() -> bool:
        view = (
            await clients[0].get_table_view(
                gateway_pb2.GetTableViewRequest(table_id=table_id), headers=host
            )
        ).view
        return all(seat.connected for seat in view.seats)

    await wait_for(all_watching, timeout=10)
    await clients[0].start_game(
        gateway_pb2.StartGameRequest(table_id=table_id, request_id=request_id()), headers=host
    )
    results = await asyncio.wait_for(asyncio.gather(*tasks), timeout=120)
    for seat, views in enumerate(results):
        assert views[-1].phase == game_pb2.PHASE_FINISHED
        assert max(views[-1].score_team_a, views[-1].score_team_b) >= TARGET
        # What a seat saw of hands is its own hand only (R17: hidden information).
        hands = [tiles_shown(v)["hand"] for v in views if v.phase == PLAYING]
        assert hands and all(len(hand) <= 7 for hand in hands), seat
    first_round_hands = [next(v.hand for v in views if v.hand) for views in results]
    dealt = [{(t.low, t.high) for t in hand} for hand in first_round_hands]
    assert all(a.isdisjoint(b) for i, a in enumerate(dealt) for b in dealt[i + 1 :])


@pytest.mark.parametrize("protocol", [ProtocolType.CONNECT, ProtocolType.GRPC_WEB])
async def test_refusals_carry_the_same_status_and_reason_as_on_the_grpc_door(
    cluster: ProcessCluster, protocol: ProtocolType
) -> None:
    web = client(cluster, protocol)
    with pytest.raises(ConnectError) as unknown:
        await web.join_table(
            gateway_pb2.JoinTableRequest(
                request_id=request_id(), invitation_code="ZZZZZZZZZZ", player_name="Eve"
            )
        )
    assert unknown.value.code == Code.NOT_FOUND
    assert error_info(unknown.value).reason == "CODE_NOT_FOUND"

    with pytest.raises(ConnectError) as missing:
        await web.start_game(gateway_pb2.StartGameRequest(table_id="t", request_id=request_id()))
    assert missing.value.code == Code.UNAUTHENTICATED
    assert error_info(missing.value).reason == "TOKEN_MISSING"

    with pytest.raises(ConnectError) as malformed:
        await web.create_table(gateway_pb2.CreateTableRequest(request_id="short", host_name="Eve"))
    assert malformed.value.code == Code.INVALID_ARGUMENT
    assert error_info(malformed.value).reason == "REQUEST_ID_MALFORMED"


async def test_a_request_over_64_kib_is_refused_before_the_servicer(
    cluster: ProcessCluster,
) -> None:
    web = DominosServiceClient(cluster.web_url, send_compression=None, timeout_ms=10_000)
    with pytest.raises(ConnectError) as refused:
        await web.create_table(
            gateway_pb2.CreateTableRequest(request_id=request_id(), host_name="x" * 70_000)
        )
    assert refused.value.code == Code.RESOURCE_EXHAUSTED


async def test_web_calls_count_in_the_same_rpc_metrics_and_by_protocol(
    cluster: ProcessCluster,
) -> None:
    web = client(cluster, ProtocolType.GRPC_WEB)
    before = cluster.gateways[0].scrape()
    with pytest.raises(ConnectError):
        await web.join_table(
            gateway_pb2.JoinTableRequest(
                request_id=request_id(), invitation_code="ZZZZZZZZZZ", player_name="Eve"
            )
        )
    after = cluster.gateways[0].scrape()
    handled = (
        'dominos_grpc_server_handled_total{grpc_code="NOT_FOUND",'
        'grpc_method="JoinTable",grpc_service="dominos.v1.DominosService",grpc_type="unary"}'
    )
    web_calls = 'dominos_gateway_web_calls_total{grpc_method="JoinTable",protocol="grpc_web"}'
    assert sample(after, handled) == sample(before, handled) + 1
    assert sample(after, web_calls) == sample(before, web_calls) + 1


def sample(page: str, series: str) -> float:
    for line in page.splitlines():
        if line.startswith(series + " "):
            return float(line.rsplit(" ", 1)[1])
    return 0.0


async def test_a_closed_web_stream_marks_the_seat_away_for_the_others(
    cluster: ProcessCluster,
) -> None:
    """S3: a browser tab that goes away is a disconnected seat, as a gRPC client's is."""
    clients = [client(cluster) for _ in range(4)]
    table_id, seats = await seat_four(clients)
    host = bearer(seats[0].seat_token)

    async def connected(seat: int) -> bool:
        view = (
            await clients[0].get_table_view(
                gateway_pb2.GetTableViewRequest(table_id=table_id), headers=host
            )
        ).view
        return bool(view.seats[seat].connected)

    stream = clients[1].watch_table(
        gateway_pb2.WatchTableRequest(table_id=table_id),
        headers=bearer(seats[1].seat_token),
        timeout_ms=None,
    )
    first = await anext(stream)
    assert first.view.your_seat == 1
    await wait_for(lambda: connected(1), timeout=10)
    await stream.aclose()
    await clients[1].close()

    async def away() -> bool:
        return not await connected(1)

    await wait_for(away, timeout=10)


def fetch(url: str, method: str = "GET") -> tuple[int, dict[str, str], bytes]:
    request = urllib.request.Request(url, method=method)
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()


def test_the_web_client_is_served_with_a_strict_content_security_policy(
    cluster: ProcessCluster,
) -> None:
    status, headers, body = fetch(cluster.web_url + "/")
    assert status == 200 and b"<title>Dominos</title>" in body
    assert "connect-src 'self'" in headers["content-security-policy"]
    assert "frame-ancestors 'none'" in headers["content-security-policy"]
    assert headers["x-content-type-options"] == "nosniff"
    assert headers["cache-control"] == "no-cache"
    status, headers, _ = fetch(cluster.web_url + "/assets/app-1234.js")
    assert status == 200 and "immutable" in headers["cache-control"]


@pytest.mark.parametrize(
    "path", ["/../../../etc/passwd", "/%2e%2e/%2e%2e/etc/passwd", "/assets/../../secret", "/nope"]
)
def test_no_file_outside_the_web_root_is_served(cluster: ProcessCluster, path: str) -> None:
    status, _, body = fetch(cluster.web_url + path)
    assert status == 404, body
    assert b"root:" not in body


def test_files_answer_get_only_and_health_says_serving(cluster: ProcessCluster) -> None:
    status, headers, _ = fetch(cluster.web_url + "/", method="POST")
    assert status == 405 and headers["allow"] == "GET, HEAD"
    status, _, body = fetch(cluster.web_url + "/healthz")
    assert (status, body) == (200, b"ok\n")


def test_an_unknown_method_of_the_api_is_not_found(cluster: ProcessCluster) -> None:
    status, _, _ = fetch(cluster.web_url + "/dominos.v1.DominosService/DropTable", "POST")
    assert status == 404


async def open_stream(web: Any, table_id: str, token: str, forwarded_for: str) -> Any:
    """A view stream whose request claims to come from ``forwarded_for``; its first message
    (or the refusal)."""
    stream = web.watch_table(
        gateway_pb2.WatchTableRequest(table_id=table_id),
        headers={**bearer(token), "x-forwarded-for": forwarded_for},
        timeout_ms=None,
    )
    return stream, await anext(stream)


@pytest.mark.parametrize("trusted", [False, True])
async def test_forwarded_for_counts_only_from_a_trusted_proxy(
    cluster: ProcessCluster, trusted: bool
) -> None:
    """A browser cannot dodge the per-address caps by naming another address: the gateway
    believes ``X-Forwarded-For`` only from DOMINOS_WEB_TRUSTED_PROXIES (the Ingress)."""
    gateway = cluster.add(
        "gateway",
        {
            "DOMINOS_STREAMS_PER_ADDRESS": "1",
            "DOMINOS_WEB_TRUSTED_PROXIES": "127.0.0.1" if trusted else "",
        },
    )
    try:
        clients = [DominosServiceClient(gateway.web_url, timeout_ms=10_000) for _ in range(4)]
        table_id, seats = await seat_four(clients)
        first, _ = await open_stream(clients[0], table_id, seats[0].seat_token, "203.0.113.1")
        try:
            if trusted:
                second, message = await open_stream(
                    clients[1], table_id, seats[1].seat_token, "203.0.113.2"
                )
                assert message.view.your_seat == 1
                await second.aclose()
            else:
                with pytest.raises(ConnectError) as refused:
                    await open_stream(clients[1], table_id, seats[1].seat_token, "203.0.113.2")
                assert refused.value.code == Code.RESOURCE_EXHAUSTED
                info = error_info(refused.value)
                assert (info.reason, info.metadata["limit"]) == (
                    "RATE_LIMITED",
                    "streams_per_address",
                )
        finally:
            await first.aclose()
    finally:
        gateway.stop()
        cluster.replicas.remove(gateway)


def test_other_origins_may_call_only_when_allowed(cluster: ProcessCluster) -> None:
    """CORS: a page of another origin gets no permission unless the gateway lists it."""
    gateway = cluster.add("gateway", {"DOMINOS_WEB_ALLOWED_ORIGINS": "https://play.example"})
    try:
        for origin, allowed in (("https://play.example", True), ("https://evil.example", False)):
            request = urllib.request.Request(
                gateway.web_url + "/dominos.v1.DominosService/GetServerInfo",
                method="OPTIONS",
                headers={
                    "Origin": origin,
                    "Access-Control-Request-Method": "POST",
                    "Access-Control-Request-Headers": "authorization,content-type",
                },
            )
            try:
                with urllib.request.urlopen(request, timeout=5) as response:
                    headers = dict(response.headers)
            except urllib.error.HTTPError as error:
                headers = dict(error.headers)
            assert (headers.get("access-control-allow-origin") == origin) is allowed
    finally:
        gateway.stop()
        cluster.replicas.remove(gateway)


async def test_a_draining_gateway_ends_web_streams_unavailable_and_exits_cleanly(
    cluster: ProcessCluster,
) -> None:
    """SIGTERM: /healthz turns 503, open web streams end UNAVAILABLE at once (the client
    reconnects elsewhere), the process exits 0 within its grace."""
    gateway = cluster.add("gateway", {"DOMINOS_SHUTDOWN_DRAIN_SECONDS": "1"})
    cluster.replicas.remove(gateway)
    web = DominosServiceClient(gateway.web_url, timeout_ms=10_000)
    table_id, seats = await seat_four([web] * 4)
    stream, _ = await open_stream(web, table_id, seats[0].seat_token, "")
    assert gateway.process is not None
    gateway.process.send_signal(signal.SIGTERM)
    with pytest.raises(ConnectError) as ended:
        async for _ in stream:
            pass
    assert ended.value.code == Code.UNAVAILABLE
    assert error_info(ended.value).reason == "UNAVAILABLE"
    assert await asyncio.to_thread(gateway.stop) == 0
