/**
 * The Ollama engine against the Ollama emulator (`test/emulators/ollama-upstream.ts`), which
 * replays bodies transcribed from Ollama's API docs (`test/fixtures/ollama/README.md`), with the
 * official `ollama` client doing the HTTP. The emulator has no `/api/show` or `/api/ps` (it
 * answers 404, so the engine falls back to its defaults), and
 * its fixtures carry no `logprobs`: those paths are in `ollama-logprobs.test.ts`.
 */
import assert from "node:assert/strict";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { test, type TestContext } from "node:test";
import { startOllamaUpstream, type OllamaUpstream, type OllamaUpstreamOptions } from "../../test/emulators/ollama-upstream.ts";
import { EngineError, type ChatEvent, type ChatParams, type ModelSpec } from "./engine.ts";
import { DEFAULT_OLLAMA_CONTEXT, estimatePromptTokens } from "./ollama-model-info.ts";
import { createOllamaEngine, type OllamaEngineOptions } from "./ollama.ts";

const SPEC: ModelSpec = { id: "edge-llama", engine: "ollama", source: "llama3.2" };

async function setup(t: TestContext, emulatorOptions: OllamaUpstreamOptions = {}, engineOptions: OllamaEngineOptions = {}) {
  // The client console.logs "Getting text from response" on each non-JSON error (the emulator's 404s).
  t.mock.method(console, "log", () => undefined);
  const emulator = await startOllamaUpstream(emulatorOptions);
  const engine = createOllamaEngine(engineOptions);
  t.after(async () => {
    await engine.close();
    await emulator.close();
  });
  return { emulator, engine };
}

async function loaded(t: TestContext, emulatorOptions: OllamaUpstreamOptions = {}, spec: Partial<ModelSpec> = {}) {
  const { emulator, engine } = await setup(t, emulatorOptions, { warm: false });
  const model = await engine.load({ ...SPEC, host: emulator.url, ...spec });
  return { emulator, engine, model };
}

function params(overrides: Partial<ChatParams> = {}): ChatParams {
  return {
    messages: [{ role: "user", content: "why is the sky blue?" }],
    maxTokens: 1000,
    temperature: 0,
    topLogprobs: 0,
    signal: new AbortController().signal,
    ...overrides,
  };
}

async function collect(events: AsyncIterable<ChatEvent>): Promise<ChatEvent[]> {
  const out: ChatEvent[] = [];
  for await (const event of events) out.push(event);
  return out;
}

async function rejectsWith(promise: Promise<unknown>, code: EngineError["code"], message?: RegExp): Promise<EngineError> {
  let caught: unknown;
  await promise.catch((err: unknown) => {
    caught = err;
  });
  assert.ok(caught instanceof EngineError, `expected EngineError ${code}, got ${String(caught)}`);
  assert.equal(caught.code, code, caught.message);
  if (message) assert.match(caught.message, message);
  return caught;
}

function bodyOf(emulator: OllamaUpstream, index: number): Record<string, unknown> {
  const json = emulator.requests[index]?.json;
  assert.ok(typeof json === "object" && json !== null && !Array.isArray(json), `request ${index} has a JSON object body`);
  return json as Record<string, unknown>;
}

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

test("load checks /api/tags, warms the model with the documented load request and reports the fallback info", async (t) => {
  const { emulator, engine } = await setup(t);
  emulator.queue({ fixture: "ollama/chat-load" });
  const model = await engine.load({ ...SPEC, host: emulator.url });
  assert.deepEqual(
    emulator.requests.map((r) => `${r.method} ${r.path}`),
    ["GET /api/tags", "POST /api/show", "POST /api/chat", "GET /api/ps"],
  );
  assert.deepEqual(bodyOf(emulator, 2), { model: "llama3.2", messages: [], stream: false, keep_alive: -1, options: {} });
  assert.deepEqual(model.info(), {
    id: "edge-llama",
    engine: "ollama",
    source: "llama3.2",
    contextLength: DEFAULT_OLLAMA_CONTEXT,
    capabilities: { chat: true, embeddings: true },
  });
});

test("load with a context length sends it as num_ctx, on the warm-up and on every chat", async (t) => {
  const { emulator, engine } = await setup(t, {}, { keepAlive: "30m" });
  emulator.queue({ fixture: "ollama/chat-load" });
  const model = await engine.load({ ...SPEC, host: emulator.url, contextLength: 2048 });
  assert.equal(model.info().contextLength, 2048);
  assert.deepEqual(bodyOf(emulator, 2).options, { num_ctx: 2048 });
  assert.equal(bodyOf(emulator, 2).keep_alive, "30m");
  await collect(model.chat(params()));
  const chat = bodyOf(emulator, emulator.requests.length - 1);
  assert.deepEqual(chat.options, { num_ctx: 2048, temperature: 0, num_predict: 1000 });
  assert.equal(chat.keep_alive, "30m");
});

