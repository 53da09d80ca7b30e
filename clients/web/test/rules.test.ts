import { describe, expect, it } from "vitest";
import { create } from "@bufbuild/protobuf";
import {
  ActionKind,
  AutoPlayCause,
  BlockedScore,
  BlockedTie,
  DominoScore,
  Phase,
  Preset,
  RoundOutcome,
  RoundSummarySchema,
  RuleSetSchema,
  Team,
} from "../src/gen/dominos/v1/game_pb";
import {
  PRESETS,
  defaultPick,
  handChoices,
  lobbyTargets,
  normalisePick,
  presetLine,
  presetName,
  ruleChoiceOf,
  rulesLines,
  seatChoices,
  targetChoices,
  teamChoices,
  presetInfo,
} from "../src/rules";
import {
  EMPTY_HISTORY,
  handHint,
  lobbyModel,
  nextHistory,
  positionOf,
  roundLines,
  roundSummary,
  scoreLines,
  seatModels,
  stockText,
  winnerSeat,
  winnerTeam,
} from "../src/model";
import { moveText, roundScoreLine, winnerSeatText } from "../src/texts";
import { drawView, playingView } from "./fixtures";

describe("the presets offered", () => {
  it("lists every preset with a name and a line in both languages, classic first, every one playable (all fives included)", () => {
    expect(PRESETS[0]!.name).toBe("classic");
    expect(PRESETS.map((p) => p.name)).toEqual(["classic", "family_draw", "web_draw", "web_block", "web_fives", "app", "site"]);
    expect(PRESETS.filter((p) => !p.playable).map((p) => p.name)).toEqual([]);
    for (const p of PRESETS) {
      for (const lang of ["fr", "en"] as const) {
        expect(presetName(p.name, lang)).not.toBe("");
        expect(presetLine(p.name, lang)).toMatch(/\.$/);
        expect(presetLine(p.name, lang)).not.toMatch(/\b[RDS]\d+\b|_/);
      }
    }
    expect(presetName("family_draw", "fr")).toBe("Pioche en famille");
  });

  it("offers only the layouts of docs/rules.md's table", () => {
    const p = presetInfo;
    expect(seatChoices(p("classic"))).toEqual([4]);
    expect(seatChoices(p("family_draw"))).toEqual([2, 3, 4]);
    expect(handChoices(p("web_draw"), 2)).toEqual([7]);
    expect(handChoices(p("web_draw"), 3)).toEqual([5]);
    expect(handChoices(p("web_block"), 3)).toEqual([7]);
    expect(handChoices(p("app"), 3)).toEqual([5, 7]);
    expect(teamChoices(p("app"), 4, 5)).toEqual([true]);
    expect(teamChoices(p("app"), 2, 5)).toEqual([false]);
    expect(teamChoices(p("site"), 4, 7)).toEqual([true, false]);
    expect(targetChoices(p("family_draw"))).toEqual([100]);
    expect(targetChoices(p("app"))).toEqual([50, 100, 150]);
    expect(targetChoices(p("site"))).toEqual([50, 100, 150, 200, 250, 300]);
    expect(targetChoices(p("web_draw"))).toHaveLength(10);
    expect(p("site").turnChoices!.every((s) => s >= 15 && s <= 120)).toBe(true);
    expect(p("classic").turnChoices).toBeNull();
  });

  it("keeps classic's request as before rule sets and spells out the others", () => {
    expect(ruleChoiceOf(defaultPick("classic"))).toBeUndefined();
    expect(defaultPick("classic").target).toBe(100);
    const pick = normalisePick({ ...defaultPick("web_draw"), seats: 3, target: 50 });
    expect(pick).toMatchObject({ seats: 3, handSize: 5, teams: false, target: 50 });
    expect(ruleChoiceOf(pick)).toEqual({ preset: Preset.WEB_DRAW, seats: 3, handSize: 5, turnSeconds: 0 });
    const site = normalisePick({ ...defaultPick("site"), teams: false, turnSeconds: 90 });
    expect(ruleChoiceOf(site)).toEqual({ preset: Preset.SITE, seats: 4, handSize: 7, turnSeconds: 90, teams: false });
    // A choice no longer offered falls back to one that is.
    const app = normalisePick({ ...defaultPick("app"), seats: 2, handSize: 5, teams: true, target: 500 });
    expect(app).toMatchObject({ seats: 2, handSize: 5, teams: false, target: 100 });
    expect(normalisePick({ ...defaultPick("family_draw"), seats: 2 }).handSize).toBe(7);
  });

  it("says a table's rule set in words", () => {
    const rules = drawView().rules!;
    const fr = rulesLines(rules, "fr");
    expect(fr[0]).toBe("Pioche : 3 joueurs, chacun pour soi, 5 dominos chacun.");
    expect(fr[1]).toContain("Les 13 autres dominos forment la pioche");
    expect(fr.join(" ")).toContain("le total des autres moins le sien");
    expect(fr.join(" ")).toContain("personne ne marque");
    const en = rulesLines(create(RuleSetSchema, { ...rules, preset: Preset.WEB_BLOCK, draw: false, handSize: 7 }), "en");
    expect(en[0]).toBe("Block game: 3 players, each for themselves, 7 tiles each.");
    expect(en[1]).toBe("No stock (7 tiles set aside): who cannot play passes.");
  });
});

