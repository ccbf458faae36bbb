/**
 * The Anthropic backend codec against the Anthropic emulator over real HTTP: what Gearbox sends
 * is accepted as an Anthropic request (and recorded as sent), and what comes back (bodies,
 * streams cut mid-event, HTTP and in-band errors) decodes to canonical.
 */
import { test, type TestContext } from "node:test";
import assert from "node:assert/strict";
import type { ChatChunk, ChatRequest } from "../../../common/canonical/types.ts";
import { GatewayError } from "../../../common/errors.ts";
import { parseOpenAIChatRequest } from "../../../common/schemas/openai-chat-request.ts";
import { startAnthropicUpstream, type AnthropicUpstream } from "../../../test/emulators/anthropic-upstream.ts";
import type { BackendContext } from "../codec.ts";
import { anthropicBackend } from "./anthropic.ts";

const API_KEY = "sk-ant-gearbox-test";
const CTX: BackendContext = { upstreamModel: "claude-haiku-4-5", forceStreamUsage: true };

function openai(body: Record<string, unknown>): ChatRequest {
  const parsed = parseOpenAIChatRequest({ model: "gpt-4o", messages: [{ role: "user", content: "Hello" }], ...body });
  assert.ok(parsed.ok);
  return parsed.value;
}

async function setup(t: TestContext): Promise<AnthropicUpstream> {
  const emulator = await startAnthropicUpstream({ apiKey: API_KEY });
  t.after(() => emulator.close());
  return emulator;
}

/** Sends the codec's request as the processor would: provider base URL + path, codec headers + credentials. */
async function send(emulator: AnthropicUpstream, req: ChatRequest): Promise<Response> {
  const upstream = anthropicBackend.request(req, CTX);
  return fetch(`${emulator.baseURL}${upstream.path}`, {
    method: "POST",
    headers: { ...upstream.headers, "x-api-key": API_KEY },
    body: upstream.body,
  });
}

async function decodeStream(res: Response): Promise<ChatChunk[]> {
  assert.ok(res.body);
  const decoder = anthropicBackend.stream(CTX);
  const chunks: ChatChunk[] = [];
  for await (const part of res.body) chunks.push(...decoder.push(Buffer.from(part as Uint8Array)));
  chunks.push(...decoder.end());
  return chunks;
}

void test("a full request is accepted as sent: path, anthropic-version, credentials, body", async (t) => {
  const emulator = await setup(t);
  emulator.queue({ fixture: "vercel-ai/anthropic/anthropic-json-other-tool.1" });
  const req = openai({
    messages: [
      { role: "system", content: "Be brief." },
      { role: "user", content: "Weather in SF?" },
    ],
    temperature: 1.5,
    stop: ["END"],
    user: "u-1",
    parallel_tool_calls: false,
    tools: [{ type: "function", function: { name: "weather", parameters: { type: "object", properties: { location: { type: "string" } } } } }],
  });
  const res = await send(emulator, req);
  assert.equal(res.status, 200);
  const [recorded] = emulator.requests;
  assert.equal(recorded?.path, "/v1/messages");
  assert.equal(recorded?.headers["anthropic-version"], "2023-06-01");
  assert.equal(recorded?.headers["x-api-key"], API_KEY);
  assert.equal(recorded?.headers["content-type"], "application/json");
  assert.deepEqual(recorded?.json, {
    model: "claude-haiku-4-5",
    max_tokens: 4096,
    system: "Be brief.",
    messages: [{ role: "user", content: "Weather in SF?" }],
    temperature: 1,
    stop_sequences: ["END"],
    metadata: { user_id: "u-1" },
    tools: [{ name: "weather", input_schema: { type: "object", properties: { location: { type: "string" } } } }],
    tool_choice: { type: "auto", disable_parallel_tool_use: true },
  });
  const decoded = anthropicBackend.response(Buffer.from(await res.arrayBuffer()), Object.fromEntries(res.headers), CTX);
  assert.ok(decoded.ok);
  assert.deepEqual(decoded.value.choices[0]?.message.toolCalls, [
    { id: "toolu_01PQjhxo3eirCdKNvCJrKc8f", name: "weather", arguments: '{"location":"San Francisco"}' },
  ]);
  assert.equal(decoded.value.choices[0]?.finishReason, "tool_calls");
});

void test("a stream cut mid-event on the wire decodes to the recorded text, finish and usage", async (t) => {
  const emulator = await setup(t);
  emulator.queue({ fixture: "vercel-ai/anthropic/anthropic-clear-thinking.1", pacing: { splitEvents: true, delayMs: 1 } });
  const res = await send(emulator, openai({ stream: true }));
  assert.equal(res.status, 200);
  assert.equal((emulator.requests[0]?.json as { stream?: boolean }).stream, true);
  const chunks = await decodeStream(res);
  const text = chunks.map((c) => c.choices[0]?.delta.content ?? "").join("");
  const reasoning = chunks.map((c) => c.choices[0]?.delta.reasoning ?? "").join("");
  assert.equal(text, "925 ÷ 5 = 185");
  assert.equal(reasoning, "The previous result was 925. Now I need to divide that by 5.\n\n925 ÷ 5 = 185");
  assert.equal(chunks.at(-2)?.choices[0]?.finishReason, "stop");
  assert.deepEqual(chunks.at(-1)?.usage, { inputTokens: 69, outputTokens: 53, totalTokens: 122, cachedInputTokens: 0 });
  assert.equal(emulator.requests[0]?.stream?.writes, 23, "one write per event, plus one");
});

void test("HTTP errors: 529 overloaded → 503 with retry-after; 429 keeps its status", async (t) => {
  const emulator = await setup(t);
  emulator.queue(
    { error: { type: "overloaded_error", message: "Overloaded" }, headers: { "retry-after": "2" } },
    { error: { type: "rate_limit_error", message: "Rate limited" }, headers: { "retry-after": "9" } },
  );
  for (const [status, shown, code, retryAfter] of [
    [529, 503, "overloaded_error", "2"],
    [429, 429, "rate_limit_error", "9"],
  ] as const) {
    const res = await send(emulator, openai({}));
    assert.equal(res.status, status);
    const err = anthropicBackend.error(res.status, Object.fromEntries(res.headers), Buffer.from(await res.arrayBuffer()));
    assert.deepEqual([err.status, err.code, err.headers["retry-after"]], [shown, code, retryAfter]);
  }
});

void test("an in-band error event ends the decoded stream with its GatewayError", async (t) => {
  const emulator = await setup(t);
  emulator.queue({ fixture: "vercel-ai/anthropic/anthropic-text", streamError: { afterEvents: 5, type: "overloaded_error", message: "Overloaded" } });
  const res = await send(emulator, openai({ stream: true }));
  await assert.rejects(decodeStream(res), (err: unknown) => {
    assert.ok(err instanceof GatewayError);
    assert.deepEqual([err.status, err.code, err.message], [503, "overloaded_error", "Overloaded"]);
    return true;
  });
});
