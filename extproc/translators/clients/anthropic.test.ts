import assert from "node:assert/strict";
import { test } from "node:test";
import type { AssistantMessage, ChatRequest, ChatResponse, FinishReason } from "../../../common/canonical/types.ts";
import { GatewayError, type ErrorType } from "../../../common/errors.ts";
import { anthropicClient, toAnthropicMessage } from "./anthropic.ts";
import { anthropicErrorType, toolInput, type AnthropicErrorType } from "./anthropic-wire.ts";

const REQ: ChatRequest = { model: "claude-sonnet-4-5", messages: [{ role: "user", content: "Hi" }], stream: false, maxTokens: 64, extra: {} };

function response(message: Partial<AssistantMessage>, finishReason: FinishReason | null, extra: Record<string, unknown> = {}): ChatResponse {
  return {
    id: "chatcmpl-1",
    created: 1,
    model: "gpt-4o-2024-08-06",
    choices: [{ index: 0, message: { role: "assistant", content: null, ...message }, finishReason }],
    usage: { inputTokens: 100, outputTokens: 12, totalTokens: 112, cachedInputTokens: 30 },
    extra,
  };
}

test("a full response: thinking, text, tool calls, usage with cache reads", () => {
  const res = response(
    {
      content: "Checking.",
      reasoning: "Need the weather.",
      toolCalls: [
        { id: "call_1", name: "weather", arguments: '{"city":"Paris"}' },
        { id: "call_2", name: "time", arguments: "" },
      ],
    },
    "tool_calls",
  );
  const body: unknown = JSON.parse(anthropicClient.response(res, REQ).toString("utf8"));
  assert.deepEqual(body, {
    id: "msg_chatcmpl-1",
    type: "message",
    role: "assistant",
    model: "gpt-4o-2024-08-06",
    content: [
      { type: "thinking", thinking: "Need the weather.", signature: "" },
      { type: "text", text: "Checking." },
      { type: "tool_use", id: "call_1", name: "weather", input: { city: "Paris" } },
      { type: "tool_use", id: "call_2", name: "time", input: {} },
    ],
    stop_reason: "tool_use",
    stop_sequence: null,
    usage: { input_tokens: 70, output_tokens: 12, cache_read_input_tokens: 30 },
  });
});

test("stop reasons", () => {
  const call = [{ id: "c", name: "f", arguments: "{}" }];
  const cases: [string, ChatResponse, string, string | null][] = [
    ["stop", response({ content: "x" }, "stop"), "end_turn", null],
    ["stop with a known stop sequence", response({ content: "x" }, "stop", { stop_sequence: "END" }), "stop_sequence", "END"],
    ["length", response({ content: "x" }, "length"), "max_tokens", null],
    ["tool_calls", response({ toolCalls: call }, "tool_calls"), "tool_use", null],
    ["stop but with tool calls", response({ toolCalls: call }, "stop"), "tool_use", null],
    ["tool_calls without any call", response({ content: "x" }, "tool_calls"), "end_turn", null],
    ["content_filter", response({ content: "" }, "content_filter"), "refusal", null],
    ["no finish reason", response({ content: "x" }, null), "end_turn", null],
    ["a refusal", response({ refusal: "I can't help with that." }, "stop"), "refusal", null],
  ];
  for (const [what, res, reason, sequence] of cases) {
    const msg = toAnthropicMessage(res, REQ);
    assert.equal(msg.stop_reason, reason, what);
    assert.equal(msg.stop_sequence, sequence, what);
  }
  const refusal = toAnthropicMessage(response({ refusal: "I can't help with that." }, "stop"), REQ);
  assert.deepEqual(refusal.content, [{ type: "text", text: "I can't help with that." }]);
});

test("ids: msg_ kept, added, or made; empty model falls back to the request's", () => {
  assert.equal(toAnthropicMessage({ ...response({}, "stop"), id: "msg_01" }, REQ).id, "msg_01");
  const made = toAnthropicMessage({ ...response({}, "stop"), id: "", model: "" }, REQ);
  assert.match(String(made.id), /^msg_[0-9a-f]{24}$/);
  assert.equal(made.model, "claude-sonnet-4-5");
  const noCallId = toAnthropicMessage(response({ toolCalls: [{ id: "", name: "f", arguments: "{}" }] }, "tool_calls"), REQ);
  assert.match(JSON.stringify(noCallId.content), /"id":"toolu_[0-9a-f]{24}"/);
});

test("text parts become one block each; empty text and no choices give no blocks", () => {
  const parts = toAnthropicMessage(
    response(
      {
        content: [
          { type: "text", text: "a" },
          { type: "text", text: "" },
          { type: "text", text: "b" },
        ],
      },
      "stop",
    ),
    REQ,
  );
  assert.deepEqual(parts.content, [
    { type: "text", text: "a" },
    { type: "text", text: "b" },
  ]);
  const none = toAnthropicMessage({ ...response({}, "stop"), choices: [], usage: undefined }, REQ);
  assert.deepEqual(none.content, []);
  assert.equal(none.stop_reason, "end_turn");
  assert.deepEqual(none.usage, { input_tokens: 0, output_tokens: 0 });
});

test("tool input: an object as parsed; anything else becomes {}", () => {
  assert.deepEqual(toolInput('{"a":{"b":[1]}}'), { a: { b: [1] } });
  assert.deepEqual(toolInput("  "), {});
  assert.deepEqual(toolInput('{"city": "Par'), {});
  assert.deepEqual(toolInput("[1,2]"), {});
  assert.deepEqual(toolInput('"text"'), {});
});

test("error bodies: Anthropic's shape, type from status first, then from the gateway type", () => {
  const cases: [number, ErrorType, AnthropicErrorType][] = [
    [400, "invalid_request_error", "invalid_request_error"],
    [401, "authentication_error", "authentication_error"],
    [402, "invalid_request_error", "billing_error"],
    [403, "permission_error", "permission_error"],
    [404, "invalid_request_error", "not_found_error"],
    [405, "invalid_request_error", "invalid_request_error"],
    [408, "timeout_error", "timeout_error"],
    [413, "invalid_request_error", "request_too_large"],
    [415, "invalid_request_error", "invalid_request_error"],
    [429, "rate_limit_error", "rate_limit_error"],
    [500, "server_error", "api_error"],
    [502, "upstream_error", "api_error"],
    [503, "server_error", "overloaded_error"],
    [504, "timeout_error", "timeout_error"],
    [529, "upstream_error", "overloaded_error"],
  ];
  for (const [status, type, expected] of cases) {
    const err = new GatewayError(status, type, `failure ${status}`);
    assert.equal(anthropicErrorType(err), expected, `${status} ${type}`);
    assert.deepEqual(JSON.parse(anthropicClient.error(err).toString("utf8")), { type: "error", error: { type: expected, message: `failure ${status}` } });
  }
});
