/**
 * The OpenAI emulator, checked with the official `openai` SDK as the client: if the SDK parses
 * what the emulator sends, Gearbox tests can trust it as a stand-in for the provider.
 */
import { test, type TestContext } from "node:test";
import assert from "node:assert/strict";
import OpenAI from "openai";
import type { ChatCompletion, ChatCompletionChunk } from "openai/resources/chat/completions";
import { loadChunkFixture, loadJsonFixture } from "./fixtures.ts";
import { startOpenAIUpstream, type OpenAIUpstream, type OpenAIUpstreamOptions } from "./openai-upstream.ts";

const API_KEY = "sk-emulator-test-key-0001";
const ERROR_FIXTURE = "vercel-ai/openai/reasoning-model-legacy-parameter-error";
const MESSAGES: OpenAI.Chat.ChatCompletionMessageParam[] = [{ role: "user", content: "Invent a new holiday." }];

async function setup(t: TestContext, options: OpenAIUpstreamOptions = {}): Promise<{ emulator: OpenAIUpstream; client: OpenAI }> {
  const emulator = await startOpenAIUpstream(options);
  t.after(() => emulator.close());
  const client = new OpenAI({ apiKey: options.apiKey ?? API_KEY, baseURL: emulator.baseURL, maxRetries: 0 });
  return { emulator, client };
}

