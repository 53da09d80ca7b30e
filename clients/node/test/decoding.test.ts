// Offline: how views and errors are decoded (no gateway needed).

import assert from "node:assert/strict";
import { inspect } from "node:util";
import { describe, it } from "node:test";
import * as grpc from "@grpc/grpc-js";

import {
  DEFAULT_RETRY,
  DETAILS_KEY,
  Seat,
  type TableView,
  has,
  isMyTurn,
  limitOf,
  loadContract,
  newRequestId,
  reasonOf,
  retryDelayOf,
  retryWaitMs,
  rpcTypes,
} from "../src/client.js";

/** A view as the gateway would send it, decoded with the client's loader options. */
function roundTrip(view: object): TableView {
  const method = loadContract()["dominos.v1.DominosService"] as grpc.ServiceDefinition;
  const rpc = method["GetTableView"]!;
  return (rpc.responseDeserialize(rpc.responseSerialize({ view })) as { view: TableView }).view;
}

/** An error as grpc-js reports it, with a `grpc-status-details-bin` trailer. */
function serviceError(
  code: grpc.status,
  details: { type_url: string; value: Uint8Array }[] | Buffer,
): grpc.ServiceError {
  const metadata = new grpc.Metadata();
  const trailer = Buffer.isBuffer(details)
    ? details
    : Buffer.from(
        rpcTypes.Status.encode(
          rpcTypes.Status.fromObject({ code, message: "m", details }),
        ).finish(),
      );
  metadata.set(DETAILS_KEY, trailer);
  return Object.assign(new Error("m"), { code, details: "m", metadata });
}

function errorInfo(reason: string, domain = "dominos.v1", metadata: Record<string, string> = {}) {
  const value = rpcTypes.ErrorInfo.encode(
    rpcTypes.ErrorInfo.fromObject({ reason, domain, metadata }),
  ).finish();
  return { type_url: "type.googleapis.com/google.rpc.ErrorInfo", value };
}

function retryInfo(seconds: number, nanos: number) {
  const value = rpcTypes.RetryInfo.encode(
    rpcTypes.RetryInfo.fromObject({ retry_delay: { seconds, nanos } }),
  ).finish();
  return { type_url: "type.googleapis.com/google.rpc.RetryInfo", value };
}

describe("decoding views", () => {
  it("tells a set optional 0 (seat 0's turn) from an unset one", () => {
    const zero = roundTrip({
      phase: "PHASE_PLAYING",
      your_seat: 0,
      turn_seat: 0,
      left_end: 0,
      right_end: 6,
    });
    assert.equal(zero.turn_seat, 0);
    assert.ok(has(zero.turn_seat) && has(zero.left_end));
    assert.ok(isMyTurn(zero), "seat 0's turn is seat 0's turn, although 0 is falsy");
    const unset = roundTrip({ phase: "PHASE_ROUND_OVER", your_seat: 0 });
    assert.ok(!has(unset.turn_seat) && !has(unset.left_end) && !has(unset.right_end));
    assert.ok(!isMyTurn(unset));
    assert.equal(unset.last_round, null, "an absent message is null");
    assert.deepEqual(unset.hand, [], "an empty repeated field is []");
  });

  it("keeps an unknown enum value as its number instead of failing", () => {
    const view = roundTrip({ phase: 42, winner: 7, last_action: { kind: 99 } });
    assert.equal(view.phase, 42);
    assert.equal(view.winner, 7);
    assert.equal(view.last_action!.kind, 99);
    assert.ok(!isMyTurn(view));
  });
});

describe("decoding errors", () => {
  it("reads the reason, the limit and the retry delay of a RATE_LIMITED refusal", () => {
    const err = serviceError(grpc.status.RESOURCE_EXHAUSTED, [
      errorInfo("RATE_LIMITED", "dominos.v1", { limit: "connections_per_address" }),
      retryInfo(1, 500_000_000),
    ]);
    assert.equal(reasonOf(err), "RATE_LIMITED");
    assert.equal(limitOf(err), "connections_per_address");
    assert.equal(retryDelayOf(err), 1500);
    const wait = retryWaitMs(err, 0, DEFAULT_RETRY)!;
    assert.ok(wait >= 1500 && wait < 1700, `waits the RetryInfo delay, not ${wait}`);
  });

  it("never throws on a missing, foreign or malformed trailer", () => {
    const plain = Object.assign(new Error("x"), {
      code: grpc.status.UNAVAILABLE,
      details: "x",
      metadata: new grpc.Metadata(),
    });
    assert.equal(reasonOf(plain), undefined);
    assert.equal(reasonOf(new Error("not grpc")), undefined);
    assert.equal(
      reasonOf(serviceError(grpc.status.INTERNAL, Buffer.from([0xff, 0xff, 0xff]))),
      undefined,
    );
    assert.equal(
      reasonOf(serviceError(grpc.status.INTERNAL, [errorInfo("X", "other.domain")])),
      undefined,
    );
    assert.equal(
      reasonOf(
        serviceError(grpc.status.INTERNAL, [
          { type_url: "type.googleapis.com/x.Y", value: new Uint8Array([1]) },
        ]),
      ),
      undefined,
    );
  });

  it("retries UNAVAILABLE and DEADLINE_EXCEEDED, not refusals", () => {
    const plain = (code: grpc.status) =>
      Object.assign(new Error(), { code, details: "", metadata: new grpc.Metadata() });
    assert.ok(retryWaitMs(plain(grpc.status.UNAVAILABLE), 0, DEFAULT_RETRY)! > 0);
    assert.ok(retryWaitMs(plain(grpc.status.DEADLINE_EXCEEDED), 0, DEFAULT_RETRY)! > 0);
    assert.equal(
      retryWaitMs(plain(grpc.status.UNAVAILABLE), DEFAULT_RETRY.attempts - 1, DEFAULT_RETRY),
      undefined,
    );
    const invalid = serviceError(grpc.status.INVALID_ARGUMENT, [errorInfo("TILE_MALFORMED")]);
    assert.equal(retryWaitMs(invalid, 0, DEFAULT_RETRY), undefined);
    const tooLong = serviceError(grpc.status.RESOURCE_EXHAUSTED, [
      errorInfo("RATE_LIMITED"),
      retryInfo(3600, 0),
    ]);
    assert.equal(
      retryWaitMs(tooLong, 0, DEFAULT_RETRY),
      undefined,
      "an hour's wait goes to the caller",
    );
  });
});

describe("request ids and seats", () => {
  it("draws request ids valid for CreateTable and JoinTable", () => {
    const ids = new Set<string>();
    for (let i = 0; i < 1000; i++) {
      const id = newRequestId();
      assert.match(id, /^[A-Za-z0-9_-]{22}$/);
      assert.ok(new Set(id).size >= 6);
      ids.add(id);
    }
    assert.equal(ids.size, 1000);
  });

  it("keeps the seat token out of logs", () => {
    const seat = new Seat("t".repeat(22), 0, "secret-token-value");
    assert.equal(seat.token, "secret-token-value");
    assert.ok(!JSON.stringify(seat).includes("secret"));
    assert.ok(!inspect(seat).includes("secret"));
  });
});