test("load fails with load_failed for a model the server does not have, naming what it has", async (t) => {
  const { emulator, engine } = await setup(t);
  await rejectsWith(
    engine.load({ ...SPEC, host: emulator.url, source: "mistral" }),
    "load_failed",
    /no model 'mistral'.*deepseek-r1:latest, llama3\.2:latest.*ollama pull mistral/,
  );
  assert.equal(emulator.requests.length, 1, "nothing after /api/tags");
});

test("load fails with unavailable when nothing listens at the host, and load_failed for an empty name", async (t) => {
  const engine = createOllamaEngine();
  t.after(() => engine.close());
  await rejectsWith(engine.load({ ...SPEC, host: `http://127.0.0.1:${await closedPort()}` }), "unavailable", /fetch failed/);
  await rejectsWith(engine.load({ ...SPEC, source: " " }), "load_failed");
});

test("chat streams the documented chunks: text, then done with Ollama's token counts", async (t) => {
  const { emulator, model } = await loaded(t);
  const events = await collect(model.chat(params({ stop: ["\n\n"], topP: 0.9, seed: 7 })));
  assert.equal(events.length, 2);
  const [token, done] = events;
  assert.ok(token?.type === "token");
  assert.equal(token.text, "The");
  assert.ok(Number.isNaN(token.logprob), "the fixture has no logprobs: NaN, not a number");
  assert.deepEqual(token.bytes, [84, 104, 101]);
  assert.deepEqual(token.topLogprobs, []);
  assert.deepEqual(done, { type: "done", finishReason: "stop", promptTokens: 26, completionTokens: 282 });
  const body = bodyOf(emulator, emulator.requests.length - 1);
  assert.deepEqual(body, {
    model: "llama3.2",
    messages: [{ role: "user", content: "why is the sky blue?" }],
    stream: true,
    keep_alive: -1,
    logprobs: true,
    options: { temperature: 0, num_predict: 1000, top_p: 0.9, stop: ["\n\n"], seed: 7 },
  });
});

test("chat asks for top_logprobs only when alternatives are wanted, capped at Ollama's 20", async (t) => {
  const { emulator, model } = await loaded(t);
  await collect(model.chat(params({ topLogprobs: 50 })));
  assert.equal(bodyOf(emulator, emulator.requests.length - 1).top_logprobs, 20);
});

test("a final object without done_reason (older servers) is 'length' when eval_count reached maxTokens", async (t) => {
  const { model } = await loaded(t);
  const events = await collect(model.chat(params({ maxTokens: 282 })));
  assert.deepEqual(events.at(-1), { type: "done", finishReason: "length", promptTokens: 26, completionTokens: 282 });
});

test("a final object without a message still ends the stream", async (t) => {
  const { emulator, model } = await loaded(t);
  emulator.queue({ fixture: "ollama/chat-stream-history", pacing: { splitEvents: true } });
  const events = await collect(model.chat(params()));
  assert.deepEqual(
    events.map((e) => (e.type === "token" ? e.text : e.type)),
    ["The", "done"],
  );
  assert.deepEqual(events.at(-1), { type: "done", finishReason: "stop", promptTokens: 61, completionTokens: 468 });
});

test("an error line in the stream (docs' errors.mdx) becomes engine_crashed after the text already sent", async (t) => {
  const { emulator, model } = await loaded(t);
  emulator.queue({ fixture: "ollama/chat-stream-error" });
  const seen: string[] = [];
  const failure = (async () => {
    for await (const event of model.chat(params())) if (event.type === "token") seen.push(event.text);
  })();
  await rejectsWith(failure, "engine_crashed", /an error was encountered while running the model/);
  assert.deepEqual(seen, [" Yes", ".", "I", "can"]);
});

test("a stream cut off before its final object is engine_crashed", async (t) => {
  const { emulator, model } = await loaded(t);
  const firstLine =
    '{"model":"llama3.2","created_at":"2023-08-04T08:52:19.385406455-07:00","message":{"role":"assistant","content":"The","images":null},"done":false}\n';
  emulator.queue({ fixture: "ollama/chat-stream", endAfterBytes: Buffer.byteLength(firstLine) });
  await rejectsWith(collect(model.chat(params())), "engine_crashed", /Did not receive done/);
});

test("server errors before the stream map by status: 500 engine_crashed, 404 unavailable, 400 unsupported, 503 unavailable", async (t) => {
  const { emulator, model } = await loaded(t);
  emulator.queue({ fixture: "ollama/error", status: 500 });
  await rejectsWith(collect(model.chat(params())), "engine_crashed", /500 the model failed to generate a response/);
  emulator.queue({ fixture: "ollama/error-model-not-found", status: 404 });
  await rejectsWith(collect(model.chat(params())), "unavailable", /model 'llama3\.2' not found/);
  emulator.queue({ fixture: "ollama/error", status: 400 });
  await rejectsWith(collect(model.chat(params())), "unsupported");
  emulator.queue({ fixture: "ollama/error", status: 503 });
  await rejectsWith(collect(model.chat(params())), "unavailable");
});

