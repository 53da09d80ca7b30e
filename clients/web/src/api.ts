// The calls to dominos.v1.DominosService over the Connect protocol (binary protobuf), on the
// page's own origin: the gateway's web edge serves this page and the API side by side.
//
// - `Authorization: Bearer <seat_token>` on every call but CreateTable/JoinTable/GetServerInfo.
// - Every command gets a fresh request id (crypto.randomUUID(): random, 122 bits, valid for
//   CreateTable/JoinTable too) and keeps it across its retries, so it acts once.
// - Retries of UNAVAILABLE, DEADLINE_EXCEEDED, a failed fetch and RATE_LIMITED (after its
//   RetryInfo), with exponential backoff and jitter, up to 6 attempts.
// - Deadlines per call as the client guide says (10 s commands, 5 s reads).
// - `watch()` follows the view stream and reopens it with backoff, except after a replaced
//   stream (STREAM_REPLACED), a freed seat (TOKEN_INVALID) or a finished table.

import { Code, createClient, type Client, type Transport } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-web";
import { DominosService } from "./gen/dominos/v1/gateway_pb";
import type { MessageInitShape } from "@bufbuild/protobuf";
import { End, Phase, type RuleChoiceSchema, type TableView } from "./gen/dominos/v1/game_pb";
import { backoffMs, isRetryable, refusalOf, type Refusal } from "./errors";

export const COMMAND_TIMEOUT_MS = 10_000;
export const READ_TIMEOUT_MS = 5_000;
export const MAX_ATTEMPTS = 6;

export class CallFailed extends Error {
  constructor(readonly refusal: Refusal) {
    super(`${Code[refusal.code]}${refusal.reason ? ` / ${refusal.reason}` : ""}`);
    this.name = "CallFailed";
  }
}

export interface Seat {
  tableId: string;
  token: string;
}

export type Sleep = (ms: number, signal?: AbortSignal) => Promise<void>;

export const sleep: Sleep = (ms, signal) =>
  new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener("abort", () => {
      clearTimeout(timer);
      resolve();
    });
  });

export function newRequestId(): string {
  return crypto.randomUUID();
}

/** This tab's random id, sent on every call: behind the Ingress the gateway counts the
 * per-connection budgets (wrong invitation codes) by it, so one tab never spends another's. */
export const CLIENT_INSTANCE: string = crypto.randomUUID();

export const CLIENT_HEADER = "X-Dominos-Client";

export function webTransport(baseUrl: string, fetchImpl: typeof fetch = globalThis.fetch): Transport {
  return createConnectTransport({
    baseUrl,
    useBinaryFormat: true,
    fetch: fetchImpl,
    interceptors: [
      (next) => async (request) => {
        request.header.set(CLIENT_HEADER, CLIENT_INSTANCE);
        return next(request);
      },
    ],
  });
}

export function bearer(token: string): HeadersInit {
  return { Authorization: `Bearer ${token}` };
}

/** `call` until it succeeds or fails for good, with the guide's backoff. `onRetry` hears of
 * each wait (to tell the player). */
export async function withRetries<T>(
  call: () => Promise<T>,
  options: { sleep?: Sleep; onRetry?: (r: Refusal, waitMs: number) => void; attempts?: number } = {},
): Promise<T> {
  const attempts = options.attempts ?? MAX_ATTEMPTS;
  const wait = options.sleep ?? sleep;
  for (let attempt = 0; ; attempt++) {
    try {
      return await call();
    } catch (error) {
      const refusal = refusalOf(error);
      if (!isRetryable(refusal) || attempt + 1 >= attempts) throw new CallFailed(refusal);
      const ms = backoffMs(attempt, refusal.retryAfterMs);
      options.onRetry?.(refusal, ms);
      await wait(ms);
    }
  }
}

export class DominosApi {
  readonly client: Client<typeof DominosService>;

  constructor(
    transport: Transport,
    private readonly onRetry: (r: Refusal, waitMs: number) => void = () => {},
  ) {
    this.client = createClient(DominosService, transport);
  }

  private retried<T>(call: () => Promise<T>): Promise<T> {
    return withRetries(call, { onRetry: this.onRetry });
  }

  /** Creates a table; `rules` unset is the default game (classic), as before rule sets. */
  async createTable(name: string, target: number, rules?: MessageInitShape<typeof RuleChoiceSchema>) {
    const request = { requestId: newRequestId(), hostName: name, target, ...(rules !== undefined ? { rules } : {}) };
    return this.retried(() => this.client.createTable(request, { timeoutMs: COMMAND_TIMEOUT_MS }));
  }

  async joinTable(code: string, name: string) {
    const request = { requestId: newRequestId(), invitationCode: code, playerName: name };
    return this.retried(() => this.client.joinTable(request, { timeoutMs: COMMAND_TIMEOUT_MS }));
  }

  async leaveTable(seat: Seat, expectedVersion: bigint) {
    const request = { requestId: newRequestId(), tableId: seat.tableId, expectedVersion };
    return this.retried(() =>
      this.client.leaveTable(request, { headers: bearer(seat.token), timeoutMs: COMMAND_TIMEOUT_MS }),
    );
  }

