/**
 * The Ollama emulator, checked with plain `fetch` (there is no Ollama SDK in the project) and
 * with Gearbox's own Ollama codecs as the client: bytes on the wire, content types, pacing,
 * errors, aborts, and a full canonical → Ollama → canonical round trip.
 */
import assert from "node:assert/strict";
import { test, type TestContext } from "node:test";
import type { ChatChunk, ChatRequest } from "../../common/canonical/types.ts";
import { GatewayError } from "../../common/errors.ts";
import { ollamaBackend, ollamaEmbeddingsBackend } from "../../extproc/translators/backends/ollama.ts";
import type { BackendContext } from "../../extproc/translators/codec.ts";
import type { UpstreamRequest } from "../../extproc/translators/translator.ts";
import { readFixtureBytes } from "./fixtures.ts";
import { ndjsonFixtureLines, readNdjsonFixture, startOllamaUpstream, type OllamaUpstream, type OllamaUpstreamOptions } from "./ollama-upstream.ts";

const CTX: BackendContext = { upstreamModel: "llama3.2", forceStreamUsage: true };
const ASK: ChatRequest = { model: "llama3.2", messages: [{ role: "user", content: "why is the sky blue?" }], stream: true, extra: {} };

async function setup(t: TestContext, options: OllamaUpstreamOptions = {}): Promise<OllamaUpstream> {
  const emulator = await startOllamaUpstream(options);
  t.after(() => emulator.close());
  return emulator;
}

