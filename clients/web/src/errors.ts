// Refusals as the client decides on them: the Connect code, the machine-readable reason
// (google.rpc.ErrorInfo in the error's details), the budget's name and the server's wait
// (RetryInfo). Decide on these, never on the message text.

import { Code, ConnectError } from "@connectrpc/connect";
import { ErrorInfoSchema, RetryInfoSchema } from "./gen/google/rpc/error_details_pb";

export interface Refusal {
  code: Code;
  /** `ErrorInfo.reason` (e.g. "NOT_YOUR_TURN"), or null when the error carries none (the
   * network, the browser, a proxy). */
  reason: string | null;
  /** `ErrorInfo.metadata["limit"]` of a RATE_LIMITED refusal. */
  limit: string | null;
  /** `RetryInfo.retry_delay` in milliseconds, or null. */
  retryAfterMs: number | null;
}

export function refusalOf(error: unknown): Refusal {
  const err = ConnectError.from(error);
  let reason: string | null = null;
  let limit: string | null = null;
  let retryAfterMs: number | null = null;
  try {
    for (const info of err.findDetails(ErrorInfoSchema)) {
      if (info.reason !== "") {
        reason = info.reason;
        limit = info.metadata["limit"] ?? null;
        break;
      }
    }
    for (const retry of err.findDetails(RetryInfoSchema)) {
      const delay = retry.retryDelay;
      if (delay !== undefined) {
        retryAfterMs = Number(delay.seconds) * 1000 + Math.floor(delay.nanos / 1e6);
        break;
      }
    }
  } catch {
    // A detail that does not decode is ignored: the code still says what to do.
  }
  return { code: err.code, reason, limit, retryAfterMs };
}

/** Whether a command may be sent again unchanged, with the same request id: the server acts
 * at most once, so after UNAVAILABLE, DEADLINE_EXCEEDED, a dropped connection (UNKNOWN or
 * INTERNAL without a reason: the browser's fetch failed) or RATE_LIMITED (after its wait). */
export function isRetryable(r: Refusal): boolean {
  if (r.code === Code.Unavailable || r.code === Code.DeadlineExceeded) return true;
  if (r.code === Code.ResourceExhausted) return r.reason === "RATE_LIMITED";
  if (r.code === Code.Unknown || r.code === Code.Internal || r.code === Code.Canceled)
    return r.reason === null;
  return false;
}

/** No reason and a transport-level code: the server was not reached or did not answer. */
export function isNetwork(r: Refusal): boolean {
  return (
    r.reason === null &&
    (r.code === Code.Unavailable ||
      r.code === Code.DeadlineExceeded ||
      r.code === Code.Unknown ||
      r.code === Code.Internal ||
      r.code === Code.Canceled)
  );
}

/** The seat is gone for good: forget it (TOKEN_INVALID, TABLE_NOT_FOUND, GAME_OVER when
 * reading, TOKEN_MISSING cannot be fixed by retrying either). */
export function seatIsGone(r: Refusal): boolean {
  return r.reason === "TOKEN_INVALID" || r.reason === "TABLE_NOT_FOUND";
}

/** Backoff of the client guide: 0.2 s doubling up to 5 s, ±20 % jitter, never less than the
 * server's RetryInfo. `random` is injectable for tests. */
export function backoffMs(
  attempt: number,
  retryAfterMs: number | null,
  random: () => number = Math.random,
): number {
  const base = Math.min(200 * 2 ** attempt, 5000);
  const jittered = base * (0.8 + 0.4 * random());
  return retryAfterMs !== null ? Math.max(retryAfterMs, jittered) : jittered;
}
