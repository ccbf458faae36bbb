/**
 * The official `@anthropic-ai/sdk` as the judge: it sends a real request, which the Anthropic
 * parser must accept, and reads what the Anthropic client codec wrote (JSON, SSE, errors) from a
 * local HTTP server, as it would read api.anthropic.com.
 */
import assert from "node:assert/strict";
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, test } from "node:test";
import Anthropic from "@anthropic-ai/sdk";
import type { ChatChunk, ChatRequest, ChatResponse, ChunkChoice, FinishReason, Usage } from "../../../common/canonical/types.ts";
import { GatewayError, invalidRequest, type ErrorType } from "../../../common/errors.ts";
import { parseAnthropicMessagesRequest } from "../../../common/schemas/anthropic-messages-request.ts";
import { anthropicClient } from "./anthropic.ts";

/** What the server answers to the next parsed request. */
type Reply = { status: number; type: "json" | "sse"; parts: Buffer[] };

let reply: (req: ChatRequest) => Reply;
const received: ChatRequest[] = [];
const server = createServer((req, res) => {
  void readJson(req).then((json) => {
    const parsed = parseAnthropicMessagesRequest(json);
    const out: Reply = parsed.ok
      ? reply(parsed.value)
      : { status: 400, type: "json", parts: [anthropicClient.error(invalidRequest(parsed.errors[0]?.message ?? "bad", parsed.errors[0]?.param))] };
    if (parsed.ok) received.push(parsed.value);
    res.writeHead(out.status, { "content-type": out.type === "sse" ? "text/event-stream" : "application/json", "request-id": "req_test" });
    for (const part of out.parts) res.write(part); // one write per encoder call, as a stream would arrive
    res.end();
  });
});

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  assert.equal(req.url, "/v1/messages");
  return JSON.parse(Buffer.concat(chunks).toString("utf8"));
}

let client: Anthropic;
before(async () => {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  client = new Anthropic({ baseURL: `http://127.0.0.1:${port}`, apiKey: "x", maxRetries: 0 });
});
after(() => new Promise<void>((resolve) => server.close(() => resolve())));

const MODEL = "claude-sonnet-5"; // not on the SDK's deprecation list (which logs a warning)
const PARAMS = { model: MODEL, max_tokens: 256, messages: [{ role: "user" as const, content: "Weather in Paris?" }] };
const WEATHER_TOOL = { name: "weather", description: "Weather by city", input_schema: { type: "object" as const, properties: { city: { type: "string" } } } };

function chunk(delta: ChunkChoice["delta"], finishReason: FinishReason | null = null, usage?: Usage): ChatChunk {
  return { id: "chatcmpl-7", created: 1, model: "gpt-4o", choices: [{ index: 0, delta, finishReason }], ...(usage && { usage }), extra: {} };
}

function usageChunk(usage: Usage): ChatChunk {
  return { id: "chatcmpl-7", created: 1, model: "gpt-4o", choices: [], usage, extra: {} };
}

/** Serves the encoder's bytes for these chunks, one write per `chunk()` / `end()` call. */
function streamOf(chunks: ChatChunk[], error?: GatewayError): (req: ChatRequest) => Reply {
  return (req) => {
    const encoder = anthropicClient.stream(req);
    const parts = chunks.map((c) => encoder.chunk(c));
    parts.push(error ? encoder.error(error) : encoder.end());
    return { status: 200, type: "sse", parts };
  };
}

const USAGE: Usage = { inputTokens: 21, outputTokens: 5, totalTokens: 26 };

