/**
 * Why a call to a provider failed, as one short label: the HTTP status (`429`, `503`…), `connect`
 * (no connection, or it was reset before the answer), `timeout`, or `breaker_open` (not tried:
 * its breaker is open). Only these failures are retried, fall back and count against a breaker;
 * any other answer (2xx, 4xx but 429) is the provider working.
 */
import { GatewayError } from "../../common/errors.ts";
import type { Headers } from "../processor/outcome.ts";

export type FailureCause = string;

/** The cause when `status` is a failure (429 or 5xx), else undefined. */
export function statusFailure(status: number): FailureCause | undefined {
  return status === 429 || status >= 500 ? String(status) : undefined;
}

/**
 * The cause of a failed answer: Envoy's (and the front door's) local replies for an upstream that
 * could not be reached or timed out keep their status but say `connect` or `timeout`.
 */
export function answerFailure(status: number, headers: Headers, body?: Buffer): FailureCause | undefined {
  const cause = statusFailure(status);
  if (cause === undefined || body === undefined || !(headers["content-type"] ?? "").startsWith("text/plain")) return cause;
  const text = body.subarray(0, 200).toString("utf8");
  if (text.startsWith(LOCAL_REPLY.connect)) return "connect";
  if (text.startsWith(LOCAL_REPLY.timeout)) return "timeout";
  return cause;
}

/** Envoy's local reply bodies for an unreachable upstream (503) and a route timeout (504). */
export const LOCAL_REPLY = {
  connect: "upstream connect error or disconnect/reset before headers",
  timeout: "upstream request timeout",
} as const;

/** The cause of a call that threw: a timeout, else a connection failure. */
export function errorFailure(err: unknown): FailureCause {
  return err instanceof GatewayError && err.code === "upstream_timeout" ? "timeout" : "connect";
}
