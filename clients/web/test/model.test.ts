import { describe, expect, it } from "vitest";
import { create } from "@bufbuild/protobuf";
import {
  ActionKind,
  AutoPlayCause,
  End,
  Phase,
  RoundOutcome,
  RoundSummarySchema,
  Team,
} from "../src/gen/dominos/v1/game_pb";
import {
  EMPTY_HISTORY,
  chainState,
  clickAction,
  handItems,
  isTerminal,
  isYourTurn,
  lobbyModel,
  nextHistory,
  positionOf,
  remainingSeconds,
  roundSummary,
  screenOf,
  seatModels,
  statusText,
  turnSeat,
} from "../src/model";
import { playingView } from "./fixtures";

describe("screens and turns", () => {
  it("chooses the screen by phase, an unknown phase keeps the table", () => {
    expect(screenOf(playingView({ phase: Phase.WAITING }))).toBe("lobby");
    expect(screenOf(playingView())).toBe("table");
    expect(screenOf(playingView({ phase: Phase.ROUND_OVER }))).toBe("table");
    expect(screenOf(playingView({ phase: Phase.FINISHED }))).toBe("over");
    expect(screenOf(playingView({ phase: Phase.CLOSED }))).toBe("closed");
    expect(screenOf(playingView({ phase: 99 as Phase }))).toBe("table");
    expect(isTerminal(playingView({ phase: Phase.FINISHED }))).toBe(true);
    expect(isTerminal(playingView({ phase: Phase.ROUND_OVER }))).toBe(false);
  });

  it("tells seat 0's turn from no turn (presence, not truthiness)", () => {
    expect(turnSeat(playingView({ turnSeat: 0 }))).toBe(0);
    expect(isYourTurn(playingView({ turnSeat: 0, yourSeat: 0 }))).toBe(true);
    expect(turnSeat(playingView({ turnSeat: undefined }))).toBeNull();
    expect(isYourTurn(playingView({ turnSeat: undefined, yourSeat: 0 }))).toBe(false);
    expect(turnSeat(playingView({ phase: Phase.ROUND_OVER, turnSeat: 0 }))).toBeNull();
    expect(statusText(playingView({ turnSeat: 1 }), "fr")).toBe("Au tour de Ben");
    expect(statusText(playingView({ turnSeat: 0 }), "fr")).toBe("À vous de jouer");
  });
});

describe("the table around you", () => {
  it("puts your partner across and the opponents on each side", () => {
    expect(positionOf(2, 2)).toBe("bottom");
    expect(positionOf(0, 2)).toBe("top");
    expect(positionOf(3, 2)).toBe("right");
    expect(positionOf(1, 2)).toBe("left");
    const seats = seatModels(playingView({ yourSeat: 1 }), "fr");
    const top = seats.find((s) => s.position === "top")!;
    expect(top.seat).toBe(3);
    expect(top.partner).toBe(true);
    expect(seats.filter((s) => s.position === "left" || s.position === "right").every((s) => !s.partner)).toBe(true);
  });

  it("shows counts, passes, presence and the turn", () => {
    const view = playingView({ turnSeat: 2 });
    view.seats[1]!.passedOn = [2, 5];
    view.seats[1]!.connected = false;
    view.seats[3]!.tileCount = 1;
    const seats = seatModels(view, "fr");
    expect(seats[1]!.passes).toBe("A passé sur cinq et deux");
    expect(seats[1]!.tags).toContain("absent");
    expect(seats[3]!.tilesText).toBe("1 domino");
    expect(seats.filter((s) => s.isTurn).map((s) => s.seat)).toEqual([2]);
    expect(seats[0]!.tags).toEqual(["hôte", "vous"]);
  });
});

describe("the hand", () => {
  it("marks legal tiles with their ends from legal_moves", () => {
    const items = handItems(playingView());
    expect(items.map((i) => [i.low, i.high, i.ends])).toEqual([
      [0, 3, ["right"]],
      [1, 6, ["left"]],
      [3, 6, ["left", "right"]],
    ]);
    expect(clickAction(items[0]!)).toEqual({ kind: "play", end: "right" });
    expect(clickAction(items[2]!)).toEqual({ kind: "choose" });
  });

  it("offers nothing out of turn and nothing for a tile that does not fit", () => {
    const items = handItems(playingView({ turnSeat: 1, legalMoves: [] }));
    expect(items.every((i) => i.ends.length === 0)).toBe(true);
    expect(clickAction(items[0]!)).toEqual({ kind: "none" });
  });

  it("plays the first tile of a round on the one end listed", () => {
    const view = playingView({
      chain: [],
      leftEnd: undefined,
      rightEnd: undefined,
      legalMoves: [{ tile: { low: 1, high: 6 }, end: End.LEFT }],
    });
    expect(clickAction(handItems(view)[1]!)).toEqual({ kind: "play", end: "left" });
  });
});

