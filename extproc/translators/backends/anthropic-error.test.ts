/** Anthropic error bodies and in-band error events → the `GatewayError` the client sees. */
import { test } from "node:test";
import assert from "node:assert/strict";
import type { GatewayError } from "../../../common/errors.ts";
import { anthropicBackend } from "./anthropic.ts";
import { anthropicStreamError } from "./anthropic-error.ts";

function body(type: string, message: string): Buffer {
  return Buffer.from(JSON.stringify({ type: "error", error: { type, message }, request_id: "req_011" }));
}

function facts(err: GatewayError): Record<string, unknown> {
  return { status: err.status, type: err.type, message: err.message, code: err.code, param: err.param, headers: err.headers };
}

void test("529 overloaded_error → 503 upstream_error, code and message kept, retry-after kept", () => {
  const err = anthropicBackend.error(529, { "retry-after": "3", "content-type": "application/json" }, body("overloaded_error", "Overloaded"));
  assert.deepEqual(facts(err), {
    status: 503,
    type: "upstream_error",
    message: "Overloaded",
    code: "overloaded_error",
    param: null,
    headers: { "retry-after": "3" },
  });
});

void test("other statuses are kept; the OpenAI type follows the status, the code is Anthropic's type", () => {
  const cases: Array<[number, string, string]> = [
    [400, "invalid_request_error", "invalid_request_error"],
    [401, "authentication_error", "authentication_error"],
    [403, "permission_error", "permission_error"],
    [404, "not_found_error", "not_found_error"],
    [413, "request_too_large", "invalid_request_error"],
    [429, "rate_limit_error", "rate_limit_error"],
    [500, "api_error", "upstream_error"],
    [504, "timeout_error", "upstream_error"],
  ];
  for (const [status, anthropicType, openaiType] of cases) {
    const err = anthropicBackend.error(status, {}, body(anthropicType, `message for ${status}`));
    assert.deepEqual([err.status, err.type, err.code, err.message], [status, openaiType, anthropicType, `message for ${status}`], anthropicType);
  }
  const limited = anthropicBackend.error(
    429,
    { "retry-after": "20" },
    body("rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit"),
  );
  assert.deepEqual(limited.headers, { "retry-after": "20" });
});

void test("a body that is not Anthropic-shaped is read by the generic reader, status still mapped", () => {
  const html = anthropicBackend.error(502, {}, Buffer.from("<html><body>Bad Gateway</body></html>"));
  assert.deepEqual([html.status, html.type, html.message], [502, "upstream_error", "<html><body>Bad Gateway</body></html>"]);
  const bare = anthropicBackend.error(529, {}, Buffer.from(""));
  assert.deepEqual([bare.status, bare.message], [503, "Upstream returned HTTP 503"]);
});

void test("in-band error events: the status follows Anthropic's error type; unreadable ones are 502", () => {
  const event = (type: string): unknown => ({ type: "error", error: { type, message: `m:${type}` } });
  assert.deepEqual(facts(anthropicStreamError(event("overloaded_error"))), {
    status: 503,
    type: "upstream_error",
    message: "m:overloaded_error",
    code: "overloaded_error",
    param: null,
    headers: {},
  });
  assert.deepEqual([anthropicStreamError(event("api_error")).status, anthropicStreamError(event("api_error")).type], [500, "upstream_error"]);
  assert.deepEqual([anthropicStreamError(event("rate_limit_error")).status, anthropicStreamError(event("rate_limit_error")).type], [429, "rate_limit_error"]);
  assert.equal(anthropicStreamError(event("brand_new_error")).status, 502);
  const unreadable = anthropicStreamError({ type: "error", error: "boom" });
  assert.deepEqual([unreadable.status, unreadable.code], [502, "upstream_stream_error"]);
});