async function collect(stream: AsyncIterable<ChatCompletionChunk>): Promise<ChatCompletionChunk[]> {
  const chunks: ChatCompletionChunk[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  return chunks;
}

function contentOf(chunks: readonly ChatCompletionChunk[]): string {
  return chunks.map((chunk) => chunk.choices[0]?.delta.content ?? "").join("");
}

/** Tool calls assembled from their deltas, by `index`, as a client must. */
function toolCallsOf(chunks: readonly ChatCompletionChunk[]): Array<{ id: string; name: string; arguments: string }> {
  const calls: Array<{ id: string; name: string; arguments: string }> = [];
  for (const chunk of chunks) {
    for (const delta of chunk.choices[0]?.delta.tool_calls ?? []) {
      const call = (calls[delta.index] ??= { id: "", name: "", arguments: "" });
      call.id ||= delta.id ?? "";
      call.name ||= delta.function?.name ?? "";
      call.arguments += delta.function?.arguments ?? "";
    }
  }
  return calls.filter((call) => call !== undefined);
}

void test("non-streaming text: the SDK gets the recorded body and the request id", async (t) => {
  const { emulator, client } = await setup(t);
  emulator.queue({ fixture: "vercel-ai/openai/openai-text" });
  const completion = await client.chat.completions.create({ model: "gpt-4.1-nano", messages: MESSAGES });
  assert.deepEqual(completion, loadJsonFixture("vercel-ai/openai/openai-text"));
  assert.equal(completion.choices[0]?.finish_reason, "stop");
  assert.match(completion.choices[0]?.message.content ?? "", /^\*\*Holiday Name:\*\* Galaxy Day/);
  assert.equal(completion._request_id, "req_emulator_1");
  assert.equal(emulator.pending, 0);
});

void test("every recorded chat body and stream replays unchanged through the SDK", async (t) => {
  const { emulator, client } = await setup(t);
  const bodies = [
    "openai/openai-text",
    "xai/xai-text",
    "xai/xai-tool-call",
    "deepseek/deepseek-json",
    "deepseek/deepseek-reasoning",
    "deepseek/deepseek-text",
    "deepseek/deepseek-tool-call",
    "groq/groq-text",
    "groq/groq-tool-call",
    "mistral/mistral-text",
    "mistral/mistral-tool-call",
    "openai-compatible/xai-text",
    "openai-compatible/xai-tool-call",
  ];
  for (const name of bodies) {
    emulator.queue({ fixture: `vercel-ai/${name}` });
    const completion: ChatCompletion = await client.chat.completions.create({ model: "m", messages: MESSAGES });
    assert.deepEqual(completion, loadJsonFixture(`vercel-ai/${name}`), name);
  }
  const streams = [
    "openai/openai-text",
    "openai/azure-model-router.1",
    "xai/xai-text",
    "xai/xai-tool-call",
    "deepseek/deepseek-tool-call",
    "groq/groq-tool-call",
    "mistral/mistral-text",
    "mistral/mistral-tool-call",
    "mistral/mistral-incremental-tool-call",
    "openai-compatible/xai-tool-call",
  ];
  for (const name of streams) {
    emulator.queue({ fixture: `vercel-ai/${name}` });
    const chunks = await collect(await client.chat.completions.create({ model: "m", messages: MESSAGES, stream: true }));
    assert.deepEqual(chunks, loadChunkFixture(`vercel-ai/${name}`), name);
  }
});

void test("streaming text: SSE content type, deltas assemble to the recorded text, usage chunk last", async (t) => {
  const { emulator, client } = await setup(t, { pacing: { eventsPerWrite: 7 } });
  emulator.queue({ fixture: "vercel-ai/openai/openai-text" });
  const { data: stream, response } = await client.chat.completions
    .create({ model: "gpt-4.1-nano", messages: MESSAGES, stream: true, stream_options: { include_usage: true } })
    .withResponse();
  assert.equal(response.headers.get("content-type"), "text/event-stream");
  const chunks = await collect(stream);
  const expected = contentOf(loadChunkFixture("vercel-ai/openai/openai-text") as ChatCompletionChunk[]);
  assert.ok(expected.length > 1000);
  assert.equal(contentOf(chunks), expected);
  assert.equal(chunks.at(-2)?.choices[0]?.finish_reason, "stop");
  assert.equal(chunks.at(-1)?.usage?.completion_tokens, 300);
  // 303 recorded chunks + [DONE], 7 events per write.
  assert.deepEqual(emulator.requests[0]?.stream, { writes: 44, writesSent: 44, aborted: false });
});

void test("streaming tool call: argument deltas assemble to JSON", async (t) => {
  const { emulator, client } = await setup(t);
  emulator.queue({ fixture: "vercel-ai/deepseek/deepseek-tool-call" }, { fixture: "vercel-ai/openai-compatible/anthropic-fallback-tool-call" });
  const deepseek = await collect(await client.chat.completions.create({ model: "deepseek-reasoner", messages: MESSAGES, stream: true }));
  const argumentDeltas = deepseek.filter((chunk) => chunk.choices[0]?.delta.tool_calls?.[0]?.function?.arguments);
  assert.ok(argumentDeltas.length > 5, "arguments arrive in many deltas");
  const [call] = toolCallsOf(deepseek);
  assert.equal(call?.name, "weather");
  assert.equal(call?.id, "call_00_ioIn7yN9p1ZOMNpDLwd4MgAF");
  assert.deepEqual(JSON.parse(call?.arguments ?? ""), { location: "San Francisco" });
  assert.equal(deepseek.at(-1)?.choices[0]?.finish_reason, "tool_calls");

  // A raw .sse recording (data: lines and [DONE] included); its only tool call has index 1.
  const fallback = await collect(await client.chat.completions.create({ model: "claude-haiku-4-5", messages: MESSAGES, stream: true }));
  assert.equal(contentOf(fallback), "Reading it.");
  const calls = toolCallsOf(fallback);
  assert.equal(calls.length, 1);
  assert.equal(calls[0]?.name, "read_file");
  assert.deepEqual(JSON.parse(calls[0]?.arguments ?? ""), { path: "a.txt" });
});

void test("split-SSE mode: writes cut mid-event are still parsed by the SDK", async (t) => {
  const { emulator, client } = await setup(t);
  emulator.queue(
    { fixture: "vercel-ai/deepseek/deepseek-tool-call", pacing: { splitEvents: true, delayMs: 1 } },
    { fixture: "vercel-ai/openai/openai-text", pacing: { splitEvents: true } },
  );
  const tool = await collect(await client.chat.completions.create({ model: "m", messages: MESSAGES, stream: true }));
  assert.deepEqual(tool, loadChunkFixture("vercel-ai/deepseek/deepseek-tool-call"));
  assert.deepEqual(JSON.parse(toolCallsOf(tool)[0]?.arguments ?? ""), { location: "San Francisco" });
  const text = await collect(await client.chat.completions.create({ model: "m", messages: MESSAGES, stream: true }));
  assert.equal(contentOf(text), contentOf(loadChunkFixture("vercel-ai/openai/openai-text") as ChatCompletionChunk[]));
  // One cut per event (52 + [DONE], 303 + [DONE]), hence one more write than events.
  assert.equal(emulator.requests[0]?.stream?.writes, 54);
  assert.equal(emulator.requests[1]?.stream?.writes, 305);
});

void test("error replay: recorded 400 becomes the SDK's BadRequestError, streaming or not", async (t) => {
  const { emulator, client } = await setup(t);
  const recorded = loadJsonFixture(ERROR_FIXTURE) as { error: { message: string } };
  emulator.queue({ fixture: ERROR_FIXTURE, status: 400 }, { fixture: ERROR_FIXTURE, status: 400 });
  for (const stream of [false, true]) {
    await assert.rejects(client.chat.completions.create({ model: "o3-mini", messages: MESSAGES, max_tokens: 10, stream }), (err: unknown) => {
      assert.ok(err instanceof OpenAI.BadRequestError);
      assert.equal(err.status, 400);
      assert.equal(err.code, "unsupported_parameter");
      assert.equal(err.param, "max_tokens");
      assert.equal(err.type, "invalid_request_error");
      assert.match(err.message, new RegExp(`^400 ${recorded.error.message.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}$`));
      return true;
    });
  }
  assert.equal(emulator.requests.length, 2);
});

void test("error replay carries the queued status and headers (429 with retry-after)", async (t) => {
  const { emulator, client } = await setup(t);
  // The only recorded OpenAI error body, replayed with a rate-limit status and header.
  emulator.queue({ fixture: ERROR_FIXTURE, status: 429, headers: { "retry-after": "7" } });
  await assert.rejects(client.chat.completions.create({ model: "m", messages: MESSAGES }), (err: unknown) => {
    assert.ok(err instanceof OpenAI.RateLimitError);
    assert.equal(err.headers?.get("retry-after"), "7");
    return true;
  });
});

void test("auth: a wrong or missing key gets OpenAI's 401, the right one passes", async (t) => {
  const { emulator, client } = await setup(t, { apiKey: API_KEY });
  const wrong = new OpenAI({ apiKey: "sk-wrong-key-123456789", baseURL: emulator.baseURL, maxRetries: 0 });
  await assert.rejects(wrong.chat.completions.create({ model: "m", messages: MESSAGES }), (err: unknown) => {
    assert.ok(err instanceof OpenAI.AuthenticationError);
    assert.equal(err.status, 401);
    assert.equal(err.code, "invalid_api_key");
    assert.doesNotMatch(err.message, /sk-wrong-key-123456789/);
    return true;
  });
  const missing = await fetch(`${emulator.baseURL}/chat/completions`, { method: "POST", body: JSON.stringify({ model: "m", messages: MESSAGES }) });
  assert.equal(missing.status, 401);
  const body = (await missing.json()) as { error: { type: string; code: string | null; param: string | null } };
  assert.deepEqual({ type: body.error.type, code: body.error.code, param: body.error.param }, { type: "invalid_request_error", code: null, param: null });
  const completion = await client.chat.completions.create({ model: "m", messages: MESSAGES });
  assert.equal(completion.object, "chat.completion");
  assert.deepEqual(
    emulator.requests.map((r) => r.headers.authorization),
    [`Bearer sk-wrong-key-123456789`, undefined, `Bearer ${API_KEY}`],
  );
});

void test("embeddings: deterministic, OpenAI-shaped, base64 (SDK default) and float agree", async (t) => {
  const { emulator, client } = await setup(t);
  const input = ["The food was delicious", "and the waiter was kind"];
  const viaBase64 = await client.embeddings.create({ model: "text-embedding-3-small", input, dimensions: 8 });
  const viaFloat = await client.embeddings.create({ model: "text-embedding-3-small", input, dimensions: 8, encoding_format: "float" });
  assert.deepEqual((emulator.requests[0]?.json as { encoding_format?: string }).encoding_format, "base64");
  assert.equal(viaBase64.object, "list");
  assert.equal(viaBase64.model, "text-embedding-3-small");
  assert.deepEqual(
    viaBase64.data.map((d) => [d.object, d.index, d.embedding.length]),
    [
      ["embedding", 0, 8],
      ["embedding", 1, 8],
    ],
  );
  assert.deepEqual(viaBase64.data, viaFloat.data);
  for (const { embedding } of viaBase64.data) assert.ok(Math.abs(Math.hypot(...embedding) - 1) < 1e-5, "unit length");
  assert.notDeepEqual(viaBase64.data[0]?.embedding, viaBase64.data[1]?.embedding);
  assert.ok(viaBase64.usage.prompt_tokens > 0 && viaBase64.usage.total_tokens === viaBase64.usage.prompt_tokens);

  const single = await client.embeddings.create({ model: "text-embedding-3-large", input: "The food was delicious" });
  assert.equal(single.data.length, 1);
  assert.equal(single.data[0]?.embedding.length, 3072);
  const tokens = await client.embeddings.create({ model: "text-embedding-3-small", input: [[1, 2, 3]], dimensions: 4 });
  assert.equal(tokens.usage.prompt_tokens, 3);
  await assert.rejects(client.embeddings.create({ model: "text-embedding-3-small", input: "x", dimensions: 5000 }), (err: unknown) => {
    assert.ok(err instanceof OpenAI.BadRequestError);
    assert.equal(err.param, "dimensions");
    return true;
  });
});

void test("models: the configured ids are listed", async (t) => {
  const { client } = await setup(t, { models: ["gpt-4o-mini", "text-embedding-3-small"] });
  const ids: string[] = [];
  for await (const model of client.models.list()) ids.push(model.id);
  assert.deepEqual(ids, ["gpt-4o-mini", "text-embedding-3-small"]);
});

void test("requests log: method, path, headers, raw body and parsed JSON as received", async (t) => {
  const { emulator, client } = await setup(t);
  await client.chat.completions.create({ model: "gpt-4.1-nano", messages: MESSAGES }, { headers: { "x-gearbox-test": "1" } });
  const unknown = await fetch(`${emulator.url}/v1/nope?x=1`, { method: "POST", headers: { authorization: `Bearer ${API_KEY}` }, body: "{}" });
  assert.equal(unknown.status, 404);
  const [chat, notFound] = emulator.requests;
  assert.ok(chat && notFound);
  assert.equal(chat.method, "POST");
  assert.equal(chat.path, "/v1/chat/completions");
  assert.equal(chat.headers.authorization, `Bearer ${API_KEY}`);
  assert.equal(chat.headers["x-gearbox-test"], "1");
  assert.deepEqual(chat.json, { model: "gpt-4.1-nano", messages: MESSAGES });
  assert.deepEqual(JSON.parse(chat.body.toString("utf8")), chat.json);
  assert.equal(chat.fixture, "vercel-ai/openai/openai-text", "the default chat fixture");
  assert.deepEqual([notFound.path, notFound.url], ["/v1/nope", "/v1/nope?x=1"]);
});

void test("client disconnect mid-stream is counted as aborted; a full stream is not", async (t) => {
  const { emulator, client } = await setup(t, { pacing: { delayMs: 5 } });
  emulator.queue({ fixture: "vercel-ai/openai/openai-text" }, { fixture: "vercel-ai/mistral/mistral-text" });
  let seen = 0;
  for await (const _chunk of await client.chat.completions.create({ model: "m", messages: MESSAGES, stream: true })) {
    seen += 1;
    if (seen === 3) break; // the SDK aborts the request
  }
  await emulator.waitForAborted(1);
  const cut = emulator.requests[0]?.stream;
  assert.equal(cut?.aborted, true);
  assert.ok(cut.writesSent < cut.writes, `stopped early: ${cut.writesSent}/${cut.writes}`);

  await collect(await client.chat.completions.create({ model: "m", messages: MESSAGES, stream: true }));
  assert.deepEqual(emulator.requests[1]?.stream, { writes: 9, writesSent: 9, aborted: false });
  assert.equal(emulator.aborted, 1);
});

void test("misuse fails loudly: unknown fixture, stream asked of a body-only recording", async (t) => {
  const { emulator, client } = await setup(t);
  assert.throws(() => emulator.queue({ fixture: "vercel-ai/openai/does-not-exist" }), /has no recorded form/);
  assert.throws(() => emulator.queue({ fixture: "../../package" }), /Invalid fixture name/);
  assert.throws(() => emulator.queue({ fixture: "vercel-ai/openai/azure-model-router.1", endpoint: "embeddings" }), /embeddings/);
  emulator.queue({ fixture: "vercel-ai/groq/groq-text" });
  await assert.rejects(client.chat.completions.create({ model: "m", messages: MESSAGES, stream: true }), (err: unknown) => {
    assert.ok(err instanceof OpenAI.InternalServerError);
    assert.equal(err.code, "emulator_error");
    return true;
  });
});
