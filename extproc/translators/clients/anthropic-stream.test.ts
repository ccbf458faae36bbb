import assert from "node:assert/strict";
import { test } from "node:test";
import type { ChatChunk, ChatRequest, ChunkChoice, FinishReason, Usage } from "../../../common/canonical/types.ts";
import { GatewayError } from "../../../common/errors.ts";
import { SseParser } from "../../../common/schemas/sse.ts";
import { anthropicClient } from "./anthropic.ts";

const REQ: ChatRequest = {
  model: "claude-sonnet-4-5",
  messages: [{ role: "user", content: "Hi" }],
  stream: true,
  includeUsage: true,
  maxTokens: 64,
  extra: {},
};
const USAGE: Usage = { inputTokens: 50, outputTokens: 9, totalTokens: 59, cachedInputTokens: 10 };

function chunk(delta: ChunkChoice["delta"], finishReason: FinishReason | null = null, extra: Record<string, unknown> = {}): ChatChunk {
  return { id: "chatcmpl-9", created: 1, model: "gpt-4o", choices: [{ index: 0, delta, finishReason }], extra };
}

function usageChunk(usage: Usage): ChatChunk {
  return { id: "chatcmpl-9", created: 1, model: "gpt-4o", choices: [], usage, extra: {} };
}

interface Event {
  event: string | undefined;
  data: Record<string, unknown>;
}

/** Encodes the chunks and parses the bytes back into events (checking `event:` = `data.type`). */
function encode(chunks: ChatChunk[], finish: "end" | GatewayError = "end"): { perChunk: Buffer[]; events: Event[] } {
  const encoder = anthropicClient.stream(REQ);
  const perChunk = chunks.map((c) => encoder.chunk(c));
  const tail = finish === "end" ? encoder.end() : encoder.error(finish);
  const parser = new SseParser();
  const events = parser.push(Buffer.concat([...perChunk, tail])).map((e) => ({ event: e.event, data: JSON.parse(e.data) as Record<string, unknown> }));
  assert.equal(parser.buffered, 0, "the stream ends on an event boundary");
  for (const e of events) assert.equal(e.event, e.data.type);
  return { perChunk, events };
}

/** A compact trace: event type, block index, and the delta's text. */
function trace(events: Event[]): string[] {
  return events.map(({ data }) => {
    const delta = data.delta as Record<string, unknown> | undefined;
    const block = data.content_block as Record<string, unknown> | undefined;
    const text = delta?.text ?? delta?.partial_json ?? delta?.thinking ?? delta?.stop_reason ?? block?.type;
    return [data.type, data.index, text].filter((x) => typeof x === "string" || typeof x === "number").join(" ");
  });
}

test("text then two tool calls: one block each, indexes in order, message_delta only at the end", () => {
  const { perChunk, events } = encode([
    chunk({ role: "assistant", content: "" }),
    chunk({ content: "Let me " }),
    chunk({ content: "check." }),
    chunk({ toolCalls: [{ index: 0, id: "call_a", name: "weather", arguments: "" }] }),
    chunk({ toolCalls: [{ index: 0, arguments: '{"city":' }] }),
    chunk({ toolCalls: [{ index: 0, arguments: '"Paris"}' }] }),
    chunk({ toolCalls: [{ index: 1, id: "call_b", name: "time", arguments: "{}" }] }),
    chunk({}, "tool_calls"),
    usageChunk(USAGE),
  ]);
  assert.deepEqual(trace(events), [
    "message_start",
    "content_block_start 0 text",
    "content_block_delta 0 Let me ",
    "content_block_delta 0 check.",
    "content_block_stop 0",
    "content_block_start 1 tool_use",
    'content_block_delta 1 {"city":',
    'content_block_delta 1 "Paris"}',
    "content_block_stop 1",
    "content_block_start 2 tool_use",
    "content_block_delta 2 {}",
    "content_block_stop 2",
    "message_delta tool_use",
    "message_stop",
  ]);
  assert.equal(perChunk.at(-1)?.length, 0, "a usage-only chunk writes nothing by itself");
  const start = events[0]?.data.message as Record<string, unknown>;
  assert.equal(start.id, "msg_chatcmpl-9");
  assert.equal(start.model, "gpt-4o");
  assert.deepEqual(start.usage, { input_tokens: 0, output_tokens: 0 });
  assert.deepEqual(events[5]?.data.content_block, { type: "tool_use", id: "call_a", name: "weather", input: {} });
  assert.deepEqual(events.at(-2)?.data, {
    type: "message_delta",
    delta: { stop_reason: "tool_use", stop_sequence: null },
    usage: { input_tokens: 40, output_tokens: 9, cache_read_input_tokens: 10 },
  });
});

