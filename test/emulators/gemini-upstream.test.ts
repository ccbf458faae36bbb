/**
 * The Gemini emulator, checked with the official `@google/genai` SDK as the client (if the SDK
 * parses what it sends, tests can trust it as a stand-in for the Gemini API), then driven by
 * Gearbox's own Gemini backend codecs.
 */
import { test, type TestContext } from "node:test";
import assert from "node:assert/strict";
import { ApiError, GoogleGenAI, type GenerateContentResponse } from "@google/genai";
import { geminiBackend, geminiEmbeddingsBackend } from "../../extproc/translators/backends/gemini.ts";
import { parseOpenAIChatRequest } from "../../common/schemas/openai-chat-request.ts";
import { loadJsonFixture } from "./fixtures.ts";
import { geminiStreamEvents, startGeminiUpstream, type GeminiUpstream, type GeminiUpstreamOptions } from "./gemini-upstream.ts";

const API_KEY = "AIza-emulator-test-key-0001";
const MODEL = "gemini-2.5-flash";
const G = "firebase-gemini/googleai/";
const VA = "vercel-ai/google/";

async function setup(t: TestContext, options: GeminiUpstreamOptions = {}): Promise<{ emulator: GeminiUpstream; ai: GoogleGenAI }> {
  const emulator = await startGeminiUpstream(options);
  t.after(() => emulator.close());
  return { emulator, ai: new GoogleGenAI({ apiKey: options.apiKey ?? API_KEY, httpOptions: { baseUrl: emulator.url } }) };
}

type Part = { text?: string; thought?: boolean; functionCall?: { name?: string; args?: unknown } };
type Body = { candidates?: { content?: { parts?: Part[] } }[] };

/** Non-thought text of candidate 0, from the SDK's objects or a recorded body alike. */
const textOf = (res: Body): string =>
  (res.candidates?.[0]?.content?.parts ?? [])
    .filter((p) => p.thought !== true)
    .map((p) => p.text ?? "")
    .join("");

