// What the screens show, as pure functions of the views (no DOM, no clock): which screen,
// the seats around you, your hand with its legal ends, the round's moves, the rounds played,
// the summaries. The renderer (ui.ts) only turns these into elements.

import {
  ActionKind,
  AutoPlayCause,
  End,
  Phase,
  RoundOutcome,
  Team,
  type RoundSummary,
  type TableView,
} from "./gen/dominos/v1/game_pb";
import { newestIndex, type Placed } from "./chain";
import {
  moveText,
  passesText,
  roundScoreLine,
  summaryLines,
  t,
  tilesCount,
  turnText,
  type Lang,
  type SummaryInput,
} from "./texts";

export type Screen = "lobby" | "table" | "over" | "closed";

/** Which screen a view belongs on. An unknown phase (a newer server) keeps the table. */
export function screenOf(view: TableView): Screen {
  switch (view.phase) {
    case Phase.WAITING:
      return "lobby";
    case Phase.FINISHED:
      return "over";
    case Phase.CLOSED:
      return "closed";
    default:
      return "table";
  }
}

/** Phases after which nothing comes back: the saved seat is forgotten. */
export function isTerminal(view: TableView): boolean {
  return view.phase === Phase.FINISHED || view.phase === Phase.CLOSED;
}

export function teamOf(seat: number): "A" | "B" {
  return seat % 2 === 0 ? "A" : "B";
}

export type Position = "bottom" | "right" | "top" | "left";

/** Where each seat sits on your screen: you at the bottom, your partner across (R1), the
 * next seat to play on your right and the one before you on your left (play goes
 * counter-clockwise, seats in turn order R4). */
export function positionOf(seat: number, yourSeat: number): Position {
  const order: Position[] = ["bottom", "right", "top", "left"];
  return order[(((seat - yourSeat) % 4) + 4) % 4]!;
}

function nameOf(view: TableView, seat: number): string {
  const info = view.seats[seat];
  return info !== undefined && info.occupied && info.name !== "" ? info.name : `#${seat}`;
}

/** The seat to act, or null: `turn_seat` has presence (seat 0 is a real value). */
export function turnSeat(view: TableView): number | null {
  return view.phase === Phase.PLAYING && view.turnSeat !== undefined ? view.turnSeat : null;
}

export function isYourTurn(view: TableView): boolean {
  return turnSeat(view) === view.yourSeat;
}

export interface SeatModel {
  seat: number;
  position: Position;
  occupied: boolean;
  name: string;
  team: "A" | "B";
  host: boolean;
  you: boolean;
  partner: boolean;
  tileCount: number;
  tilesText: string;
  passes: string;
  connected: boolean;
  isTurn: boolean;
  /** « hôte · vous · absent » style tags. */
  tags: string[];
}

export function seatModels(view: TableView, lang: Lang): SeatModel[] {
  const turn = turnSeat(view);
  return [0, 1, 2, 3].map((seat) => {
    const info = view.seats[seat];
    const occupied = info?.occupied ?? false;
    const you = seat === view.yourSeat;
    const partner = !you && teamOf(seat) === teamOf(view.yourSeat);
    const tags: string[] = [];
    if (info?.host) tags.push(t("host", lang));
    if (you) tags.push(t("you", lang));
    else if (occupied && view.phase !== Phase.WAITING)
      tags.push(t(partner ? "partner" : "opponent", lang));
    if (occupied && !(info?.connected ?? false)) tags.push(t("away", lang));
    const tileCount = info?.tileCount ?? 0;
    return {
      seat,
      position: positionOf(seat, view.yourSeat),
      occupied,
      name: occupied ? (info?.name ?? "") : t("emptySeat", lang),
      team: teamOf(seat),
      host: info?.host ?? false,
      you,
      partner,
      tileCount,
      tilesText: tilesCount(tileCount, lang),
      passes: passesText(info?.passedOn ?? [], lang),
      connected: info?.connected ?? false,
      isTurn: turn === seat,
      tags,
    };
  });
}

export type EndName = "left" | "right";

export interface HandItem {
  low: number;
  high: number;
  /** The ends it may go on now (from `legal_moves`); empty: not playable. */
  ends: EndName[];
}

/** The hand in the view's order, each tile with its legal ends (R8). On the round's first
 * tile every tile is listed once, END_LEFT (either end is accepted then). */