describe("a table of three, each for themselves", () => {
  it("seats the next on your right and the other on your left; two face each other", () => {
    expect([0, 1, 2].map((s) => positionOf(s, 0, 3))).toEqual(["bottom", "right", "left"]);
    expect([0, 1, 2].map((s) => positionOf(s, 2, 3))).toEqual(["right", "left", "bottom"]);
    expect([0, 1].map((s) => positionOf(s, 1, 2))).toEqual(["top", "bottom"]);
    const seats = seatModels(drawView({ yourSeat: 1 }), "fr");
    expect(seats).toHaveLength(3);
    expect(seats.map((s) => s.score)).toEqual([12, 30, 0]);
    expect(seats.every((s) => !s.partner && !s.teams)).toBe(true);
    expect(seats[0]!.tags).toEqual(["hôte"]);
  });

  it("shows per-seat scores, the stock and Draw before Pass", () => {
    const view = drawView();
    expect(scoreLines(view, "fr").map((l) => l.text)).toEqual(["Ana : 12", "Ben : 30", "Chloé : 0"]);
    expect(scoreLines(playingView({ scoreTeamA: 5 }), "fr")[0]!.text).toBe("Équipe A (Ana, Chloé) : 5");
    expect(stockText(view, "fr")).toBe("Pioche : 11 dominos");
    expect(stockText(view, "en")).toBe("Stock: 11 tiles");
    expect(stockText(playingView(), "fr")).toBeNull();
    expect(handHint(drawView({ legalMoves: [], canDraw: true }))).toBe("mustDraw");
    expect(handHint(drawView({ legalMoves: [], canPass: true, stockSize: 0 }))).toBe("mustPass");
  });

  it("logs the draws of others as counts, never the tiles", () => {
    let history = nextHistory(EMPTY_HISTORY, drawView({ lastAction: { kind: ActionKind.DREW, seat: 1, drawn: 2 } }));
    history = nextHistory(history, drawView({ version: 11n, lastAction: { kind: ActionKind.DREW, seat: 2, drawn: 1, autoPlay: AutoPlayCause.TIMEOUT } }));
    expect(history.moves.map((m) => m.text.fr)).toEqual([
      "Ben a pioché 2 dominos",
      "Chloé a pioché 1 domino (temps écoulé : joué par la table)",
    ]);
    expect(history.moves[0]!.text.en).toBe("Ben drew 2 tiles");
    expect(moveText({ kind: "drew", name: "Émile", count: 3, auto: "" }, "fr")).toBe("Émile a pioché 3 dominos");
  });

  it("says how many seats the lobby needs", () => {
    const lobby = drawView({ phase: Phase.WAITING });
    lobby.seats[2]!.occupied = false;
    const model = lobbyModel(lobby, "fr");
    expect(model.canStart).toBe(false);
    expect(model.message).toBe("Il faut trois joueurs assis pour lancer la partie : 2 sur 3 pour l'instant.");
    expect(model.share).toBe("Donnez ce code aux deux autres joueurs :");
    expect(model.targets).toHaveLength(10);
    expect(lobbyModel(lobby, "en").message).toBe("Three seated players are needed to start: 2 of 3 so far.");
    lobby.seats[2]!.occupied = true;
    expect(lobbyModel(lobby, "fr").canStart).toBe(true);
    expect(lobbyModel(drawView({ phase: Phase.WAITING, yourSeat: 1 }), "en").message).toBe(
      "Ana will start the game once three are seated.",
    );
    const family = drawView({ phase: Phase.WAITING });
    family.rules!.minTarget = 100;
    family.rules!.maxTarget = 100;
    expect(lobbyTargets(family)).toEqual([100]);
  });
});

