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