export function handItems(view: TableView): HandItem[] {
  const ends = new Map<string, EndName[]>();
  for (const move of view.legalMoves) {
    if (move.tile === undefined) continue;
    const key = `${move.tile.low}-${move.tile.high}`;
    const end: EndName | null =
      move.end === End.LEFT ? "left" : move.end === End.RIGHT ? "right" : null;
    if (end === null) continue;
    const list = ends.get(key) ?? [];
    if (!list.includes(end)) list.push(end);
    ends.set(key, list);
  }
  return view.hand.map((tile) => ({
    low: tile.low,
    high: tile.high,
    ends: (ends.get(`${tile.low}-${tile.high}`) ?? []).sort(),
  }));
}

/** What a click on a hand tile does: nothing (not playable), play on its only end, or ask
 * which end (it fits both). */
export function clickAction(item: HandItem): { kind: "none" } | { kind: "play"; end: EndName } | { kind: "choose" } {
  if (item.ends.length === 0) return { kind: "none" };
  if (item.ends.length === 1) return { kind: "play", end: item.ends[0]! };
  return { kind: "choose" };
}

/** The end of a played action, for marking the newest tile. */
function playedEnd(view: TableView): EndName | null {
  const action = view.lastAction;
  if (action?.kind !== ActionKind.PLAYED || action.move === undefined) return null;
  return action.move.end === End.LEFT ? "left" : action.move.end === End.RIGHT ? "right" : null;
}

export interface ChainState {
  chain: Placed[];
  newest: number | null;
}

/** The chain of `view` with its newest tile, given the previous state (see newestIndex). */
export function chainState(view: TableView, previous: ChainState | null): ChainState {
  const chain = view.chain.map((p) => ({ left: p.left, right: p.right, seat: p.seat }));
  return { chain, newest: newestIndex(chain, playedEnd(view), previous) };
}

// -- the round's moves and the rounds played -------------------------------------------------

export interface LoggedMove {
  version: string;
  round: number;
  text: Record<Lang, string>;
}

export interface History {
  /** The moves of the current round, oldest first, as seen by this client. */
  moves: LoggedMove[];
  /** Finished rounds, by round number. */
  rounds: { round: number; team: "A" | "B"; points: number; scoreA: number; scoreB: number }[];
}

export const EMPTY_HISTORY: History = { moves: [], rounds: [] };

function autoOf(cause: AutoPlayCause | undefined): "" | "timeout" | "away" {
  if (cause === AutoPlayCause.TIMEOUT) return "timeout";
  if (cause === AutoPlayCause.AWAY) return "away";
  return "";
}

/** `history` after `view`: its move appended (once per version), the moves cleared when a new
 * round is dealt, its finished round recorded. A slow stream may skip versions: their moves
 * are missing from the log, never wrong. */
export function nextHistory(history: History, view: TableView): History {
  const version = view.version.toString();
  let moves = history.moves.filter((m) => m.round === view.roundNumber);
  const action = view.lastAction;
  const seat = action?.seat;
  if (action !== undefined && seat !== undefined && !moves.some((m) => m.version === version)) {
    const name = nameOf(view, seat);
    const auto = autoOf(action.autoPlay);
    let entry: Parameters<typeof moveText>[0] | null = null;
    if (action.kind === ActionKind.PLAYED && action.move?.tile !== undefined) {
      const firstTile = view.chain.length === 1;
      const end = firstTile ? "first" : action.move.end === End.LEFT ? "left" : "right";
      entry = { kind: "played", name, low: action.move.tile.low, high: action.move.tile.high, end, auto };
    } else if (action.kind === ActionKind.PASSED) {
      entry = { kind: "passed", name, passedOn: action.passedOn, auto };
    }
    if (entry !== null) {
      const played = entry;
      moves = [
        ...moves,
        { version, round: view.roundNumber, text: { fr: moveText(played, "fr"), en: moveText(played, "en") } },
      ];
    }
  }
  let rounds = history.rounds;
  const summary = view.lastRound;
  if (summary !== undefined && !rounds.some((r) => r.round === summary.roundNumber)) {
    rounds = [
      ...rounds,
      {
        round: summary.roundNumber,
        team: (summary.scoringTeam === Team.B ? "B" : "A") as "A" | "B",
        points: summary.points,
        scoreA: view.scoreTeamA,
        scoreB: view.scoreTeamB,
      },
    ].sort((a, b) => a.round - b.round);
  }
  return { moves, rounds };
}

