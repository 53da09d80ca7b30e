"""The browser client (``clients/web``, issue 18 items 4-5) in a real browser: Debian's
Chromium driven by Playwright, against a real cluster whose gateway serves the built client
(``clients/web/dist``) and the API over Connect on its web port.

Four browser contexts (four players, each with its own storage) go through the whole product
by clicking: the host creates a table, the three others join with the invitation code shown
in the lobby, the host sets the target to 50 and starts, and the four play the game to its
end, legal tiles only (a tile that fits both ends is laid on the end picked in the end
chooser; Pass when the page offers it). One player reloads the page mid-round and must be
back in its seat with the same hand, then plays on. All four must reach the game-over screen.

No page may ever receive a tile it should not see (S6): an init script tees every response
of the API the page receives (the raw Connect bytes, streams included) and the test decodes
them with the Python stubs and checks each view as the other end-to-end tests do
(:func:`testing.players.check_view`), hands of different seats never overlap at one version,
and every hand the page showed (its DOM) is exactly the hand its seat received.

A third test plays a two-seat ``web_fives`` game (seed 002's all fives, target 50): the
spinner drawn in yellow with its short sides as columns, the open ends and their total shown,
the end chooser giving each placement's points (the test picks the best), a play that scores
told « Ana marque 10 » with the ends total equal to those points, the moves logged with their
points, every view checked for hidden tiles (no other hand, no stock tile), and the game's end
told (by a play reaching the target, or by a round summary with its rounding).

A second test plays a three-seat ``web_draw`` game (each for themselves, a stock, target 50)
the same way: the host picks the rule set on the start screen, the lobby says it in words and
waits for three; on the table a seat that cannot play clicks Draw (at least once in the game),
the others read « Ben a pioché 1 domino », never which; every view is checked to show no tile
of another seat and none of the stock, and the winner is a seat.

Screenshots of the table mid-round (``web-table.png``: the player to act; ``web-table-host.png``)
are saved under ``$DOMINOS_ARTEFACTS`` (default: the temporary directory)/``dominos-web``;
``DOMINOS_UPDATE_SCREENSHOTS=1`` also copies the first to ``docs/screenshots/web-table.png``.
``make test`` builds the client first (``make web-client``); Chromium comes from Debian
(``make chromium``), never from a download.
"""

from __future__ import annotations

import base64
import itertools
import json
import os
import shutil
import struct
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from dominos.v1 import game_pb2, gateway_pb2
from google.protobuf import unknown_fields
from google.protobuf.message import Message
from playwright.sync_api import Browser, Page, expect, sync_playwright

from testing.cluster import ProcessCluster, clock_env
from testing.players import check_view, tile_key, tiles_shown

ROOT = Path(__file__).resolve().parents[2]
DIST = ROOT / "clients" / "web" / "dist"
CHROMIUM = Path("/usr/bin/chromium")
SCREENSHOT = ROOT / "docs" / "screenshots" / "web-table.png"
TARGET = 50
#: Long enough that the table never plays for a seat the test is about to click for.
TURN_S = 20.0
CLOCKS = clock_env(turn_s=TURN_S, away_s=5, break_s=0.5)
NAMES = ("Ana", "Ben", "Émile", "Dev")
#: Auto-waiting bound of one step (a click answered, a view arriving).
STEP_MS = 10_000
#: Moves in round 1 before the reload, and before the screenshot.
RELOAD_AFTER = 5
SCREENSHOT_AFTER = 9
#: A game to 50 is a few rounds of at most 28 moves; anything longer is a stuck client.
MAX_MOVES = 400
SERVICE = "/dominos.v1.DominosService/"

#: Tees every API response the page receives, bytes as they arrive, into window.__wire.
WIRE_TAP = """
(() => {
  const wire = [];
  Object.defineProperty(window, "__wire", { value: wire });
  const original = window.fetch.bind(window);
  const toBase64 = (bytes) => {
    let text = "";
    for (let i = 0; i < bytes.length; i++) text += String.fromCharCode(bytes[i]);
    return btoa(text);
  };
  window.fetch = async (input, init) => {
    const response = await original(input, init);
    const url = typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
    if (!url.includes("/dominos.v1.DominosService/") || response.body === null) return response;
    const [mine, theirs] = response.body.tee();
    const entry = {
      url, status: response.status,
      type: response.headers.get("content-type") || "", chunks: [],
    };
    wire.push(entry);
    (async () => {
      const reader = mine.getReader();
      for (;;) {
        const { done, value } = await reader.read().catch(() => ({ done: true }));
        if (done) break;
        entry.chunks.push(toBase64(value));
      }
    })();
    return new Response(theirs, {
      status: response.status, statusText: response.statusText, headers: response.headers,
    });
  };
})();
"""

#: The state of a page's table: "over", or "turn:<seat>:<version>" once a round is in play.
TABLE_STATE = """
() => {
  const app = document.getElementById("app");
  if (app.dataset.screen === "over") return "over";
  const table = document.querySelector("main.table");
  if (table === null || table.dataset.phase !== "PLAYING" || table.dataset.turnSeat === "")
    return false;
  return `turn:${table.dataset.turnSeat}:${table.dataset.version}`;
}
"""

#: The hand as the page draws it: [low, high] per tile.
HAND = """
() => [...document.querySelectorAll("#hand button.tile")].map((el) => [
  Number(el.dataset.low), Number(el.dataset.high),
])
"""

#: The chain as the page draws it: each tile's halves in order, and which are marked newest.
CHAIN = """
() => [...document.querySelectorAll("#chain .domino")].map((el) => [
  Number(el.dataset.left), Number(el.dataset.right), el.dataset.newest === "true",
  el.classList.contains("double"),
])
"""

