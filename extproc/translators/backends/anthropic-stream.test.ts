/**
 * The Anthropic stream decoder: the exact chunks of a small stream, the same chunks whatever the
 * byte boundaries, tool-call indexing, and every way a stream can go wrong.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import type { ChatChunk } from "../../../common/canonical/types.ts";
import { GatewayError } from "../../../common/errors.ts";
import { anthropicSseEvents } from "../../../test/emulators/anthropic-upstream.ts";
import { loadChunkLines } from "../../../test/emulators/fixtures.ts";
import type { BackendContext } from "../codec.ts";
import { anthropicBackend } from "./anthropic.ts";
import { JSON_RESPONSE_TOOL } from "./anthropic-wire.ts";

const CTX: BackendContext = { upstreamModel: "claude-upstream", forceStreamUsage: false };

const START = {
  type: "message_start",
  message: {
    id: "msg_s",
    type: "message",
    role: "assistant",
    model: "claude-m",
    content: [],
    stop_reason: null,
    usage: { input_tokens: 9, cache_read_input_tokens: 4, output_tokens: 1 },
  },
};
const STOP = { type: "message_stop" };
const textBlock = (index: number): unknown => ({ type: "content_block_start", index, content_block: { type: "text", text: "" } });
const toolBlock = (index: number, id: string, name: string, type = "tool_use"): unknown => ({
  type: "content_block_start",
  index,
  content_block: { type, id, name, input: {} },
});
const delta = (index: number, d: Record<string, unknown>): unknown => ({ type: "content_block_delta", index, delta: d });
const blockStop = (index: number): unknown => ({ type: "content_block_stop", index });
const messageDelta = (stopReason: string, outputTokens: number): unknown => ({
  type: "message_delta",
  delta: { stop_reason: stopReason, stop_sequence: null },
  usage: { output_tokens: outputTokens },
});

/** Events framed as Anthropic frames them. */
function sse(events: readonly unknown[]): Buffer {
  return Buffer.from(anthropicSseEvents(events.map((e) => JSON.stringify(e))).join(""));
}

/** Decodes `bytes` fed in the given slices; `created` zeroed (it is the decoder's clock). */
function decode(slices: readonly Buffer[]): ChatChunk[] {
  const decoder = anthropicBackend.stream(CTX);
  const chunks = slices.flatMap((s) => decoder.push(s));
  chunks.push(...decoder.end());
  return chunks.map((c) => ({ ...c, created: 0 }));
}

/** A small stream with thinking, multi-byte text, two tool calls and a ping. */
const SMALL = sse([
  START,
  { type: "content_block_start", index: 0, content_block: { type: "thinking", thinking: "", signature: "" } },
  delta(0, { type: "thinking_delta", thinking: "Plan." }),
  delta(0, { type: "signature_delta", signature: "c2ln" }),
  blockStop(0),
  textBlock(1),
  delta(1, { type: "text_delta", text: "925 ÷ 5" }),
  { type: "ping" },
  blockStop(1),
  toolBlock(2, "toolu_a", "weather"),
  delta(2, { type: "input_json_delta", partial_json: "" }),
  delta(2, { type: "input_json_delta", partial_json: '{"city":' }),
  delta(2, { type: "input_json_delta", partial_json: '"Paris"}' }),
  blockStop(2),
  toolBlock(3, "toolu_b", "now"),
  delta(3, { type: "input_json_delta", partial_json: "" }),
  blockStop(3),
  messageDelta("tool_use", 40),
  STOP,
]);

const chunk = (delta: ChatChunk["choices"][number]["delta"], finishReason: ChatChunk["choices"][number]["finishReason"] = null): ChatChunk => ({
  id: "msg_s",
  created: 0,
  model: "claude-m",
  choices: [{ index: 0, delta, finishReason }],
  extra: {},
});

const SMALL_CHUNKS: ChatChunk[] = [
  chunk({ role: "assistant", content: "" }),
  chunk({ reasoning: "Plan." }),
  chunk({ content: "925 ÷ 5" }),
  chunk({ toolCalls: [{ index: 0, id: "toolu_a", name: "weather", arguments: "" }] }),
  chunk({ toolCalls: [{ index: 0, arguments: '{"city":' }] }),
  chunk({ toolCalls: [{ index: 0, arguments: '"Paris"}' }] }),
  chunk({ toolCalls: [{ index: 1, id: "toolu_b", name: "now", arguments: "" }] }),
  chunk({ toolCalls: [{ index: 1, arguments: "{}" }] }),
  chunk({}, "tool_calls"),
  { id: "msg_s", created: 0, model: "claude-m", choices: [], usage: { inputTokens: 13, outputTokens: 40, totalTokens: 53, cachedInputTokens: 4 }, extra: {} },
];