export function roundLines(history: History, lang: Lang): string[] {
  return history.rounds.map(
    (r) => `${roundScoreLine(r.round, r.team, r.points, lang)} → A ${r.scoreA} · B ${r.scoreB}`,
  );
}

// -- summaries -----------------------------------------------------------------------------

export function summaryInput(view: TableView, s: RoundSummary): SummaryInput {
  const outcome =
    s.outcome === RoundOutcome.DOMINO
      ? "domino"
      : s.outcome === RoundOutcome.BLOCKED_TIE || s.tieRuleApplied
        ? "tie"
        : s.outcome === RoundOutcome.BLOCKED
          ? "blocked"
          : "unknown";
  const scoringTeam = s.scoringTeam === Team.B ? "B" : "A";
  const opponentSeats = scoringTeam === "A" ? [1, 3] : [0, 2];
  return {
    roundNumber: s.roundNumber,
    outcome,
    scoringTeam,
    points: s.points,
    dominoName: s.dominoSeat !== undefined ? nameOf(view, s.dominoSeat) : null,
    dominoTeam: s.dominoSeat !== undefined ? teamOf(s.dominoSeat) : null,
    teamAPips: s.teamAPips,
    teamBPips: s.teamBPips,
    opponents: opponentSeats.map((seat) => ({
      name: nameOf(view, seat),
      points: s.hands.find((h) => h.seat === seat)?.points ?? 0,
    })),
  };
}

/** The summary of the round that just ended, or [] when the view carries none. */
export function roundSummary(view: TableView, lang: Lang): string[] {
  return view.lastRound === undefined ? [] : summaryLines(summaryInput(view, view.lastRound), lang);
}

/** The hands revealed at the end of the round (D1): name and tiles, seats 0-3. */
export function revealedHands(view: TableView): { name: string; seat: number; tiles: [number, number][]; points: number }[] {
  return (view.lastRound?.hands ?? [])
    .slice()
    .sort((a, b) => a.seat - b.seat)
    .map((h) => ({
      name: nameOf(view, h.seat),
      seat: h.seat,
      tiles: h.tiles.map((tile) => [tile.low, tile.high] as [number, number]),
      points: h.points,
    }));
}

export function winnerTeam(view: TableView): "A" | "B" | null {
  if (view.winner === Team.A) return "A";
  if (view.winner === Team.B) return "B";
  return null;
}

export function teamMembers(view: TableView, team: "A" | "B"): string[] {
  return (team === "A" ? [0, 2] : [1, 3]).map((s) => nameOf(view, s));
}

/** The line above the hand: whose turn, or what happens next. */
export function statusText(view: TableView, lang: Lang): string {
  const turn = turnSeat(view);
  if (turn === null) return "";
  return turnText(turn === view.yourSeat ? null : nameOf(view, turn), lang);
}

/** Seconds left on the running clock (R11 turn, D1 break), corrected by the time elapsed
 * since the view arrived, so a wrong local clock does not matter; null when none runs. */
export function remainingSeconds(view: TableView, receivedAtMs: number, nowMs: number): number | null {
  const deadline = Number(view.turnDeadlineMs);
  const server = Number(view.serverTimeMs);
  if (deadline <= 0 || server <= 0) return null;
  return Math.max(0, (deadline - server - (nowMs - receivedAtMs)) / 1000);
}

// -- lobby ---------------------------------------------------------------------------------

export interface LobbyModel {
  seated: number;
  youAreHost: boolean;
  canStart: boolean;
  message: string;
  targets: number[];
}

export const TARGETS: readonly number[] = Array.from({ length: 10 }, (_, i) => (i + 1) * 50);

export function lobbyModel(view: TableView, lang: Lang): LobbyModel {
  const seated = view.seats.filter((s) => s.occupied).length;
  const youAreHost = view.seats[view.yourSeat]?.host ?? false;
  const hostName = nameOf(view, view.seats.findIndex((s) => s.host) === -1 ? 0 : view.seats.findIndex((s) => s.host));
  const message = youAreHost
    ? seated === 4
      ? t("readyHost", lang)
      : t("needFour", lang, { n: seated })
    : t("waitHost", lang, { host: hostName });
  return { seated, youAreHost, canStart: youAreHost && seated === 4, message, targets: [...TARGETS] };
}
