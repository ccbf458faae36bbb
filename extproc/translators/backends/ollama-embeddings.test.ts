/** Canonical embeddings ⇄ Ollama `/api/embed`, both ways, over the docs' embed examples. */
import assert from "node:assert/strict";
import { test } from "node:test";
import type { EmbeddingsRequest, EmbeddingsResponse } from "../../../common/canonical/types.ts";
import { GatewayError } from "../../../common/errors.ts";
import { loadJsonFixture, readFixtureBytes } from "../../../test/emulators/fixtures.ts";
import type { BackendContext } from "../codec.ts";
import { ollamaEmbeddingsBackend } from "./ollama.ts";

const ctx = (): BackendContext => ({ upstreamModel: "all-minilm", forceStreamUsage: false });

function request(overrides: Partial<EmbeddingsRequest> = {}): EmbeddingsRequest {
  return { model: "text-embedding-3-small", input: ["Why is the sky blue?"], singleInput: true, extra: {}, ...overrides };
}

function body(req: EmbeddingsRequest): Record<string, unknown> {
  const upstream = ollamaEmbeddingsBackend.request(req, ctx());
  assert.equal(upstream.path, "/api/embed");
  assert.deepEqual(upstream.headers, { "content-type": "application/json" });
  assert.ok(upstream.body);
  return JSON.parse(upstream.body.toString("utf8")) as Record<string, unknown>;
}

function decode(fixture: string, format: "float" | "base64" | undefined): EmbeddingsResponse {
  const context = ctx();
  ollamaEmbeddingsBackend.request(request({ encodingFormat: format }), context);
  const result = ollamaEmbeddingsBackend.response(readFixtureBytes(fixture, "json"), {}, context);
  assert.ok(result.ok);
  return result.value;
}

const docVectors = (fixture: string): number[][] => (loadJsonFixture(fixture) as { embeddings: number[][] }).embeddings;

test("request: one input stays a string, several stay an array, dimensions and Ollama's own fields pass", () => {
  assert.deepEqual(body(request()), { model: "all-minilm", input: "Why is the sky blue?" });
  assert.deepEqual(body(request({ input: ["Why is the sky blue?", "Why is the grass green?"], singleInput: false, dimensions: 256 })), {
    model: "all-minilm",
    input: ["Why is the sky blue?", "Why is the grass green?"],
    dimensions: 256,
  });
  const native = body(request({ encodingFormat: "base64", user: "u1", extra: { truncate: false, keep_alive: "1m", options: { num_ctx: 512 }, other: 1 } }));
  assert.deepEqual(native, { model: "all-minilm", input: "Why is the sky blue?", truncate: false, keep_alive: "1m", options: { num_ctx: 512 } });
});

test("request: token-array input is a 400 naming 'input'", () => {
  assert.throws(
    () => ollamaEmbeddingsBackend.request(request({ input: [[1, 2, 3]] }), ctx()),
    (err: unknown) => err instanceof GatewayError && err.status === 400 && err.param === "input" && err.code === "unsupported_parameter",
  );
});

test("response: the docs' single-input example → one float vector, usage from prompt_eval_count", () => {
  const res = decode("ollama/embed", "float");
  assert.equal(res.model, "all-minilm");
  assert.deepEqual(res.data, [{ index: 0, embedding: docVectors("ollama/embed")[0] }]);
  assert.deepEqual(res.usage, { inputTokens: 8, outputTokens: 0, totalTokens: 8 });
});

test("response: the docs' multiple-input example → indexed vectors; no prompt_eval_count means 0 (Go omitempty)", () => {
  const res = decode("ollama/embed-multiple", undefined);
  assert.deepEqual(
    res.data.map((d) => d.index),
    [0, 1],
  );
  assert.deepEqual(
    res.data.map((d) => d.embedding),
    docVectors("ollama/embed-multiple"),
  );
  assert.deepEqual(res.usage, { inputTokens: 0, outputTokens: 0, totalTokens: 0 });
});

test("response: a request asking for base64 still gets float vectors from the backend (base64 is the composer's job)", () => {
  const res = decode("ollama/embed-multiple", "base64");
  assert.deepEqual(
    res.data,
    docVectors("ollama/embed-multiple").map((embedding, index) => ({ index, embedding })),
  );
  const unseen = ollamaEmbeddingsBackend.response(readFixtureBytes("ollama/embed", "json"), {}, ctx());
  assert.ok(unseen.ok);
  assert.deepEqual(unseen.value.data, [{ index: 0, embedding: docVectors("ollama/embed")[0] }], "a context never seen by request() gets the same floats");
});

test("response: malformed bodies are 502s", () => {
  for (const text of ["{", "{}", '{"embeddings":[[0.1,"x"]]}', '{"embeddings":"no"}', "[]"]) {
    const result = ollamaEmbeddingsBackend.response(Buffer.from(text), {}, ctx());
    assert.ok(!result.ok, text);
    assert.deepEqual([result.errors[0]?.status, result.errors[0]?.code], [502, "upstream_malformed"], text);
  }
});

test("errors: Ollama's 404 for a missing model keeps its status and message", () => {
  const err = ollamaEmbeddingsBackend.error(404, {}, readFixtureBytes("ollama/error-model-not-found", "json"));
  assert.deepEqual([err.status, err.code, err.message], [404, "model_not_found", "model 'llama3.2' not found"]);
  const bad = ollamaEmbeddingsBackend.error(400, {}, Buffer.from('{"error":"invalid input type"}'));
  assert.deepEqual([bad.status, bad.type, bad.message], [400, "invalid_request_error", "invalid input type"]);
});
