import { create, type MessageInitShape } from "@bufbuild/protobuf";
import {
  ActionKind,
  BlockedScore,
  BlockedTie,
  DominoScore,
  NextOpener,
  Opener,
  Preset,
  Scoring,
  End,
  Phase,
  Team,
  RuleSetSchema,
  TableViewSchema,
  type TableView,
} from "../src/gen/dominos/v1/game_pb";

export type Init = MessageInitShape<typeof TableViewSchema>;

const NAMES = ["Ana", "Ben", "Chloé", "Dev"];

/** A view of a round in play: seat `yourSeat`'s hand, four seated players. */
export function playingView(overrides: Init = {}): TableView {
  const base: Init = {
    tableId: "t1",
    version: 10n,
    phase: Phase.PLAYING,
    target: 50,
    yourSeat: 0,
    roundNumber: 1,
    seats: NAMES.map((name, seat) => ({
      seat,
      occupied: true,
      name,
      team: seat % 2 === 0 ? Team.A : Team.B,
      host: seat === 0,
      tileCount: 6,
      connected: true,
    })),
    hand: [
      { low: 0, high: 3 },
      { low: 1, high: 6 },
      { low: 3, high: 6 },
    ],
    chain: [{ left: 6, right: 3, seat: 3 }],
    leftEnd: 6,
    rightEnd: 3,
    turnSeat: 0,
    legalMoves: [
      { tile: { low: 0, high: 3 }, end: End.RIGHT },
      { tile: { low: 1, high: 6 }, end: End.LEFT },
      { tile: { low: 3, high: 6 }, end: End.LEFT },
      { tile: { low: 3, high: 6 }, end: End.RIGHT },
    ],
    lastAction: { kind: ActionKind.PLAYED, seat: 3, move: { tile: { low: 3, high: 6 }, end: End.LEFT } },
    turnDeadlineMs: 1_000_045_000n,
    serverTimeMs: 1_000_000_000n,
  };
  return create(TableViewSchema, Object.assign({}, base, overrides) as Init);
}

/** A 3-seat web_draw round in play (each for themselves, a stock), seat `yourSeat`'s view. */
export function drawView(overrides: Init = {}): TableView {
  return playingView({
    target: 50,
    rules: create(RuleSetSchema, {
      preset: Preset.WEB_DRAW,
      seats: 3,
      teams: false,
      handSize: 5,
      draw: true,
      opener: Opener.HIGHEST_DOUBLE,
      nextOpener: NextOpener.PREVIOUS_WINNER_ELSE_NEXT,
      dominoScore: DominoScore.OPPONENTS,
      blockedScore: BlockedScore.OTHERS_MINUS_OWN,
      blockedTie: BlockedTie.NOBODY,
      scoring: Scoring.BLOCK,
      minTarget: 50,
      maxTarget: 500,
      targetStep: 50,
      turnSeconds: 45,
    }),
    seats: NAMES.slice(0, 3).map((name, seat) => ({
      seat,
      occupied: true,
      name,
      host: seat === 0,
      tileCount: 3,
      connected: true,
      side: seat,
      score: [12, 30, 0][seat]!,
    })),
    scoreTeamA: 0,
    scoreTeamB: 0,
    sideScores: [12, 30, 0],
    stockSize: 11,
    ...overrides,
  });
}

/** A two-seat web_fives round (seed 002) with the spinner 5-5 covered on both long sides:
 * the line 4-5 · [5-5] · 5-2, 5-1 on its upper side, its lower side open on 5. Ends: left
 * 4, right 2, up 1, down 5; total 4 + 2 + 1 = 7 (the spinner no longer counts, the empty
 * lower side neither). Ana (seat 0) holds 2-4 (left +5, right 0), 1-4 (left 0, up +10),
 * 3-5 (down +10) and 6-6 (no fit). */
export function fivesView(overrides: Init = {}): TableView {
  const base: Init = {
    target: 100,
    rules: create(RuleSetSchema, {
      preset: Preset.WEB_FIVES,
      seats: 2,
      teams: false,
      handSize: 7,
      draw: true,
      opener: Opener.HIGHEST_DOUBLE,
      nextOpener: NextOpener.PREVIOUS_WINNER_ELSE_NEXT,
      dominoScore: DominoScore.OPPONENTS,
      blockedScore: BlockedScore.OTHERS_MINUS_OWN,
      blockedTie: BlockedTie.NOBODY,
      scoring: Scoring.ALL_FIVES,
      minTarget: 50,
      maxTarget: 500,
      targetStep: 50,
      turnSeconds: 45,
    }),
    seats: NAMES.slice(0, 2).map((name, seat) => ({
      seat,
      occupied: true,
      name,
      host: seat === 0,
      tileCount: 4,
      connected: true,
      side: seat,
      score: [20, 35][seat]!,
    })),
    scoreTeamA: 0,
    scoreTeamB: 0,
    sideScores: [20, 35],
    stockSize: 6,
    hand: [
      { low: 1, high: 4 },
      { low: 2, high: 4 },
      { low: 3, high: 5 },
      { low: 6, high: 6 },
    ],
    chain: [
      { left: 4, right: 5, seat: 1 },
      { left: 5, right: 5, seat: 0 },
      { left: 5, right: 2, seat: 1 },
    ],
    spinnerIndex: 1,
    upArm: [{ left: 5, right: 1, seat: 0 }],
    downArm: [],
    leftEnd: 4,
    rightEnd: 2,
    openEnds: [
      { end: End.LEFT, number: 4 },
      { end: End.RIGHT, number: 2 },
      { end: End.UP, number: 1 },
      { end: End.DOWN, number: 5 },
    ],
    legalMoves: [
      { tile: { low: 1, high: 4 }, end: End.LEFT, points: 0 },
      { tile: { low: 1, high: 4 }, end: End.UP, points: 10 },
      { tile: { low: 2, high: 4 }, end: End.LEFT, points: 5 },
      { tile: { low: 2, high: 4 }, end: End.RIGHT, points: 0 },
      { tile: { low: 3, high: 5 }, end: End.DOWN, points: 10 },
    ],
    lastAction: { kind: ActionKind.PLAYED, seat: 0, move: { tile: { low: 1, high: 5 }, end: End.UP }, points: 0 },
  };
  return playingView(Object.assign({}, base, overrides) as Init);
}
