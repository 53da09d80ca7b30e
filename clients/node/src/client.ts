// A small typed client of dominos.v1.DominosService (protos/dominos/v1/gateway.proto), on
// @grpc/grpc-js with the .proto files loaded at run time by @grpc/proto-loader (no code
// generation). What it does for its caller, each as the contract asks:
//
// - one channel per client, with keepalive at the documented minimum ping interval (10 s,
//   raised to whatever GetServerInfo's `min_ping_interval_ms` says), also while no call is open;
// - `authorization: Bearer <seat token>` metadata on every call but CreateTable / JoinTable;
// - a deadline on every unary call (the view stream has none: keepalive watches it);
// - a fresh random request id per command (22 characters of base64url, 128 bits: also valid
//   for CreateTable / JoinTable, whose ids are secrets), kept across the retries of that
//   command so that it acts once;
// - retries of UNAVAILABLE and DEADLINE_EXCEEDED with exponential backoff and jitter, and of
//   RESOURCE_EXHAUSTED / RATE_LIMITED after its RetryInfo delay;
// - decoding of the rich errors (errors.ts: reasonOf, retryDelayOf, limitOf);
// - a view stream (watch) that reopens after UNAVAILABLE and drops views older than the
//   newest one it gave.

import { randomBytes } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";

import { isServiceError, reasonOf, retryDelayOf } from "./errors.js";
import { DEFAULT_PROTOS_DIR } from "./protos.js";
import type { Move, ServerInfo, TableView } from "./types.js";

export * from "./errors.js";
export * from "./types.js";

/** The shortest keepalive interval the contract lets a client use (gateway.proto,
 * "Keepalive"; services/common/grpc_server.py MIN_CLIENT_PING_INTERVAL_MS). */
export const DOCUMENTED_MIN_PING_INTERVAL_MS = 10_000;
/** How long the client waits for a ping's answer before it deems the connection dead. */
export const PING_TIMEOUT_MS = 10_000;
/** The default deadline of one unary call (one attempt). */
export const DEFAULT_DEADLINE_MS = 5_000;
export { DEFAULT_PROTOS_DIR } from "./protos.js";

/** How proto-loader turns messages into objects; see types.ts for what follows from each. */
export const LOADER_OPTIONS: protoLoader.Options = {
  keepCase: true, // field names exactly as in the .proto: `your_seat`, `legal_moves`
  longs: Number, // int64/uint64 here are versions and ms timestamps, < 2^53
  enums: String, // names; an unknown value stays a number (never throws)
  defaults: true, // scalars and repeated fields always present; `optional` ones only when set
  oneofs: true, // also sets `_turn_seat: "turn_seat"` etc. for set `optional` fields
};

export interface RetryPolicy {
  /** Attempts in all, the first included. */
  attempts: number;
  /** Backoff of the first retry; doubles with each further one, up to maxBackoffMs. */
  baseBackoffMs: number;
  maxBackoffMs: number;
  /** A RATE_LIMITED refusal asking to wait longer than this is given to the caller. */
  maxRetryDelayMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = {
  attempts: 6,
  baseBackoffMs: 100,
  maxBackoffMs: 2_000,
  maxRetryDelayMs: 5_000,
};

export interface ClientOptions {
  /** TLS in production: grpc.credentials.createSsl(); plain text by default (local cluster). */
  credentials?: grpc.ChannelCredentials;
  /** Deadline of one attempt of a unary call, ms. */
  deadlineMs?: number;
  retry?: Partial<RetryPolicy>;
  protosDir?: string;
  /** Extra channel arguments (they override the client's own). */
  channelOptions?: grpc.ChannelOptions;
}

export interface CallOptions {
  /** The seat token sent as `authorization: Bearer <token>`; none for CreateTable/JoinTable. */
  token?: string | undefined;
  deadlineMs?: number;
  /** Set to make a single attempt. */
  noRetry?: boolean;
}

export interface CommandOptions {
  /** Optimistic concurrency: refused with ABORTED / VERSION_CONFLICT when the table is at
   * another version (0 or unset: no check). */
  expectedVersion?: number;
  /** Reuse a request id (e.g. to retry a command yourself); fresh and random by default. */
  requestId?: string;
}

/** The credentials of one seat. The token is secret: it is kept in a private field, so that
 * logging a Seat (console.log, JSON.stringify) never shows it. */
export class Seat {
  readonly #token: string;