test("aborting the signal mid-stream throws the abort reason and closes the connection", async (t) => {
  const { emulator, model } = await loaded(t);
  emulator.queue({ fixture: "ollama/chat-stream-error", pacing: { delayMs: 200 } });
  const controller = new AbortController();
  const seen: string[] = [];
  const run = (async () => {
    for await (const event of model.chat(params({ signal: controller.signal }))) {
      if (event.type === "token") seen.push(event.text);
      controller.abort();
    }
  })();
  await assert.rejects(run, (err: unknown) => err instanceof Error && err.name === "AbortError");
  await emulator.waitForAborted(1);
  assert.deepEqual(seen, [" Yes"]);
});

test("a consumer that stops iterating early closes the connection too", async (t) => {
  const { emulator, model } = await loaded(t);
  emulator.queue({ fixture: "ollama/chat-stream-error", pacing: { delayMs: 200 } });
  for await (const event of model.chat(params())) {
    assert.equal(event.type, "token");
    break;
  }
  await emulator.waitForAborted(1);
});

test("an already-aborted signal sends nothing", async (t) => {
  const { emulator, model } = await loaded(t);
  const before = emulator.requests.length;
  await assert.rejects(collect(model.chat(params({ signal: AbortSignal.abort() }))), { name: "AbortError" });
  await assert.rejects(model.embed(["x"], AbortSignal.abort()), { name: "AbortError" });
  assert.equal(emulator.requests.length, before);
});

test("embed sends all texts in one request and returns the server's vectors and token count", async (t) => {
  const { emulator, model } = await loaded(t, { models: ["all-minilm"] }, { source: "all-minilm" });
  const texts = ["why is the sky blue?", "why is the grass green?"];
  const { vectors, promptTokens } = await model.embed(texts, new AbortController().signal);
  assert.equal(vectors.length, 2);
  assert.deepEqual(
    vectors.map((v) => v.length),
    [384, 384],
  );
  assert.notDeepEqual(vectors[0], vectors[1]);
  assert.equal(promptTokens, 5 + 6, "the emulator counts one token per 4 bytes");
  assert.deepEqual(bodyOf(emulator, emulator.requests.length - 1), { model: "all-minilm", input: texts, keep_alive: -1, options: {} });
  assert.equal(model.info().embeddingLength, 384, "learned from the first answer when /api/show did not say");
});

test("embed replays the docs' multi-input answer; without prompt_eval_count the tokens are estimated", async (t) => {
  const { emulator, model } = await loaded(t);
  emulator.queue({ fixture: "ollama/embed-multiple", endpoint: "embed" });
  const { vectors, promptTokens } = await model.embed(["Why is the sky blue?", "Why is the grass green?"], new AbortController().signal);
  assert.equal(vectors[0]?.[0], 0.010071029);
  assert.equal(vectors[1]?.[9], 0.09072481);
  assert.equal(promptTokens, 7 + 8, "ceil(20/3) + ceil(23/3)");
  assert.deepEqual(await model.embed([], new AbortController().signal), { vectors: [], promptTokens: 0 });
});

test("embed with a vector count that does not match the inputs is engine_crashed", async (t) => {
  const { emulator, model } = await loaded(t);
  emulator.queue({ fixture: "ollama/embed", endpoint: "embed" });
  await rejectsWith(model.embed(["a", "b"], new AbortController().signal), "engine_crashed", /without 2 vector/);
});

test("countTokens is the documented byte estimate", async (t) => {
  const { model } = await loaded(t);
  const messages: ChatParams["messages"] = [
    { role: "system", content: "Be brief." },
    { role: "user", content: "Wie viel kostet ein Brötchen?" },
  ];
  assert.equal(await model.countTokens(messages), 5 + (3 + 5) + (10 + 5));
  assert.equal(estimatePromptTokens(messages), 28);
});

test("unload sends the documented unload request; the model then refuses work", async (t) => {
  const { emulator, model } = await loaded(t);
  await model.unload();
  assert.deepEqual(bodyOf(emulator, emulator.requests.length - 1), { model: "llama3.2", messages: [], stream: false, keep_alive: 0 });
  await rejectsWith(collect(model.chat(params())), "unavailable", /unloaded/);
  await model.unload();
  assert.equal(emulator.requests.filter((r) => r.path === "/api/chat").length, 1, "a second unload sends nothing");
});

test("close aborts streams in flight with an unavailable EngineError", async (t) => {
  const { emulator, engine, model } = await loaded(t);
  emulator.queue({ fixture: "ollama/chat-stream-error", pacing: { delayMs: 200 } });
  const run = collect(model.chat(params()));
  await new Promise((resolve) => setTimeout(resolve, 50));
  await engine.close();
  await rejectsWith(run, "unavailable", /closed/);
  await emulator.waitForAborted(1);
});
