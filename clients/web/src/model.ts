// What the screens show, as pure functions of the views (no DOM, no clock): which screen,
// the seats around you, your hand with its legal ends, the round's moves, the rounds played,
// the summaries. The renderer (ui.ts) only turns these into elements.

import {
  ActionKind,
  AutoPlayCause,
  BlockedScore,
  BlockedTie,
  DominoScore,
  End,
  Phase,
  RoundOutcome,
  Team,
  type RoundSummary,
  type TableView,
} from "./gen/dominos/v1/game_pb";
import { endsTotal, newestIndex, type Arm, type Placed } from "./chain";
import { countWord, hasStock, isFives, lobbyTargets, playsInTeams, seatCount } from "./rules";
import {
  endWord,
  endedByPlayText,
  endsLine,
  moveText,
  passesText,
  roundScoreLine,
  scoredText,
  summaryLines,
  t,
  teamLabel,
  theTeam,
  tilesCount,
  turnText,
  type Lang,
  type SummaryInput,
  type SummaryRules,
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
 * counter-clockwise, seats in turn order R4). At two seats the opponent sits across; at
 * three the next seat on your right, the other on your left. */
export function positionOf(seat: number, yourSeat: number, seats = 4): Position {
  const orders: Record<number, Position[]> = {
    2: ["bottom", "top"],
    3: ["bottom", "right", "left"],
    4: ["bottom", "right", "top", "left"],
  };
  const order = orders[seats] ?? orders[4]!;
  return order[(((seat - yourSeat) % order.length) + order.length) % order.length]!;
}

/** Every side's score, index = side: `side_scores`, else the two teams (older servers). */
export function sideScores(view: TableView): number[] {
  return view.sideScores.length > 0 ? [...view.sideScores] : [view.scoreTeamA, view.scoreTeamB];
}

/** The side a seat scores for: its team's index with teams, else the seat. */
export function sideOf(view: TableView, seat: number): number {
  return playsInTeams(view) ? seat % 2 : seat;
}

/** A side as a label: « A » / « B » with teams, else the seat's name. */
function sideLabel(view: TableView, side: number, lang: Lang): string {
  return playsInTeams(view) ? teamLabel(side === 1 ? "B" : "A", lang) : nameOf(view, side);
}

/** A side as the subject of a sentence: « l'équipe A », or the seat's name. */
function sideSubject(view: TableView, side: number, lang: Lang): string {
  return playsInTeams(view) ? theTeam(side === 1 ? "B" : "A", lang) : nameOf(view, side);
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
  /** Whether the table plays in teams (else `team` means nothing). */
  teams: boolean;
  /** The score of this seat's side. */
  score: number;
  /** « hôte · vous · absent » style tags. */
  tags: string[];
}

export function seatModels(view: TableView, lang: Lang): SeatModel[] {
  const turn = turnSeat(view);
  const count = seatCount(view);
  const teams = playsInTeams(view);
  const scores = sideScores(view);
  return Array.from({ length: count }, (_, seat) => {
    const info = view.seats[seat];
    const occupied = info?.occupied ?? false;
    const you = seat === view.yourSeat;
    const partner = teams && !you && teamOf(seat) === teamOf(view.yourSeat);
    const tags: string[] = [];
    if (info?.host) tags.push(t("host", lang));
    if (you) tags.push(t("you", lang));
    else if (occupied && view.phase !== Phase.WAITING && teams)
      tags.push(t(partner ? "partner" : "opponent", lang));
    if (occupied && !(info?.connected ?? false)) tags.push(t("away", lang));
    const tileCount = info?.tileCount ?? 0;
    return {
      seat,
      position: positionOf(seat, view.yourSeat, count),
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
      teams,
      score: scores[sideOf(view, seat)] ?? info?.score ?? 0,
      tags,
    };
  });
}

/** The ends of the chain: the line's two, and under all fives the spinner's short sides
 * (END_UP, END_DOWN) once both its long sides are covered. */
export type EndName = "left" | "right" | "up" | "down";

export const END_ORDER: readonly EndName[] = ["left", "right", "up", "down"];

