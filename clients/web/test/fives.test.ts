// All fives (seed 002) in the web client: the spinner layout, the ends total, the end
// chooser's points, scores at once, rounding, the game won by a play, both languages.
import { describe, expect, it } from "vitest";
import { create } from "@bufbuild/protobuf";
import { ActionKind, End, Phase, RoundOutcome, RoundSummarySchema } from "../src/gen/dominos/v1/game_pb";
import { endsTotal, layoutSpinner, type Placed } from "../src/chain";
import {
  EMPTY_HISTORY,
  bestPoints,
  chainState,
  clickAction,
  endChoices,
  endedByPlay,
  endedByPlayLine,
  endsModel,
  handItems,
  nextHistory,
  openEnds,
  roundLines,
  roundSummary,
  scoredLine,
} from "../src/model";
import { isFives, presetInfo, presetLine, rulesLines } from "../src/rules";
import {
  endChoiceText,
  endWord,
  endedByPlayText,
  endsLine,
  moveText,
  roundingText,
  scoredText,
} from "../src/texts";
import { drawView, fivesView } from "./fixtures";

const tile = (left: number, right: number, seat = 0): Placed => ({ left, right, seat });

describe("the ends total (seed 002)", () => {
  it("counts an opener that is not a double both halves, a double spinner both halves once", () => {
    expect(endsTotal([], null, [], [])).toBe(0);
    expect(endsTotal([tile(2, 3)], null, [], [])).toBe(5);
    expect(endsTotal([tile(5, 5)], 0, [], [])).toBe(10);
    // 5-5 then 5-0 on its right: the spinner still counts (its left side is open): 10 + 0.
    expect(endsTotal([tile(5, 5), tile(5, 0)], 0, [], [])).toBe(10);
    // A line before any double: each end's open half.
    expect(endsTotal([tile(1, 3), tile(3, 4)], null, [], [])).toBe(5);
  });

  it("stops counting the spinner once both long sides are covered; an arm counts its tip, a double both halves", () => {
    const line = [tile(4, 5), tile(5, 5), tile(5, 2)];
    expect(endsTotal(line, 1, [], [])).toBe(6);
    expect(endsTotal(line, 1, [tile(5, 1)], [])).toBe(7);
    expect(endsTotal(line, 1, [tile(5, 1), tile(1, 1)], [tile(5, 3)])).toBe(4 + 2 + 2 + 3);
    expect(endsTotal([tile(3, 3), ...line], 2, [], [])).toBe(6 + 2);
  });

  it("reads the view's layout", () => {
    const model = endsModel(fivesView(), "fr")!;
    expect(model.total).toBe(7);
    expect(model.ends).toEqual([
      { end: "left", number: 4 },
      { end: "right", number: 2 },
      { end: "up", number: 1 },
      { end: "down", number: 5 },
    ]);
    expect(model.text).toBe("Bouts : gauche 4 · droite 2 · haut 1 · bas 5 — total 7");
    expect(endsModel(fivesView(), "en")!.text).toBe("Ends: left 4 · right 2 · top 1 · bottom 5 — total 7");
    expect(endsModel(drawView(), "fr")).toBeNull();
    expect(endsModel(fivesView({ chain: [], spinnerIndex: undefined, upArm: [], openEnds: [] }), "fr")).toBeNull();
  });
});

describe("the spinner layout", () => {
  it("puts the line in one row with the spinner, the upper side outermost first, the lower from the spinner", () => {
    const line = [tile(4, 5), tile(5, 5), tile(5, 2), tile(2, 6), tile(6, 1)];
    const layout = layoutSpinner(line, 1, [tile(5, 1), tile(1, 3)], [tile(5, 6)], { arm: "up", index: null });
    expect(layout.line.map((c) => c.index)).toEqual([0, 1, 2, 3, 4]);
    expect(layout.spinner).toBe(1);
    expect(layout.units).toBe(2 + 1 + 2 + 2 + 2);
    expect(layout.up.map((c) => [c.inner, c.outer])).toEqual([[1, 3], [5, 1]]);
    expect(layout.up.map((c) => c.newest)).toEqual([true, false]);
    expect(layout.down.map((c) => [c.inner, c.outer, c.newest])).toEqual([[5, 6, false]]);
    expect(layout.line.some((c) => c.newest)).toBe(false);
    const onLine = layoutSpinner(line, 1, [], [], { arm: "line", index: 4 });
    expect(onLine.line.map((c) => c.newest)).toEqual([false, false, false, false, true]);
  });

  it("marks the newest tile on an arm from the last action, and keeps it across a presence view", () => {
    const state = chainState(fivesView(), null);
    expect(state.spinner).toBe(1);
    expect(state.newestArm).toBe("up");
    expect(state.newest).toBeNull();
    expect(state.up).toEqual([tile(5, 1, 0)]);
    const presence = fivesView({ version: 11n, lastAction: { kind: ActionKind.PRESENCE, seat: 1, connected: false } });
    expect(chainState(presence, state).newestArm).toBe("up");
    const left = fivesView({
      version: 12n,
      chain: [{ left: 2, right: 4, seat: 0 }, ...fivesView().chain],
      spinnerIndex: 2,
      lastAction: { kind: ActionKind.PLAYED, seat: 0, move: { tile: { low: 2, high: 4 }, end: End.LEFT }, points: 5 },
    });
    const after = chainState(left, state);
    expect([after.newestArm, after.newest, after.spinner]).toEqual(["line", 0, 2]);
  });
});