void test("a small stream decodes to exactly these chunks (tool-call index counts tool calls, not blocks)", () => {
  assert.deepEqual(decode([SMALL]), SMALL_CHUNKS);
});

void test("every split point of the small stream, and byte by byte, gives the same chunks", () => {
  for (let i = 0; i <= SMALL.length; i += 1) {
    assert.deepEqual(decode([SMALL.subarray(0, i), SMALL.subarray(i)]), SMALL_CHUNKS, `split at byte ${i}`);
  }
  const bytes = Array.from({ length: SMALL.length }, (_, i) => SMALL.subarray(i, i + 1));
  assert.deepEqual(decode(bytes), SMALL_CHUNKS);
  const crlf = Buffer.from(SMALL.toString("utf8").replace(/\n/g, "\r\n"));
  assert.deepEqual(decode([crlf]), SMALL_CHUNKS, "CRLF framing");
  const dataOnly = Buffer.from(SMALL.toString("utf8").replace(/^event: .*\n/gm, ""));
  assert.deepEqual(decode([dataOnly]), SMALL_CHUNKS, "without event: lines, the payload type decides");
});

void test("server-side tool blocks are skipped, their argument deltas too; the next tool call is index 0", () => {
  const chunks = decode([
    sse([
      START,
      toolBlock(0, "srvtoolu_1", "web_fetch", "server_tool_use"),
      delta(0, { type: "input_json_delta", partial_json: '{"url":"https://x"}' }),
      blockStop(0),
      { type: "content_block_start", index: 1, content_block: { type: "web_fetch_tool_result", tool_use_id: "srvtoolu_1", content: {} } },
      blockStop(1),
      toolBlock(2, "toolu_c", "lookup"),
      delta(2, { type: "input_json_delta", partial_json: "{}" }),
      blockStop(2),
      messageDelta("tool_use", 5),
      STOP,
    ]),
  ]);
  assert.deepEqual(
    chunks.slice(1, 3).map((c) => c.choices[0]?.delta),
    [{ toolCalls: [{ index: 0, id: "toolu_c", name: "lookup", arguments: "" }] }, { toolCalls: [{ index: 0, arguments: "{}" }] }],
  );
  assert.equal(chunks.length, 5);
});

void test("Gearbox's JSON answer tool streams as content and finishes as stop", () => {
  const chunks = decode([
    sse([
      START,
      toolBlock(0, "toolu_j", JSON_RESPONSE_TOOL),
      delta(0, { type: "input_json_delta", partial_json: '{"name":' }),
      delta(0, { type: "input_json_delta", partial_json: '"Ada"}' }),
      blockStop(0),
      messageDelta("tool_use", 5),
      STOP,
    ]),
  ]);
  assert.deepEqual(
    chunks.slice(1, 4).map((c) => c.choices[0]),
    [
      { index: 0, delta: { content: '{"name":' }, finishReason: null },
      { index: 0, delta: { content: '"Ada"}' }, finishReason: null },
      { index: 0, delta: {}, finishReason: "stop" },
    ],
  );
});

void test("a duplicate message_start of the open message is ignored; blocks inside message_start are emitted whole", () => {
  const text = decode([Buffer.from(anthropicSseEvents(loadChunkLines("vercel-ai/anthropic/duplicate-message-start")).join(""))]);
  assert.deepEqual(
    text.map((c) => c.choices[0]?.delta.content ?? null),
    ["", "Hello, World!", null, null],
  );
  const prefilled = decode([
    sse([
      {
        type: "message_start",
        message: { ...START.message, stop_reason: "tool_use", content: [{ type: "tool_use", id: "toolu_p", name: "roll", input: { n: 2 } }] },
      },
      STOP,
    ]),
  ]);
  assert.deepEqual(
    prefilled.map((c) => c.choices[0] ?? null),
    [
      { index: 0, delta: { role: "assistant", content: "" }, finishReason: null },
      { index: 0, delta: { toolCalls: [{ index: 0, id: "toolu_p", name: "roll", arguments: "" }] }, finishReason: null },
      { index: 0, delta: { toolCalls: [{ index: 0, arguments: '{"n":2}' }] }, finishReason: null },
      { index: 0, delta: {}, finishReason: "tool_calls" },
      null,
    ],
  );
});