test("non-stream: messages.create reads the message, tool inputs as objects, cache usage", async () => {
  const res: ChatResponse = {
    id: "chatcmpl-1",
    created: 1,
    model: "gpt-4o",
    choices: [
      {
        index: 0,
        message: {
          role: "assistant",
          content: "Checking.",
          reasoning: "Use the tool.",
          toolCalls: [{ id: "call_1", name: "weather", arguments: '{"city":"Paris"}' }],
        },
        finishReason: "tool_calls",
      },
    ],
    usage: { inputTokens: 120, outputTokens: 9, totalTokens: 129, cachedInputTokens: 100 },
    extra: {},
  };
  reply = (req) => ({ status: 200, type: "json", parts: [anthropicClient.response(res, req)] });
  const message = await client.messages.create({ ...PARAMS, tools: [WEATHER_TOOL], tool_choice: { type: "any", disable_parallel_tool_use: true } });
  assert.equal(message.id, "msg_chatcmpl-1");
  assert.equal(message.type, "message");
  assert.equal(message.stop_reason, "tool_use");
  assert.deepEqual(message.content, [
    { type: "thinking", thinking: "Use the tool.", signature: "" },
    { type: "text", text: "Checking." },
    { type: "tool_use", id: "call_1", name: "weather", input: { city: "Paris" } },
  ]);
  assert.deepEqual(message.usage, { input_tokens: 20, output_tokens: 9, cache_read_input_tokens: 100 });
  const seen = received.at(-1);
  assert.equal(seen?.maxTokens, 256);
  assert.deepEqual(seen?.toolChoice, { type: "required" });
  assert.equal(seen?.parallelToolCalls, false);
  assert.deepEqual(seen?.tools?.[0]?.parameters, WEATHER_TOOL.input_schema);
});

test("stream (a): plain text chunks → finalMessage text, end_turn, usage", async () => {
  reply = streamOf([chunk({ role: "assistant", content: "" }), chunk({ content: "Hello" }), chunk({ content: ", world" }), chunk({}, "stop", USAGE)]);
  const stream = client.messages.stream(PARAMS);
  const texts: string[] = [];
  stream.on("text", (delta) => texts.push(delta));
  const message = await stream.finalMessage();
  assert.deepEqual(texts, ["Hello", ", world"]);
  assert.deepEqual(message.content, [{ type: "text", text: "Hello, world" }]);
  assert.equal(message.stop_reason, "end_turn");
  assert.equal(message.model, "gpt-4o");
  assert.deepEqual(message.usage, { input_tokens: 21, output_tokens: 5 });
  assert.equal(received.at(-1)?.includeUsage, true);
});

test("stream (b): tool arguments in fragments → one tool_use with a parsed input object", async () => {
  reply = streamOf([
    chunk({ role: "assistant", toolCalls: [{ index: 0, id: "call_w", name: "weather", arguments: "" }] }),
    chunk({ toolCalls: [{ index: 0, arguments: '{"ci' }] }),
    chunk({ toolCalls: [{ index: 0, arguments: 'ty": "Pa' }] }),
    chunk({ toolCalls: [{ index: 0, arguments: 'ris", "days": 3}' }] }),
    chunk({}, "tool_calls", USAGE),
  ]);
  const message = await client.messages.stream({ ...PARAMS, tools: [WEATHER_TOOL] }).finalMessage();
  assert.deepEqual(message.content, [{ type: "tool_use", id: "call_w", name: "weather", input: { city: "Paris", days: 3 } }]);
  assert.equal(message.stop_reason, "tool_use");
});

test("stream (c): text then two tool calls, raw events via messages.create({ stream: true })", async () => {
  reply = streamOf([
    chunk({ role: "assistant", content: "Let me look." }),
    chunk({ toolCalls: [{ index: 0, id: "call_1", name: "weather", arguments: '{"city":' }] }),
    chunk({ toolCalls: [{ index: 0, arguments: '"Paris"}' }] }),
    chunk({ toolCalls: [{ index: 1, id: "call_2", name: "weather", arguments: '{"city":"Rome"}' }] }),
    chunk({}, "tool_calls", USAGE),
  ]);
  const events: string[] = [];
  const stream = await client.messages.create({ ...PARAMS, tools: [WEATHER_TOOL], stream: true });
  for await (const event of stream) events.push(event.type + ("index" in event ? ` ${event.index}` : ""));
  assert.deepEqual(events, [
    "message_start",
    "content_block_start 0",
    "content_block_delta 0",
    "content_block_stop 0",
    "content_block_start 1",
    "content_block_delta 1",
    "content_block_delta 1",
    "content_block_stop 1",
    "content_block_start 2",
    "content_block_delta 2",
    "content_block_stop 2",
    "message_delta",
    "message_stop",
  ]);

  const message = await client.messages.stream({ ...PARAMS, tools: [WEATHER_TOOL] }).finalMessage();
  assert.deepEqual(message.content, [
    { type: "text", text: "Let me look." },
    { type: "tool_use", id: "call_1", name: "weather", input: { city: "Paris" } },
    { type: "tool_use", id: "call_2", name: "weather", input: { city: "Rome" } },
  ]);
  assert.equal(message.stop_reason, "tool_use");
});

