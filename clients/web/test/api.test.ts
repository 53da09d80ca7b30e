import { describe, expect, it } from "vitest";
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, createRouterTransport } from "@connectrpc/connect";
import { DurationSchema } from "@bufbuild/protobuf/wkt";
import { CallFailed, CLIENT_INSTANCE, DominosApi, watch, webTransport, withRetries } from "../src/api";
import { backoffMs, isRetryable, refusalOf } from "../src/errors";
import { DominosService } from "../src/gen/dominos/v1/gateway_pb";
import { Phase, type TableView } from "../src/gen/dominos/v1/game_pb";
import { ErrorInfoSchema, RetryInfoSchema } from "../src/gen/google/rpc/error_details_pb";
import { playingView } from "./fixtures";

function refused(code: Code, reason: string, extra: { limit?: string; retryMs?: number } = {}): ConnectError {
  const details: ConstructorParameters<typeof ConnectError>[3] = [
    {
      desc: ErrorInfoSchema,
      value: { reason, domain: "dominos.v1", metadata: extra.limit ? { limit: extra.limit } : {} },
    },
  ];
  if (extra.retryMs !== undefined) {
    details.push({
      desc: RetryInfoSchema,
      value: { retryDelay: create(DurationSchema, { seconds: BigInt(Math.floor(extra.retryMs / 1000)), nanos: (extra.retryMs % 1000) * 1e6 }) },
    });
  }
  return new ConnectError(`refused: ${reason}`, code, undefined, details);
}

const seat = { tableId: "t1", token: "tok-123" };

describe("refusals", () => {
  it("decodes reason, limit and retry delay from the details", () => {
    const r = refusalOf(refused(Code.ResourceExhausted, "RATE_LIMITED", { limit: "lobby_changes", retryMs: 1500 }));
    expect(r).toEqual({ code: Code.ResourceExhausted, reason: "RATE_LIMITED", limit: "lobby_changes", retryAfterMs: 1500 });
    expect(isRetryable(r)).toBe(true);
    const plain = refusalOf(new TypeError("Failed to fetch"));
    expect(plain.reason).toBeNull();
    expect(isRetryable(plain)).toBe(true);
  });

  it("retries only what acts at most once", () => {
    expect(isRetryable(refusalOf(refused(Code.Unavailable, "UNAVAILABLE")))).toBe(true);
    expect(isRetryable(refusalOf(new ConnectError("x", Code.DeadlineExceeded)))).toBe(true);
    expect(isRetryable(refusalOf(refused(Code.FailedPrecondition, "NOT_YOUR_TURN")))).toBe(false);
    expect(isRetryable(refusalOf(refused(Code.Aborted, "VERSION_CONFLICT")))).toBe(false);
    expect(isRetryable(refusalOf(new ConnectError("too big", Code.ResourceExhausted)))).toBe(false);
  });

  it("backs off exponentially, capped, never under RetryInfo", () => {
    expect(backoffMs(0, null, () => 0.5)).toBe(200);
    expect(backoffMs(3, null, () => 0.5)).toBe(1600);
    expect(backoffMs(10, null, () => 0.5)).toBe(5000);
    expect(backoffMs(0, 3000, () => 0)).toBe(3000);
  });

  it("waits what RetryInfo says before retrying", async () => {
    const waits: number[] = [];
    let calls = 0;
    const result = await withRetries(
      async () => {
        calls += 1;
        if (calls === 1) throw refused(Code.ResourceExhausted, "RATE_LIMITED", { retryMs: 2500 });
        return "ok";
      },
      { sleep: async (ms) => void waits.push(ms) },
    );
    expect(result).toBe("ok");
    expect(waits).toHaveLength(1);
    expect(waits[0]).toBeGreaterThanOrEqual(2500);
  });
});