export function endName(end: End | undefined): EndName | null {
  switch (end) {
    case End.LEFT:
      return "left";
    case End.RIGHT:
      return "right";
    case End.UP:
      return "up";
    case End.DOWN:
      return "down";
    default:
      return null;
  }
}

export interface HandItem {
  low: number;
  high: number;
  /** The ends it may go on now (from `legal_moves`), left, right, up, down; empty: not
   * playable. */
  ends: EndName[];
  /** Under all fives: the points each of those placements would score at once
   * (`Move.points`); 0 elsewhere. */
  points: Partial<Record<EndName, number>>;
}

/** The hand in the view's order, each tile with its legal ends (R8) and their points. On the
 * round's first tile every tile is listed once, END_LEFT (either end is accepted then). */
export function handItems(view: TableView): HandItem[] {
  const ends = new Map<string, EndName[]>();
  const points = new Map<string, Partial<Record<EndName, number>>>();
  for (const move of view.legalMoves) {
    if (move.tile === undefined) continue;
    const key = `${move.tile.low}-${move.tile.high}`;
    const end = endName(move.end);
    if (end === null) continue;
    const list = ends.get(key) ?? [];
    if (!list.includes(end)) list.push(end);
    ends.set(key, list);
    points.set(key, { ...(points.get(key) ?? {}), [end]: move.points });
  }
  return view.hand.map((tile) => {
    const key = `${tile.low}-${tile.high}`;
    return {
      low: tile.low,
      high: tile.high,
      ends: (ends.get(key) ?? []).sort((a, b) => END_ORDER.indexOf(a) - END_ORDER.indexOf(b)),
      points: points.get(key) ?? {},
    };
  });
}

/** The most a tile would score at once on one of its ends (0: none, or not all fives). */
export function bestPoints(item: HandItem): number {
  return Math.max(0, ...item.ends.map((end) => item.points[end] ?? 0));
}

export interface EndChoice {
  end: EndName;
  /** The number the tile goes on. */
  number: number | null;
  /** Under all fives, the points of that placement; null elsewhere. */
  points: number | null;
}

/** The end chooser of a tile that fits several ends: each end with its number and, under
 * all fives, its points (seed 002 shows them on the table). */
export function endChoices(view: TableView, item: HandItem): EndChoice[] {
  const fives = isFives(view);
  return item.ends.map((end) => ({
    end,
    number: openEnds(view).find((e) => e.end === end)?.number ?? null,
    points: fives ? (item.points[end] ?? 0) : null,
  }));
}

/** Every open end with its number, left, right, up, down: `open_ends`, else the two ends of
 * the line (older servers). */
export function openEnds(view: TableView): { end: EndName; number: number }[] {
  const out: { end: EndName; number: number }[] = [];
  for (const open of view.openEnds) {
    const end = endName(open.end);
    if (end !== null && !out.some((e) => e.end === end)) out.push({ end, number: open.number });
  }
  if (out.length === 0 && view.leftEnd !== undefined && view.rightEnd !== undefined) {
    out.push({ end: "left", number: view.leftEnd }, { end: "right", number: view.rightEnd });
  }
  return out.sort((a, b) => END_ORDER.indexOf(a.end) - END_ORDER.indexOf(b.end));
}

/** The open ends' total (all fives, seed 002), from the laid tiles. */
export function viewEndsTotal(view: TableView): number {
  const placed = (tiles: readonly { left: number; right: number; seat: number }[]) =>
    tiles.map((p) => ({ left: p.left, right: p.right, seat: p.seat }));
  return endsTotal(placed(view.chain), view.spinnerIndex ?? null, placed(view.upArm), placed(view.downArm));
}

/** Under all fives, the open ends and their total in words (« Bouts : gauche 3 · droite 5 ·
 * haut 4 · bas 4 — total 16 »); null for other rule sets and on an empty table. */