test("stream (d): usage in a final usage-only chunk reaches the final message", async () => {
  reply = streamOf([
    chunk({ role: "assistant", content: "Hi" }),
    chunk({}, "length"),
    usageChunk({ inputTokens: 1500, outputTokens: 256, totalTokens: 1756, cachedInputTokens: 1024 }),
  ]);
  const message = await client.messages.stream(PARAMS).finalMessage();
  assert.deepEqual(message.content, [{ type: "text", text: "Hi" }]);
  assert.equal(message.stop_reason, "max_tokens");
  assert.deepEqual(message.usage, { input_tokens: 476, output_tokens: 256, cache_read_input_tokens: 1024 });
});

test("stream: reasoning arrives as a thinking block", async () => {
  reply = streamOf([chunk({ reasoning: "Two plus " }), chunk({ reasoning: "two." }), chunk({ content: "4" }, "stop", USAGE)]);
  const stream = client.messages.stream(PARAMS);
  const thinking: string[] = [];
  stream.on("thinking", (delta) => thinking.push(delta));
  const message = await stream.finalMessage();
  assert.deepEqual(thinking, ["Two plus ", "two."]);
  assert.deepEqual(message.content, [
    { type: "thinking", thinking: "Two plus two.", signature: "" },
    { type: "text", text: "4" },
  ]);
});

test("stream: an in-band error event rejects the SDK's stream with Anthropic's error type", async () => {
  reply = streamOf([chunk({ content: "Par" })], new GatewayError(529, "upstream_error", "Overloaded"));
  const err: unknown = await client.messages
    .stream(PARAMS)
    .finalMessage()
    .then(
      () => assert.fail("the stream should fail"),
      (e: unknown) => e,
    );
  assert.ok(err instanceof Anthropic.APIError, String(err));
  assert.equal(err.type, "overloaded_error");
  assert.equal(err.apiMessage, "Overloaded");
});

test("error bodies parse as Anthropic.APIError with the right status, class and type", async () => {
  const cases: [number, ErrorType, string, new (...args: never[]) => Error][] = [
    [400, "invalid_request_error", "invalid_request_error", Anthropic.BadRequestError],
    [401, "authentication_error", "authentication_error", Anthropic.AuthenticationError],
    [403, "permission_error", "permission_error", Anthropic.PermissionDeniedError],
    [404, "not_found_error", "not_found_error", Anthropic.NotFoundError],
    [413, "invalid_request_error", "request_too_large", Anthropic.APIError],
    [429, "rate_limit_error", "rate_limit_error", Anthropic.RateLimitError],
    [500, "server_error", "api_error", Anthropic.InternalServerError],
    [503, "server_error", "overloaded_error", Anthropic.InternalServerError],
    [529, "upstream_error", "overloaded_error", Anthropic.InternalServerError],
  ];
  for (const [status, type, expected, errorClass] of cases) {
    reply = () => ({ status, type: "json", parts: [anthropicClient.error(new GatewayError(status, type, `went wrong (${status})`))] });
    const err: unknown = await client.messages.create(PARAMS).then(
      () => assert.fail(`${status} should throw`),
      (e: unknown) => e,
    );
    assert.ok(err instanceof errorClass, `${status}: ${String(err)}`);
    assert.ok(err instanceof Anthropic.APIError);
    assert.equal(err.status, status);
    assert.equal(err.type, expected);
    assert.equal(err.apiMessage, `went wrong (${status})`);
    assert.equal(err.requestID, "req_test");
  }
});

test("a request the parser rejects reaches the SDK as a BadRequestError naming the field", async () => {
  const err: unknown = await client.messages.create({ ...PARAMS, max_tokens: 0 }).then(
    () => assert.fail("max_tokens 0 should be rejected"),
    (e: unknown) => e,
  );
  assert.ok(err instanceof Anthropic.BadRequestError, String(err));
  assert.equal(err.type, "invalid_request_error");
  assert.match(err.apiMessage ?? "", /'max_tokens' must be >= 1/);
});
