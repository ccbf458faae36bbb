/** The fault emulator, checked with the official `openai` SDK as the client (no retries). */
import { test, type TestContext } from "node:test";
import assert from "node:assert/strict";
import OpenAI from "openai";
import { loadJsonFixture } from "./fixtures.ts";
import { startFaultyUpstream, type Fault, type FaultyUpstream } from "./faulty-upstream.ts";

const MESSAGES: OpenAI.Chat.ChatCompletionMessageParam[] = [{ role: "user", content: "Invent a new holiday." }];

async function setup(t: TestContext, fault?: Fault): Promise<{ upstream: FaultyUpstream; client: OpenAI }> {
  const upstream = await startFaultyUpstream(fault);
  t.after(() => upstream.close());
  return { upstream, client: new OpenAI({ apiKey: "sk-faulty", baseURL: upstream.baseURL, maxRetries: 0, timeout: 2000 }) };
}

void test("no fault: the recorded answer, as JSON and as a stream", async (t) => {
  const { upstream, client } = await setup(t);
  const completion = await client.chat.completions.create({ model: "gpt-4.1-nano", messages: MESSAGES });
  assert.deepEqual(completion, loadJsonFixture("vercel-ai/openai/openai-text"));
  let text = "";
  for await (const chunk of await client.chat.completions.create({ model: "gpt-4.1-nano", messages: MESSAGES, stream: true }))
    text += chunk.choices[0]?.delta.content ?? "";
  assert.match(text, /^\*\*Holiday Name:\*\* Harmony Day/);
  assert.equal(upstream.calls, 2);
  assert.deepEqual(upstream.answers, { ok: 2 });
  assert.equal(upstream.lastAuthorization, "Bearer sk-faulty");
});

void test("a 429 storm carries retry-after; a fraction fails exactly that share of calls", async (t) => {
  const { upstream, client } = await setup(t, { kind: "status", status: 429, retryAfterSeconds: 3 });
  const err = await client.chat.completions.create({ model: "gpt-4.1-nano", messages: MESSAGES }).catch((e: unknown) => e);
  assert.ok(err instanceof OpenAI.RateLimitError);
  assert.equal(err.headers.get("retry-after"), "3");
  assert.equal(err.code, "rate_limit_exceeded");
  upstream.setFault({ kind: "status", status: 500, fraction: 0.25 });
  const results = await Promise.allSettled(Array.from({ length: 8 }, () => client.chat.completions.create({ model: "gpt-4.1-nano", messages: MESSAGES })));
  assert.equal(results.filter((r) => r.status === "rejected").length, 2);
  assert.ok(results.every((r) => r.status === "fulfilled" || r.reason instanceof OpenAI.InternalServerError));
  assert.deepEqual(upstream.answers, { "429": 1, "500": 2, ok: 6 });
});

void test("hang after headers: 200 arrives, then nothing until the client gives up", async (t) => {
  const { upstream } = await setup(t, { kind: "hang-after-headers" });
  const res = await fetch(`${upstream.baseURL}/chat/completions`, { method: "POST", body: JSON.stringify({ model: "m", messages: MESSAGES }) });
  assert.equal(res.status, 200);
  const reader = res.body?.getReader();
  const raced = await Promise.race([reader?.read().then(() => "bytes"), new Promise((r) => setTimeout(() => r("silence"), 300))]);
  assert.equal(raced, "silence");
  await reader?.cancel();
  assert.deepEqual(upstream.answers, { hang: 1 });
});

void test("drip: the whole answer, in small paced writes", async (t) => {
  const { upstream } = await setup(t, { kind: "drip", delayMs: 0, bytesPerWrite: 64 });
  const res = await fetch(`${upstream.baseURL}/chat/completions`, { method: "POST", body: JSON.stringify({ model: "m", messages: MESSAGES }) });
  assert.deepEqual(await res.json(), loadJsonFixture("vercel-ai/openai/openai-text"));
  assert.deepEqual(upstream.answers, { drip: 1 });
});

void test("reset mid-stream: the SDK sees some chunks, then a connection error", async (t) => {
  const { upstream, client } = await setup(t, { kind: "reset", afterBytes: 600 });
  let chunks = 0;
  const err = await (async () => {
    for await (const chunk of await client.chat.completions.create({ model: "gpt-4.1-nano", messages: MESSAGES, stream: true })) chunks += chunk.choices.length;
  })().catch((e: unknown) => e);
  assert.ok(err instanceof Error, "the stream must fail");
  assert.ok(chunks > 0, "some chunks arrived before the reset");
  assert.deepEqual(upstream.answers, { reset: 1 });
});

void test("refuse closes the port until accept opens it again", async (t) => {
  const { upstream, client } = await setup(t);
  await upstream.refuse();
  await assert.rejects(client.chat.completions.create({ model: "gpt-4.1-nano", messages: MESSAGES }), OpenAI.APIConnectionError);
  await upstream.accept();
  await client.chat.completions.create({ model: "gpt-4.1-nano", messages: MESSAGES });
  assert.deepEqual(upstream.answers, { ok: 1 });
});