UNARY: dict[str, Any] = {
    "CreateTable": gateway_pb2.CreateTableResponse,
    "JoinTable": gateway_pb2.JoinTableResponse,
    "SetTarget": gateway_pb2.SetTargetResponse,
    "StartGame": gateway_pb2.StartGameResponse,
    "PlayTile": gateway_pb2.PlayTileResponse,
    "Pass": gateway_pb2.PassResponse,
    "DrawTile": gateway_pb2.DrawTileResponse,
    "GetTableView": gateway_pb2.GetTableViewResponse,
}


@dataclass
class Browsing:
    """One player: a browser context of its own, its page, what it received and showed."""

    name: str
    page: Page
    seat: int = -1
    reloaded: bool = False
    wire: list[dict[str, Any]] = field(default_factory=list)
    #: (version, hand) as the page's DOM showed it when the player acted.
    shown: list[tuple[int, frozenset[tuple[int, int]]]] = field(default_factory=list)

    def collect_wire(self) -> None:
        """Keeps what the page received so far (a reload starts a new window)."""
        self.wire.extend(self.page.evaluate("() => JSON.parse(JSON.stringify(window.__wire))"))

    def hand(self) -> frozenset[tuple[int, int]]:
        """The tiles the page shows in its hand (one round trip)."""
        tiles = self.page.evaluate(HAND)
        assert len(tiles) == len(set(map(tuple, tiles))), tiles
        return frozenset(tile_key(low, high) for low, high in tiles)


def decode_views(entry: dict[str, Any]) -> list[game_pb2.TableView]:
    """The views in one captured response: a unary answer's, or each message of a stream
    (Connect envelopes: flags, big-endian length, message; an end-of-stream frame is JSON)."""
    if entry["status"] != 200:
        return []
    data = b"".join(base64.b64decode(chunk) for chunk in entry["chunks"])
    method = entry["url"].rsplit("/", 1)[-1]
    if method == "WatchTable":
        assert entry["type"].startswith("application/connect+proto"), entry["type"]
        views, offset = [], 0
        while offset + 5 <= len(data):
            flags, length = struct.unpack(">BI", data[offset : offset + 5])
            payload = data[offset + 5 : offset + 5 + length]
            if len(payload) < length:
                break  # the stream was cut by a reload
            offset += 5 + length
            if flags & 0x02 == 0:
                views.append(gateway_pb2.WatchTableResponse.FromString(payload).view)
        return views
    if method not in UNARY:
        return []
    assert entry["type"].startswith("application/proto"), entry["type"]
    message = UNARY[method].FromString(data)
    return [message.view] if message.HasField("view") else []


@pytest.fixture(scope="module")
def cluster() -> Iterator[ProcessCluster]:
    if not (DIST / "index.html").is_file():
        pytest.fail(
            "clients/web/dist is not built: `make web-client` (make test does it first)",
            pytrace=False,
        )
    started = ProcessCluster.start(
        env={**CLOCKS, "DOMINOS_WEB_ROOT": str(DIST), "DOMINOS_LOG_LEVEL": "info"}
    )
    try:
        yield started
    finally:
        started.stop()


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    if not CHROMIUM.is_file():
        pytest.fail(f"{CHROMIUM} is missing: `make chromium` installs Debian's package")
    with sync_playwright() as driver:
        launched = driver.chromium.launch(executable_path=str(CHROMIUM), headless=True)
        try:
            yield launched
        finally:
            launched.close()


def artefacts() -> Path:
    folder = Path(os.environ.get("DOMINOS_ARTEFACTS") or tempfile.gettempdir()) / "dominos-web"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def open_page(browser: Browser, url: str) -> Page:
    """A player's own browser context (own storage), its API responses tapped, on ``url``."""
    context = browser.new_context(viewport={"width": 1280, "height": 860}, locale="fr-FR")
    context.set_default_timeout(STEP_MS)
    context.add_init_script(WIRE_TAP)
    page = context.new_page()
    page.goto(url)
    return page


def open_players(browser: Browser, url: str) -> list[Browsing]:
    players = []
    for name in NAMES:
        page = open_page(browser, url)
        expect(page.locator("#app")).to_have_attribute("data-screen", "start")
        players.append(Browsing(name, page))
    return players