describe("the hand and the end chooser under all fives", () => {
  it("lists up to four ends per tile with their points, the best one on the tile", () => {
    const items = handItems(fivesView());
    expect(items.map((i) => i.ends)).toEqual([["left", "up"], ["left", "right"], ["down"], []]);
    expect(items.map(bestPoints)).toEqual([10, 5, 10, 0]);
    expect(clickAction(items[2]!)).toEqual({ kind: "play", end: "down" });
    expect(clickAction(items[0]!)).toEqual({ kind: "choose" });
    expect(endChoices(fivesView(), items[0]!)).toEqual([
      { end: "left", number: 4, points: 0 },
      { end: "up", number: 1, points: 10 },
    ]);
    expect(endChoices(fivesView(), items[1]!).map((c) => c.points)).toEqual([5, 0]);
    expect(openEnds(fivesView()).map((e) => e.end)).toEqual(["left", "right", "up", "down"]);
  });

  it("says each placement's points in both languages; other rule sets show no points", () => {
    expect(endChoiceText("right", 3, 10, "fr")).toBe("À droite (sur le 3) · +10");
    expect(endChoiceText("up", 1, 10, "fr")).toBe("En haut (sur le 1) · +10");
    expect(endChoiceText("down", 5, 0, "fr")).toBe("En bas (sur le 5) · +0");
    expect(endChoiceText("up", 1, 10, "en")).toBe("At the top (on the 1) · +10");
    expect(endChoiceText("left", 6, null, "en")).toBe("On the left (on the 6)");
    const draw = drawView();
    const both = handItems(draw).find((i) => i.ends.length === 2)!;
    expect(endChoices(draw, both)).toEqual([
      { end: "left", number: 6, points: null },
      { end: "right", number: 3, points: null },
    ]);
    expect(["left", "right", "up", "down"].map((e) => endWord(e as "left", "fr"))).toEqual(["gauche", "droite", "haut", "bas"]);
    expect(endsLine([{ word: "gauche", number: 5 }, { word: "droite", number: 5 }], 10, "fr")).toBe(
      "Bouts : gauche 5 · droite 5 — total 10 (multiple de 5)",
    );
    expect(endsLine([{ word: "left", number: 5 }, { word: "right", number: 5 }], 10, "en")).toBe(
      "Ends: left 5 · right 5 — total 10 (a multiple of 5)",
    );
  });
});

describe("points scored at once", () => {
  const scored = fivesView({
    version: 12n,
    lastAction: { kind: ActionKind.PLAYED, seat: 1, move: { tile: { low: 3, high: 5 }, end: End.DOWN }, points: 10 },
  });

  it("tells « Ana marque 10 » and logs the play with its points", () => {
    expect(scoredText("Ana", 10, "fr")).toBe("Ana marque 10");
    expect(scoredText("Ana", 10, "en")).toBe("Ana scores 10");
    expect(scoredLine(scored, "fr")).toBe("Ben marque 10");
    expect(scoredLine(scored, "en")).toBe("Ben scores 10");
    expect(scoredLine(fivesView(), "fr")).toBeNull();
    const history = nextHistory(EMPTY_HISTORY, scored);
    expect(history.moves.map((m) => m.text.fr)).toEqual(["Ben a posé trois-cinq en bas : Ben marque 10"]);
    expect(history.moves.map((m) => m.text.en)).toEqual(["Ben laid three-five at the bottom: Ben scores 10"]);
    expect(moveText({ kind: "played", name: "Ana", low: 1, high: 4, end: "up", auto: "", points: 0 }, "fr")).toBe(
      "Ana a posé un-quatre en haut",
    );
    expect(moveText({ kind: "played", name: "Ana", low: 2, high: 4, end: "left", auto: "timeout", points: 5 }, "en")).toBe(
      "Ana laid two-four on the left (time out: played by the table): Ana scores 5",
    );
  });

  it("ends the game by a play: the winner's play told, no round summary", () => {
    const over = fivesView({
      version: 30n,
      phase: Phase.FINISHED,
      turnSeat: undefined,
      legalMoves: [],
      sideScores: [55, 35],
      winnerSide: 0,
      lastAction: { kind: ActionKind.PLAYED, seat: 0, move: { tile: { low: 1, high: 4 }, end: End.UP }, points: 10 },
    });
    expect(endedByPlay(over)).toEqual({ name: "Ana", points: 10, target: 100, score: 55 });
    expect(endedByPlayLine(over, "fr")).toBe(
      "Ana marque 10 et atteint l'objectif de 100 points : la partie s'arrête aussitôt, sans finir la manche.",
    );
    expect(endedByPlayLine(over, "en")).toBe(
      "Ana scores 10 and reaches the 100 points target: the game ends at once, the round unfinished.",
    );
    expect(endedByPlayText("Ben", 15, 50, "fr")).toContain("Ben marque 15");
    expect(roundSummary(over, "fr")).toEqual([]);
    // A game ended by a round (a summary) is not ended by a play.
    const summary = create(RoundSummarySchema, { roundNumber: 1, outcome: RoundOutcome.DOMINO, points: 10, scoringSide: 0, dominoSeat: 0 });
    expect(endedByPlay(fivesView({ phase: Phase.FINISHED, lastRound: summary }))).toBeNull();
  });
});