  constructor(
    readonly tableId: string,
    readonly seat: number,
    token: string,
  ) {
    this.#token = token;
  }

  /** The seat token, for the authorization metadata and to store for a reconnection. */
  get token(): string {
    return this.#token;
  }

  toJSON(): object {
    return { tableId: this.tableId, seat: this.seat };
  }
}

export interface SeatedResult {
  seat: Seat;
  view: TableView;
}

export interface CreatedTable extends SeatedResult {
  invitationCode: string;
}

/** A random request id: 16 random bytes as base64url (22 characters, 128 bits). The contract
 * refuses an id of CreateTable/JoinTable with fewer than 6 different characters; a random
 * one practically never has, and is drawn again then. */
export function newRequestId(): string {
  for (;;) {
    const id = randomBytes(16).toString("base64url");
    if (new Set(id).size >= 6) return id;
  }
}

/** How long to wait before attempt `attempt + 1` of a call that failed with `err`, or
 * undefined when it must not be retried. `attempt` counts from 0. */
export function retryWaitMs(
  err: unknown,
  attempt: number,
  policy: RetryPolicy,
): number | undefined {
  if (attempt + 1 >= policy.attempts || !isServiceError(err)) return undefined;
  switch (err.code) {
    case grpc.status.UNAVAILABLE:
    case grpc.status.DEADLINE_EXCEEDED:
      return backoffMs(attempt, policy);
    case grpc.status.RESOURCE_EXHAUSTED: {
      const delay = retryDelayOf(err);
      if (reasonOf(err) !== "RATE_LIMITED" || delay === undefined) return undefined;
      return delay <= policy.maxRetryDelayMs ? delay + Math.random() * 100 : undefined;
    }
    default:
      return undefined;
  }
}

/** Exponential backoff with "equal jitter": half the step fixed, half random. */
export function backoffMs(attempt: number, policy: RetryPolicy): number {
  const step = Math.min(policy.maxBackoffMs, policy.baseBackoffMs * 2 ** attempt);
  return step / 2 + Math.random() * (step / 2);
}

type UnaryMethod = (
  request: object,
  metadata: grpc.Metadata,
  options: grpc.CallOptions,
  callback: (err: grpc.ServiceError | null, response?: unknown) => void,
) => grpc.ClientUnaryCall;
type StreamMethod = (
  request: object,
  metadata: grpc.Metadata,
  options?: grpc.CallOptions,
) => grpc.ClientReadableStream<{ view: TableView | null }>;

const definitions = new Map<string, protoLoader.PackageDefinition>();

/** The contract (gateway.proto and what it imports), loaded once per protos folder. */
export function loadContract(
  protosDir: string = DEFAULT_PROTOS_DIR,
): protoLoader.PackageDefinition {
  let definition = definitions.get(protosDir);
  if (definition === undefined) {
    definition = protoLoader.loadSync(["dominos/v1/gateway.proto"], {
      ...LOADER_OPTIONS,
      includeDirs: [protosDir],
    });
    definitions.set(protosDir, definition);
  }
  return definition;
}

function serviceConstructor(protosDir: string): grpc.ServiceClientConstructor {
  const loaded = grpc.loadPackageDefinition(loadContract(protosDir)) as unknown as {
    dominos: { v1: { DominosService: grpc.ServiceClientConstructor } };
  };
  return loaded.dominos.v1.DominosService;
}

/** One player's connection to a gateway. Use one per player (process) for every call. */
export class DominosClient {
  readonly address: string;
  readonly keepaliveMs: number;
  /** What the gateway said about itself when the client connected. */
  serverInfo: ServerInfo | undefined;
  readonly #stub: grpc.Client;
  readonly #deadlineMs: number;
  readonly #retry: RetryPolicy;