def seat_everyone(players: list[Browsing]) -> str:
    """The host creates, the others join with the code shown in its lobby; returns the code."""
    host = players[0].page
    host.fill("#name", players[0].name)
    host.click("#create")
    expect(host.locator("#app")).to_have_attribute("data-screen", "lobby")
    code = host.locator("#code").get_attribute("data-code") or ""
    shown = host.locator("#code").inner_text()
    assert len(code) == 10, code
    assert shown == f"{code[:5]}-{code[5:]}", shown
    # Not four yet: the start button is there, disabled, and the lobby says why.
    expect(host.locator("#start")).to_be_disabled()
    expect(host.locator("#lobby-message")).to_contain_text("1 sur 4")
    # A wrong code is refused in words (the reason decoded from the Connect error's details).
    players[1].page.fill("#name", players[1].name)
    players[1].page.fill("#code-input", "ABCDE-FGHJK")
    players[1].page.click("#join")
    expect(players[1].page.locator("#notice")).to_have_text(
        "Aucune table n'a ce code d'invitation. Vérifiez-le."
    )
    # The last player plays in English.
    players[3].page.click("#lang")
    expect(players[3].page.locator("#app")).to_have_attribute("data-lang", "en")
    for player in players[1:]:
        player.page.fill("#name", player.name)
        player.page.fill("#code-input", shown.lower())  # typed as read out, any case
        player.page.click("#join")
        expect(player.page.locator("#app")).to_have_attribute("data-screen", "lobby")
        expect(player.page.locator("#start")).to_have_count(0)  # only the host starts
    expect(players[3].page.locator("#lobby-message")).to_have_text(
        "Ana will start the game once four are seated."
    )
    # The last one leaves (the seat is freed and forgotten), then joins again.
    leaver = players[3].page
    leaver.click("#leave")
    expect(leaver.locator("#app")).to_have_attribute("data-screen", "start")
    expect(host.locator("#lobby-message")).to_contain_text("3 sur 4")
    expect(host.locator("#start")).to_be_disabled()
    assert code not in json.loads(
        leaver.evaluate("() => localStorage.getItem('dominos.seats.v1')") or "{}"
    )
    leaver.fill("#name", players[3].name)
    leaver.fill("#code-input", code)
    leaver.click("#join")
    expect(leaver.locator("#app")).to_have_attribute("data-screen", "lobby")
    for seat, player in enumerate(players):
        expect(player.page.locator("main.lobby")).to_have_attribute("data-your-seat", str(seat))
        player.seat = seat
        # The seat is kept for a reload: code -> table, seat, token, name.
        saved = json.loads(
            player.page.evaluate("() => localStorage.getItem('dominos.seats.v1')") or "{}"
        )
        assert saved[code]["seat"] == seat and saved[code]["name"] == player.name
    expect(host.locator("#start")).to_be_enabled()
    host.select_option("#target", str(TARGET))
    for player in players:
        expect(player.page.locator("#target")).to_have_value(str(TARGET))
    host.click("#start")
    return code


def check_chain(player: Browsing) -> None:
    """The drawn chain is a chain (R8): neighbours touch on equal halves, doubles stand
    across, one tile is marked newest (a page reloaded mid-round knows it again only once
    the next tile is laid)."""
    cells = player.page.evaluate(CHAIN)
    for (_, right, _, _), (left, _, _, _) in itertools.pairwise(cells):
        assert right == left, cells
    assert all(double == (a == b) for a, b, _, double in cells), cells
    newest = sum(1 for *_, marked, _ in cells if marked)
    assert newest == (1 if cells and not player.reloaded else newest) <= 1, cells


#: The page shows version ``v`` (or newer) on its own turn, no command under way.
READY = """
v => {
  const app = document.getElementById("app");
  const table = document.querySelector("main.table");
  return table !== null && Number(table.dataset.version) >= v
    && app.dataset.myTurn === "true" && app.dataset.busy === "false";
}
"""

#: Everything act() checks before clicking, in one round trip (a slow CPU pays per call).
TURN_PAGE = """
() => {
  const app = document.getElementById("app");
  const banner = document.querySelector(".your-turn-banner");
  const tiles = [...document.querySelectorAll("#hand button.tile")];
  const pass = document.querySelector("#pass");
  return {
    myTurn: app.dataset.myTurn === "true",
    banner: banner !== null && banner.getClientRects().length > 0,
    title: document.title,
    hand: tiles.map((el) => [Number(el.dataset.low), Number(el.dataset.high)]),
    legal: tiles.filter((el) => el.dataset.legal === "true").length,
    disabled: tiles.filter((el) => el.disabled).length,
    pass: pass !== null && !pass.disabled,
  };
}
"""


def act(player: Browsing, version: int, end_toggle: list[int]) -> None:
    """Plays one legal move on the player's page by clicking, and waits for its answer."""
    page = player.page
    # The page may still show an older version (its stream lags): wait for this one.
    page.wait_for_function(READY, arg=version)
    shown = page.evaluate(TURN_PAGE)
    assert shown["myTurn"] and shown["banner"], shown  # the turn is signalled
    assert shown["title"].startswith("●"), shown["title"]
    hand = shown["hand"]
    assert len(hand) == len(set(map(tuple, hand))), hand
    player.shown.append((version, frozenset(tile_key(low, high) for low, high in hand)))
    check_chain(player)
    # Illegal tiles are not clickable.
    assert len(hand) - shown["legal"] == shown["disabled"], shown
    if shown["pass"]:
        assert shown["legal"] == 0
        page.click("#pass")
    else:
        assert shown["legal"] > 0
        page.locator("#hand button.tile[data-legal='true']").first.click()
        if page.locator("#end-choice").count() > 0:
            end_toggle[0] += 1
            page.click(f"#end-choice [data-end='{'left' if end_toggle[0] % 2 else 'right'}']")
    page.wait_for_function(
        "v => Number(document.querySelector('[data-version]')?.dataset.version ?? 0) > v",
        arg=version,
    )


def reload_and_check(player: Browsing) -> None:
    """Reloads the page mid-round: the player must be back in its seat with its hand."""
    page = player.page
    before = player.hand()
    assert len(before) > 0
    player.collect_wire()
    player.reloaded = True
    page.reload()
    table = page.locator("main.table")
    expect(table).to_have_attribute("data-your-seat", str(player.seat))
    expect(page.locator("#hand button.tile")).to_have_count(len(before))
    assert player.hand() == before
    expect(page.locator(f".seat[data-seat='{player.seat}']")).to_have_attribute(
        "data-connected", "true"
    )


