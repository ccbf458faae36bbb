/** The composer on its own, over stub codecs: base64 embeddings, error bodies, a stream that breaks. */
import assert from "node:assert/strict";
import { test } from "node:test";
import type { ChatChunk, ChatRequest, EmbeddingsRequest } from "../../common/canonical/types.ts";
import { GatewayError } from "../../common/errors.ts";
import { fail, ok } from "../../common/result.ts";
import type { BackendContext, ChatBackend, ChatClient, EmbeddingsBackend } from "./codec.ts";
import { composeChat, composeEmbeddings } from "./compose.ts";

const ctx = (): BackendContext => ({ upstreamModel: "stub-embed", forceStreamUsage: false });
const json = (b: Buffer | undefined): unknown => JSON.parse(b?.toString("utf8") ?? "null");

const VECTORS = [[0.1, -2.5, 1 / 3], [7]];

/** Answers `{vectors: number[][]}` with float vectors, as every real embeddings backend now does. */
const floatBackend: EmbeddingsBackend = {
  request: () => ({ path: "/embed", headers: {}, body: Buffer.from("{}") }),
  response(body) {
    const parsed: unknown = JSON.parse(body.toString("utf8"));
    if (typeof parsed !== "object" || parsed === null || !("vectors" in parsed) || !Array.isArray(parsed.vectors)) {
      return fail(new GatewayError(502, "upstream_error", "stub: malformed embeddings", { code: "upstream_malformed" }));
    }
    const vectors = parsed.vectors as number[][];
    return ok({ model: "", data: vectors.map((embedding, index) => ({ index, embedding })), usage: { inputTokens: 3, outputTokens: 0, totalTokens: 3 } });
  },
  error: (status, _headers, body) => new GatewayError(status, "rate_limit_error", `stub: ${body.toString("utf8")}`, { code: "stub_error" }),
};

const embeddingsRequest = (encodingFormat?: "float" | "base64"): EmbeddingsRequest => {
  const req: EmbeddingsRequest = { model: "text-embedding-3-small", input: ["a", "b"], singleInput: false, extra: {} };
  if (encodingFormat !== undefined) req.encodingFormat = encodingFormat;
  return req;
};

const respond = (req: EmbeddingsRequest, status: number, body: string) => composeEmbeddings(floatBackend, req, ctx()).response(status, {}, Buffer.from(body));

test("embeddings: encoding_format base64 turns the backend's floats into base64 float32 in the client body", () => {
  const out = respond(embeddingsRequest("base64"), 200, JSON.stringify({ vectors: VECTORS }));
  assert.equal(out.status, undefined);
  const body = json(out.body) as { data: { index: number; embedding: unknown }[] };
  assert.deepEqual(
    body.data.map((d) => d.index),
    [0, 1],
  );
  const decoded = body.data.map((d) => {
    assert.equal(typeof d.embedding, "string");
    const bytes = Buffer.from(d.embedding as string, "base64");
    return Array.from({ length: bytes.length / 4 }, (_, i) => bytes.readFloatLE(i * 4));
  });
  assert.deepEqual(
    decoded,
    VECTORS.map((v) => v.map(Math.fround)),
  );
  assert.notDeepEqual(decoded[0], VECTORS[0], "0.1 and 1/3 only survive as their float32 roundings");
  assert.deepEqual(out.usage, { inputTokens: 3, outputTokens: 0, totalTokens: 3 });
});

test("embeddings: encoding_format float, or none, keeps the float arrays", () => {
  for (const format of ["float", undefined] as const) {
    const out = respond(embeddingsRequest(format), 200, JSON.stringify({ vectors: VECTORS }));
    assert.deepEqual(
      json(out.body),
      {
        object: "list",
        model: "text-embedding-3-small",
        data: VECTORS.map((embedding, index) => ({ object: "embedding", index, embedding })),
        usage: { prompt_tokens: 3, completion_tokens: 0, total_tokens: 3 },
      },
      String(format),
    );
  }
});

test("embeddings: an upstream error status becomes an OpenAI-shaped error body with that status", () => {
  const out = respond(embeddingsRequest("base64"), 429, "slow down");
  assert.equal(out.status, 429);
  assert.deepEqual(json(out.body), { error: { message: "stub: slow down", type: "rate_limit_error", param: null, code: "stub_error" } });
  assert.equal(out.error?.error.status, 429);
  assert.equal(out.error?.clientShaped, true);
});

test("embeddings: a malformed success body is the backend's 502", () => {
  const out = respond(embeddingsRequest(), 200, JSON.stringify({ nope: true }));
  assert.equal(out.status, 502);
  assert.deepEqual(json(out.body), { error: { message: "stub: malformed embeddings", type: "upstream_error", param: null, code: "upstream_malformed" } });
  assert.equal(out.usage, undefined);
});

const chunk = (id: string): ChatChunk => ({ id, created: 0, model: "stub", choices: [], extra: {} });

test("chat stream: a decoder error mid-stream ends it with exactly one error event; later slices are empty", () => {
  const decoderCalls: string[] = [];
  const backend: ChatBackend = {
    request: () => ({ path: "/chat", headers: {} }),
    response: () => fail(new GatewayError(502, "upstream_error", "unused")),
    error: (status) => new GatewayError(status, "upstream_error", "unused"),
    stream: () => ({
      push(bytes) {
        decoderCalls.push(`push:${bytes.toString("utf8")}`);
        if (decoderCalls.length === 1) return [chunk("c1"), chunk("c2")];
        throw new GatewayError(502, "upstream_error", "stub stream broke", { code: "stream_broken" });
      },
      end() {
        decoderCalls.push("end");
        return [];
      },
    }),
  };
  const client: ChatClient = {
    response: () => Buffer.from("unused"),
    stream: () => ({
      chunk: (c) => Buffer.from(`data:${c.id}\n`),
      end: () => Buffer.from("done\n"),
      error: (err) => Buffer.from(`error:${err.status}:${err.code ?? ""}:${err.message}\n`),
    }),
    error: () => Buffer.from("unused"),
  };
  const req: ChatRequest = { model: "m", messages: [], stream: true, extra: {} };
  const stream = composeChat(client, backend, req, ctx()).stream(200, {});

  assert.equal(stream.push(Buffer.from("one")).body?.toString("utf8"), "data:c1\ndata:c2\n");
  assert.equal(stream.push(Buffer.from("two")).body?.toString("utf8"), "error:502:stream_broken:stub stream broke\n");
  assert.equal(stream.push(Buffer.from("three")).body?.length, 0);
  assert.equal(stream.end().body?.length, 0);
  assert.deepEqual(decoderCalls, ["push:one", "push:two"], "nothing reaches the decoder after it failed");
});
