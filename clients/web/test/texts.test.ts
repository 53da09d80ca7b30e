import { describe, expect, it } from "vitest";
import { ErrorReason } from "../src/gen/dominos/v1/game_pb";
import {
  LANGS,
  REASONS_WITH_SENTENCES,
  codeText,
  countdown,
  deName,
  joinWords,
  moveText,
  normaliseCode,
  passesText,
  reasonSentence,
  summaryLines,
  t,
  tilesCount,
  turnText,
  winnerText,
} from "../src/texts";

describe("French elision and words", () => {
  it("elides de before a vowel, accents included, not before a consonant or h", () => {
    expect(deName("Ana")).toBe("d'Ana");
    expect(deName("Émile")).toBe("d'Émile");
    expect(deName("Yves")).toBe("d'Yves");
    expect(deName("Ben")).toBe("de Ben");
    expect(deName("Hugo")).toBe("de Hugo");
    expect(turnText("Ana", "fr")).toBe("Au tour d'Ana");
    expect(turnText("Ben", "fr")).toBe("Au tour de Ben");
    expect(turnText("Ben", "en")).toBe("Ben's turn");
    expect(turnText(null, "fr")).toBe("À vous de jouer");
  });

  it("says passes highest first, blank for zero, with et / and", () => {
    expect(passesText([2, 5], "fr")).toBe("A passé sur cinq et deux");
    expect(passesText([0, 5, 3], "en")).toBe("Passed on five, three and blank");
    expect(passesText([4, 4], "fr")).toBe("A passé sur quatre");
    expect(passesText([], "fr")).toBe("");
    expect(joinWords(["a", "b", "c"], "fr")).toBe("a, b et c");
  });

  it("counts tiles with French plural from two", () => {
    expect(tilesCount(0, "fr")).toBe("0 domino");
    expect(tilesCount(1, "fr")).toBe("1 domino");
    expect(tilesCount(2, "fr")).toBe("2 dominos");
    expect(tilesCount(0, "en")).toBe("0 tiles");
    expect(tilesCount(1, "en")).toBe("1 tile");
  });

  it("formats codes and countdowns", () => {
    expect(codeText("K7XQ2MPAHR")).toBe("K7XQ2-MPAHR");
    expect(normaliseCode(" k7xq2-mpahr ")).toBe("K7XQ2MPAHR");
    expect(countdown(27.2)).toBe("28 s");
    expect(countdown(0)).toBe("0 s");
    expect(countdown(65)).toBe("1:05");
  });

  it("fills placeholders and never leaves a rule id in any text", () => {
    expect(t("needSeats", "fr", { n: 3, seats: 4, count: "quatre" })).toContain("3 sur 4");
    for (const lang of LANGS) {
      for (const reason of REASONS_WITH_SENTENCES) {
        expect(reasonSentence(reason, lang)).not.toMatch(/\([RSD]\d+\)|\b[RSD]\d{1,2}\b/);
      }
    }
  });

  it("logs moves in both languages, auto-play explained", () => {
    expect(moveText({ kind: "played", name: "Ana", low: 3, high: 6, end: "left", auto: "" }, "fr")).toBe(
      "Ana a posé trois-six à gauche",
    );
    expect(moveText({ kind: "passed", name: "Ben", passedOn: [2, 5], auto: "away" }, "fr")).toBe(
      "Ben a passé sur cinq et deux (absent : joué par la table)",
    );
    expect(moveText({ kind: "played", name: "Ana", low: 6, high: 6, end: "first", auto: "timeout" }, "en")).toBe(
      "Ana laid double six to open (time out: played by the table)",
    );
    expect(moveText({ kind: "played", name: "Émile", low: 0, high: 0, end: "right", auto: "" }, "fr")).toBe(
      "Émile a posé double blanc à droite",
    );
  });
});

describe("reasons to sentences", () => {
  it("has a sentence for every reason a client can receive", () => {
    const internal = new Set(["UNSPECIFIED", "COMMAND_MISSING", "TIMER_STALE"]);
    const reasons = Object.keys(ErrorReason)
      .filter((k) => Number.isNaN(Number(k)))
      .filter((k) => !internal.has(k));
    expect(reasons.length).toBeGreaterThan(20);
    for (const reason of reasons) expect(REASONS_WITH_SENTENCES).toContain(reason);
  });

  it("maps reasons to distinct sentences in both languages", () => {
    expect(reasonSentence("NOT_YOUR_TURN", "fr")).toBe("Ce n'est pas votre tour.");
    expect(reasonSentence("NOT_YOUR_TURN", "en")).toBe("It is not your turn.");
    expect(reasonSentence("CODE_NOT_FOUND", "fr")).toContain("code");
    expect(reasonSentence("NAME_TAKEN", "en")).toContain("choose another");
    expect(reasonSentence("MUST_PLAY", "fr")).not.toBe(reasonSentence("NOT_YOUR_TURN", "fr"));
  });

  it("names the budget of a RATE_LIMITED refusal and the wait", () => {
    const sentence = reasonSentence("RATE_LIMITED", "fr", { limit: "creates_per_address", retrySeconds: 2.2 });
    expect(sentence).toContain("créé beaucoup de tables");
    expect(sentence).toContain("3 s");
    expect(reasonSentence("RATE_LIMITED", "en", { limit: "something_new" })).toBe("Too many requests: wait a little.");
  });

  it("falls back on the kind of failure for unknown reasons", () => {
    expect(reasonSentence(null, "fr", { network: true })).toContain("ne répond pas");
    expect(reasonSentence("A_REASON_FROM_A_NEWER_SERVER", "en")).toContain("unexpected");
  });
});

describe("summaries", () => {
  const base = {
    roundNumber: 2,
    scoringTeam: "A" as const,
    points: 17,
    dominoName: "Ana",
    dominoTeam: "A" as const,
    teamAPips: 4,
    teamBPips: 17,
    opponents: [
      { name: "Ben", points: 9 },
      { name: "Dev", points: 8 },
    ],
  };
  it("explains a domino and who scores what", () => {
    const [head, why] = summaryLines({ ...base, outcome: "domino" }, "fr");
    expect(head).toBe("Manche 2 : domino ! Ana (équipe A) a posé son dernier domino.");
    expect(why).toContain("L'équipe A marque 17 points");
    expect(why).toContain("Ben 9 + Dev 8");
  });
  it("spells out the tie rule", () => {
    const lines = summaryLines({ ...base, outcome: "tie", teamAPips: 12, teamBPips: 12 }, "en");
    expect(lines[0]).toContain("perfect tie");
    expect(lines[1]).toContain("the team that laid the last tile, team A");
  });
  it("names the winner and whether you won", () => {
    expect(winnerText("B", ["Ben", "Dev"], 68, 29, false, "fr")).toBe(
      "L'équipe B (Ben et Dev) gagne 68 à 29. Vous ferez mieux la prochaine fois.",
    );
    expect(winnerText("A", ["Ana", "Chloé"], 55, 10, true, "en")).toContain("you won");
  });
});