describe("round summaries with rounding", () => {
  it("gives the rounded points and the points before rounding, both languages", () => {
    expect(roundingText(12, 10, "fr")).toBe("Tous les 5 : 12 points arrondis au multiple de 5 le plus proche, 10.");
    expect(roundingText(13, 15, "en")).toBe("All fives: 13 points rounded to the nearest multiple of 5, 15.");
    expect(roundingText(15, 15, "fr")).toBe("Tous les 5 : 15 points, déjà un multiple de 5.");
    const summary = create(RoundSummarySchema, {
      roundNumber: 2,
      outcome: RoundOutcome.DOMINO,
      points: 10,
      unroundedPoints: 12,
      scoringSide: 0,
      dominoSeat: 0,
      hands: [{ seat: 1, tiles: [{ low: 6, high: 6 }], points: 12 }],
      sidePips: [0, 12],
    });
    const view = fivesView({ phase: Phase.ROUND_OVER, turnSeat: undefined, lastRound: summary, sideScores: [30, 35] });
    const fr = roundSummary(view, "fr");
    expect(fr[0]).toBe("Manche 2 : domino ! Ana a posé son dernier domino.");
    expect(fr[1]).toBe("Ana marque 10 points : ce qui reste dans les autres mains (Ben 12).");
    expect(fr[2]).toBe("Tous les 5 : 12 points arrondis au multiple de 5 le plus proche, 10.");
    expect(roundSummary(view, "en")[2]).toBe("All fives: 12 points rounded to the nearest multiple of 5, 10.");
    const history = nextHistory(EMPTY_HISTORY, view);
    expect(roundLines(history, view, "fr")).toEqual(["Manche 2 · Ana +10 → Ana 30 · Ben 35"]);
    // Nobody scores a level blocked round: nothing to round.
    const tie = create(RoundSummarySchema, { roundNumber: 3, outcome: RoundOutcome.BLOCKED_TIE, points: 0, sidePips: [5, 5] });
    const lines = roundSummary(fivesView({ phase: Phase.ROUND_OVER, lastRound: tie }), "fr");
    expect(lines.some((l) => l.startsWith("Tous les 5"))).toBe(false);
    // Other rule sets never mention rounding.
    const drawSummary = create(RoundSummarySchema, { ...summary, unroundedPoints: 0 });
    expect(roundSummary(drawView({ phase: Phase.ROUND_OVER, lastRound: drawSummary }), "fr").some((l) => l.includes("arrondi"))).toBe(false);
  });
});

describe("the all-fives rule set", () => {
  it("is offered and said in words in both languages", () => {
    expect(presetInfo("web_fives").playable).toBe(true);
    expect(presetLine("web_fives", "fr")).toContain("pivot");
    expect(presetLine("web_fives", "en")).toContain("spinner");
    const r = fivesView().rules!;
    expect(isFives(fivesView())).toBe(true);
    expect(isFives(drawView())).toBe(false);
    expect(rulesLines(r, "fr").join(" ")).toContain("arrondis au multiple de 5 le plus proche");
    expect(rulesLines(r, "en").join(" ")).toContain("ends the game at once");
    expect(rulesLines(drawView().rules!, "fr").join(" ")).not.toContain("pivot");
  });
});
