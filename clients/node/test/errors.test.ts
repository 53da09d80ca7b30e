// (2) Documented errors come back with their status code and decoded reason (game.proto,
// ErrorReason), and a command retried with its request id acts once.

import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import * as grpc from "@grpc/grpc-js";

import {
  type CreatedTable,
  DominosClient,
  isServiceError,
  limitOf,
  newRequestId,
  reasonOf,
  retryDelayOf,
} from "../src/client.js";
import { GATEWAY } from "./helpers.js";

/** Asserts that `promise` rejects with this status code and reason. */
async function refused(
  promise: Promise<unknown>,
  code: grpc.status,
  reason: string,
): Promise<void> {
  await assert.rejects(promise, (err: unknown) => {
    assert.ok(isServiceError(err), `a gRPC error, not ${String(err)}`);
    assert.equal(grpc.status[err.code], grpc.status[code], err.details);
    assert.equal(reasonOf(err), reason, err.details);
    assert.equal(limitOf(err), undefined);
    assert.equal(retryDelayOf(err), undefined);
    return true;
  });
}

describe("documented errors", { timeout: 30_000 }, () => {
  let client: DominosClient;
  let table: CreatedTable;
  const lobbies: CreatedTable[] = [];

  before(async () => {
    client = await DominosClient.connect(GATEWAY);
    table = await client.createTable("Host", 50);
    lobbies.push(table);
  });
  after(async () => {
    // The host leaving closes the lobby: open lobbies count against the address's budget.
    await Promise.allSettled(lobbies.map((lobby) => client.leaveTable(lobby.seat)));
    client.close();
  });

  it("GetServerInfo gives the contract and the keepalive the client uses", () => {
    const info = client.serverInfo!;
    assert.equal(info.contract, "dominos.v1");
    assert.ok(info.min_ping_interval_ms > 0);
    assert.equal(client.keepaliveMs, Math.max(10_000, info.min_ping_interval_ms));
  });

  it("PlayTile with a malformed tile: INVALID_ARGUMENT / TILE_MALFORMED", async () => {
    await refused(
      client.playTile(table.seat, { tile: { low: 5, high: 2 }, end: "END_LEFT" }),
      grpc.status.INVALID_ARGUMENT,
      "TILE_MALFORMED",
    );
    await refused(
      client.playTile(table.seat, { tile: { low: 2, high: 7 }, end: "END_LEFT" }),
      grpc.status.INVALID_ARGUMENT,
      "TILE_MALFORMED",
    );
  });

  it("PlayTile on no end: INVALID_ARGUMENT / END_MALFORMED", async () => {
    await refused(
      client.playTile(table.seat, { tile: { low: 2, high: 5 }, end: "END_UNSPECIFIED" }),
      grpc.status.INVALID_ARGUMENT,
      "END_MALFORMED",
    );
  });

  it("a call without a seat token: UNAUTHENTICATED / TOKEN_MISSING", async () => {
    await refused(
      client.call("GetTableView", { table_id: table.seat.tableId }, { token: undefined }),
      grpc.status.UNAUTHENTICATED,
      "TOKEN_MISSING",
    );
  });

  it("a wrong seat token: PERMISSION_DENIED / TOKEN_INVALID", async () => {
    await refused(
      client.call("GetTableView", { table_id: table.seat.tableId }, { token: "x".repeat(43) }),
      grpc.status.PERMISSION_DENIED,
      "TOKEN_INVALID",
    );
  });

  it("JoinTable with an unknown code: NOT_FOUND / CODE_NOT_FOUND", async () => {
    // A well-formed code (the alphabet and length of a real one) that no table has.
    const alphabet = "ABCDEFGHJKMNPQRSTVWXYZ23456789";
    const code = table.invitationCode.replace(
      /./g,
      () => alphabet[Math.floor(Math.random() * alphabet.length)]!,
    );
    await refused(client.joinTable(code, "Nobody"), grpc.status.NOT_FOUND, "CODE_NOT_FOUND");
  });

  it("StartGame with one player seated: FAILED_PRECONDITION / NOT_ENOUGH_PLAYERS", async () => {
    await refused(
      client.startGame(table.seat),
      grpc.status.FAILED_PRECONDITION,
      "NOT_ENOUGH_PLAYERS",
    );
  });

  it("CreateTable with a guessable request id: INVALID_ARGUMENT / REQUEST_ID_MALFORMED", async () => {
    await refused(
      client.createTable("Host", 50, { requestId: "request-1" }),
      grpc.status.INVALID_ARGUMENT,
      "REQUEST_ID_MALFORMED",
    );
  });

  it("a retried CreateTable (same request id) answers the same table and seat token", async () => {
    const requestId = newRequestId();
    const first = await client.createTable("Again", 100, { requestId });
    lobbies.push(first);
    const second = await client.createTable("Again", 100, { requestId });
    assert.equal(second.seat.tableId, first.seat.tableId);
    assert.equal(second.seat.token, first.seat.token);
    assert.equal(second.invitationCode, first.invitationCode);
    await refused(
      client.createTable("Other name", 100, { requestId }),
      grpc.status.ALREADY_EXISTS,
      "REQUEST_ID_REUSED",
    );
  });

  it("never logs a seat token", () => {
    assert.ok(!JSON.stringify(table.seat).includes(table.seat.token));
    assert.ok(!String(table.seat).includes(table.seat.token));
  });
});