function post(emulator: OllamaUpstream, path: string, body: unknown): Promise<Response> {
  return fetch(`${emulator.url}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
}

function send(emulator: OllamaUpstream, upstream: UpstreamRequest): Promise<Response> {
  return fetch(`${emulator.url}${upstream.path}`, { method: "POST", headers: upstream.headers, body: upstream.body });
}

/** Feeds the response body, slice by slice as it arrives, to the backend's stream decoder. */
async function decodeStream(res: Response): Promise<{ chunks: ChatChunk[]; slices: number }> {
  const decoder = ollamaBackend.stream(CTX);
  const chunks: ChatChunk[] = [];
  let slices = 0;
  assert.ok(res.body);
  const reader = res.body.getReader();
  for (let read = await reader.read(); !read.done; read = await reader.read()) {
    slices += 1;
    chunks.push(...decoder.push(Buffer.from(read.value as Uint8Array)));
  }
  chunks.push(...decoder.end());
  return { chunks, slices };
}

const text = (chunks: ChatChunk[], field: "content" | "reasoning"): string => chunks.map((c) => c.choices[0]?.delta[field] ?? "").join("");

void test("non-streaming chat: the fixture's bytes as JSON, the request recorded as sent", async (t) => {
  const emulator = await setup(t);
  emulator.queue({ fixture: "ollama/chat-tool-call" });
  const res = await post(emulator, "/api/chat", { model: "llama3.2", messages: [{ role: "user", content: "what is the weather in tokyo?" }], stream: false });
  assert.equal(res.status, 200);
  assert.equal(res.headers.get("content-type"), "application/json; charset=utf-8");
  assert.deepEqual(Buffer.from(await res.arrayBuffer()), readFixtureBytes("ollama/chat-tool-call", "json"));
  assert.deepEqual(emulator.requests[0]?.json, { model: "llama3.2", messages: [{ role: "user", content: "what is the weather in tokyo?" }], stream: false });
  assert.equal(emulator.requests[0]?.fixture, "ollama/chat-tool-call");
  assert.equal(emulator.pending, 0);
});

void test("streaming is Ollama's default: NDJSON bytes unchanged, one line per write", async (t) => {
  const emulator = await setup(t);
  const res = await post(emulator, "/api/chat", { model: "llama3.2", messages: [{ role: "user", content: "why is the sky blue?" }] });
  assert.equal(res.headers.get("content-type"), "application/x-ndjson");
  assert.deepEqual(Buffer.from(await res.arrayBuffer()), readNdjsonFixture("ollama/chat-stream"));
  assert.equal(emulator.requests[0]?.fixture, "ollama/chat-stream");
  assert.deepEqual(emulator.requests[0]?.stream, { writes: 2, writesSent: 2, aborted: false });
});

void test("round trip: ollamaBackend's request → emulator → stream decoder, lines cut mid-character across writes", async (t) => {
  const emulator = await setup(t);
  emulator.queue({ fixture: "ollama/chat-thinking", pacing: { splitEvents: true, delayMs: 2 } });
  const res = await send(emulator, ollamaBackend.request({ ...ASK, reasoningEffort: "low" }, CTX));
  const sent = emulator.requests[0]?.json as { model: string; stream: boolean; think: string };
  assert.deepEqual([sent.model, sent.stream, sent.think], ["llama3.2", true, "low"]);
  const { chunks, slices } = await decodeStream(res);
  const lines = ndjsonFixtureLines("ollama/chat-thinking").length;
  assert.equal(emulator.requests[0]?.stream?.writes, lines + 1, "one cut per line");
  assert.ok(slices > 1, `the body arrived in ${slices} slices`);
  assert.equal(text(chunks, "reasoning"), "17 × 23 = 17 × 20 + 17 × 3 = 340 + 51 = 391.");
  assert.equal(text(chunks, "content"), "17 × 23 = 391");
  assert.deepEqual(chunks.at(-1)?.usage, { inputTokens: 18, outputTokens: 41, totalTokens: 59 });
});

void test("round trip: tool-call stream and non-streaming tool call decode to the same call", async (t) => {
  const emulator = await setup(t);
  emulator.queue({ fixture: "ollama/chat-tool-call-stream" }, { fixture: "ollama/chat-tool-call" });
  const streamed = await decodeStream(await send(emulator, ollamaBackend.request(ASK, CTX)));
  const [call] = streamed.chunks.flatMap((c) => c.choices[0]?.delta.toolCalls ?? []);
  const whole = ollamaBackend.response(Buffer.from(await (await send(emulator, ollamaBackend.request({ ...ASK, stream: false }, CTX))).arrayBuffer()), {}, CTX);
  assert.ok(whole.ok);
  assert.deepEqual(whole.value.choices[0]?.message.toolCalls, [{ id: call?.id, name: call?.name, arguments: call?.arguments }]);
  assert.deepEqual(call, { index: 0, id: "call_0", name: "get_weather", arguments: '{"city":"Tokyo"}' });
  assert.equal(emulator.requests[1]?.json && (emulator.requests[1].json as { stream: boolean }).stream, false);
});

void test("error replay: queued status with the JSON body, even for a stream request; headers kept", async (t) => {
  const emulator = await setup(t);
  emulator.queue({ fixture: "ollama/error-model-not-found", status: 404 }, { fixture: "ollama/error", status: 429, headers: { "retry-after": "3" } });
  const notFound = await send(emulator, ollamaBackend.request(ASK, CTX));
  assert.equal(notFound.status, 404);
  assert.equal(notFound.headers.get("content-type"), "application/json; charset=utf-8");
  const err = ollamaBackend.error(notFound.status, { "content-type": "application/json" }, Buffer.from(await notFound.arrayBuffer()));
  assert.deepEqual([err.status, err.code, err.message], [404, "model_not_found", "model 'llama3.2' not found"]);
  const limited = await send(emulator, ollamaBackend.request(ASK, CTX));
  const retry = limited.headers.get("retry-after") ?? "";
  const limitedErr = ollamaBackend.error(limited.status, { "retry-after": retry }, Buffer.from(await limited.arrayBuffer()));
  assert.deepEqual([limitedErr.status, limitedErr.type, limitedErr.headers], [429, "rate_limit_error", { "retry-after": "3" }]);
});

void test("an in-band error line and a cut-off stream make the decoder throw", async (t) => {
  const emulator = await setup(t);
  const full = readNdjsonFixture("ollama/chat-stream").length;
  emulator.queue({ fixture: "ollama/chat-stream-error" }, { fixture: "ollama/chat-stream", endAfterBytes: full - 20 });
  await assert.rejects(decodeStream(await send(emulator, ollamaBackend.request(ASK, CTX))), (err: unknown) => {
    assert.ok(err instanceof GatewayError);
    assert.deepEqual([err.code, err.message], ["upstream_stream_error", "an error was encountered while running the model"]);
    return true;
  });
  const cut = await send(emulator, ollamaBackend.request(ASK, CTX));
  assert.equal(cut.status, 200);
  await assert.rejects(decodeStream(cut), (err: unknown) => err instanceof GatewayError && err.code === "upstream_stream_truncated");
});

void test("a client that leaves mid-stream is counted as aborted", async (t) => {
  const emulator = await setup(t);
  emulator.queue({ fixture: "ollama/chat-thinking", pacing: { delayMs: 50 } });
  const controller = new AbortController();
  const res = await fetch(`${emulator.url}/api/chat`, { method: "POST", body: JSON.stringify({ model: "qwen3", messages: [] }), signal: controller.signal });
  assert.ok(res.body);
  const reader = res.body.getReader();
  await reader.read();
  controller.abort();
  await emulator.waitForAborted(1);
  assert.equal(emulator.aborted, 1);
  assert.equal(emulator.requests[0]?.stream?.aborted, true);
});

void test("Ollama's request errors: bad bodies, unknown models, unknown routes", async (t) => {
  const emulator = await setup(t, { models: ["llama3.2:latest", "all-minilm"] });
  const cases: [Promise<Response>, number, string][] = [
    [fetch(`${emulator.url}/api/chat`, { method: "POST" }), 400, '{"error":"missing request body"}'],
    [fetch(`${emulator.url}/api/chat`, { method: "POST", body: "{" }), 400, '{"error":"invalid JSON request body"}'],
    [post(emulator, "/api/chat", { messages: [] }), 400, '{"error":"model is required"}'],
    [post(emulator, "/api/chat", { model: "mistral", messages: [] }), 404, `{"error":"model 'mistral' not found"}`],
    [post(emulator, "/api/embed", { model: "all-minilm", input: [1, 2] }), 400, '{"error":"invalid input type"}'],
    [post(emulator, "/v1/chat/completions", { model: "llama3.2" }), 404, "404 page not found"],
  ];
  for (const [pending, status, body] of cases) {
    const res = await pending;
    assert.deepEqual([res.status, await res.text()], [status, body]);
  }
  const ok = await post(emulator, "/api/chat", { model: "llama3.2", messages: [], stream: false });
  assert.equal(ok.status, 200, "a model listed with :latest answers to its bare name");
  assert.equal(emulator.requests.length, 7);
});

void test("embed: synthesized, deterministic, unit length; dimensions truncate; the codec round-trips base64", async (t) => {
  const emulator = await setup(t);
  const input = ["Why is the sky blue?", "Why is the grass green?"];
  const res = await post(emulator, "/api/embed", { model: "all-minilm", input });
  const body = (await res.json()) as { model: string; embeddings: number[][]; prompt_eval_count: number };
  assert.equal(body.model, "all-minilm");
  assert.deepEqual(
    body.embeddings.map((v) => v.length),
    [384, 384],
  );
  for (const v of body.embeddings) assert.ok(Math.abs(Math.hypot(...v) - 1) < 1e-5, "unit length");
  assert.notDeepEqual(body.embeddings[0], body.embeddings[1]);
  assert.equal(body.prompt_eval_count, 5 + 6, "one token per 4 bytes: 20 and 23 bytes");
  const again = (await (await post(emulator, "/api/embed", { model: "all-minilm", input: input[0] })).json()) as { embeddings: number[][] };
  assert.deepEqual(again.embeddings, [body.embeddings[0]]);
  const short = (await (await post(emulator, "/api/embed", { model: "all-minilm", input: input[0], dimensions: 8 })).json()) as { embeddings: number[][] };
  assert.equal(short.embeddings[0]?.length, 8);
  assert.ok(Math.abs(Math.hypot(...(short.embeddings[0] ?? [])) - 1) < 1e-5, "renormalized after truncation");

  const ctx: BackendContext = { upstreamModel: "all-minilm", forceStreamUsage: false };
  const upstream = ollamaEmbeddingsBackend.request({ model: "text-embedding-3-small", input, singleInput: false, encodingFormat: "base64", extra: {} }, ctx);
  const decoded = ollamaEmbeddingsBackend.response(Buffer.from(await (await send(emulator, upstream)).arrayBuffer()), {}, ctx);
  assert.ok(decoded.ok);
  assert.deepEqual(decoded.value.data[0]?.embedding, body.embeddings[0], "backends decode floats; base64 is the composer's job");
  assert.deepEqual(decoded.value.usage, { inputTokens: 11, outputTokens: 0, totalTokens: 11 });
});

void test("embed replays a queued fixture; tags replays the docs' list or lists the configured models", async (t) => {
  const emulator = await setup(t);
  emulator.queue({ fixture: "ollama/embed", endpoint: "embed" });
  const embed = await post(emulator, "/api/embed", { model: "all-minilm", input: "Why is the sky blue?" });
  assert.deepEqual(Buffer.from(await embed.arrayBuffer()), readFixtureBytes("ollama/embed", "json"));
  const tags = await fetch(`${emulator.url}/api/tags`);
  assert.deepEqual(Buffer.from(await tags.arrayBuffer()), readFixtureBytes("ollama/tags", "json"));
  const custom = await setup(t, { models: ["qwen3:latest"] });
  const listed = (await (await fetch(`${custom.url}/api/tags`)).json()) as { models: { name: string; model: string; details: { format: string } }[] };
  assert.deepEqual(
    listed.models.map((m) => [m.name, m.model, m.details.format]),
    [["qwen3:latest", "qwen3:latest", "gguf"]],
  );
  assert.throws(() => emulator.queue({ fixture: "ollama/chat-stream", endpoint: "embed" }), /no form usable by the embed endpoint/);
});
