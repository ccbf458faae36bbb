/**
 * Google API errors → `GatewayError`. Google answers `{"error":{"code","message","status",
 * "details":[…]}}` (google.rpc.Status); the error keeps the HTTP status, Google's message, and
 * the canonical status name (`INVALID_ARGUMENT`, `RESOURCE_EXHAUSTED`…) as `code`. A
 * `retry-after` header is kept; without one, a `google.rpc.RetryInfo` detail's `retryDelay`
 * (`"34.4s"`) becomes one, rounded up to whole seconds. Bodies of another shape go through the
 * shared `upstreamError`.
 */
import { GatewayError } from "../../../common/errors.ts";
import { isObject, type JsonObject } from "../../../common/schemas/fields.ts";
import type { Headers } from "../translator.ts";
import { errorTypeForStatus, upstreamError } from "../upstream-error.ts";
import { readUpstreamJson } from "../upstream-json.ts";

const RETRY_INFO = "type.googleapis.com/google.rpc.RetryInfo";
const DURATION = /^(\d+(?:\.\d+)?)s$/;

/** An error response body (status >= 400) → the error the client should see. */
export function geminiError(status: number, headers: Headers, body: Buffer): GatewayError {
  const json = readUpstreamJson(body);
  return isObject(json) && isObject(json.error) ? googleStatusError(status, json.error, headers) : upstreamError(status, headers, body);
}

/**
 * A `google.rpc.Status` object → `GatewayError`. `status` is the HTTP status when there is one;
 * inside a stream (already answered 200) pass the status's own `code`.
 */
export function googleStatusError(status: number, error: JsonObject, headers: Headers = {}): GatewayError {
  const message = typeof error.message === "string" && error.message.length > 0 ? error.message : `Gemini returned HTTP ${status}`;
  const keep: Record<string, string> = {};
  const retryAfter = headers["retry-after"] ?? retryDelaySeconds(error.details);
  if (retryAfter !== undefined) keep["retry-after"] = retryAfter;
  return new GatewayError(status, errorTypeForStatus(status), message, {
    headers: keep,
    ...(typeof error.status === "string" && { code: error.status }),
  });
}

/**
 * The status an error object inside a 200 body or stream stands for: its `code` when that is an
 * HTTP error status, else 502. `499 CANCELLED` is 502 too: Gearbox did not cancel, the upstream
 * gave up, and the client must not read it as its own fault.
 */
export function statusOfGoogleError(error: JsonObject): number {
  const code = error.code;
  return typeof code === "number" && Number.isInteger(code) && code >= 400 && code <= 599 && code !== 499 ? code : 502;
}

function retryDelaySeconds(details: unknown): string | undefined {
  if (!Array.isArray(details)) return undefined;
  for (const detail of details) {
    if (!isObject(detail) || detail["@type"] !== RETRY_INFO || typeof detail.retryDelay !== "string") continue;
    const seconds = DURATION.exec(detail.retryDelay)?.[1];
    if (seconds !== undefined) return String(Math.ceil(Number(seconds)));
  }
  return undefined;
}