def play_to_the_end(players: list[Browsing], toggle: list[int]) -> int:
    """Clicks through the whole game; returns the number of moves."""
    by_seat = {p.seat: p for p in players}
    # Whose turn it is is read from the page that acted last (its view is the newest).
    watcher = players[0].page
    moves = 0
    reloaded = False
    while moves < MAX_MOVES:
        state = str(watcher.wait_for_function(TABLE_STATE, timeout=STEP_MS).json_value())
        if state == "over":
            return moves
        _, seat_text, version_text = state.split(":")
        seat, version = int(seat_text), int(version_text)
        player = by_seat[seat]
        if not reloaded and moves == RELOAD_AFTER:
            # Someone who is not to play reloads: the seat must not be played for meanwhile.
            reload_and_check(by_seat[(seat + 1) % 4])
            reloaded = True
        if moves == SCREENSHOT_AFTER:
            # The player to act (its turn signalled) and the host.
            expect(player.page.locator("#app")).to_have_attribute("data-my-turn", "true")
            player.page.screenshot(path=str(artefacts() / "web-table.png"))
            players[0].page.screenshot(path=str(artefacts() / "web-table-host.png"))
        act(player, version, toggle)
        moves += 1
        watcher = player.page
    raise AssertionError(f"no end after {MAX_MOVES} moves")


def check_wire(players: list[Browsing]) -> int:
    """Every view every page received is one its seat may see; returns how many."""
    hands_at: dict[int, dict[int, frozenset[tuple[int, int]]]] = {}
    total = 0
    for player in players:
        views = [v for entry in player.wire for v in decode_views(entry)]
        assert len(views) >= 20, f"{player.name}: only {len(views)} views captured"
        for view in views:
            assert view.your_seat == player.seat
            if view.phase == game_pb2.PHASE_WAITING:
                assert not view.hand and not view.legal_moves
                continue
            check_view(view, player.seat, TARGET, int(TURN_S * 1000))
            if view.phase == game_pb2.PHASE_PLAYING:
                hand = frozenset(tile_key(t.low, t.high) for t in view.hand)
                hands_at.setdefault(view.version, {})[player.seat] = hand
        total += len(views)
        received = {v.version: frozenset(tile_key(t.low, t.high) for t in v.hand) for v in views}
        for version, shown in player.shown:
            assert received.get(version) == shown, (player.name, version, shown)
    seen_together = 0
    for version, hands in hands_at.items():
        seats = sorted(hands)
        for i, a in enumerate(seats):
            for b in seats[i + 1 :]:
                assert not hands[a] & hands[b], (version, a, b)
        seen_together += len(seats) > 1
    assert seen_together > 0
    return total


def test_four_browsers_play_a_game(
    cluster: ProcessCluster, browser: Browser, capsys: pytest.CaptureFixture[str]
) -> None:
    started = time.monotonic()
    players = open_players(browser, cluster.web_url + "/")
    try:
        code = seat_everyone(players)
        toggle = [0]
        moves = play_to_the_end(players, toggle)
        for player in players:
            page = player.page
            expect(page.locator("#app")).to_have_attribute("data-screen", "over")
            expect(page.locator("#winner")).to_be_visible()
            winner = page.locator("main.over").get_attribute("data-winner")
            assert winner in ("A", "B")
            won = (player.seat % 2 == 0) == (winner == "A")
            english = player is players[3]
            expect(page.locator("#winner")).to_contain_text(
                ("Well done" if won else "Better luck")
                if english
                else ("Bravo" if won else "la prochaine fois")
            )
            # The last round's summary and the rounds played with their scores.
            expect(page.locator(".last-round").first).to_contain_text(
                "Round" if english else "Manche"
            )
            expect(page.locator("#rounds li").first).to_be_visible()
            if player is players[0]:
                page.screenshot(path=str(artefacts() / "web-game-over.png"))
            # A finished game is forgotten: nothing to come back to.
            saved = page.evaluate("() => localStorage.getItem('dominos.seats.v1')")
            assert saved is None or code not in json.loads(saved)
            player.collect_wire()
        received = check_wire(players)
    finally:
        for player in players:
            player.page.context.close()
    shot = artefacts() / "web-table.png"
    assert shot.is_file()
    if os.environ.get("DOMINOS_UPDATE_SCREENSHOTS") == "1":
        SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(shot, SCREENSHOT)
    with capsys.disabled():
        print(
            f"\nweb client: {moves} moves clicked in four browsers ({toggle[0]} with the end "
            f"chooser), {received} views checked, "
            f"{time.monotonic() - started:.1f} s; screenshots in {shot.parent}"
        )


# -- a rule set with a stock: three seats, each for themselves ------------------------------

DRAW_NAMES = ("Ana", "Ben", "Chloé")
DRAW_SEATS = 3
#: The lowest target web_draw allows (docs/rules.md, Rule sets): a short game.
DRAW_TARGET = 50
SET_SIZE = 28

#: What the page to act offers, in one round trip.
OFFER = """
() => ({
  draw: document.querySelector("#draw:not([disabled])") !== null,
  pass: document.querySelector("#pass:not([disabled])") !== null,
  legal: document.querySelectorAll("#hand button.tile[data-legal='true']").length,
  hand: [...document.querySelectorAll("#hand button.tile")].map((el) => [
    Number(el.dataset.low), Number(el.dataset.high),
  ]),
  stock: Number(document.querySelector("#stock")?.dataset.stock ?? -1),
})
"""


def fully_decoded(message: Message) -> None:
    """No byte of ``message`` (nested messages included) was left undecoded: nothing a newer
    contract could hide from this check."""
    assert len(unknown_fields.UnknownFieldSet(message)) == 0, message
    for descriptor, value in message.ListFields():
        if descriptor.message_type is None:
            continue
        values = value if descriptor.is_repeated else [value]
        for item in values:
            fully_decoded(item)