test("reasoning opens a thinking block before the text", () => {
  const { events } = encode([chunk({ reasoning: "Hmm. " }), chunk({ reasoning: "Yes." }), chunk({ content: "42" }, "stop")]);
  assert.deepEqual(trace(events), [
    "message_start",
    "content_block_start 0 thinking",
    "content_block_delta 0 Hmm. ",
    "content_block_delta 0 Yes.",
    "content_block_stop 0",
    "content_block_start 1 text",
    "content_block_delta 1 42",
    "content_block_stop 1",
    "message_delta end_turn",
    "message_stop",
  ]);
  assert.deepEqual(events[1]?.data.content_block, { type: "thinking", thinking: "", signature: "" });
});

test("usage known at the start goes into message_start; stop sequences and length map", () => {
  const early = encode([{ ...chunk({ content: "a" }), usage: USAGE }, chunk({}, "stop", { stop_sequence: "END" })]).events;
  assert.deepEqual((early[0]?.data.message as Record<string, unknown>).usage, { input_tokens: 40, output_tokens: 0, cache_read_input_tokens: 10 });
  assert.deepEqual(early.at(-2)?.data.delta, { stop_reason: "stop_sequence", stop_sequence: "END" });
  const cut = encode([chunk({ content: "a" }, "length")]).events;
  assert.deepEqual(cut.at(-2)?.data, { type: "message_delta", delta: { stop_reason: "max_tokens", stop_sequence: null }, usage: { output_tokens: 0 } });
});

test("a fragment for an already closed tool call still reaches its block", () => {
  const { events } = encode([
    chunk({ toolCalls: [{ index: 0, id: "a", name: "f", arguments: '{"x":' }] }),
    chunk({ toolCalls: [{ index: 1, id: "b", name: "g", arguments: "{}" }] }),
    chunk({ toolCalls: [{ index: 0, arguments: "1}" }] }),
  ]);
  assert.deepEqual(trace(events).slice(1, -2), [
    "content_block_start 0 tool_use",
    'content_block_delta 0 {"x":',
    "content_block_stop 0",
    "content_block_start 1 tool_use",
    "content_block_delta 1 {}",
    "content_block_delta 0 1}",
    "content_block_stop 1",
  ]);
});

test("only choice 0 is encoded; a tool call without id gets one", () => {
  const other: ChatChunk = { ...chunk({ content: "ignored" }), choices: [{ index: 1, delta: { content: "ignored" }, finishReason: null }] };
  const { events } = encode([other, chunk({ toolCalls: [{ index: 0, name: "f" }] })]);
  assert.deepEqual(trace(events), ["message_start", "content_block_start 0 tool_use", "content_block_stop 0", "message_delta tool_use", "message_stop"]);
  assert.match(String((events[1]?.data.content_block as Record<string, unknown>).id), /^toolu_[0-9a-f]{24}$/);
});

test("a stream without chunks is still a whole message", () => {
  const { events } = encode([]);
  assert.deepEqual(trace(events), ["message_start", "message_delta end_turn", "message_stop"]);
  assert.equal((events[0]?.data.message as Record<string, unknown>).model, "claude-sonnet-4-5");
});

test("an in-band error is Anthropic's error event", () => {
  const { events } = encode([chunk({ content: "par" })], new GatewayError(502, "upstream_error", "The upstream stream ended before [DONE]."));
  assert.deepEqual(events.at(-1), {
    event: "error",
    data: { type: "error", error: { type: "api_error", message: "The upstream stream ended before [DONE]." } },
  });
});
