/** Canonical embeddings ⇄ Gemini `embedContent` / `batchEmbedContents`. */
import assert from "node:assert/strict";
import { test } from "node:test";
import type { EmbeddingsRequest } from "../../../common/canonical/types.ts";
import { GatewayError } from "../../../common/errors.ts";
import { geminiEmbeddingsBackend } from "./gemini.ts";

const ctx = (upstreamModel = "gemini-embedding-001") => ({ upstreamModel, forceStreamUsage: false });
const req = (input: string[] | number[][], more: Partial<EmbeddingsRequest> = {}): EmbeddingsRequest => ({
  model: "text-embedding-3-small",
  input,
  singleInput: input.length === 1,
  extra: {},
  ...more,
});
const json = (b: Buffer | undefined): unknown => JSON.parse(b?.toString("utf8") ?? "null");

test("one input → embedContent with outputDimensionality; several → batchEmbedContents naming the model in each request", () => {
  const single = geminiEmbeddingsBackend.request(req(["hello"], { dimensions: 8 }), ctx());
  assert.equal(single.path, "/models/gemini-embedding-001:embedContent");
  assert.deepEqual(single.headers, { "content-type": "application/json" });
  assert.deepEqual(json(single.body), { content: { parts: [{ text: "hello" }] }, outputDimensionality: 8 });
  const batch = geminiEmbeddingsBackend.request(req(["a", "b"]), ctx("models/text-embedding-004"));
  assert.equal(batch.path, "/models/text-embedding-004:batchEmbedContents");
  assert.deepEqual(json(batch.body), {
    requests: [
      { model: "models/text-embedding-004", content: { parts: [{ text: "a" }] } },
      { model: "models/text-embedding-004", content: { parts: [{ text: "b" }] } },
    ],
  });
});

test("token-array inputs are a 400: Gemini embeds text", () => {
  assert.throws(
    () => geminiEmbeddingsBackend.request(req([[1, 2, 3]]), ctx()),
    (err: unknown) => {
      assert.ok(err instanceof GatewayError);
      assert.deepEqual([err.status, err.param, err.code], [400, "input", "unsupported_parameter"]);
      return true;
    },
  );
});

test("responses: embedding.values and embeddings[].values → float data in order, whatever encoding the request asked", () => {
  const floats = ctx();
  geminiEmbeddingsBackend.request(req(["a"]), floats);
  const one = geminiEmbeddingsBackend.response(Buffer.from(JSON.stringify({ embedding: { values: [0.5, -0.25] } })), {}, floats);
  assert.ok(one.ok);
  assert.deepEqual(one.value, { model: "gemini-embedding-001", data: [{ index: 0, embedding: [0.5, -0.25] }] });
  const b64 = ctx();
  geminiEmbeddingsBackend.request(req(["a", "b"], { encodingFormat: "base64" }), b64);
  const many = geminiEmbeddingsBackend.response(Buffer.from(JSON.stringify({ embeddings: [{ values: [1, 0.5] }, { values: [-2] }] })), {}, b64);
  assert.ok(many.ok);
  assert.deepEqual(
    many.value.data,
    [
      { index: 0, embedding: [1, 0.5] },
      { index: 1, embedding: [-2] },
    ],
    "base64 is the composer's job, not the backend's",
  );
  assert.equal(many.value.usage, undefined, "Gemini reports no usage for embeddings");
  const withUsage = geminiEmbeddingsBackend.response(
    Buffer.from(JSON.stringify({ embedding: { values: [1] }, usageMetadata: { promptTokenCount: 4 } })),
    {},
    floats,
  );
  assert.ok(withUsage.ok);
  assert.deepEqual(withUsage.value.usage, { inputTokens: 4, outputTokens: 0, totalTokens: 4 });
});

test("malformed embeddings responses are 502s", () => {
  for (const body of ["nope", "{}", JSON.stringify({ embeddings: [{ values: ["x"] }] }), JSON.stringify({ embedding: {} })]) {
    const result = geminiEmbeddingsBackend.response(Buffer.from(body), {}, ctx());
    assert.ok(!result.ok, body);
    assert.deepEqual([result.errors[0]?.status, result.errors[0]?.code], [502, "upstream_malformed"], body);
  }
});
