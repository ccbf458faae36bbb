/** Recorded Google error bodies → `GatewayError`s with the client-facing status, message and code. */
import assert from "node:assert/strict";
import { test } from "node:test";
import { toErrorResponse, type ErrorType } from "../../../common/errors.ts";
import { loadJsonFixture, readFixtureBytes } from "../../../test/emulators/fixtures.ts";
import { geminiBackend } from "./gemini.ts";
import { geminiEmbeddingsBackend } from "./gemini-embeddings.ts";

const ERRORS: Record<string, [status: number, type: ErrorType, code: string]> = {
  "firebase-gemini/googleai/unary-failure-api-key": [400, "invalid_request_error", "INVALID_ARGUMENT"],
  "firebase-gemini/googleai/unary-failure-generativelanguage-api-not-enabled": [403, "permission_error", "PERMISSION_DENIED"],
  "firebase-gemini/googleai/unary-failure-unknown-model": [404, "not_found_error", "NOT_FOUND"],
  "firebase-gemini/vertexai/unary-failure-api-key": [400, "invalid_request_error", "INVALID_ARGUMENT"],
  "firebase-gemini/vertexai/unary-failure-iam-permission-denied": [403, "permission_error", "PERMISSION_DENIED"],
  "firebase-gemini/vertexai/unary-failure-model-not-found": [404, "not_found_error", "NOT_FOUND"],
  "firebase-gemini/vertexai/unary-failure-quota-exceeded": [429, "rate_limit_error", "RESOURCE_EXHAUSTED"],
  "firebase-gemini/vertexai/unary-failure-unsupported-user-location": [400, "invalid_request_error", "FAILED_PRECONDITION"],
  "vercel-ai/google/google-429-retry-info": [429, "rate_limit_error", "RESOURCE_EXHAUSTED"],
};

for (const [name, [status, type, code]] of Object.entries(ERRORS)) {
  test(`recorded error ${name} → ${status} ${type} ${code}, Google's message`, () => {
    const recorded = loadJsonFixture(name) as { error: { code: number; message: string } };
    assert.equal(recorded.error.code, status, "the body's code is the HTTP status Google sent");
    for (const backend of [geminiBackend, geminiEmbeddingsBackend]) {
      const err = backend.error(status, {}, readFixtureBytes(name, "json"));
      assert.deepEqual([err.status, err.type, err.code, err.message], [status, type, code, recorded.error.message]);
      assert.doesNotMatch(toErrorResponse(err).body.toString(), /key1234|AIzv/, "DebugInfo details (they echo the key) do not reach the client");
    }
  });
}

test("429 with a RetryInfo detail: retryDelay 34.4s becomes retry-after: 35; a retry-after header wins", () => {
  const body = readFixtureBytes("vercel-ai/google/google-429-retry-info", "json");
  assert.deepEqual(geminiBackend.error(429, {}, body).headers, { "retry-after": "35" });
  assert.deepEqual(geminiBackend.error(429, { "retry-after": "7" }, body).headers, { "retry-after": "7" });
  const quota = readFixtureBytes("firebase-gemini/vertexai/unary-failure-quota-exceeded", "json");
  assert.deepEqual(geminiBackend.error(429, {}, quota).headers, {}, "no RetryInfo, no header: nothing invented");
  assert.deepEqual(geminiBackend.error(429, { "retry-after": "3" }, quota).headers, { "retry-after": "3" });
});

test("a streaming request's error body (firebase .txt) maps the same way", () => {
  const body = Buffer.from(
    `{\n  "error": {\n    "code": 400,\n    "message": "Request contains an invalid argument.",\n    "status": "INVALID_ARGUMENT"\n  }\n}\n`,
  );
  const err = geminiBackend.error(400, {}, body);
  assert.deepEqual([err.status, err.code, err.message], [400, "INVALID_ARGUMENT", "Request contains an invalid argument."]);
});

test("bodies that are not Google errors fall back to the shared reader, status kept", () => {
  const html = geminiBackend.error(404, {}, Buffer.from("<html><body>Not Found</body></html>"));
  assert.deepEqual([html.status, html.type, html.message], [404, "not_found_error", "<html><body>Not Found</body></html>"]);
  const empty = geminiBackend.error(503, { "retry-after": "2" }, Buffer.alloc(0));
  assert.deepEqual([empty.status, empty.type, empty.headers], [503, "upstream_error", { "retry-after": "2" }]);
  const noMessage = geminiBackend.error(500, {}, Buffer.from(JSON.stringify({ error: { code: 500, status: "INTERNAL" } })));
  assert.deepEqual([noMessage.status, noMessage.code, noMessage.message], [500, "INTERNAL", "Gemini returned HTTP 500"]);
});