describe("round summaries for every scoring rule", () => {
  const over = (summary: Parameters<typeof create<typeof RoundSummarySchema>>[1], rules: Partial<ReturnType<typeof drawView>["rules"] & object> = {}) => {
    const view = drawView({ phase: Phase.ROUND_OVER, lastRound: create(RoundSummarySchema, summary) });
    Object.assign(view.rules!, rules);
    return view;
  };

  it("a domino scores the other hands", () => {
    const view = over({
      roundNumber: 2,
      outcome: RoundOutcome.DOMINO,
      points: 17,
      dominoSeat: 1,
      scoringSide: 1,
      sidePips: [9, 0, 8],
      hands: [
        { seat: 0, points: 9 },
        { seat: 2, points: 8 },
      ],
    });
    expect(roundSummary(view, "fr")).toEqual([
      "Manche 2 : domino ! Ben a posé son dernier domino.",
      "Ben marque 17 points : ce qui reste dans les autres mains (Ana 9 + Chloé 8).",
    ]);
    expect(roundSummary(view, "en")[1]).toBe("Ben scores 17 points: what is left in the other hands (Ana 9 + Chloé 8).");
  });

  it("a blocked round: the others minus its own, all the tiles, the others' total", () => {
    const summary = { roundNumber: 3, outcome: RoundOutcome.BLOCKED, points: 12, scoringSide: 2, sidePips: [10, 8, 3] };
    const minus = roundSummary(over(summary), "fr");
    expect(minus[0]).toBe("Manche 3 : bloquée, les trois joueurs ont passé l'un après l'autre, la pioche vide.");
    expect(minus[1]).toBe("Points en main : Ana 10, Ben 8, Chloé 3. La main la plus légère, Chloé, marque le total des autres moins le sien (18 − 3) : 12 points.");
    const all = roundSummary(over({ ...summary, points: 21 }, { blockedScore: BlockedScore.ALL_TILES }), "en");
    expect(all[1]).toBe("Points in hand: Ana 10, Ben 8, Chloé 3. The lightest hand, Chloé, scores every point left, its own included: 21 points.");
    const total = roundSummary(over({ ...summary, points: 18 }, { blockedScore: BlockedScore.OTHERS_TOTAL, draw: false }), "fr");
    expect(total[0]).not.toContain("pioche");
    expect(total[1]).toContain("marque le total des autres : 18 points.");
  });

  it("a tie: nobody scores, or the opener's side", () => {
    const tie = { roundNumber: 4, outcome: RoundOutcome.BLOCKED_TIE, tieRuleApplied: true, points: 0, sidePips: [5, 5, 9] };
    expect(roundSummary(over(tie), "fr")[1]).toBe("Points en main : Ana 5, Ben 5, Chloé 9. Les plus légers sont à égalité : personne ne marque.");
    const hand = over({ ...tie, points: 14, scoringSide: 1 }, { blockedTie: BlockedTie.HAND_OR_NEAREST, blockedScore: BlockedScore.OTHERS_TOTAL });
    expect(roundSummary(hand, "en")[1]).toBe(
      "Points in hand: Ana 5, Ben 5, Chloé 9. The lightest are level: the round goes to Ben, the opener's side (or the nearest after it), which scores the others' total: 14 points.",
    );
  });

  it("in pairs, a domino counting the partner's hand too", () => {
    const view = playingView({
      phase: Phase.ROUND_OVER,
      rules: { preset: Preset.SITE, seats: 4, teams: true, handSize: 7, dominoScore: DominoScore.ALL_OTHERS, blockedScore: BlockedScore.OTHERS_TOTAL, blockedTie: BlockedTie.HAND_OR_NEAREST },
      lastRound: create(RoundSummarySchema, {
        roundNumber: 1,
        outcome: RoundOutcome.DOMINO,
        scoringTeam: Team.A,
        scoringSide: 0,
        points: 20,
        dominoSeat: 0,
        hands: [
          { seat: 1, points: 5 },
          { seat: 2, points: 7 },
          { seat: 3, points: 8 },
        ],
      }),
    });
    expect(roundSummary(view, "fr")[1]).toBe(
      "L'équipe A marque 20 points : ce qui reste dans les trois autres mains, celle du partenaire comprise (Ben 5 + Chloé 7 + Dev 8).",
    );
  });

  it("records rounds per seat and names the winning seat", () => {
    const round = drawView({
      phase: Phase.ROUND_OVER,
      lastRound: create(RoundSummarySchema, { roundNumber: 1, outcome: RoundOutcome.DOMINO, points: 12, dominoSeat: 0, scoringSide: 0 }),
      sideScores: [12, 0, 0],
    });
    let history = nextHistory(EMPTY_HISTORY, round);
    history = nextHistory(
      history,
      drawView({ version: 20n, phase: Phase.ROUND_OVER, lastRound: create(RoundSummarySchema, { roundNumber: 2, outcome: RoundOutcome.BLOCKED_TIE, points: 0 }), sideScores: [12, 0, 0] }),
    );
    expect(roundLines(history, round, "fr")).toEqual([
      "Manche 1 · Ana +12 → Ana 12 · Ben 0 · Chloé 0",
      "Manche 2 · personne ne marque → Ana 12 · Ben 0 · Chloé 0",
    ]);
    expect(roundScoreLine(3, "B", 9, "en")).toBe("Round 3 · team B +9");
    const finished = drawView({ phase: Phase.FINISHED, winnerSide: 1, sideScores: [12, 55, 20], yourSeat: 1 });
    expect(winnerTeam(finished)).toBeNull();
    const winner = winnerSeat(finished)!;
    expect(winner).toMatchObject({ name: "Ben", score: 55, you: true });
    expect(winnerSeatText(winner.name, winner.score, winner.others, winner.you, "fr")).toBe(
      "Ben gagne avec 55 points (Chloé 20, Ana 12). Bravo, vous avez gagné !",
    );
    expect(winnerSeat(playingView({ phase: Phase.FINISHED, winner: Team.A }))).toBeNull();
  });
});