def check_draw_view(view: game_pb2.TableView, seat: int) -> None:
    """What a seat of a three-seat web_draw table may see: its own hand, the chain, counts."""
    fully_decoded(view)
    assert view.your_seat == seat
    assert view.rules.preset == game_pb2.PRESET_WEB_DRAW and view.rules.seats == DRAW_SEATS
    assert not view.rules.teams and view.rules.draw and view.rules.hand_size == 5
    assert view.target == DRAW_TARGET
    assert len(view.seats) == DRAW_SEATS and len(view.side_scores) == DRAW_SEATS
    assert view.score_team_a == view.score_team_b == 0
    assert [s.side for s in view.seats] == list(range(DRAW_SEATS))
    assert [s.score for s in view.seats] == list(view.side_scores)
    assert not view.up_arm and not view.down_arm
    shown = tiles_shown(view)
    assert shown["moves"] <= shown["hand"] and shown["action"] <= shown["chain"]
    assert not shown["hand"] & shown["chain"]
    if view.last_action.kind == game_pb2.ACTION_KIND_DREW:
        assert view.last_action.drawn >= 1 and not view.last_action.HasField("move")
    if view.phase == game_pb2.PHASE_PLAYING:
        assert not view.HasField("last_round") and shown["summary"] == set()
        assert view.seats[seat].tile_count == len(view.hand)
        assert sum(s.tile_count for s in view.seats) + len(view.chain) + view.stock_size == SET_SIZE
        mine = view.turn_seat == seat
        stuck = mine and not view.legal_moves
        assert view.can_draw == (stuck and view.stock_size > 0)
        assert view.can_pass == (stuck and view.stock_size == 0)
        if not mine:
            assert not view.legal_moves
    if view.phase in (game_pb2.PHASE_ROUND_OVER, game_pb2.PHASE_FINISHED):
        # The hands are revealed (D1), never the stock.
        assert not shown["summary"] & shown["chain"]
        assert len(shown["summary"]) + len(view.chain) + view.stock_size == SET_SIZE
        assert len(view.last_round.side_pips) == DRAW_SEATS
    if view.phase == game_pb2.PHASE_FINISHED:
        assert view.HasField("winner_side") and view.side_scores[view.winner_side] >= DRAW_TARGET


def check_draw_wire(players: list[Browsing]) -> int:
    """Every view every page received passes check_draw_view; hands of different seats never
    share a tile at one version; the hands the pages showed are the ones received."""
    hands_at: dict[int, dict[int, frozenset[tuple[int, int]]]] = {}
    total = 0
    for player in players:
        views = [v for entry in player.wire for v in decode_views(entry)]
        assert len(views) >= 20, f"{player.name}: only {len(views)} views captured"
        for view in views:
            check_draw_view(view, player.seat)
            if view.phase == game_pb2.PHASE_PLAYING:
                hand = frozenset(tile_key(t.low, t.high) for t in view.hand)
                hands_at.setdefault(view.version, {})[player.seat] = hand
        total += len(views)
        received = {v.version: frozenset(tile_key(t.low, t.high) for t in v.hand) for v in views}
        for version, shown in player.shown:
            assert received.get(version) == shown, (player.name, version, shown)
    for version, hands in hands_at.items():
        seats = sorted(hands)
        for i, a in enumerate(seats):
            for b in seats[i + 1 :]:
                assert not hands[a] & hands[b], (version, a, b)
    return total


def seat_three(browser: Browser, url: str) -> list[Browsing]:
    """Three players; the host picks web_draw at three seats, target 50; the others join."""
    players = []
    for name in DRAW_NAMES:
        page = open_page(browser, url)
        players.append(Browsing(name, page))
    host = players[0].page
    expect(host.locator("#app")).to_have_attribute("data-screen", "start")
    host.fill("#name", players[0].name)
    # Classic is the default: no seat, tile or turn choice to make.
    expect(host.locator("#preset")).to_have_value("classic")
    expect(host.locator("#seats")).to_have_count(0)
    expect(host.locator("#preset option[value='web_fives']")).to_be_enabled()
    host.select_option("#preset", "web_draw")
    expect(host.locator("#preset-line")).to_contain_text("avec pioche")
    host.select_option("#seats", "3")
    expect(host.locator("#hand-size")).to_have_count(0)  # five each at three: no choice
    expect(host.locator("#turn")).to_have_count(0)  # the operator's turn time
    host.select_option("#start-target", str(DRAW_TARGET))
    expect(host.locator("#name")).to_have_value(players[0].name)  # kept across redraws
    host.click("#create")
    expect(host.locator("#app")).to_have_attribute("data-screen", "lobby")
    expect(host.locator("#rules")).to_contain_text("Pioche : 3 joueurs, chacun pour soi")
    expect(host.locator("#rules")).to_contain_text("Les 13 autres dominos forment la pioche")
    expect(host.locator(".lobby-seats li")).to_have_count(DRAW_SEATS)
    expect(host.locator("#target")).to_have_value(str(DRAW_TARGET))
    expect(host.locator("#start")).to_be_disabled()
    expect(host.locator("#lobby-message")).to_contain_text("Il faut trois joueurs")
    expect(host.locator("#lobby-message")).to_contain_text("1 sur 3")
    code = host.locator("#code").get_attribute("data-code") or ""
    for index, player in enumerate(players[1:], start=1):
        player.page.fill("#name", player.name)
        player.page.fill("#code-input", code)
        player.page.click("#join")
        expect(player.page.locator("main.lobby")).to_have_attribute("data-your-seat", str(index))
        if index == 1:
            expect(host.locator("#lobby-message")).to_contain_text("2 sur 3")
            expect(host.locator("#start")).to_be_disabled()
    for seat, player in enumerate(players):
        player.seat = seat
    expect(players[2].page.locator("#lobby-message")).to_have_text(
        "Ana lancera la partie quand vous serez trois."
    )
    expect(host.locator("#start")).to_be_enabled()
    host.click("#start")
    return players


