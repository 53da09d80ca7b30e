// The messages of protos/dominos/v1/game.proto as @grpc/proto-loader decodes them with the
// options of client.ts (LOADER_OPTIONS): field names as in the .proto (keepCase), every
// non-optional scalar and repeated field present with its default (defaults), absent
// sub-messages as null, `optional` fields absent (undefined) unless set, 64-bit integers as
// numbers (every int64/uint64 of this contract is a version or a millisecond timestamp, far
// below 2^53), enums as their names.
//
// Enums: a newer server may send a value this client does not know; proto-loader then gives
// the number instead of a name. Every enum type below is therefore `Name | number`: compare
// with names, never switch exhaustively without a default.
//
// `optional` fields (seat 0 is a valid value, and falsy in JS): test presence with
// `has(view.turn_seat)` / `!== undefined`, never with truthiness.

/** An enum value: one of the names this client knows, or the number of one it does not. */
export type EnumValue<Name extends string> = Name | number;

export type End = EnumValue<"END_UNSPECIFIED" | "END_LEFT" | "END_RIGHT">;
export type Team = EnumValue<"TEAM_UNSPECIFIED" | "TEAM_A" | "TEAM_B">;
export type Phase = EnumValue<
  | "PHASE_UNSPECIFIED"
  | "PHASE_WAITING"
  | "PHASE_PLAYING"
  | "PHASE_ROUND_OVER"
  | "PHASE_FINISHED"
  | "PHASE_CLOSED"
>;
export type RoundOutcome = EnumValue<
  | "ROUND_OUTCOME_UNSPECIFIED"
  | "ROUND_OUTCOME_DOMINO"
  | "ROUND_OUTCOME_BLOCKED"
  | "ROUND_OUTCOME_BLOCKED_TIE"
>;
export type AutoPlayCause = EnumValue<
  "AUTO_PLAY_CAUSE_UNSPECIFIED" | "AUTO_PLAY_CAUSE_TIMEOUT" | "AUTO_PLAY_CAUSE_AWAY"
>;
export type ActionKind = EnumValue<
  | "ACTION_KIND_UNSPECIFIED"
  | "ACTION_KIND_CREATED"
  | "ACTION_KIND_JOINED"
  | "ACTION_KIND_LEFT"
  | "ACTION_KIND_TARGET_SET"
  | "ACTION_KIND_ROUND_DEALT"
  | "ACTION_KIND_PLAYED"
  | "ACTION_KIND_PASSED"
  | "ACTION_KIND_PRESENCE"
>;

export interface Tile {
  low: number;
  high: number;
}

export interface Move {
  tile: Tile | null;
  end: End;
}

export interface PlacedTile {
  left: number;
  right: number;
  seat: number;
}

export interface LastAction {
  kind: ActionKind;
  /** optional: unset for ROUND_DEALT. */
  seat?: number;
  move: Move | null;
  passed_on: number[];
  auto_play: AutoPlayCause;
  connected: boolean;
}

export interface SeatInfo {
  seat: number;
  occupied: boolean;
  name: string;
  team: Team;
  host: boolean;
  tile_count: number;
  passed_on: number[];
  connected: boolean;
}

export interface RevealedHand {
  seat: number;
  tiles: Tile[];
  points: number;
}

export interface RoundSummary {
  round_number: number;
  outcome: RoundOutcome;
  scoring_team: Team;
  points: number;
  /** optional: set for DOMINO only. */
  domino_seat?: number;
  team_a_pips: number;
  team_b_pips: number;
  last_tile_team: Team;
  hands: RevealedHand[];
  tie_rule_applied: boolean;
  opener_seat: number;
}

export interface TableView {
  table_id: string;
  version: number;
  phase: Phase;
  target: number;
  score_team_a: number;
  score_team_b: number;
  seats: SeatInfo[];
  your_seat: number;
  hand: Tile[];
  legal_moves: Move[];
  can_pass: boolean;
  /** optional: set in PHASE_PLAYING only. Seat 0 is a valid value. */
  turn_seat?: number;
  turn_deadline_ms: number;
  server_time_ms: number;
  round_number: number;
  opener_seat: number;
  chain: PlacedTile[];
  /** optional: unset while the chain is empty. 0 is a valid value. */
  left_end?: number;
  /** optional: unset while the chain is empty. 0 is a valid value. */
  right_end?: number;
  last_round: RoundSummary | null;
  winner: Team;
  last_action: LastAction | null;
  consecutive_passes: number;
}

export interface ServerInfo {
  server_version: string;
  contract: string;
  min_ping_interval_ms: number;
  streams_per_seat: number;
}

/** Whether an `optional` field is set (0 included). */
export function has<T>(value: T | undefined | null): value is T {
  return value !== undefined && value !== null;
}

/** Whether it is `view`'s own seat's turn to act. */
export function isMyTurn(view: TableView): boolean {
  return view.phase === "PHASE_PLAYING" && has(view.turn_seat) && view.turn_seat === view.your_seat;
}

/** Whether the table has reached an end state (no more views will follow). */
export function isOver(view: TableView): boolean {
  return view.phase === "PHASE_FINISHED" || view.phase === "PHASE_CLOSED";
}

/** "3-5" */
export function tileText(tile: Tile | null): string {
  return tile === null ? "?" : `${tile.low}-${tile.high}`;
}