export function endsModel(view: TableView, lang: Lang): { ends: { end: EndName; number: number }[]; total: number; text: string } | null {
  if (!isFives(view) || view.chain.length === 0) return null;
  const ends = openEnds(view);
  const total = viewEndsTotal(view);
  return { ends, total, text: endsLine(ends.map((e) => ({ word: endWord(e.end, lang), number: e.number })), total, lang) };
}

/** « Ana marque 10 » after a play that scored at once (all fives), else null. */
export function scoredLine(view: TableView, lang: Lang): string | null {
  const action = view.lastAction;
  if (action?.kind !== ActionKind.PLAYED || action.seat === undefined || action.points === 0) return null;
  return scoredText(nameOf(view, action.seat), action.points, lang);
}

/** A game won by a play (all fives, seed 002): the target reached by points scored at once,
 * the round not played out. Null otherwise. */
export function endedByPlay(view: TableView): { name: string; points: number; target: number; score: number } | null {
  const action = view.lastAction;
  if (view.phase !== Phase.FINISHED || view.lastRound !== undefined) return null;
  if (action?.kind !== ActionKind.PLAYED || action.seat === undefined || action.points === 0) return null;
  const side = sideOf(view, action.seat);
  return { name: nameOf(view, action.seat), points: action.points, target: view.target, score: sideScores(view)[side] ?? 0 };
}

/** The line of the game-over screen for a game won by a play, else null. */
export function endedByPlayLine(view: TableView, lang: Lang): string | null {
  const ended = endedByPlay(view);
  return ended === null ? null : endedByPlayText(ended.name, ended.points, ended.target, lang);
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
  return endName(action.move.end);
}

export interface ChainState {
  /** The line, from its left end to its right end. */
  chain: Placed[];
  /** The newest tile's index in `chain` (null: none, or it lies on an arm). */
  newest: number | null;
  /** All fives: the spinner's index in `chain`, null before the first double. */
  spinner: number | null;
  /** All fives: the spinner's short sides, from the spinner outward. */
  up: Placed[];
  down: Placed[];
  /** The arm the newest tile lies on ("line": the chain, see `newest`). */
  newestArm: Arm;
}

/** The layout of `view` with its newest tile, given the previous state (see newestIndex;
 * a tile laid on a short side is the last one of its arm). */
export function chainState(view: TableView, previous: ChainState | null): ChainState {
  const placed = (tiles: readonly { left: number; right: number; seat: number }[]) =>
    tiles.map((p) => ({ left: p.left, right: p.right, seat: p.seat }));
  const chain = placed(view.chain);
  const up = placed(view.upArm);
  const down = placed(view.downArm);
  const spinner = view.spinnerIndex ?? null;
  const end = playedEnd(view);
  if (end === "up" || end === "down") {
    return { chain, newest: null, spinner, up, down, newestArm: end };
  }
  if (
    end === null &&
    previous !== null &&
    previous.newestArm !== "line" &&
    previous.chain.length === chain.length &&
    previous.up.length === up.length &&
    previous.down.length === down.length &&
    chain.length > 0
  ) {
    return { chain, newest: null, spinner, up, down, newestArm: previous.newestArm };
  }
  const line = end === "left" || end === "right" ? end : null;
  const before = previous !== null && previous.newestArm === "line" ? previous : previous === null ? null : { chain: previous.chain, newest: null };
  return { chain, newest: newestIndex(chain, line, before), spinner, up, down, newestArm: "line" };
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
  /** Finished rounds, by round number: the side that scored (null: nobody), the scores
   * after it (index = side), whether sides are teams. */
  rounds: RoundRecord[];
}

export interface RoundRecord {
  round: number;
  side: number | null;
  points: number;
  scores: number[];
  teams: boolean;
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
      const firstTile = view.chain.length === 1 && view.upArm.length === 0 && view.downArm.length === 0;
      const end = firstTile ? "first" : (endName(action.move.end) ?? "right");
      entry = { kind: "played", name, low: action.move.tile.low, high: action.move.tile.high, end, auto, points: action.points };
    } else if (action.kind === ActionKind.PASSED) {
      entry = { kind: "passed", name, passedOn: action.passedOn, auto };
    } else if (action.kind === ActionKind.DREW) {
      entry = { kind: "drew", name, count: Math.max(1, action.drawn), auto };
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
        side: scoringSide(view, summary),
        points: summary.points,
        scores: sideScores(view),
        teams: playsInTeams(view),
      },
    ].sort((a, b) => a.round - b.round);
  }
  return { moves, rounds };
}

