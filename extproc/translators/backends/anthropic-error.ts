/**
 * Anthropic errors → `GatewayError`. Anthropic answers `{"type":"error","error":{"type","message"}}`
 * over HTTP, and the same object as an in-band `error` event once a stream has started.
 *
 * The client keeps Anthropic's status, message and error type (as `code`, e.g.
 * `overloaded_error`); the OpenAI error `type` follows the status as for every upstream
 * (`errorTypeForStatus`). One status changes: Anthropic's 529 "overloaded" is not an HTTP status
 * clients and proxies know, so it becomes 503 (service unavailable, try again later), which
 * OpenAI SDKs and retry policies treat as retryable. `retry-after` is kept (429, 529). A body
 * that is not Anthropic-shaped (a proxy's HTML page) is read by the generic `upstreamError`.
 */
import { GatewayError } from "../../../common/errors.ts";
import { isObject } from "../../../common/schemas/fields.ts";
import type { Headers } from "../translator.ts";
import { errorTypeForStatus, upstreamError } from "../upstream-error.ts";
import { readUpstreamJson } from "../upstream-json.ts";

/** Anthropic's "overloaded" status. */
export const ANTHROPIC_OVERLOADED_STATUS = 529;

/** The HTTP status Anthropic uses for each error type; `overloaded_error` as Gearbox maps it. */
const STATUS_BY_TYPE: Readonly<Record<string, number>> = {
  invalid_request_error: 400,
  authentication_error: 401,
  billing_error: 402,
  permission_error: 403,
  not_found_error: 404,
  request_too_large: 413,
  rate_limit_error: 429,
  api_error: 500,
  timeout_error: 504,
  overloaded_error: 503,
};

/** The status the client sees for an upstream status. */
export function clientStatus(status: number): number {
  return status === ANTHROPIC_OVERLOADED_STATUS ? 503 : status;
}

interface AnthropicErrorFields {
  type: string;
  message: string;
}

/** The `error` object of an Anthropic error body, when the value is one. */
function errorFields(json: unknown): AnthropicErrorFields | undefined {
  if (!isObject(json) || json.type !== "error" || !isObject(json.error)) return undefined;
  const { type, message } = json.error;
  if (typeof type !== "string") return undefined;
  return { type, message: typeof message === "string" ? message : `Anthropic returned ${type}` };
}

/** An HTTP error response (status >= 400) → the error the client should see. */
export function anthropicError(status: number, headers: Headers, body: Buffer): GatewayError {
  const shown = clientStatus(status);
  const fields = errorFields(readUpstreamJson(body));
  if (!fields) return upstreamError(shown, headers, body);
  const keep: Record<string, string> = {};
  if (headers["retry-after"]) keep["retry-after"] = headers["retry-after"];
  return new GatewayError(shown, errorTypeForStatus(shown), fields.message, { code: fields.type, headers: keep });
}

/**
 * An in-band `error` event → the error ending the stream. Its status follows Anthropic's error
 * type (HTTP headers are long sent, but the status still tells retryable from not); an event
 * Gearbox cannot read is a 502.
 */
export function anthropicStreamError(json: unknown): GatewayError {
  const fields = errorFields(json);
  if (!fields) return new GatewayError(502, "upstream_error", "The upstream stream failed with an unreadable error event.", { code: "upstream_stream_error" });
  const status = STATUS_BY_TYPE[fields.type] ?? 502;
  return new GatewayError(status, errorTypeForStatus(status), fields.message, { code: fields.type });
}
