/** Anthropic message bodies → canonical `ChatResponse`: content, tool calls, reasoning, stop reasons, usage, malformed bodies. */
import { test } from "node:test";
import assert from "node:assert/strict";
import type { ChatResponse } from "../../../common/canonical/types.ts";
import { GatewayError } from "../../../common/errors.ts";
import { readFixtureBytes } from "../../../test/emulators/fixtures.ts";
import type { BackendContext } from "../codec.ts";
import { anthropicBackend } from "./anthropic.ts";
import { DEFAULT_REFUSAL } from "./anthropic-response.ts";
import { JSON_RESPONSE_TOOL } from "./anthropic-wire.ts";

const CTX: BackendContext = { upstreamModel: "claude-upstream", forceStreamUsage: false };

function decode(body: unknown): ChatResponse {
  const bytes = Buffer.isBuffer(body) ? body : Buffer.from(JSON.stringify(body));
  const result = anthropicBackend.response(bytes, {}, CTX);
  assert.ok(result.ok, JSON.stringify(result));
  return result.value;
}

function message(content: unknown[], extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id: "msg_1",
    type: "message",
    role: "assistant",
    model: "claude-x",
    content,
    stop_reason: "end_turn",
    usage: { input_tokens: 3, output_tokens: 4 },
    ...extra,
  };
}

void test("a recorded text message: id, model, content, finish reason, usage", () => {
  const res = decode(readFixtureBytes("vercel-ai/anthropic/anthropic-text", "json"));
  assert.equal(res.id, "msg_01VdEjxAP5ahtHKrrRdNBteQ");
  assert.equal(res.model, "claude-sonnet-4-5-20250929");
  assert.ok(Math.abs(res.created - Date.now() / 1000) < 5, "created: when Gearbox read it");
  assert.deepEqual(res.choices, [
    {
      index: 0,
      message: { role: "assistant", content: "Hello! I'm doing well, thanks for asking. How are you doing today? Is there anything I can help you with?" },
      finishReason: "stop",
    },
  ]);
  assert.deepEqual(res.usage, { inputTokens: 12, outputTokens: 29, totalTokens: 41, cachedInputTokens: 0 });
  assert.deepEqual(res.extra, {});
});

void test("usage: cache reads and writes count as input; thinking tokens as reasoning", () => {
  const res = decode(
    message([{ type: "text", text: "x" }], {
      usage: {
        input_tokens: 10,
        cache_read_input_tokens: 100,
        cache_creation_input_tokens: 50,
        output_tokens: 7,
        output_tokens_details: { thinking_tokens: 5 },
      },
    }),
  );
  assert.deepEqual(res.usage, { inputTokens: 160, outputTokens: 7, totalTokens: 167, cachedInputTokens: 100, reasoningTokens: 5 });
  const opus = decode(readFixtureBytes("vercel-ai/anthropic/anthropic-claude-opus-5-reasoning-high.1", "json"));
  assert.equal(opus.usage?.reasoningTokens, 139);
  assert.equal(decode(message([], { usage: undefined })).usage?.totalTokens, 0);
});

void test("text, thinking and tool_use blocks: content joined, reasoning, tool calls with JSON arguments", () => {
  const res = decode(
    message(
      [
        { type: "thinking", thinking: "Think A. ", signature: "sig" },
        { type: "redacted_thinking", data: "opaque" },
        { type: "text", text: "Checking " },
        { type: "tool_use", id: "toolu_1", name: "weather", input: { city: "Paris", units: ["C"] } },
        { type: "thinking", thinking: "Think B.", signature: "sig" },
        { type: "text", text: "both." },
        { type: "tool_use", id: "toolu_2", name: "now", input: {} },
      ],
      { stop_reason: "tool_use" },
    ),
  );
  assert.deepEqual(res.choices[0], {
    index: 0,
    message: {
      role: "assistant",
      content: "Checking both.",
      reasoning: "Think A. Think B.",
      toolCalls: [
        { id: "toolu_1", name: "weather", arguments: '{"city":"Paris","units":["C"]}' },
        { id: "toolu_2", name: "now", arguments: "{}" },
      ],
    },
    finishReason: "tool_calls",
  });
  const toolOnly = decode(readFixtureBytes("vercel-ai/anthropic/anthropic-json-other-tool.1", "json"));
  assert.equal(toolOnly.choices[0]?.message.content, null, "no text: content null, as OpenAI sends with tool calls");
});

void test("server-side tool blocks are not tool calls: the client has nothing to run", () => {
  const res = decode(readFixtureBytes("vercel-ai/anthropic/anthropic-mcp.1", "json"));
  assert.equal(res.choices[0]?.message.toolCalls, undefined);
  const content = res.choices[0]?.message.content;
  assert.match(typeof content === "string" ? content : "", /^The echo tool responded back with/);
  assert.equal(res.choices[0]?.finishReason, "stop");
});

void test("stop reasons map to OpenAI finish reasons", () => {
  const table: Array<[string | null, string | null]> = [
    ["end_turn", "stop"],
    ["stop_sequence", "stop"],
    ["pause_turn", "stop"],
    ["max_tokens", "length"],
    ["model_context_window_exceeded", "length"],
    ["tool_use", "tool_calls"],
    ["refusal", "content_filter"],
    ["a_reason_added_later", "stop"],
    [null, null],
  ];
  for (const [stop, finish] of table) {
    assert.equal(decode(message([{ type: "text", text: "x" }], { stop_reason: stop })).choices[0]?.finishReason, finish, String(stop));
  }
});

void test("refusal: content_filter, with Anthropic's explanation or a fixed sentence as the refusal", () => {
  const explained = decode(readFixtureBytes("vercel-ai/anthropic/anthropic-refusal", "json")).choices[0];
  assert.equal(explained?.finishReason, "content_filter");
  assert.equal(explained?.message.content, null);
  assert.match(explained?.message.refusal ?? "", /^This request triggered restrictions on violative cyber content/);
  const bare = decode(readFixtureBytes("vercel-ai/anthropic/anthropic-refusal-no-details", "json")).choices[0];
  assert.equal(bare?.message.refusal, DEFAULT_REFUSAL);
});

void test("Gearbox's JSON answer tool comes back as the content, finishing as stop", () => {
  const res = decode(
    message([{ type: "tool_use", id: "toolu_j", name: JSON_RESPONSE_TOOL, input: { name: "Ada", tags: ["math"] } }], { stop_reason: "tool_use" }),
  );
  assert.deepEqual(res.choices[0], { index: 0, message: { role: "assistant", content: '{"name":"Ada","tags":["math"]}' }, finishReason: "stop" });
});

void test("a body that is not an Anthropic message is a 502 upstream_error", () => {
  for (const body of [Buffer.from("<html>oops</html>"), Buffer.from('{"id":"msg_1","type":"message"}'), Buffer.from("[]")]) {
    const result = anthropicBackend.response(body, {}, CTX);
    assert.equal(result.ok, false);
    if (result.ok) continue;
    const [err] = result.errors;
    assert.ok(err instanceof GatewayError);
    assert.equal(err.status, 502);
    assert.equal(err.type, "upstream_error");
    assert.equal(err.code, "upstream_malformed");
  }
  assert.equal(decode(message([{ type: "text", text: "x" }], { model: undefined })).model, "claude-upstream", "model falls back to the upstream model");
});