def draw_act(player: Browsing, version: int, others: list[Browsing], seen: dict[str, int]) -> None:
    """One click of the player to act: Draw when offered, else Pass when offered, else the
    first legal tile (the left end when it fits both)."""
    page = player.page
    page.wait_for_function(READY, arg=version)
    offer = page.evaluate(OFFER)
    player.shown.append((version, frozenset(tile_key(low, high) for low, high in offer["hand"])))
    assert offer["stock"] >= 0  # the stock is shown
    if offer["draw"]:
        assert offer["legal"] == 0 and not offer["pass"] and offer["stock"] > 0
        page.click("#draw")
        seen["draws"] += 1
        if seen["draws"] == 1:
            # The others read how many, never which.
            line = f"{player.name} a pioché 1 domino"
            for other in others:
                expect(other.page.locator("#moves li").last).to_have_text(line)
            expect(page.locator("#stock")).to_have_attribute("data-stock", str(offer["stock"] - 1))
    elif offer["pass"]:
        assert offer["legal"] == 0 and offer["stock"] == 0
        page.click("#pass")
        seen["passes"] += 1
    else:
        assert offer["legal"] > 0
        page.locator("#hand button.tile[data-legal='true']").first.click()
        if page.locator("#end-choice").count() > 0:
            page.click("#end-choice [data-end='left']")
    page.wait_for_function(
        "v => Number(document.querySelector('[data-version]')?.dataset.version ?? 0) > v",
        arg=version,
    )


def test_three_browsers_play_a_draw_game(
    cluster: ProcessCluster, browser: Browser, capsys: pytest.CaptureFixture[str]
) -> None:
    started = time.monotonic()
    players = seat_three(browser, cluster.web_url + "/")
    seen = {"draws": 0, "passes": 0}
    try:
        by_seat = {p.seat: p for p in players}
        watcher = players[0].page
        # Three seats: the next on your right, the other on your left; nobody across.
        table = watcher.locator("main.table")
        expect(table).to_have_attribute("data-your-seat", "0")
        expect(watcher.locator(".seat[data-position='right']")).to_have_attribute("data-seat", "1")
        expect(watcher.locator(".seat[data-position='left']")).to_have_attribute("data-seat", "2")
        expect(watcher.locator(".seat[data-position='top']")).to_have_count(0)
        expect(watcher.locator("#score-seat-2")).to_have_text("Chloé : 0")
        moves = 0
        while moves < MAX_MOVES:
            state = str(watcher.wait_for_function(TABLE_STATE, timeout=STEP_MS).json_value())
            if state == "over":
                break
            _, seat_text, version_text = state.split(":")
            player = by_seat[int(seat_text)]
            if moves == SCREENSHOT_AFTER:
                player.page.screenshot(path=str(artefacts() / "web-table-draw.png"))
            draw_act(player, int(version_text), [p for p in players if p is not player], seen)
            moves += 1
            watcher = player.page
        else:
            raise AssertionError(f"no end after {MAX_MOVES} moves")
        assert seen["draws"] >= 1, "nobody had to draw in a whole game"
        for player in players:
            page = player.page
            expect(page.locator("#app")).to_have_attribute("data-screen", "over")
            over = page.locator("main.over")
            side = int(over.get_attribute("data-winner-side") or "-1")
            assert side in range(DRAW_SEATS)
            won = side == player.seat
            expect(over).to_have_attribute("data-you-won", str(won).lower())
            expect(page.locator("#winner")).to_contain_text(f"{DRAW_NAMES[side]} gagne avec")
            expect(page.locator("#winner")).to_contain_text("Bravo" if won else "la prochaine fois")
            expect(page.locator(".last-round").first).to_contain_text("Manche")
            expect(page.locator("#rounds li").first).to_contain_text("→ Ana")
            player.collect_wire()
        players[0].page.screenshot(path=str(artefacts() / "web-game-over-draw.png"))
        received = check_draw_wire(players)
    finally:
        for player in players:
            player.page.context.close()
    with capsys.disabled():
        print(
            f"\nweb client, web_draw at three: {moves} clicks ({seen['draws']} draws, "
            f"{seen['passes']} passes), {received} views checked, "
            f"{time.monotonic() - started:.1f} s"
        )


# -- all fives (seed 002) ----------------------------------------------------------------------

FIVES_NAMES = ("Ana", "Ben")
FIVES_SEATS = 2
FIVES_TARGET = 50
SHORT_SIDES = (game_pb2.END_UP, game_pb2.END_DOWN)

#: The layout as the page draws it: the line's tiles, each arm's tiles top to bottom, the
#: spinner (its halves and its colour), the ends line, the scored line.
FIVES_PAGE = """
() => {
  const cells = (sel) => [...document.querySelectorAll(sel)].map((el) => ({
    left: Number(el.dataset.left ?? el.dataset.inner),
    right: Number(el.dataset.right ?? el.dataset.outer),
    newest: el.dataset.newest === "true", spinner: el.dataset.spinner === "true",
  }));
  const spinner = document.querySelector("#chain .domino[data-spinner='true']");
  const ends = document.querySelector("#ends");
  const scored = document.querySelector("#scored");
  const layout = document.querySelector("#chain .spinner-layout");
  return {
    line: cells("#chain .domino[data-arm='line']"),
    up: cells("#chain .arm-tile[data-arm='up']"),
    down: cells("#chain .arm-tile[data-arm='down']"),
    spinnerIndex: layout === null ? null : Number(layout.dataset.spinnerIndex),
    spinnerColour: spinner === null ? null : getComputedStyle(spinner).backgroundColor,
    total: ends === null ? null : Number(ends.dataset.total),
    endsText: ends === null ? null : ends.textContent,
    scored: scored === null ? null : scored.textContent,
  };
}
"""