/** The side that scored a round, null when nobody did (a tie nobody wins). */
export function scoringSide(view: TableView, s: RoundSummary): number | null {
  if (s.scoringSide !== undefined) return s.scoringSide;
  if (view.rules !== undefined && !view.rules.teams) return null;
  if (s.scoringTeam === Team.A) return 0;
  if (s.scoringTeam === Team.B) return 1;
  return null;
}

/** « Manche 2 · équipe B +17 → A 17 · B 30 », « Manche 3 · Ana +12 → Ana 12 · Ben 0 · Chloé 5 ». */
export function roundLines(history: History, view: TableView, lang: Lang): string[] {
  return history.rounds.map((r) => {
    const label = (side: number) => (r.teams ? (side === 1 ? "B" : "A") : nameOf(view, side));
    const who = r.side === null ? null : label(r.side);
    const scores = r.scores.map((score, side) => `${label(side)} ${score}`).join(" · ");
    return `${roundScoreLine(r.round, who, r.points, lang)} → ${scores}`;
  });
}

// -- summaries -----------------------------------------------------------------------------

export function summaryInput(view: TableView, s: RoundSummary, lang: Lang = "fr"): SummaryInput {
  const outcome =
    s.outcome === RoundOutcome.DOMINO
      ? "domino"
      : s.outcome === RoundOutcome.BLOCKED_TIE || s.tieRuleApplied
        ? "tie"
        : s.outcome === RoundOutcome.BLOCKED
          ? "blocked"
          : "unknown";
  const teams = playsInTeams(view);
  const count = seatCount(view);
  const side = scoringSide(view, s);
  const scoringTeam = teams ? (side === 1 || s.scoringTeam === Team.B ? "B" : "A") : "A";
  const r = view.rules;
  const allOthers = r?.dominoScore === DominoScore.ALL_OTHERS;
  const seats = Array.from({ length: count }, (_, seat) => seat);
  const scored =
    s.dominoSeat === undefined
      ? []
      : allOthers || !teams
        ? seats.filter((seat) => seat !== s.dominoSeat)
        : seats.filter((seat) => seat % 2 !== s.dominoSeat! % 2);
  const pips = s.sidePips.length > 0 ? [...s.sidePips] : [s.teamAPips, s.teamBPips];
  const rules: SummaryRules | undefined =
    r === undefined
      ? undefined
      : {
          teams,
          seats: count,
          stock: r.draw,
          domino: allOthers ? "all_others" : "opponents",
          blocked:
            r.blockedScore === BlockedScore.OTHERS_MINUS_OWN
              ? "others_minus_own"
              : r.blockedScore === BlockedScore.ALL_TILES
                ? "all_tiles"
                : "others_total",
          tie:
            r.blockedTie === BlockedTie.NOBODY
              ? "nobody"
              : r.blockedTie === BlockedTie.HAND_OR_NEAREST
                ? "hand_or_nearest"
                : "last_placer",
          scorer: side === null ? null : sideSubject(view, side, lang),
          sides: pips.map((points, i) => ({ label: sideLabel(view, i, lang), points })),
          scorerPips: side === null ? 0 : (pips[side] ?? 0),
        };
  return {
    roundNumber: s.roundNumber,
    unrounded: isFives(view) && side !== null ? s.unroundedPoints : null,
    outcome,
    scoringTeam,
    points: s.points,
    dominoName: s.dominoSeat !== undefined ? nameOf(view, s.dominoSeat) : null,
    dominoTeam: s.dominoSeat !== undefined ? teamOf(s.dominoSeat) : null,
    teamAPips: s.teamAPips,
    teamBPips: s.teamBPips,
    opponents: scored.map((seat) => ({
      name: nameOf(view, seat),
      points: s.hands.find((h) => h.seat === seat)?.points ?? 0,
    })),
    rules,
  };
}