describe("commands over Connect", () => {
  it("retries UNAVAILABLE with the same request id and the Bearer token", async () => {
    const seen: { id: string; auth: string | null; version: bigint }[] = [];
    const transport = createRouterTransport(({ service }) => {
      service(DominosService, {
        playTile(request, context) {
          seen.push({ id: request.requestId, auth: context.requestHeader.get("authorization"), version: request.expectedVersion });
          if (seen.length < 3) throw new ConnectError("restarting", Code.Unavailable);
          return { view: playingView({ version: 11n }) };
        },
      });
    });
    const api = new DominosApi(transport);
    const view = await api.playTile(seat, { low: 3, high: 6 }, "right", 10n);
    expect(view?.version).toBe(11n);
    expect(seen).toHaveLength(3);
    expect(new Set(seen.map((s) => s.id)).size).toBe(1);
    expect(seen[0]!.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(seen.every((s) => s.auth === "Bearer tok-123" && s.version === 10n)).toBe(true);
    // A new command gets a new id.
    await api.playTile(seat, { low: 3, high: 6 }, "right", 11n);
    expect(seen[3]!.id).not.toBe(seen[0]!.id);
  });

  it("does not retry a refusal of the rules and reports its reason", async () => {
    let calls = 0;
    const transport = createRouterTransport(({ service }) => {
      service(DominosService, {
        pass() {
          calls += 1;
          throw refused(Code.FailedPrecondition, "MUST_PLAY");
        },
      });
    });
    const error = await new DominosApi(transport).pass(seat, 10n).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CallFailed);
    expect((error as CallFailed).refusal.reason).toBe("MUST_PLAY");
    expect(calls).toBe(1);
  });

  it("creates and joins with random secret ids, without a token", async () => {
    const ids: string[] = [];
    const auth: (string | null)[] = [];
    const transport = createRouterTransport(({ service }) => {
      service(DominosService, {
        createTable(request, context) {
          ids.push(request.requestId);
          auth.push(context.requestHeader.get("authorization"));
          return { tableId: "t1", invitationCode: "K7XQ2MPAHR", seat: 0, seatToken: "tok", view: playingView() };
        },
        joinTable(request, context) {
          ids.push(request.requestId);
          auth.push(context.requestHeader.get("authorization"));
          return { tableId: "t1", seat: 1, seatToken: "tok1", view: playingView({ yourSeat: 1 }) };
        },
      });
    });
    const api = new DominosApi(transport);
    expect((await api.createTable("Ana", 0)).invitationCode).toBe("K7XQ2MPAHR");
    expect((await api.joinTable("K7XQ2MPAHR", "Ben")).seat).toBe(1);
    expect(ids[0]).not.toBe(ids[1]);
    for (const id of ids) expect(id.length).toBeGreaterThanOrEqual(22);
    expect(auth).toEqual([null, null]);
  });
});

describe("the view stream", () => {
  function streamServer(script: ((yieldView: (v: TableView) => void) => Promise<void> | void)[]) {
    let opened = 0;
    const transport = createRouterTransport(({ service }) => {
      service(DominosService, {
        async *watchTable() {
          const step = script[Math.min(opened, script.length - 1)]!;
          opened += 1;
          const views: TableView[] = [];
          let failure: unknown = null;
          try {
            await step((v) => views.push(v));
          } catch (error) {
            failure = error;
          }
          for (const view of views) yield { view };
          if (failure !== null) throw failure;
        },
      });
    });
    return { transport, opened: () => opened };
  }

  it("reopens after UNAVAILABLE, honours RetryInfo, ends after the final view", async () => {
    const server = streamServer([
      (send) => {
        send(playingView({ version: 5n }));
        throw new ConnectError("gone", Code.Unavailable);
      },
      () => {
        throw refused(Code.ResourceExhausted, "RATE_LIMITED", { limit: "connections_per_seat", retryMs: 1200 });
      },
      (send) => {
        send(playingView({ version: 5n })); // not newer: the app drops it; watch passes it on
        send(playingView({ version: 7n, phase: Phase.FINISHED }));
      },
    ]);
    const versions: bigint[] = [];
    const waits: number[] = [];
    const end = await watch(
      new DominosApi(server.transport),
      seat,
      { onView: (v) => versions.push(v.version), onReconnecting: () => {} },
      new AbortController().signal,
      async (ms) => void waits.push(ms),
    );
    expect(end).toEqual({ kind: "finished" });
    expect(server.opened()).toBe(3);
    expect(versions).toEqual([5n, 5n, 7n]);
    expect(waits[1]).toBeGreaterThanOrEqual(1200);
  });

  it("does not reopen a replaced stream", async () => {
    const server = streamServer([
      (send) => {
        send(playingView());
        throw refused(Code.Aborted, "STREAM_REPLACED");
      },
    ]);
    const end = await watch(new DominosApi(server.transport), seat, { onView: () => {}, onReconnecting: () => {} }, new AbortController().signal, async () => {});
    expect(end).toEqual({ kind: "replaced" });
    expect(server.opened()).toBe(1);
  });

  it("gives the seat up when its token is refused", async () => {
    const server = streamServer([
      () => {
        throw refused(Code.PermissionDenied, "TOKEN_INVALID");
      },
    ]);
    const end = await watch(new DominosApi(server.transport), seat, { onView: () => {}, onReconnecting: () => {} }, new AbortController().signal, async () => {});
    expect(end.kind).toBe("gone");
    expect(server.opened()).toBe(1);
  });
});

describe("the web transport", () => {
  it("sends this tab's instance id on every call", async () => {
    const seen: (string | null)[] = [];
    const fetchSpy = (async (_input: RequestInfo | URL, init?: RequestInit) => {
      seen.push(new Headers(init?.headers).get("x-dominos-client"));
      return new Response(JSON.stringify({ code: "not_found", message: "no" }), {
        status: 404,
        headers: { "content-type": "application/json" },
      });
    }) as typeof fetch;
    const api = new DominosApi(webTransport("http://gateway.test", fetchSpy), () => {});
    await expect(api.joinTable("ZZZZZZZZZZ", "Eve")).rejects.toBeDefined();
    expect(seen.length).toBeGreaterThan(0);
    expect(seen.every((id) => id === CLIENT_INSTANCE)).toBe(true);
    expect(CLIENT_INSTANCE).toMatch(/^[A-Za-z0-9_-]{8,64}$/);
  });
});