  private constructor(address: string, options: ClientOptions, keepaliveMs: number) {
    this.address = address;
    this.keepaliveMs = keepaliveMs;
    this.#deadlineMs = options.deadlineMs ?? DEFAULT_DEADLINE_MS;
    this.#retry = { ...DEFAULT_RETRY, ...options.retry };
    const Service = serviceConstructor(options.protosDir ?? DEFAULT_PROTOS_DIR);
    this.#stub = new Service(address, options.credentials ?? grpc.credentials.createInsecure(), {
      "grpc.keepalive_time_ms": keepaliveMs,
      "grpc.keepalive_timeout_ms": PING_TIMEOUT_MS,
      "grpc.keepalive_permit_without_calls": 1,
      "grpc.primary_user_agent": "dominos-node-example/0.1",
      ...options.channelOptions,
    });
  }

  /** Opens the channel with keepalive at the documented minimum interval, asks the gateway
   * for its connection rules (GetServerInfo), and reopens the channel slower when the
   * gateway asks for a longer interval than documented. */
  static async connect(address: string, options: ClientOptions = {}): Promise<DominosClient> {
    const client = new DominosClient(address, options, DOCUMENTED_MIN_PING_INTERVAL_MS);
    let info: ServerInfo;
    try {
      info = await client.getServerInfo();
    } catch (err) {
      client.close();
      throw err;
    }
    if (info.min_ping_interval_ms <= client.keepaliveMs) {
      client.serverInfo = info;
      return client;
    }
    client.close();
    const slower = new DominosClient(address, options, info.min_ping_interval_ms);
    slower.serverInfo = info;
    return slower;
  }

  close(): void {
    this.#stub.close();
  }

  /** One unary call by method name, with its deadline and, unless `noRetry`, the retries of
   * the client's policy (the same request, so the same request id, each time). */
  async call<Response>(
    method: string,
    request: object,
    options: CallOptions = {},
  ): Promise<Response> {
    const fn = (this.#stub as unknown as Record<string, UnaryMethod>)[method];
    if (typeof fn !== "function") throw new TypeError(`no RPC ${method}`);
    const metadata = authorization(options.token);
    const deadlineMs = options.deadlineMs ?? this.#deadlineMs;
    for (let attempt = 0; ; attempt++) {
      try {
        return await new Promise<Response>((resolve, reject) => {
          fn.call(
            this.#stub,
            request,
            metadata,
            { deadline: Date.now() + deadlineMs },
            (err, response) => (err ? reject(err) : resolve(response as Response)),
          );
        });
      } catch (err) {
        const wait = options.noRetry ? undefined : retryWaitMs(err, attempt, this.#retry);
        if (wait === undefined) throw err;
        await sleep(wait);
      }
    }
  }

  async getServerInfo(): Promise<ServerInfo> {
    return this.call<ServerInfo>("GetServerInfo", {});
  }

  /** Creates a table (target 50..500 in steps of 50; 0: the default, 100). */
  async createTable(
    hostName: string,
    target = 0,
    options: CommandOptions = {},
  ): Promise<CreatedTable> {
    const response = await this.call<{
      table_id: string;
      invitation_code: string;
      seat: number;
      seat_token: string;
      view: TableView;
    }>("CreateTable", {
      request_id: options.requestId ?? newRequestId(),
      host_name: hostName,
      target,
    });
    return {
      seat: new Seat(response.table_id, response.seat, response.seat_token),
      invitationCode: response.invitation_code,
      view: response.view,
    };
  }

  /** Takes the lowest free seat of the table with this invitation code. */
  async joinTable(
    invitationCode: string,
    playerName: string,
    options: CommandOptions = {},
  ): Promise<SeatedResult> {
    const response = await this.call<{
      table_id: string;
      seat: number;
      seat_token: string;
      view: TableView;
    }>("JoinTable", {
      request_id: options.requestId ?? newRequestId(),
      invitation_code: invitationCode,
      player_name: playerName,
    });
    return {
      seat: new Seat(response.table_id, response.seat, response.seat_token),
      view: response.view,
    };
  }

  async leaveTable(seat: Seat, options: CommandOptions = {}): Promise<number> {
    const response = await this.#command<{ version: number }>("LeaveTable", seat, {}, options);
    return response.version;
  }

  async setTarget(seat: Seat, target: number, options: CommandOptions = {}): Promise<TableView> {
    return (await this.#command<{ view: TableView }>("SetTarget", seat, { target }, options)).view;
  }

  async startGame(seat: Seat, options: CommandOptions = {}): Promise<TableView> {
    return (await this.#command<{ view: TableView }>("StartGame", seat, {}, options)).view;
  }

  async playTile(seat: Seat, move: Move, options: CommandOptions = {}): Promise<TableView> {
    const request = { tile: move.tile, end: move.end };
    return (await this.#command<{ view: TableView }>("PlayTile", seat, request, options)).view;
  }

  async pass(seat: Seat, options: CommandOptions = {}): Promise<TableView> {
    return (await this.#command<{ view: TableView }>("Pass", seat, {}, options)).view;
  }

  async getTableView(seat: Seat): Promise<TableView> {
    const response = await this.call<{ view: TableView }>(
      "GetTableView",
      { table_id: seat.tableId },
      { token: seat.token },
    );
    return response.view;
  }

  async #command<Response>(
    method: string,
    seat: Seat,
    fields: object,
    options: CommandOptions,
  ): Promise<Response> {
    const request = {
      request_id: options.requestId ?? newRequestId(),
      table_id: seat.tableId,
      expected_version: options.expectedVersion ?? 0,
      ...fields,
    };
    return this.call<Response>(method, request, { token: seat.token });
  }

  /** The seat's views, from the current one on, until the table finishes or closes (the
   * stream then ends with OK and so does this iterator).
   *
   * The stream is reopened (with backoff) when it ends with UNAVAILABLE (a gateway shutting
   * down or a connection asked to move), with RESOURCE_EXHAUSTED (a RATE_LIMITED refusal,
   * after its delay; or grpc-js's report of a GOAWAY "too_many_pings"), or DEADLINE_EXCEEDED.
   * Views come in increasing version order: one not newer than the last given is dropped.
   * Any other error ends the iteration by throwing: PERMISSION_DENIED / TOKEN_INVALID (the
   * seat was freed) or ABORTED / STREAM_REPLACED (a newer stream of the token is live: do
   * not reopen). Breaking out of the loop, or aborting `signal`, cancels the stream. */
  async *watch(
    seat: Seat,
    options: { signal?: AbortSignal; maxReconnects?: number } = {},
  ): AsyncGenerator<TableView, void, undefined> {
    const method = (this.#stub as unknown as Record<string, StreamMethod>)["WatchTable"]!;
    const maxReconnects = options.maxReconnects ?? 20;
    let newest = -1;
    let failures = 0;
    while (!options.signal?.aborted) {
      const call = method.call(this.#stub, { table_id: seat.tableId }, authorization(seat.token));
      const cancel = (): void => call.cancel();
      options.signal?.addEventListener("abort", cancel, { once: true });
      try {
        for await (const message of call as AsyncIterable<{ view: TableView | null }>) {
          failures = 0;
          const view = message.view;
          if (view !== null && view.version > newest) {
            newest = view.version;
            yield view;
          }
        }
        return;
      } catch (err) {
        if (options.signal?.aborted) return;
        const wait = streamRetryWaitMs(err, failures++, maxReconnects, this.#retry);
        if (wait === undefined) throw err;
        await sleep(wait);
      } finally {
        options.signal?.removeEventListener("abort", cancel);
        call.cancel();
      }
    }
  }
}

function streamRetryWaitMs(
  err: unknown,
  failures: number,
  maxReconnects: number,
  policy: RetryPolicy,
): number | undefined {
  if (failures >= maxReconnects || !isServiceError(err)) return undefined;
  switch (err.code) {
    case grpc.status.UNAVAILABLE:
    case grpc.status.DEADLINE_EXCEEDED:
      return backoffMs(failures, policy);
    case grpc.status.RESOURCE_EXHAUSTED: {
      const reason = reasonOf(err);
      // No reason: grpc-js's report of a GOAWAY "too_many_pings" (it slows its pings itself).
      if (reason === undefined) return backoffMs(failures, policy);
      if (reason !== "RATE_LIMITED") return undefined;
      return Math.max(retryDelayOf(err) ?? 0, backoffMs(failures, policy));
    }
    default:
      return undefined;
  }
}

function authorization(token: string | undefined): grpc.Metadata {
  const metadata = new grpc.Metadata();
  if (token !== undefined) metadata.set("authorization", `Bearer ${token}`);
  return metadata;
}