void test("a refusal finishes as content_filter with Anthropic's explanation as the refusal delta", () => {
  const chunks = decode([Buffer.from(anthropicSseEvents(loadChunkLines("vercel-ai/anthropic/anthropic-refusal")).join(""))]);
  assert.equal(chunks.length, 3);
  assert.equal(chunks[1]?.choices[0]?.finishReason, "content_filter");
  assert.match(chunks[1]?.choices[0]?.delta.refusal ?? "", /^This request triggered restrictions on violative cyber content/);
});

void test("a stream that never says why it stopped finishes as stop; trailing whitespace is fine", () => {
  const chunks = decode([sse([START, textBlock(0), delta(0, { type: "text_delta", text: "x" }), blockStop(0), STOP]), Buffer.from("\n")]);
  assert.equal(chunks.at(-2)?.choices[0]?.finishReason, "stop");
  assert.deepEqual(chunks.at(-1)?.choices, []);
});

/** Asserts decoding throws a GatewayError with this status whose message matches. */
function fails(slices: readonly Buffer[], status: number, message: RegExp, code?: string): void {
  assert.throws(
    () => decode(slices),
    (err: unknown) => {
      assert.ok(err instanceof GatewayError, String(err));
      assert.equal(err.status, status);
      assert.match(err.message, message);
      if (code !== undefined) assert.equal(err.code, code);
      return true;
    },
  );
}

void test("malformed streams throw a GatewayError", () => {
  const full = SMALL.toString("utf8");
  const cut = full.indexOf("message_delta") + 20;
  fails([Buffer.from(full.slice(0, cut))], 502, /ended early \(inside an event\)/, "upstream_stream_truncated");
  const beforeStop = full.slice(0, full.indexOf("event: message_stop"));
  fails([Buffer.from(beforeStop)], 502, /ended early \(before message_stop\)/, "upstream_stream_truncated");
  fails([Buffer.alloc(0)], 502, /ended early \(before message_start\)/);
  fails([Buffer.from('event: message_start\ndata: {"type":"message_start",\n\n')], 502, /invalid JSON/, "upstream_malformed");
  fails([Buffer.from('data: {"no_type":true}\n\n')], 502, /no 'type'/);
  fails([sse([textBlock(0)])], 502, /before message_start/);
  fails([sse([START, delta(5, { type: "text_delta", text: "x" })])], 502, /content block 5, which was not started/);
  fails([sse([START, blockStop(3)])], 502, /content block 3, which was not started/);
  fails([sse([START, { type: "content_block_delta", delta: { type: "text_delta", text: "x" } }])], 502, /without a block index/);
  fails([sse([START, STOP, START])], 502, /after message_stop/);
});

void test("a spliced stream (another message starts inside the open one) throws", () => {
  const spliced = Buffer.from(anthropicSseEvents(loadChunkLines("vercel-ai/anthropic/spliced-message-start")).join(""));
  fails([spliced], 502, /message 'msg_second' started inside message 'msg_first'/);
});

void test("an error event throws the mapped GatewayError, even after content", () => {
  const overloaded = { type: "error", error: { type: "overloaded_error", message: "Overloaded" } };
  fails([sse([START, textBlock(0), delta(0, { type: "text_delta", text: "partial" }), overloaded])], 503, /^Overloaded$/, "overloaded_error");
  const decoder = anthropicBackend.stream(CTX);
  const before = decoder.push(sse([START, textBlock(0), delta(0, { type: "text_delta", text: "partial" })]));
  assert.equal(before.length, 2, "content before the error was already handed out");
  assert.throws(
    () => decoder.push(sse([overloaded])),
    (err: unknown) => err instanceof GatewayError && err.status === 503,
  );
  fails([sse([{ type: "error", error: { type: "api_error", message: "Internal server error" } }])], 500, /^Internal server error$/, "api_error");
});