#: The end chooser's buttons: end, points, text.
CHOOSER = """
() => [...document.querySelectorAll("#end-choice button[data-end]")]
  .filter((el) => el.dataset.end !== "cancel")
  .map((el) => ({ end: el.dataset.end, points: Number(el.dataset.points), text: el.textContent }))
"""


def check_fives_layout(page: Page, reloaded: bool = False) -> dict[str, Any]:
    """The drawn layout is a spinner layout: the line touches on equal halves, the spinner
    is the one yellow double in it, each short side starts on the spinner's number and its
    tiles touch outward; at most one tile marked newest. Returns what the page showed."""
    shown = page.evaluate(FIVES_PAGE)
    line, up, down = shown["line"], shown["up"], shown["down"]
    for a, b in itertools.pairwise(line):
        assert a["right"] == b["left"], line
    if shown["spinnerIndex"] is None:
        assert not up and not down and not any(c["spinner"] for c in line)
    else:
        spinner = line[shown["spinnerIndex"]]
        assert spinner["spinner"] and spinner["left"] == spinner["right"], line
        assert sum(c["spinner"] for c in line) == 1
        assert shown["spinnerColour"] == "rgb(247, 214, 74)", shown["spinnerColour"]
        # The upper side is drawn outermost first: read it from the spinner outward.
        for arm in (list(reversed(up)), down):
            previous = spinner["left"]
            for cell in arm:
                assert cell["left"] == previous, (arm, spinner)
                previous = cell["right"]
    marked = sum(c["newest"] for c in line + up + down)
    assert marked <= 1 and (reloaded or not line or marked == 1), shown
    if line:
        assert shown["endsText"] is not None and shown["endsText"].startswith("Bouts : ")
        assert f"total {shown['total']}" in shown["endsText"]
    return shown


def check_fives_view(view: game_pb2.TableView, seat: int) -> None:
    """What a seat of a two-seat web_fives table may see: its own hand, the layout, counts;
    never the other hand or a stock tile while a round is live."""
    fully_decoded(view)
    assert view.your_seat == seat
    assert view.rules.preset == game_pb2.PRESET_WEB_FIVES and view.rules.seats == FIVES_SEATS
    assert view.rules.scoring == game_pb2.SCORING_ALL_FIVES and view.rules.draw
    assert not view.rules.teams and view.rules.hand_size == 7
    assert view.target == FIVES_TARGET
    assert len(view.seats) == FIVES_SEATS and len(view.side_scores) == FIVES_SEATS
    shown = tiles_shown(view)
    arms = {tile_key(p.left, p.right) for p in (*view.up_arm, *view.down_arm)}
    laid = shown["chain"] | arms
    assert len(laid) == len(view.chain) + len(view.up_arm) + len(view.down_arm)
    assert shown["moves"] <= shown["hand"] and shown["action"] <= laid
    assert not shown["hand"] & laid
    if view.up_arm or view.down_arm:
        assert view.HasField("spinner_index")
    if view.phase == game_pb2.PHASE_PLAYING:
        assert not view.HasField("last_round") and shown["summary"] == set()
        assert view.seats[seat].tile_count == len(view.hand)
        on_table = len(view.chain) + len(view.up_arm) + len(view.down_arm)
        assert sum(s.tile_count for s in view.seats) + on_table + view.stock_size == SET_SIZE
        mine = view.turn_seat == seat
        if not mine:
            assert not view.legal_moves
        assert all(m.points % 5 == 0 for m in view.legal_moves)
    if view.phase == game_pb2.PHASE_ROUND_OVER:
        on_table = len(view.chain) + len(view.up_arm) + len(view.down_arm)
        assert len(shown["summary"]) + on_table + view.stock_size == SET_SIZE
        assert view.last_round.points % 5 == 0
    if view.phase == game_pb2.PHASE_FINISHED:
        assert view.HasField("winner_side") and view.side_scores[view.winner_side] >= FIVES_TARGET


def check_fives_wire(players: list[Browsing]) -> dict[str, int]:
    """Every view every page received passes check_fives_view; the two hands never share a
    tile at one version; the hands the pages showed are the ones received."""
    hands_at: dict[int, dict[int, frozenset[tuple[int, int]]]] = {}
    counts = {"views": 0, "scoring_plays": 0, "short_side_plays": 0}
    for player in players:
        views = [v for entry in player.wire for v in decode_views(entry)]
        assert len(views) >= 10, f"{player.name}: only {len(views)} views captured"
        for view in views:
            check_fives_view(view, player.seat)
            action = view.last_action
            if action.kind == game_pb2.ACTION_KIND_PLAYED and player.seat == 0:
                counts["scoring_plays"] += action.points > 0
                counts["short_side_plays"] += action.move.end in SHORT_SIDES
            if view.phase == game_pb2.PHASE_PLAYING:
                hand = frozenset(tile_key(t.low, t.high) for t in view.hand)
                hands_at.setdefault(view.version, {})[player.seat] = hand
        counts["views"] += len(views)
        received = {v.version: frozenset(tile_key(t.low, t.high) for t in v.hand) for v in views}
        for version, shown in player.shown:
            assert received.get(version) == shown, (player.name, version, shown)
    for version, hands in hands_at.items():
        if len(hands) == FIVES_SEATS:
            assert not hands[0] & hands[1], version
    return counts


