// Four scripted seats play one whole game through the public API: the host creates a table,
// three players join with its invitation code, each opens its own view stream, the host
// starts, and each seat, on its turn, lays the first of its view's `legal_moves` (or passes
// when `can_pass`), until the table is FINISHED.
//
// A development tool, never a player (S2): scripted seats play only at a table they create
// and fill themselves.

import * as grpc from "@grpc/grpc-js";

import {
  DominosClient,
  type ClientOptions,
  type Seat,
  type TableView,
  describe,
  has,
  isMyTurn,
  isOver,
  isServiceError,
} from "./client.js";

export interface GameOptions {
  address: string;
  target?: number;
  names?: string[];
  client?: ClientOptions;
  /** Called with every view of every seat's stream, in the order each seat received them. */
  onView?: (seat: number, view: TableView) => void;
  log?: (line: string) => void;
  /** Give up (abort every stream, reject) after this long. */
  timeoutMs?: number;
}

export interface GameResult {
  /** Each seat's last view (index = seat), PHASE_FINISHED. */
  finals: TableView[];
  /** Views each seat's stream delivered. */
  viewCounts: number[];
  /** Tiles laid and passes made by the seats themselves (index = seat). */
  actions: number[];
  rounds: number;
  elapsedMs: number;
  serverVersion: string;
}

const DEFAULT_NAMES = ["Ana", "Bruno", "Chloé", "Dario"];

/** Plays one game; resolves with every seat's final view once all four streams ended. */
export async function playGame(options: GameOptions): Promise<GameResult> {
  const started = performance.now();
  const log = options.log ?? (() => {});
  const names = options.names ?? DEFAULT_NAMES;
  // One connection per player, like four devices: grpc-js would otherwise share one HTTP/2
  // connection between clients of the same address and options (its global subchannel pool).
  const clientOptions = {
    ...options.client,
    channelOptions: { "grpc.use_local_subchannel_pool": 1, ...options.client?.channelOptions },
  };
  const clients = await Promise.all(
    names.map(() => DominosClient.connect(options.address, clientOptions)),
  );
  const abort = new AbortController();
  const timeoutMs = options.timeoutMs ?? 150_000;
  const timer = setTimeout(
    () => abort.abort(new Error(`no finished game after ${timeoutMs} ms`)),
    timeoutMs,
  );
  try {
    const host = clients[0]!;
    const created = await host.createTable(names[0]!, options.target ?? 50);
    log(
      `table created by ${names[0]} (seat ${created.seat.seat}), invitation code ${created.invitationCode}`,
    );
    const seats: Seat[] = [created.seat];
    for (let i = 1; i < names.length; i++) {
      const joined = await clients[i]!.joinTable(created.invitationCode, names[i]!);
      seats.push(joined.seat);
      log(`${names[i]} joined in seat ${joined.seat.seat}`);
    }
    const opened = seats.map(() => deferred<void>());
    const counts = seats.map(() => 0);
    const actions = seats.map(() => 0);
    const finals: (TableView | undefined)[] = seats.map(() => undefined);
    const runs = seats.map(async (seat, i) => {
      const client = clients[i]!;
      let actedAt = -1;
      for await (const view of client.watch(seat, { signal: abort.signal })) {
        counts[i]!++;
        opened[i]!.resolve();
        options.onView?.(seat.seat, view);
        finals[i] = view;
        if (isMyTurn(view) && view.version !== actedAt) {
          actedAt = view.version;
          if (await act(client, seat, view)) actions[i]!++;
        }
      }
      // The stream ends by itself (OK) after the final view (FINISHED or CLOSED).
      if (!abort.signal.aborted && !(finals[i] !== undefined && isOver(finals[i]!))) {
        throw new Error(`seat ${i}'s stream ended before the table was over`);
      }
    });
    for (const run of runs) run.catch(() => {}); // awaited below; no unhandled rejection meanwhile
    // Start only once every seat watches, so none is seen disconnected (and played for).
    await Promise.race([Promise.all(opened.map((o) => o.promise)), Promise.all(runs)]);
    await host.startGame(created.seat);
    log("game started");
    await Promise.all(runs);
    if (abort.signal.aborted) throw abort.signal.reason;
    const last = finals.map((view, i) => {
      if (view === undefined) throw new Error(`seat ${i} received no view`);
      return view;
    });
    return {
      finals: last,
      viewCounts: counts,
      actions,
      rounds: last[0]!.round_number,
      elapsedMs: performance.now() - started,
      serverVersion: host.serverInfo?.server_version ?? "?",
    };
  } finally {
    clearTimeout(timer);
    abort.abort();
    for (const client of clients) client.close();
  }
}

/** Plays the first legal move, or passes when allowed. A refusal because the view was
 * overtaken (the table moved on: the turn ran out and the table played) is expected: the
 * next view tells what to do. Returns whether the seat acted. */
async function act(client: DominosClient, seat: Seat, view: TableView): Promise<boolean> {
  const move = view.legal_moves[0];
  try {
    if (move !== undefined) {
      await client.playTile(seat, move, { expectedVersion: view.version });
    } else if (view.can_pass) {
      await client.pass(seat, { expectedVersion: view.version });
    } else {
      return false;
    }
    return true;
  } catch (err) {
    if (
      isServiceError(err) &&
      (err.code === grpc.status.ABORTED || err.code === grpc.status.FAILED_PRECONDITION)
    ) {
      return false;
    }
    throw new Error(`seat ${seat.seat} could not act: ${describe(err)}`, { cause: err });
  }
}

/** "Team A 57 - Team B 12, won by TEAM_A" */
export function scoreLine(view: TableView): string {
  const winner = typeof view.winner === "string" ? view.winner : `unknown team ${view.winner}`;
  return `Team A ${view.score_team_a} - Team B ${view.score_team_b}, won by ${winner}`;
}

/** "round 2: ROUND_OUTCOME_DOMINO by seat 0, TEAM_A scores 23" */
export function roundLine(view: TableView): string | undefined {
  const summary = view.last_round;
  if (summary === null) return undefined;
  const by = has(summary.domino_seat) ? ` by seat ${summary.domino_seat}` : "";
  return `round ${summary.round_number}: ${summary.outcome}${by}, ${summary.scoring_team} scores ${summary.points}`;
}

function deferred<T>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}
