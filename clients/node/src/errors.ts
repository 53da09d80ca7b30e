// Rich errors of the Dominos API (game.proto, `ErrorReason`).
//
// Every refusal of the services carries, besides the gRPC status code and message, the
// `grpc-status-details-bin` trailer: a serialized `google.rpc.Status` whose `details` are
// `google.protobuf.Any`. The ones this contract sends are `google.rpc.ErrorInfo` (the
// machine-readable `reason`, `domain` "dominos.v1", and for RATE_LIMITED `metadata.limit`)
// and `google.rpc.RetryInfo` (how long to wait before retrying). grpc-js hands the trailer
// over as a Buffer in `error.metadata`; it does not decode it.
//
// The google/rpc messages come from the repository's protos/ (protos/google/rpc, the
// googleapis files the contract imports through dominos/v1/errors.proto); `Any` and
// `Duration` come with protobufjs.

import path from "node:path";

import * as grpc from "@grpc/grpc-js";
import protobuf from "protobufjs";

import { DEFAULT_PROTOS_DIR } from "./protos.js";

/** The `ErrorInfo.domain` of every reason of this contract. */
export const DOMAIN = "dominos.v1";
/** The trailer holding the serialized `google.rpc.Status`. */
export const DETAILS_KEY = "grpc-status-details-bin";

const ERROR_INFO_URL = "type.googleapis.com/google.rpc.ErrorInfo";
const RETRY_INFO_URL = "type.googleapis.com/google.rpc.RetryInfo";

const root = new protobuf.Root();
root.resolvePath = (_origin, target) =>
  target.startsWith("google/protobuf/") ? target : path.join(DEFAULT_PROTOS_DIR, target);
root.loadSync(["google/rpc/status.proto", "google/rpc/error_details.proto"], { keepCase: true });
root.resolveAll();
const StatusType = root.lookupType("google.rpc.Status");
const ErrorInfoType = root.lookupType("google.rpc.ErrorInfo");
const RetryInfoType = root.lookupType("google.rpc.RetryInfo");
/** The protobufjs types of the three messages (to build test trailers, for instance). */
export const rpcTypes = { Status: StatusType, ErrorInfo: ErrorInfoType, RetryInfo: RetryInfoType };
const TO_OBJECT: protobuf.IConversionOptions = { longs: Number, defaults: true };

/** `google.rpc.ErrorInfo`. */
export interface ErrorInfo {
  reason: string;
  domain: string;
  metadata: Record<string, string>;
}

/** What the `grpc-status-details-bin` trailer of one error says. */
export interface RichStatus {
  code: number;
  message: string;
  errorInfo?: ErrorInfo;
  /** `RetryInfo.retry_delay`, in milliseconds. */
  retryDelayMs?: number;
  /** Type URLs of details this client does not decode (kept, never fatal). */
  otherDetails: string[];
}

interface AnyMessage {
  type_url: string;
  value: Uint8Array;
}

const decoded = new WeakMap<object, RichStatus | null>();

/** Whether `err` is an error of a gRPC call (it has a numeric `code`). */
export function isServiceError(err: unknown): err is grpc.ServiceError {
  return (
    typeof err === "object" && err !== null && typeof (err as { code?: unknown }).code === "number"
  );
}

/** The decoded trailer of `err`, or undefined when it has none (e.g. a transport failure) or
 * when it cannot be decoded: a malformed trailer never throws. */
export function richStatusOf(err: unknown): RichStatus | undefined {
  if (!isServiceError(err)) return undefined;
  const cached = decoded.get(err);
  if (cached !== undefined) return cached ?? undefined;
  let status: RichStatus | null = null;
  try {
    status = decode(err.metadata?.get(DETAILS_KEY) ?? []);
  } catch {
    status = null;
  }
  decoded.set(err, status);
  return status ?? undefined;
}

function decode(values: grpc.MetadataValue[]): RichStatus | null {
  const raw = values.find((value): value is Buffer => Buffer.isBuffer(value));
  if (raw === undefined) return null;
  const message = StatusType.toObject(StatusType.decode(raw), TO_OBJECT) as {
    code: number;
    message: string;
    details: AnyMessage[];
  };
  const status: RichStatus = { code: message.code, message: message.message, otherDetails: [] };
  for (const detail of message.details) {
    if (detail.type_url === ERROR_INFO_URL) {
      const info = ErrorInfoType.toObject(ErrorInfoType.decode(detail.value), TO_OBJECT);
      status.errorInfo = {
        reason: String(info.reason),
        domain: String(info.domain),
        metadata: { ...(info.metadata as Record<string, string>) },
      };
    } else if (detail.type_url === RETRY_INFO_URL) {
      const retry = RetryInfoType.toObject(RetryInfoType.decode(detail.value), TO_OBJECT) as {
        retry_delay: { seconds: number; nanos: number } | null;
      };
      if (retry.retry_delay !== null) {
        status.retryDelayMs = retry.retry_delay.seconds * 1000 + retry.retry_delay.nanos / 1e6;
      }
    } else {
      status.otherDetails.push(detail.type_url);
    }
  }
  return status;
}

/** The contract's reason (`ErrorReason` without its prefix, e.g. "NOT_YOUR_TURN"), or
 * undefined when the error carries none (transport failures, gRPC's own refusals such as a
 * request over 64 KiB). A reason this client does not know is returned as is. */
export function reasonOf(err: unknown): string | undefined {
  const info = richStatusOf(err)?.errorInfo;
  return info !== undefined && info.domain === DOMAIN ? info.reason : undefined;
}

/** How long to wait before retrying (`google.rpc.RetryInfo`), in ms; undefined when unsaid. */
export function retryDelayOf(err: unknown): number | undefined {
  return richStatusOf(err)?.retryDelayMs;
}

/** The budget a RATE_LIMITED refusal names (`ErrorInfo.metadata["limit"]`, e.g.
 * "connections_per_address"), or undefined. */
export function limitOf(err: unknown): string | undefined {
  return richStatusOf(err)?.errorInfo?.metadata["limit"];
}

/** The name of a gRPC status code, e.g. "NOT_FOUND" (or the number when unknown). */
export function codeName(code: number): string {
  return grpc.status[code] ?? String(code);
}

/** "NOT_FOUND/CODE_NOT_FOUND: <message>", "RESOURCE_EXHAUSTED/RATE_LIMITED: <message>
 * (limit creates_per_address, retry in 12.3 s)", for logs (never a token or request id). */
export function describe(err: unknown): string {
  if (!isServiceError(err)) return String(err);
  const reason = reasonOf(err);
  const limit = limitOf(err);
  const delay = retryDelayOf(err);
  const extra = [
    ...(limit !== undefined ? [`limit ${limit}`] : []),
    ...(delay !== undefined ? [`retry in ${(delay / 1000).toFixed(1)} s`] : []),
  ];
  return (
    `${codeName(err.code)}${reason ? `/${reason}` : ""}: ${err.details}` +
    (extra.length > 0 ? ` (${extra.join(", ")})` : "")
  );
}