def seat_two_fives(browser: Browser, url: str) -> list[Browsing]:
    """Two players; the host picks web_fives at two seats, target 50; the other joins."""
    players = []
    for name in FIVES_NAMES:
        page = open_page(browser, url)
        players.append(Browsing(name, page))
    host = players[0].page
    host.fill("#name", players[0].name)
    expect(host.locator("#preset option[value='web_fives']")).to_have_text("Tous les 5")
    host.select_option("#preset", "web_fives")
    expect(host.locator("#preset-line")).to_contain_text("pivot")
    host.select_option("#seats", "2")
    host.select_option("#start-target", str(FIVES_TARGET))
    host.click("#create")
    expect(host.locator("#app")).to_have_attribute("data-screen", "lobby")
    expect(host.locator("#rules")).to_contain_text("Tous les 5 : 2 joueurs, chacun pour soi")
    expect(host.locator("#rules")).to_contain_text("arrondis au multiple de 5 le plus proche")
    code = host.locator("#code").get_attribute("data-code") or ""
    guest = players[1].page
    guest.fill("#name", players[1].name)
    guest.fill("#code-input", code)
    guest.click("#join")
    expect(guest.locator("main.lobby")).to_have_attribute("data-your-seat", "1")
    for seat, player in enumerate(players):
        player.seat = seat
    expect(host.locator("#start")).to_be_enabled()
    host.click("#start")
    return players


def fives_act(player: Browsing, version: int, seen: dict[str, int]) -> None:
    """One click of the player to act: Draw or Pass when offered, else the first legal tile
    on its best end (the chooser shows every placement's points). After a play that scored,
    the page says « <name> marque N » and its ends total is N."""
    page = player.page
    page.wait_for_function(READY, arg=version)
    offer = page.evaluate(OFFER)
    player.shown.append((version, frozenset(tile_key(low, high) for low, high in offer["hand"])))
    check_fives_layout(page, player.reloaded)
    played = False
    if offer["draw"]:
        page.click("#draw")
        seen["draws"] += 1
    elif offer["pass"]:
        page.click("#pass")
        seen["passes"] += 1
    else:
        assert offer["legal"] > 0
        page.locator("#hand button.tile[data-legal='true']").first.click()
        played = True
        if page.locator("#end-choice").count() > 0:
            choices = page.evaluate(CHOOSER)
            assert len(choices) >= 2, choices
            for choice in choices:
                assert choice["text"].endswith(f"+{choice['points']}"), choice
            best = max(choices, key=lambda c: c["points"])
            seen["chooser"] += 1
            seen["chooser_points"] += best["points"] > 0
            page.click(f"#end-choice [data-end='{best['end']}']")
    page.wait_for_function(
        "v => Number(document.querySelector('[data-version]')?.dataset.version ?? 0) > v",
        arg=version,
    )
    if played and page.locator("main.table[data-phase='PLAYING']").count() > 0:
        shown = check_fives_layout(page)
        if shown["scored"] is not None and shown["scored"].startswith(player.name):
            points = int(shown["scored"].rsplit(" ", 1)[1])
            assert shown["scored"] == f"{player.name} marque {points}"
            assert shown["total"] == points, shown
            last_move = page.locator("#moves li").last
            expect(last_move).to_contain_text(f": {player.name} marque {points}")
            seen["scored"] += 1


def test_two_browsers_play_an_all_fives_game(
    cluster: ProcessCluster, browser: Browser, capsys: pytest.CaptureFixture[str]
) -> None:
    started = time.monotonic()
    players = seat_two_fives(browser, cluster.web_url + "/")
    seen = dict.fromkeys(("draws", "passes", "chooser", "chooser_points", "scored"), 0)
    try:
        by_seat = {p.seat: p for p in players}
        watcher = players[0].page
        expect(watcher.locator(".seat[data-position='top']")).to_have_attribute("data-seat", "1")
        moves = 0
        while moves < MAX_MOVES:
            state = str(watcher.wait_for_function(TABLE_STATE, timeout=STEP_MS).json_value())
            if state == "over":
                break
            _, seat_text, version_text = state.split(":")
            player = by_seat[int(seat_text)]
            if moves == SCREENSHOT_AFTER:
                player.page.screenshot(path=str(artefacts() / "web-table-fives.png"))
            fives_act(player, int(version_text), seen)
            moves += 1
            watcher = player.page
        else:
            raise AssertionError(f"no end after {MAX_MOVES} moves")
        for player in players:
            page = player.page
            expect(page.locator("#app")).to_have_attribute("data-screen", "over")
            over = page.locator("main.over")
            side = int(over.get_attribute("data-winner-side") or "-1")
            assert side in range(FIVES_SEATS)
            expect(page.locator("#winner")).to_contain_text(f"{FIVES_NAMES[side]} gagne avec")
            # The end is told: by the play that reached the target, or by the round's summary.
            if page.locator("#ended-by-play").count() > 0:
                expect(page.locator("#ended-by-play")).to_contain_text(
                    f"{FIVES_NAMES[side]} marque"
                )
                told = page.locator("#ended-by-play")
                expect(told).to_contain_text("la partie s'arrête aussitôt")
                seen["by_play"] = 1
            else:
                expect(page.locator(".last-round").first).to_contain_text("Manche")
            player.collect_wire()
        players[0].page.screenshot(path=str(artefacts() / "web-game-over-fives.png"))
        counts = check_fives_wire(players)
    finally:
        for player in players:
            player.page.context.close()
    assert seen["scored"] >= 1 or counts["scoring_plays"] >= 1, (seen, counts)
    with capsys.disabled():
        print(
            f"\nweb client, web_fives at two: {moves} clicks ({seen['draws']} draws, "
            f"{seen['passes']} passes, {seen['chooser']} end choices, {seen['scored']} plays "
            f"scored and checked), {counts['views']} views checked, "
            f"{time.monotonic() - started:.1f} s"
        )