describe("chain state", () => {
  it("marks the tile just played on the left", () => {
    const view = playingView({
      chain: [
        { left: 1, right: 6, seat: 0 },
        { left: 6, right: 3, seat: 3 },
      ],
      lastAction: { kind: ActionKind.PLAYED, seat: 0, move: { tile: { low: 1, high: 6 }, end: End.LEFT } },
    });
    expect(chainState(view, null).newest).toBe(0);
    const passed = playingView({
      version: 11n,
      chain: view.chain,
      lastAction: { kind: ActionKind.PASSED, seat: 1, passedOn: [1, 3] },
    });
    expect(chainState(passed, chainState(view, null)).newest).toBe(0);
  });
});

describe("history", () => {
  it("logs each version's move once, clears it at a new round, records finished rounds", () => {
    let history = nextHistory(EMPTY_HISTORY, playingView());
    history = nextHistory(history, playingView());
    expect(history.moves.map((m) => m.text.fr)).toEqual(["Dev a posé trois-six pour ouvrir"]);
    history = nextHistory(
      history,
      playingView({
        version: 11n,
        lastAction: { kind: ActionKind.PASSED, seat: 1, passedOn: [3, 6], autoPlay: AutoPlayCause.TIMEOUT },
      }),
    );
    expect(history.moves[1]!.text.en).toBe("Ben passed on six and three (time out: played by the table)");
    const over = playingView({
      version: 12n,
      phase: Phase.ROUND_OVER,
      scoreTeamB: 21,
      lastAction: { kind: ActionKind.PRESENCE, seat: 2, connected: true },
      lastRound: create(RoundSummarySchema, { roundNumber: 1, outcome: RoundOutcome.DOMINO, scoringTeam: Team.B, points: 21, dominoSeat: 1 }),
    });
    history = nextHistory(history, over);
    history = nextHistory(history, over);
    expect(history.rounds).toEqual([{ round: 1, side: 1, points: 21, scores: [0, 21], teams: true }]);
    expect(history.moves).toHaveLength(2);
    history = nextHistory(history, playingView({ version: 13n, roundNumber: 2, lastAction: { kind: ActionKind.ROUND_DEALT } }));
    expect(history.moves).toEqual([]);
    expect(history.rounds).toHaveLength(1);
  });
});

describe("summary, clock, lobby", () => {
  it("reads a domino summary with seat 0 as the domino seat", () => {
    const view = playingView({
      phase: Phase.ROUND_OVER,
      lastRound: create(RoundSummarySchema, {
        roundNumber: 3,
        outcome: RoundOutcome.DOMINO,
        scoringTeam: Team.A,
        points: 12,
        dominoSeat: 0,
        hands: [
          { seat: 1, points: 5, tiles: [{ low: 2, high: 3 }] },
          { seat: 3, points: 7, tiles: [{ low: 3, high: 4 }] },
        ],
      }),
    });
    const [head, why] = roundSummary(view, "en");
    expect(head).toBe("Round 3: domino! Ana (team A) laid their last tile.");
    expect(why).toContain("(Ben 5 + Dev 7)");
    expect(roundSummary(playingView(), "en")).toEqual([]);
  });

  it("counts down from the server's clock, not the local one", () => {
    const view = playingView();
    expect(remainingSeconds(view, 5_000, 5_000)).toBe(45);
    expect(remainingSeconds(view, 5_000, 15_000)).toBe(35);
    expect(remainingSeconds(view, 5_000, 99_000)).toBe(0);
    expect(remainingSeconds(playingView({ turnDeadlineMs: 0n }), 0, 0)).toBeNull();
  });

  it("lets only the host start, with four seated, and says why not", () => {
    const lobby = playingView({ phase: Phase.WAITING });
    lobby.seats[3]!.occupied = false;
    let model = lobbyModel(lobby, "fr");
    expect(model.canStart).toBe(false);
    expect(model.message).toContain("3 sur 4");
    lobby.seats[3]!.occupied = true;
    expect(lobbyModel(lobby, "fr").canStart).toBe(true);
    model = lobbyModel(playingView({ phase: Phase.WAITING, yourSeat: 2 }), "fr");
    expect(model.canStart).toBe(false);
    expect(model.message).toBe("Ana lancera la partie quand vous serez quatre.");
    expect(model.targets).toEqual([50, 100, 150, 200, 250, 300, 350, 400, 450, 500]);
  });
});