async function collect(stream: AsyncIterable<GenerateContentResponse>): Promise<GenerateContentResponse[]> {
  const chunks: GenerateContentResponse[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  return chunks;
}

/** The `data:` payloads of a fixture's stream, parsed (the oracle for what the SDK must yield). */
function recordedEvents(name: string): Body[] {
  return (geminiStreamEvents(name) ?? [])
    .flatMap((e) => e.split(/\r?\n/))
    .filter((l) => l.startsWith("data:"))
    .map((l) => JSON.parse(l.slice(5)) as Body);
}

void test("generateContent: the SDK gets the recorded body; the request is recorded with its key header", async (t) => {
  const { emulator, ai } = await setup(t);
  const name = `${G}unary-success-basic-reply-short`;
  emulator.queue({ fixture: name });
  const res = await ai.models.generateContent({ model: MODEL, contents: "Where is Google's HQ?" });
  assert.equal(textOf(res), textOf(loadJsonFixture(name) as Body));
  assert.match(res.text ?? "", /Mountain View, California/);
  assert.equal(res.usageMetadata?.totalTokenCount, 29);
  const [req] = emulator.requests;
  assert.deepEqual(
    [req?.method, req?.path, req?.model, req?.action, req?.fixture],
    ["POST", `/v1beta/models/${MODEL}:generateContent`, MODEL, "generateContent", name],
  );
  assert.equal(req?.headers["x-goog-api-key"], API_KEY);
  assert.deepEqual(req?.json, { contents: [{ parts: [{ text: "Where is Google's HQ?" }], role: "user" }] });
  assert.equal(emulator.pending, 0);
});

void test("recorded bodies replay through the SDK: text and function calls as recorded", async (t) => {
  const { emulator, ai } = await setup(t);
  for (const name of [
    `${G}unary-success-citations`,
    `${G}unary-success-thinking-reply-thought-summary`,
    `${G}unary-success-google-search-grounding`,
    `${VA}google-text`,
    `${VA}google-reasoning`,
  ]) {
    emulator.queue({ fixture: name });
    const res = await ai.models.generateContent({ model: MODEL, contents: "x" });
    assert.equal(textOf(res), textOf(loadJsonFixture(name) as Body), name);
  }
  emulator.queue({ fixture: `${VA}google-tool-call` });
  const call = await ai.models.generateContent({ model: MODEL, contents: "weather?" });
  assert.deepEqual(
    call.functionCalls?.map((c) => [c.name, c.args]),
    [["weather", { location: "San Francisco" }]],
  );
});

void test("streamGenerateContent?alt=sse: recorded streams (raw .txt and .chunks.txt) yield the recorded events", async (t) => {
  const { emulator, ai } = await setup(t, { pacing: { eventsPerWrite: 2 } });
  const streams = [
    `${G}streaming-success-basic-reply-long`,
    `${G}streaming-success-citations`,
    `${G}streaming-failure-recitation-no-content`,
    "firebase-gemini/vertexai/streaming-success-utf8",
    `${VA}google-text`,
    `${VA}google-stream-tool-call-arguments`,
  ];
  for (const name of streams) {
    emulator.queue({ fixture: name });
    const chunks = await collect(await ai.models.generateContentStream({ model: MODEL, contents: "x" }));
    const events = recordedEvents(name);
    assert.equal(chunks.length, events.length, name);
    assert.equal(chunks.map(textOf).join(""), events.map(textOf).join(""), name);
  }
  const last = emulator.requests.at(-1);
  assert.equal(last?.url, `/v1beta/models/${MODEL}:streamGenerateContent?alt=sse`);
  assert.deepEqual(last?.stream, { writes: 4, writesSent: 4, aborted: false }, "8 events, 2 per write");
});

void test("streamed function call: the SDK sees the recorded call", async (t) => {
  const { emulator, ai } = await setup(t);
  emulator.queue({ fixture: `${VA}google-tool-call` });
  const chunks = await collect(await ai.models.generateContentStream({ model: MODEL, contents: "weather?" }));
  assert.deepEqual(
    chunks.flatMap((c) => c.functionCalls ?? []).map((c) => [c.name, c.args]),
    [["weather", { location: "San Francisco" }]],
  );
  assert.equal(chunks.at(-1)?.candidates?.[0]?.finishReason, "STOP");
});

void test("raw recordings are replayed byte for byte: one that lacks the final blank line is rejected by the SDK", async (t) => {
  const { emulator, ai } = await setup(t);
  emulator.queue({ fixture: `${G}streaming-success-finish-message` });
  await assert.rejects(collect(await ai.models.generateContentStream({ model: MODEL, contents: "x" })), /Incomplete JSON segment/);
});

void test("split-SSE mode: every write cuts an event (inside multi-byte characters too); the SDK still parses", async (t) => {
  const { emulator, ai } = await setup(t);
  const name = "firebase-gemini/vertexai/streaming-success-utf8";
  emulator.queue({ fixture: name, pacing: { splitEvents: true, delayMs: 1 } });
  const chunks = await collect(await ai.models.generateContentStream({ model: MODEL, contents: "x" }));
  assert.equal(chunks.map(textOf).join(""), recordedEvents(name).map(textOf).join(""));
  assert.equal(emulator.requests[0]?.stream?.writes, 5, "4 events, one cut each");
});

void test("error replay: recorded Google errors become the SDK's ApiError with the queued status, streaming or not", async (t) => {
  const { emulator, ai } = await setup(t);
  emulator.queue(
    { fixture: `${G}unary-failure-api-key`, status: 400 },
    { fixture: `${G}unary-failure-unknown-model`, status: 404 },
    { fixture: `${G}streaming-failure-image-rejected`, status: 400 },
  );
  const statusOf = (err: unknown): number => (err instanceof ApiError ? err.status : -1);
  await assert.rejects(ai.models.generateContent({ model: MODEL, contents: "x" }), (err) => statusOf(err) === 400 && /API_KEY_INVALID/.test(String(err)));
  await assert.rejects(ai.models.generateContentStream({ model: MODEL, contents: "x" }), (err) => statusOf(err) === 404 && /NOT_FOUND/.test(String(err)));
  await assert.rejects(
    ai.models.generateContentStream({ model: MODEL, contents: "x" }),
    (err) => statusOf(err) === 400 && /invalid argument/.test(String(err)),
  );
});

void test("429 replay keeps the queued retry-after header and the RetryInfo detail", async (t) => {
  const { emulator } = await setup(t);
  emulator.queue({ fixture: `${VA}google-429-retry-info`, status: 429, headers: { "retry-after": "7" } });
  const res = await fetch(`${emulator.baseURL}/models/${MODEL}:generateContent`, { method: "POST", headers: { "x-goog-api-key": API_KEY }, body: "{}" });
  assert.equal(res.status, 429);
  assert.equal(res.headers.get("retry-after"), "7");
  const err = geminiBackend.error(429, {}, Buffer.from(await res.arrayBuffer()));
  assert.deepEqual([err.status, err.code, err.headers], [429, "RESOURCE_EXHAUSTED", { "retry-after": "35" }]);
});

void test("auth: a missing key gets Google's 403, a wrong one the 400 API_KEY_INVALID, the right one (header or ?key=) passes", async (t) => {
  const { emulator, ai } = await setup(t, { apiKey: API_KEY });
  const wrong = new GoogleGenAI({ apiKey: "AIza-wrong", httpOptions: { baseUrl: emulator.url } });
  await assert.rejects(wrong.models.generateContent({ model: MODEL, contents: "x" }), (err: unknown) => {
    assert.ok(err instanceof ApiError);
    assert.equal(err.status, 400);
    assert.match(err.message, /API key not valid/);
    assert.doesNotMatch(err.message, /AIza-wrong/, "the key is not echoed");
    return true;
  });
  const url = `${emulator.baseURL}/models/${MODEL}:generateContent`;
  const missing = await fetch(url, { method: "POST", body: JSON.stringify({ contents: [] }) });
  const body = (await missing.json()) as { error: { code: number; status: string } };
  assert.deepEqual([missing.status, body.error.code, body.error.status], [403, 403, "PERMISSION_DENIED"]);
  assert.equal((await fetch(`${url}?key=${API_KEY}`, { method: "POST", body: "{}" })).status, 200);
  assert.equal(textOf(await ai.models.generateContent({ model: MODEL, contents: "x" })).length > 0, true);
  assert.deepEqual(
    emulator.requests.map((r) => r.headers["x-goog-api-key"]),
    ["AIza-wrong", undefined, undefined, API_KEY],
  );
});

void test("embeddings: the SDK's batchEmbedContents and a direct embedContent get deterministic unit vectors", async (t) => {
  const { emulator, ai } = await setup(t);
  const res = await ai.models.embedContent({
    model: "gemini-embedding-001",
    contents: ["The food was delicious", "and the waiter was kind"],
    config: { outputDimensionality: 8 },
  });
  assert.equal(emulator.requests[0]?.action, "batchEmbedContents");
  const vectors = (res.embeddings ?? []).map((e) => e.values ?? []);
  assert.deepEqual(
    vectors.map((v) => v.length),
    [8, 8],
  );
  for (const v of vectors) assert.ok(Math.abs(Math.hypot(...v) - 1) < 1e-5, "unit length");
  assert.notDeepEqual(vectors[0], vectors[1]);
  const single = await fetch(`${emulator.baseURL}/models/gemini-embedding-001:embedContent`, {
    method: "POST",
    body: JSON.stringify({ content: { parts: [{ text: "The food was delicious" }] }, outputDimensionality: 8 }),
  });
  assert.deepEqual(((await single.json()) as { embedding: { values: number[] } }).embedding.values, vectors[0], "same text, same vector");
  const native = await ai.models.embedContent({ model: "text-embedding-004", contents: "x" });
  assert.equal(native.embeddings?.[0]?.values?.length, 768);
  await assert.rejects(
    ai.models.embedContent({ model: "text-embedding-004", contents: "x", config: { outputDimensionality: 5000 } }),
    (err) => err instanceof ApiError && err.status === 400,
  );
});

void test("a client that leaves mid-stream is counted as aborted", async (t) => {
  const { emulator, ai } = await setup(t);
  emulator.queue({ fixture: `${G}streaming-success-basic-reply-long`, pacing: { delayMs: 20 } });
  const controller = new AbortController();
  const stream = await ai.models.generateContentStream({ model: MODEL, contents: "x", config: { abortSignal: controller.signal } });
  for await (const _chunk of stream) {
    controller.abort();
    break;
  }
  await emulator.waitForAborted(1);
  const outcome = emulator.requests[0]?.stream;
  assert.ok(outcome?.aborted && outcome.writesSent < outcome.writes, JSON.stringify(outcome));
});

void test("Gearbox's Gemini codecs against the emulator: chat, stream and embeddings round-trip", async (t) => {
  const { emulator } = await setup(t);
  const post = (path: string, body: Buffer | undefined) =>
    fetch(`${emulator.baseURL}${path}`, { method: "POST", headers: { "x-goog-api-key": API_KEY }, body });
  const ctx = { upstreamModel: MODEL, forceStreamUsage: false };
  const parsed = parseOpenAIChatRequest({
    model: "gpt-x",
    messages: [
      { role: "system", content: "Be brief." },
      { role: "user", content: "Hi" },
    ],
    temperature: 0.2,
  });
  assert.ok(parsed.ok);

  emulator.queue({ fixture: `${G}unary-success-basic-reply-short` });
  const unary = geminiBackend.request(parsed.value, ctx);
  const decoded = geminiBackend.response(Buffer.from(await (await post(unary.path, unary.body)).arrayBuffer()), {}, ctx);
  assert.ok(decoded.ok);
  const content = decoded.value.choices[0]?.message.content;
  assert.match(typeof content === "string" ? content : "", /Mountain View/);
  assert.deepEqual(emulator.requests[0]?.json, {
    contents: [{ role: "user", parts: [{ text: "Hi" }] }],
    systemInstruction: { parts: [{ text: "Be brief." }] },
    generationConfig: { temperature: 0.2 },
  });

  emulator.queue({ fixture: `${VA}google-tool-call`, pacing: { splitEvents: true } });
  const streaming = geminiBackend.request({ ...parsed.value, stream: true }, ctx);
  const decoder = geminiBackend.stream(ctx);
  const chunks = [];
  const res = await post(streaming.path, streaming.body);
  for await (const bytes of res.body ?? []) chunks.push(...decoder.push(Buffer.from(bytes as Uint8Array)));
  chunks.push(...decoder.end());
  assert.deepEqual(
    chunks.flatMap((c) => c.choices[0]?.delta.toolCalls ?? []).map((c) => [c.name, c.arguments]),
    [["weather", '{"location":"San Francisco"}']],
  );
  assert.equal(chunks.at(-1)?.usage?.totalTokens, 89);

  const embedCtx = { upstreamModel: "gemini-embedding-001", forceStreamUsage: false };
  const embed = geminiEmbeddingsBackend.request({ model: "e", input: ["a", "b"], singleInput: false, dimensions: 4, extra: {} }, embedCtx);
  const vectors = geminiEmbeddingsBackend.response(Buffer.from(await (await post(embed.path, embed.body)).arrayBuffer()), {}, embedCtx);
  assert.ok(vectors.ok, vectors.ok ? "" : vectors.errors[0]?.message);
  assert.deepEqual(
    vectors.value.data.map((d) => (d.embedding as number[]).length),
    [4, 4],
  );
});
