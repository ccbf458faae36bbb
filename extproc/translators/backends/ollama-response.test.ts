/**
 * Ollama `/api/chat` responses and error bodies → canonical, over every non-streaming fixture in
 * `test/fixtures/ollama/` (transcribed from Ollama's API docs; see that folder's README).
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import type { ChatResponse } from "../../../common/canonical/types.ts";
import { GatewayError } from "../../../common/errors.ts";
import { toOpenAIChatResponse } from "../../../common/schemas/openai-chat-response.ts";
import { readFixtureBytes } from "../../../test/emulators/fixtures.ts";
import type { BackendContext } from "../codec.ts";
import { ollamaBackend } from "./ollama.ts";

const CTX: BackendContext = { upstreamModel: "llama3.2", forceStreamUsage: false };
const ID = /^chatcmpl-[0-9a-f]{24}$/;

function decode(body: Buffer | string): ChatResponse {
  const result = ollamaBackend.response(typeof body === "string" ? Buffer.from(body) : body, {}, CTX);
  assert.ok(result.ok, result.ok ? "" : result.errors[0]?.message);
  return result.value;
}

function decodeFails(body: string): GatewayError {
  const result = ollamaBackend.response(Buffer.from(body), {}, CTX);
  assert.ok(!result.ok, "expected a failure");
  const [err] = result.errors;
  assert.ok(err instanceof GatewayError);
  return err;
}

interface Expected {
  model: string;
  createdAt: string;
  content: string | null;
  reasoning?: string;
  toolCalls?: { id: string; name: string; arguments: string }[];
  finishReason: "stop" | "length" | "tool_calls";
  usage: [number, number];
}

const FIXTURES: Record<string, Expected> = {
  "ollama/chat": { model: "llama3.2", createdAt: "2023-12-12T14:13:43.416799Z", content: "Hello! How are you today?", finishReason: "stop", usage: [26, 298] },
  "ollama/chat-structured": {
    model: "llama3.1",
    createdAt: "2024-12-06T00:46:58.265747Z",
    content: '{"age": 22, "available": false}',
    finishReason: "stop",
    usage: [34, 12],
  },
  "ollama/chat-tool-call": {
    model: "llama3.2",
    createdAt: "2025-07-07T20:32:53.844124Z",
    content: null,
    toolCalls: [{ id: "call_0", name: "get_weather", arguments: '{"city":"Tokyo"}' }],
    finishReason: "tool_calls",
    usage: [169, 18],
  },
  "ollama/chat-tool-call-paris": {
    model: "llama3.2",
    createdAt: "2024-07-22T20:33:28.123648Z",
    content: null,
    toolCalls: [{ id: "call_0", name: "get_current_weather", arguments: '{"format":"celsius","location":"Paris, FR"}' }],
    finishReason: "tool_calls",
    usage: [122, 33],
  },
  "ollama/chat-tool-result": {
    model: "llama3.2",
    createdAt: "2025-07-07T20:43:37.688511Z",
    content: "The current temperature in Toronto is 11°C.",
    finishReason: "stop",
    usage: [94, 11],
  },
  "ollama/chat-images": {
    model: "llava",
    createdAt: "2023-12-13T22:42:50.203334Z",
    content:
      " The image features a cute, little pig with an angry facial expression. It's wearing a heart on its shirt and is waving in the air. This scene appears to be part of a drawing or sketching project.",
    finishReason: "stop",
    usage: [26, 83],
  },
  "ollama/chat-load": { model: "llama3.2", createdAt: "2024-09-12T21:17:29.110811Z", content: "", finishReason: "stop", usage: [0, 0] },
  "ollama/chat-thinking": {
    model: "qwen3",
    createdAt: "2025-06-01T12:00:01.000000Z",
    content: 'There are 3 letter r\'s in "strawberry".',
    reasoning: "Spell it out: s-t-r-a-w-b-e-r-r-y. The r's are at positions 3, 8 and 9, so there are three.",
    finishReason: "stop",
    usage: [17, 52],
  },
};

for (const [name, want] of Object.entries(FIXTURES)) {
  test(`fixture ${name} → canonical response`, () => {
    const res = decode(readFixtureBytes(name, "json"));
    assert.match(res.id, ID);
    assert.equal(res.model, want.model);
    assert.equal(res.created, Math.floor(Date.parse(want.createdAt) / 1000));
    assert.equal(res.choices.length, 1);
    const choice = res.choices[0];
    assert.equal(choice?.index, 0);
    assert.equal(choice?.finishReason, want.finishReason);
    assert.equal(choice?.message.role, "assistant");
    assert.equal(choice?.message.content, want.content);
    assert.equal(choice?.message.reasoning, want.reasoning);
    assert.deepEqual(choice?.message.toolCalls, want.toolCalls);
    assert.deepEqual(res.usage, { inputTokens: want.usage[0], outputTokens: want.usage[1], totalTokens: want.usage[0] + want.usage[1] });
    assert.deepEqual(res.extra, {}, "Ollama's timing fields do not leak into the client's response");
  });
}

test("the canonical tool call renders as an OpenAI tool call a client can run", () => {
  const openai = toOpenAIChatResponse(decode(readFixtureBytes("ollama/chat-tool-call", "json"))) as {
    choices: {
      message: { content: unknown; tool_calls: { id: string; type: string; function: { name: string; arguments: string } }[] };
      finish_reason: string;
    }[];
  };
  const [choice] = openai.choices;
  assert.equal(choice?.finish_reason, "tool_calls");
  assert.equal(choice?.message.content, null);
  assert.deepEqual(choice?.message.tool_calls, [{ id: "call_0", type: "function", function: { name: "get_weather", arguments: '{"city":"Tokyo"}' } }]);
});

test("done_reason: length → length (even with tool calls), unknown reasons → stop", () => {
  const body = (extra: string): string => `{"model":"m","created_at":"2025-01-01T00:00:00Z","message":{"role":"assistant","content":"a"},"done":true${extra}}`;
  assert.equal(decode(body(',"done_reason":"length","eval_count":100')).choices[0]?.finishReason, "length");
  assert.equal(decode(body(',"done_reason":"something_new"')).choices[0]?.finishReason, "stop");
  const cut = `{"model":"m","message":{"role":"assistant","content":"","tool_calls":[{"function":{"name":"f","arguments":{}}}]},"done":true,"done_reason":"length"}`;
  assert.equal(decode(cut).choices[0]?.finishReason, "length");
});

test("tool calls: Ollama's own ids are kept, later calls number on, string arguments stay as sent", () => {
  const body = JSON.stringify({
    model: "qwen3",
    created_at: "2025-01-01T00:00:00Z",
    message: {
      role: "assistant",
      content: "Checking both.",
      tool_calls: [
        { id: "call_k3j2h1g0", function: { index: 0, name: "get_weather", arguments: { city: "Tokyo" } } },
        { function: { index: 1, name: "get_time", arguments: '{"tz":"JST"}' } },
        { function: { index: 2, name: "ping" } },
      ],
    },
    done: true,
    done_reason: "stop",
  });
  const message = decode(body).choices[0]?.message;
  assert.equal(message?.content, "Checking both.");
  assert.deepEqual(message?.toolCalls, [
    { id: "call_k3j2h1g0", name: "get_weather", arguments: '{"city":"Tokyo"}' },
    { id: "call_1", name: "get_time", arguments: '{"tz":"JST"}' },
    { id: "call_2", name: "ping", arguments: "{}" },
  ]);
});

test("logprobs: Ollama's array becomes OpenAI's {content: [...]} with top_logprobs always a list", () => {
  const body = JSON.stringify({
    model: "m",
    created_at: "2025-01-01T00:00:00Z",
    message: { role: "assistant", content: "Hi" },
    done: true,
    logprobs: [
      {
        token: "Hi",
        logprob: -0.25,
        bytes: [72, 105],
        top_logprobs: [
          { token: "Hi", logprob: -0.25, bytes: [72, 105] },
          { token: "Hello", logprob: -1.5 },
        ],
      },
      { token: "!", logprob: -0.01 },
    ],
  });
  assert.deepEqual(decode(body).choices[0]?.logprobs, {
    content: [
      {
        token: "Hi",
        logprob: -0.25,
        bytes: [72, 105],
        top_logprobs: [
          { token: "Hi", logprob: -0.25, bytes: [72, 105] },
          { token: "Hello", logprob: -1.5, bytes: null },
        ],
      },
      { token: "!", logprob: -0.01, bytes: null, top_logprobs: [] },
    ],
  });
  assert.equal("logprobs" in (decode(readFixtureBytes("ollama/chat", "json")).choices[0] ?? {}), false);
});

test("an unparsable created_at falls back to now; a missing model is empty", () => {
  const before = Math.floor(Date.now() / 1000);
  const res = decode('{"created_at":"yesterday","message":{"role":"assistant","content":"x"},"done":true}');
  assert.ok(res.created >= before && res.created <= Math.floor(Date.now() / 1000) + 1);
  assert.equal(res.model, "");
});

test("malformed success bodies are 502s: invalid JSON, not an object, wrong types, not done", () => {
  for (const body of [
    "{",
    "[]",
    '{"message":"hi","done":true}',
    '{"message":{"content":5},"done":true}',
    '{"message":{"content":"x"},"done":"yes"}',
    '{"message":{"tool_calls":[{"function":{}}]},"done":true}',
    '{"message":{"role":"assistant","content":"The"},"done":false}',
  ]) {
    const err = decodeFails(body);
    assert.equal(err.status, 502, body);
    assert.equal(err.type, "upstream_error");
    assert.equal(err.code, "upstream_malformed", body);
  }
  const inBand = decodeFails('{"error":"an error was encountered while running the model"}');
  assert.deepEqual([inBand.status, inBand.message], [502, "an error was encountered while running the model"]);
});

test("error fixtures keep Ollama's status and message; a missing model is OpenAI's model_not_found", () => {
  const notFound = ollamaBackend.error(404, {}, readFixtureBytes("ollama/error-model-not-found", "json"));
  assert.deepEqual(
    [notFound.status, notFound.type, notFound.code, notFound.message],
    [404, "not_found_error", "model_not_found", "model 'llama3.2' not found"],
  );
  const failed = ollamaBackend.error(500, {}, readFixtureBytes("ollama/error", "json"));
  assert.deepEqual([failed.status, failed.type, failed.message], [500, "upstream_error", "the model failed to generate a response"]);
});

test("other statuses map by status; retry-after is kept; a router 404 points at the base URL", () => {
  const cases: [number, string, string][] = [
    [400, '{"error":"model is required"}', "invalid_request_error"],
    [400, '{"error":"top_logprobs must be between 0 and 20"}', "invalid_request_error"],
    [403, '{"error":"remote inference is unavailable"}', "permission_error"],
    [429, '{"error":"too many requests"}', "rate_limit_error"],
    [502, '{"error":"the cloud model could not be reached"}', "upstream_error"],
  ];
  for (const [status, body, type] of cases) {
    const err = ollamaBackend.error(status, {}, Buffer.from(body));
    assert.deepEqual([err.status, err.type, err.message], [status, type, (JSON.parse(body) as { error: string }).error]);
  }
  assert.deepEqual(ollamaBackend.error(429, { "retry-after": "7" }, Buffer.from('{"error":"slow down"}')).headers, { "retry-after": "7" });
  const route = ollamaBackend.error(404, {}, Buffer.from("404 page not found"));
  assert.equal(route.code, "upstream_path_not_found");
  assert.match(route.message, /base_url/);
});
