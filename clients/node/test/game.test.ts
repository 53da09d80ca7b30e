// (1) A complete game finishes and the four final views agree; (3) no seat's stream ever
// shows more than that seat may see (S6).

import assert from "node:assert/strict";
import { before, describe, it } from "node:test";

import { has, type TableView, tileText } from "../src/client.js";
import { type GameResult, playGame, scoreLine } from "../src/game.js";
import { GATEWAY } from "./helpers.js";

// Against `make run` (10 s between rounds) a game to 50 takes up to a minute or two; against the
// test cluster of tests/clients (0.2 s breaks), a few seconds.
const GAME_TIMEOUT_MS = Number(process.env["DOMINOS_GAME_TIMEOUT_MS"] || 150_000);

describe("a complete game", { timeout: GAME_TIMEOUT_MS + 10_000 }, () => {
  const streams: TableView[][] = [[], [], [], []];
  let result: GameResult;

  before(async () => {
    result = await playGame({
      address: GATEWAY,
      target: 50,
      timeoutMs: GAME_TIMEOUT_MS,
      onView: (seat, view) => streams[seat]!.push(view),
    });
    const final = result.finals[0]!;
    // Read by tests/clients/test_node_client.py.
    console.log(
      `game finished: ${scoreLine(final)}; ${result.rounds} rounds, version ${final.version}, ` +
        `${result.elapsedMs.toFixed(0)} ms (finished_at_ms=${Date.now()})`,
    );
  });

  it("ends with every seat's stream on the same FINISHED view", () => {
    const [first, ...others] = result.finals;
    assert.equal(first!.phase, "PHASE_FINISHED");
    assert.ok(first!.winner === "TEAM_A" || first!.winner === "TEAM_B", `winner ${first!.winner}`);
    const winning = first!.winner === "TEAM_A" ? first!.score_team_a : first!.score_team_b;
    assert.ok(winning >= 50, `the winner has ${winning} points, the target is 50`);
    for (const view of others) {
      assert.equal(view.phase, "PHASE_FINISHED");
      assert.equal(view.version, first!.version);
      assert.equal(view.score_team_a, first!.score_team_a);
      assert.equal(view.score_team_b, first!.score_team_b);
      assert.equal(view.winner, first!.winner);
    }
    assert.ok(
      result.actions.every((n) => n > 0),
      `actions per seat: ${result.actions}`,
    );
  });

  it("delivers each stream's views in increasing version order", () => {
    for (const views of streams) {
      for (let i = 1; i < views.length; i++) {
        assert.ok(
          views[i]!.version > views[i - 1]!.version,
          `version ${views[i]!.version} after ${views[i - 1]!.version}`,
        );
      }
    }
  });

  it("never shows a seat more than its own hand and the public chain", () => {
    const hands = new Map<number, Map<number, string[]>>(); // version -> seat -> hand
    streams.forEach((views, seat) => {
      assert.ok(views.length > 0, `seat ${seat} received views`);
      for (const view of views) {
        assert.equal(
          view.your_seat,
          seat,
          `a view of seat ${seat} says your_seat ${view.your_seat}`,
        );
        assert.ok(
          view.hand.length <= 7,
          `seat ${seat} holds ${view.hand.length} tiles at v${view.version}`,
        );
        const own = view.seats[seat]!;
        if (view.phase === "PHASE_PLAYING") {
          assert.equal(view.hand.length, own.tile_count, "the hand matches the public tile count");
          assert.equal(view.last_round, null, "no revealed hands while a round is live");
          assert.ok(has(view.turn_seat), "turn_seat is set in PHASE_PLAYING");
        }
        if (!(has(view.turn_seat) && view.turn_seat === seat)) {
          assert.equal(view.legal_moves.length, 0, "no legal moves out of turn");
          assert.equal(view.can_pass, false);
        }
        const chain = new Set(
          view.chain.map((t) =>
            tileText({ low: Math.min(t.left, t.right), high: Math.max(t.left, t.right) }),
          ),
        );
        for (const tile of view.hand) {
          assert.ok(
            !chain.has(tileText(tile)),
            `seat ${seat} holds ${tileText(tile)}, which lies in the chain`,
          );
        }
        for (const move of view.legal_moves) {
          assert.ok(
            view.hand.some((t) => tileText(t) === tileText(move.tile)),
            "a legal move's tile is in the hand",
          );
        }
        if (view.phase === "PHASE_PLAYING") {
          const byVersion = hands.get(view.version) ?? new Map<number, string[]>();
          byVersion.set(seat, view.hand.map(tileText));
          hands.set(view.version, byVersion);
        }
      }
    });
    // The hands the four seats see at one version never overlap, and with the chain they
    // make the 28 tiles (nothing hidden is shown twice, nothing public is missing).
    let complete = 0;
    for (const [version, bySeat] of hands) {
      const all = [...bySeat.values()].flat();
      assert.equal(new Set(all).size, all.length, `hands overlap at v${version}`);
      if (bySeat.size === 4) {
        complete++;
        const view = streams[0]!.find((v) => v.version === version)!;
        assert.equal(all.length + view.chain.length, 28, `hands and chain at v${version}`);
      }
    }
    assert.ok(complete > 0, "some version was seen by all four seats");
  });
});