  async setTarget(seat: Seat, target: number, expectedVersion: bigint): Promise<TableView | undefined> {
    const request = { requestId: newRequestId(), tableId: seat.tableId, target, expectedVersion };
    const response = await this.retried(() =>
      this.client.setTarget(request, { headers: bearer(seat.token), timeoutMs: COMMAND_TIMEOUT_MS }),
    );
    return response.view;
  }

  async startGame(seat: Seat, expectedVersion: bigint): Promise<TableView | undefined> {
    const request = { requestId: newRequestId(), tableId: seat.tableId, expectedVersion };
    const response = await this.retried(() =>
      this.client.startGame(request, { headers: bearer(seat.token), timeoutMs: COMMAND_TIMEOUT_MS }),
    );
    return response.view;
  }

  async playTile(
    seat: Seat,
    tile: { low: number; high: number },
    end: "left" | "right" | "up" | "down",
    expectedVersion: bigint,
  ): Promise<TableView | undefined> {
    const request = {
      requestId: newRequestId(),
      tableId: seat.tableId,
      tile,
      end: { left: End.LEFT, right: End.RIGHT, up: End.UP, down: End.DOWN }[end],
      expectedVersion,
    };
    const response = await this.retried(() =>
      this.client.playTile(request, { headers: bearer(seat.token), timeoutMs: COMMAND_TIMEOUT_MS }),
    );
    return response.view;
  }

  async pass(seat: Seat, expectedVersion: bigint): Promise<TableView | undefined> {
    const request = { requestId: newRequestId(), tableId: seat.tableId, expectedVersion };
    const response = await this.retried(() =>
      this.client.pass(request, { headers: bearer(seat.token), timeoutMs: COMMAND_TIMEOUT_MS }),
    );
    return response.view;
  }

  /** Draws one tile from the stock (`can_draw`); the turn goes on. */
  async drawTile(seat: Seat, expectedVersion: bigint): Promise<TableView | undefined> {
    const request = { requestId: newRequestId(), tableId: seat.tableId, expectedVersion };
    const response = await this.retried(() =>
      this.client.drawTile(request, { headers: bearer(seat.token), timeoutMs: COMMAND_TIMEOUT_MS }),
    );
    return response.view;
  }

  async getTableView(seat: Seat): Promise<TableView | undefined> {
    const response = await this.retried(() =>
      this.client.getTableView(
        { tableId: seat.tableId },
        { headers: bearer(seat.token), timeoutMs: READ_TIMEOUT_MS },
      ),
    );
    return response.view;
  }
}

export type WatchEnd =
  | { kind: "finished" }
  | { kind: "replaced" }
  | { kind: "gone"; refusal: Refusal }
  | { kind: "stopped" };

export interface WatchHandlers {
  onView(view: TableView): void;
  /** The stream broke and is reopened in `waitMs`. */
  onReconnecting(refusal: Refusal, waitMs: number): void;
}

/** Streams `seat`'s views to `handlers.onView` until the table finishes or closes, the
 * stream is replaced (not reopened: the newer one is live), the seat is gone, or `signal`
 * aborts. Breaks are reopened with backoff honouring RetryInfo; the backoff resets once a
 * reopened stream delivers a view. */
export async function watch(
  api: DominosApi,
  seat: Seat,
  handlers: WatchHandlers,
  signal: AbortSignal,
  wait: Sleep = sleep,
): Promise<WatchEnd> {
  let attempt = 0;
  let last: TableView | null = null;
  while (!signal.aborted) {
    try {
      const stream = api.client.watchTable({ tableId: seat.tableId }, { headers: bearer(seat.token), signal });
      for await (const message of stream) {
        attempt = 0;
        if (message.view !== undefined) {
          last = message.view;
          handlers.onView(message.view);
        }
      }
      if (last !== null && (last.phase === Phase.FINISHED || last.phase === Phase.CLOSED)) {
        return { kind: "finished" };
      }
      // Ended OK before the end of the table: reopen (a gateway moving its clients).
    } catch (error) {
      if (signal.aborted) break;
      const refusal = refusalOf(error);
      if (refusal.reason === "STREAM_REPLACED") return { kind: "replaced" };
      if (refusal.reason === "TOKEN_INVALID" || refusal.reason === "TABLE_NOT_FOUND" || refusal.reason === "TOKEN_MISSING") {
        return { kind: "gone", refusal };
      }
      // A gateway shutting down says UNAVAILABLE/UNAVAILABLE: another answers at once.
      const ms =
        refusal.reason === "UNAVAILABLE" && refusal.retryAfterMs === null
          ? 50 + 250 * Math.random()
          : backoffMs(attempt, refusal.retryAfterMs);
      attempt += 1;
      handlers.onReconnecting(refusal, ms);
      await wait(ms, signal);
      continue;
    }
    await wait(backoffMs(attempt++, null), signal);
  }
  return { kind: "stopped" };
}