/** The summary of the round that just ended, or [] when the view carries none. */
export function roundSummary(view: TableView, lang: Lang): string[] {
  return view.lastRound === undefined ? [] : summaryLines(summaryInput(view, view.lastRound, lang), lang);
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

/** The winning side once the game is over (a team's index with teams, else the seat). */
export function winnerSide(view: TableView): number | null {
  if (view.winnerSide !== undefined) return view.winnerSide;
  const team = winnerTeam(view);
  return team === null ? null : team === "A" ? 0 : 1;
}

/** The winner of a game without teams: name, score, the others' scores, whether it is you. */
export function winnerSeat(view: TableView): { name: string; score: number; others: { name: string; score: number }[]; you: boolean } | null {
  const side = winnerSide(view);
  if (side === null || playsInTeams(view)) return null;
  const scores = sideScores(view);
  const others = Array.from({ length: seatCount(view) }, (_, seat) => seat)
    .filter((seat) => seat !== side)
    .map((seat) => ({ name: nameOf(view, seat), score: scores[seat] ?? 0 }))
    .sort((a, b) => b.score - a.score);
  return { name: nameOf(view, side), score: scores[side] ?? 0, others, you: side === view.yourSeat };
}

/** The score panel's lines: one per team with its members, or one per seat. */
export function scoreLines(view: TableView, lang: Lang): { id: string; text: string }[] {
  const scores = sideScores(view);
  if (playsInTeams(view)) {
    return (["A", "B"] as const).map((team, i) => ({
      id: `score-${team.toLowerCase()}`,
      text: `${teamLabel(team, lang, true)} (${teamMembers(view, team).join(", ")}) : ${scores[i] ?? 0}`,
    }));
  }
  return Array.from({ length: seatCount(view) }, (_, seat) => ({
    id: `score-seat-${seat}`,
    text: `${nameOf(view, seat)}${lang === "fr" ? " : " : ": "}${scores[seat] ?? 0}`,
  }));
}

/** « Pioche : 13 dominos », or null for rule sets without a stock. */
export function stockText(view: TableView, lang: Lang): string | null {
  return hasStock(view) ? t("stock", lang, { tiles: tilesCount(view.stockSize, lang) }) : null;
}

/** The hint above your hand on your turn. */
export function handHint(view: TableView): "mustDraw" | "mustPass" | "pickTile" {
  return view.canDraw ? "mustDraw" : view.canPass ? "mustPass" : "pickTile";
}

export function winnerTeam(view: TableView): "A" | "B" | null {
  if (view.rules !== undefined && !view.rules.teams) return null;
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
  seats: number;
  youAreHost: boolean;
  canStart: boolean;
  message: string;
  /** « Donnez ce code aux deux autres joueurs : » */
  share: string;
  targets: number[];
}

/** The classic targets (R16), 50-500 in steps of 50. */
export const TARGETS: readonly number[] = Array.from({ length: 10 }, (_, i) => (i + 1) * 50);

export function lobbyModel(view: TableView, lang: Lang): LobbyModel {
  const seats = seatCount(view);
  const seated = view.seats.slice(0, seats).filter((s) => s.occupied).length;
  const youAreHost = view.seats[view.yourSeat]?.host ?? false;
  const hostSeat = view.seats.findIndex((s) => s.host);
  const hostName = nameOf(view, hostSeat === -1 ? 0 : hostSeat);
  const count = countWord(seats, lang);
  const Count = count[0]!.toUpperCase() + count.slice(1);
  const full = seated >= seats;
  const message = youAreHost
    ? full
      ? t("readyHost", lang, { count })
      : t("needSeats", lang, { n: seated, seats, count, Count })
    : t("waitHost", lang, { host: hostName, count });
  const share = seats === 2 ? t("shareCodeOne", lang) : t("shareCode", lang, { count: countWord(seats - 1, lang) });
  return { seated, seats, youAreHost, canStart: youAreHost && full, message, share, targets: lobbyTargets(view) };
}
