/**
 * The pure parts of the Ollama engine: the stream mapper's edge cases (thinking, malformed
 * logprobs, unknown done reasons) and the model-info fallbacks. Chunk objects here are
 * hand-written in Ollama's field set (see `ollama-logprobs.test.ts` for what is documented).
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { EngineError, type ModelSpec } from "./engine.ts";
import { capabilitiesOf, contextLengthOf, modelInfoNumber, ollamaModelInfo, requestedNumCtx } from "./ollama-model-info.ts";
import { finishReasonOf, OllamaStreamMapper } from "./ollama-stream.ts";

test("thinking chunks emit nothing and their logprobs are dropped", () => {
  const mapper = new OllamaStreamMapper(100);
  assert.deepEqual(mapper.map({ message: { content: "", thinking: "Hmm" }, logprobs: [{ token: "Hmm", logprob: -1 }] }), []);
  const [event] = mapper.map({ message: { content: "Hi" }, logprobs: [{ token: "Hi", logprob: -0.5 }] });
  assert.ok(event?.type === "token");
  assert.equal(event.logprob, -0.5);
});

test("malformed logprob entries are ignored; bytes outside 0..255 fall back to the UTF-8 of the text", () => {
  const mapper = new OllamaStreamMapper(100);
  const events = mapper.map({ message: { content: "é" }, logprobs: [{ token: "é", logprob: "high" }, { token: "é", logprob: -0.1, bytes: [999] }, 7] });
  assert.deepEqual(events, [{ type: "token", text: "é", logprob: -0.1, bytes: [0xc3, 0xa9], topLogprobs: [] }]);
});

test("a single mismatching entry keeps its alternatives (e.g. a token whose text the server trimmed)", () => {
  const mapper = new OllamaStreamMapper(100);
  const events = mapper.map({ message: { content: "Yes" }, logprobs: [{ token: "Yes\n", logprob: -0.2, top_logprobs: [{ token: "No", logprob: -1.8 }] }] });
  assert.deepEqual(events, [{ type: "token", text: "Yes", logprob: -0.2, bytes: [89, 101, 115], topLogprobs: [{ token: "No", logprob: -1.8 }] }]);
});

test("done without text yields only done; text on the final object comes first", () => {
  const mapper = new OllamaStreamMapper(10);
  const events = mapper.map({ message: { content: "!" }, done: true, done_reason: "stop", prompt_eval_count: 3, eval_count: 2 });
  assert.deepEqual(
    events.map((e) => e.type),
    ["token", "done"],
  );
  assert.equal(mapper.done, true);
  assert.throws(
    () => mapper.map({ message: { content: "late" } }),
    (err: unknown) => err instanceof EngineError && err.code === "engine_crashed",
  );
});

test("finish reasons: stop, length, inferred when absent, an error when unknown", () => {
  assert.equal(finishReasonOf("stop", 10, 10), "stop");
  assert.equal(finishReasonOf("length", 3, 10), "length");
  assert.equal(finishReasonOf(undefined, 10, 10), "length");
  assert.equal(finishReasonOf("", 9, 10), "stop");
  assert.throws(
    () => finishReasonOf("load", 0, 10),
    (err: unknown) => err instanceof EngineError && err.code === "engine_crashed" && /load/.test(err.message),
  );
});

const SPEC: ModelSpec = { id: "m", engine: "ollama", source: "nomic-embed-text" };
const EMBEDDER = {
  model_info: { "general.architecture": "nomic-bert", "nomic-bert.context_length": 2048, "nomic-bert.embedding_length": 768 },
  capabilities: ["embedding"],
};

test("model_info numbers are read under the model's architecture", () => {
  assert.equal(modelInfoNumber(EMBEDDER, "context_length"), 2048);
  assert.equal(modelInfoNumber({ model_info: { "bert.context_length": 512 } }, "context_length"), 512, "no general.architecture: any <arch>. prefix");
  assert.equal(modelInfoNumber({ model_info: { "general.architecture": "llama", "llama.context_length": "8192" } }, "context_length"), undefined);
  assert.equal(modelInfoNumber(undefined, "context_length"), undefined);
});

test("an embedding model reports its embedding length and no chat", () => {
  assert.deepEqual(ollamaModelInfo(SPEC, EMBEDDER, undefined), {
    id: "m",
    engine: "ollama",
    source: "nomic-embed-text",
    contextLength: 2048,
    capabilities: { chat: false, embeddings: true },
    embeddingLength: 768,
  });
  assert.deepEqual(capabilitiesOf({}), { chat: true, embeddings: true }, "unknown: both, the server decides");
});

test("context length order: spec (capped), /api/ps, Modelfile num_ctx, trained capped at 4096", () => {
  const show = { model_info: { "general.architecture": "llama", "llama.context_length": 8192 }, parameters: 'num_ctx                        6000\nstop "x"' };
  assert.equal(contextLengthOf({ ...SPEC, contextLength: 16384 }, show, { context_length: 4096 }), 8192);
  assert.equal(requestedNumCtx({ ...SPEC, contextLength: 16384 }, show), 8192);
  assert.equal(requestedNumCtx(SPEC, show), undefined);
  assert.equal(contextLengthOf(SPEC, show, { context_length: 7000 }), 7000);
  assert.equal(contextLengthOf(SPEC, show, { context_length: 0 }), 6000);
  assert.equal(contextLengthOf(SPEC, { model_info: show.model_info }, undefined), 4096);
  assert.equal(contextLengthOf(SPEC, { model_info: { "general.architecture": "bert", "bert.context_length": 512 } }, undefined), 512);
});
