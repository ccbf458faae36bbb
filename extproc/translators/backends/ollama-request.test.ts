/** Canonical chat request → Ollama `/api/chat` body: one test per mapping rule. */
import assert from "node:assert/strict";
import { test } from "node:test";
import type { ChatRequest, Message } from "../../../common/canonical/types.ts";
import { GatewayError } from "../../../common/errors.ts";
import type { BackendContext } from "../codec.ts";
import { ollamaBackend } from "./ollama.ts";

const CTX: BackendContext = { upstreamModel: "llama3.2:3b", forceStreamUsage: true };

function request(overrides: Partial<ChatRequest> = {}): ChatRequest {
  return { model: "client-alias", messages: [{ role: "user", content: "why is the sky blue?" }], stream: false, extra: {}, ...overrides };
}

/** The JSON body Gearbox would send. */
function body(req: ChatRequest): Record<string, unknown> {
  const upstream = ollamaBackend.request(req, CTX);
  assert.ok(upstream.body, "the Ollama backend always writes a body");
  return JSON.parse(upstream.body.toString("utf8")) as Record<string, unknown>;
}

function messagesOf(messages: Message[]): unknown[] {
  const out = body(request({ messages })).messages;
  assert.ok(Array.isArray(out));
  return out;
}

/** Asserts a 400 naming `param` (and `code`, when given). */
function rejects400(fn: () => unknown, param: string, code?: string): void {
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof GatewayError, String(err));
    assert.equal(err.status, 400);
    assert.equal(err.type, "invalid_request_error");
    assert.equal(err.param, param);
    if (code !== undefined) assert.equal(err.code, code);
    return true;
  });
}

test("path, headers, upstream model and an explicit stream flag (Ollama streams by default)", () => {
  const upstream = ollamaBackend.request(request({ stream: false }), CTX);
  assert.equal(upstream.path, "/api/chat");
  assert.deepEqual(upstream.headers, { "content-type": "application/json" });
  assert.deepEqual(body(request({ stream: false })), { model: "llama3.2:3b", messages: [{ role: "user", content: "why is the sky blue?" }], stream: false });
  assert.equal(body(request({ stream: true })).stream, true);
});

test("system and developer messages become role system; text parts are joined by newlines", () => {
  assert.deepEqual(
    messagesOf([
      { role: "system", content: "Be brief." },
      {
        role: "developer",
        content: [
          { type: "text", text: "Answer in French." },
          { type: "text", text: "No emoji." },
        ],
      },
      { role: "user", content: "Bonjour", name: "dropped" },
    ]),
    [
      { role: "system", content: "Be brief." },
      { role: "system", content: "Answer in French.\nNo emoji." },
      { role: "user", content: "Bonjour" },
    ],
  );
});

test("user images: base64 data (or a data: URL) goes to the message's images as bare base64", () => {
  assert.deepEqual(
    messagesOf([
      {
        role: "user",
        content: [
          { type: "text", text: "what is in this image?" },
          { type: "image", data: "iVBORw0KGgo=", mediaType: "image/png" },
          { type: "image", url: "data:image/jpeg;base64,/9j/4AAQ" },
          { type: "text", text: "and this one?" },
        ],
      },
    ]),
    [{ role: "user", content: "what is in this image?\nand this one?", images: ["iVBORw0KGgo=", "/9j/4AAQ"] }],
  );
});

test("an image URL is a 400 naming the part: Ollama needs the bytes", () => {
  const messages: Message[] = [
    { role: "user", content: "hi" },
    {
      role: "user",
      content: [
        { type: "text", text: "look" },
        { type: "image", url: "https://example.com/cat.png" },
      ],
    },
  ];
  rejects400(() => ollamaBackend.request(request({ messages }), CTX), "messages[1].content[1]", "image_url_not_supported");
  rejects400(() => ollamaBackend.request(request({ messages: [{ role: "user", content: [{ type: "image" }] }] }), CTX), "messages[0].content[0]");
});

test("audio and file parts are a 400 naming the part", () => {
  rejects400(() => messagesOf([{ role: "user", content: [{ type: "audio", data: "UklGR", format: "wav" }] }]), "messages[0].content[0]", "unsupported_content");
  rejects400(
    () =>
      messagesOf([
        {
          role: "user",
          content: [
            { type: "text", text: "x" },
            { type: "file", fileId: "file-1" },
          ],
        },
      ]),
    "messages[0].content[1]",
    "unsupported_content",
  );
});

test("assistant tool calls: arguments JSON text → object, id kept, thinking from reasoning", () => {
  assert.deepEqual(
    messagesOf([
      { role: "user", content: "what is the weather in Toronto?" },
      {
        role: "assistant",
        content: null,
        reasoning: "The user wants the weather.",
        toolCalls: [
          { id: "call_abc", name: "get_weather", arguments: '{"city":"Toronto"}' },
          { id: "call_def", name: "get_time", arguments: "" },
        ],
      },
    ]),
    [
      { role: "user", content: "what is the weather in Toronto?" },
      {
        role: "assistant",
        content: "",
        thinking: "The user wants the weather.",
        tool_calls: [
          { id: "call_abc", function: { name: "get_weather", arguments: { city: "Toronto" } } },
          { id: "call_def", function: { name: "get_time", arguments: {} } },
        ],
      },
    ],
  );
});

test("assistant text parts are joined; a refusal stands in for missing content", () => {
  assert.deepEqual(
    messagesOf([
      {
        role: "assistant",
        content: [
          { type: "text", text: "a" },
          { type: "text", text: "b" },
        ],
      },
    ]),
    [{ role: "assistant", content: "a\nb" }],
  );
  assert.deepEqual(messagesOf([{ role: "assistant", content: null, refusal: "I can't help with that." }]), [
    { role: "assistant", content: "I can't help with that." },
  ]);
});

test("unparsable or non-object tool-call arguments are a 400 naming the field", () => {
  const call = (args: string): Message[] => [
    { role: "user", content: "x" },
    { role: "assistant", content: null, toolCalls: [{ id: "c1", name: "f", arguments: args }] },
  ];
  rejects400(() => messagesOf(call('{"city": "Tor')), "messages[1].tool_calls[0].function.arguments", "invalid_tool_arguments");
  rejects400(() => messagesOf(call("[1, 2]")), "messages[1].tool_calls[0].function.arguments", "invalid_tool_arguments");
  rejects400(() => messagesOf(call('"text"')), "messages[1].tool_calls[0].function.arguments", "invalid_tool_arguments");
});

test("tool results: role tool, content, tool_call_id, and tool_name from the earlier call with that id", () => {
  assert.deepEqual(
    messagesOf([
      { role: "user", content: "weather and time?" },
      {
        role: "assistant",
        content: "",
        toolCalls: [
          { id: "call_1", name: "get_weather", arguments: '{"city":"Toronto"}' },
          { id: "call_2", name: "get_time", arguments: "{}" },
        ],
      },
      { role: "tool", toolCallId: "call_2", content: "09:00" },
      { role: "tool", toolCallId: "call_1", content: [{ type: "text", text: "11 degrees celsius" }] },
      { role: "tool", toolCallId: "call_unknown", content: "?" },
    ]).slice(2),
    [
      { role: "tool", content: "09:00", tool_name: "get_time", tool_call_id: "call_2" },
      { role: "tool", content: "11 degrees celsius", tool_name: "get_weather", tool_call_id: "call_1" },
      { role: "tool", content: "?", tool_call_id: "call_unknown" },
    ],
  );
});

test("a reused call id names the latest earlier call (later turns reuse call_0)", () => {
  const turn = (name: string): Message[] => [
    { role: "assistant", content: null, toolCalls: [{ id: "call_0", name, arguments: "{}" }] },
    { role: "tool", toolCallId: "call_0", content: name },
  ];
  const messages = messagesOf([{ role: "user", content: "go" }, ...turn("first"), ...turn("second")]) as { tool_name?: string }[];
  assert.deepEqual([messages[2]?.tool_name, messages[4]?.tool_name], ["first", "second"]);
});

const WEATHER = {
  type: "function" as const,
  name: "get_weather",
  description: "Get the weather in a given city",
  parameters: { type: "object", properties: { city: { type: "string", description: "The city to get the weather for" } }, required: ["city"] },
  strict: true,
};

test("tools: OpenAI's function shape (strict dropped); a tool without parameters gets an empty object schema", () => {
  assert.deepEqual(body(request({ tools: [WEATHER, { type: "function", name: "ping" }] })).tools, [
    { type: "function", function: { name: "get_weather", description: WEATHER.description, parameters: WEATHER.parameters } },
    { type: "function", function: { name: "ping", parameters: { type: "object", properties: {} } } },
  ]);
});

test("tool_choice: auto sends the tools, none withholds them, a forced call is a 400", () => {
  assert.equal((body(request({ tools: [WEATHER], toolChoice: { type: "auto" } })).tools as unknown[]).length, 1);
  assert.equal(body(request({ tools: [WEATHER], toolChoice: { type: "none" } })).tools, undefined);
  rejects400(() => body(request({ tools: [WEATHER], toolChoice: { type: "required" } })), "tool_choice", "unsupported_parameter");
  rejects400(() => body(request({ tools: [WEATHER], toolChoice: { type: "function", name: "get_weather" } })), "tool_choice", "unsupported_parameter");
});

test('format: json_object → "json", json_schema → the schema itself, text → absent', () => {
  const schema = { type: "object", properties: { age: { type: "integer" }, available: { type: "boolean" } }, required: ["age", "available"] };
  assert.equal(body(request({ responseFormat: { type: "json_object" } })).format, "json");
  assert.deepEqual(body(request({ responseFormat: { type: "json_schema", name: "person", schema, strict: true } })).format, schema);
  assert.equal(body(request({ responseFormat: { type: "json_schema", name: "anything" } })).format, "json");
  assert.equal("format" in body(request({ responseFormat: { type: "text" } })), false);
});

test("options: sampling parameters under Ollama's names; absent when none is set", () => {
  const out = body(request({ temperature: 0.2, topP: 0.9, maxTokens: 100, stop: ["\n", "user:"], seed: 42, presencePenalty: 1.5, frequencyPenalty: 1 }));
  assert.deepEqual(out.options, {
    temperature: 0.2,
    top_p: 0.9,
    num_predict: 100,
    stop: ["\n", "user:"],
    seed: 42,
    presence_penalty: 1.5,
    frequency_penalty: 1,
  });
  assert.equal("options" in body(request()), false);
  assert.deepEqual(body(request({ temperature: 0 })).options, { temperature: 0 });
});

test("native fields from the client's extras: options merged (canonical wins), keep_alive and think passed, others dropped", () => {
  const out = body(request({ temperature: 0.5, extra: { options: { num_ctx: 8192, temperature: 1 }, keep_alive: "10m", think: true, user_tag: "x" } }));
  assert.deepEqual(out.options, { num_ctx: 8192, temperature: 0.5 });
  assert.equal(out.keep_alive, "10m");
  assert.equal(out.think, true);
  assert.equal("user_tag" in out, false);
  rejects400(() => body(request({ extra: { options: "fast" } })), "options");
});

test("reasoning_effort → think, clamped as Ollama's own OpenAI layer does; it overrides an extra think", () => {
  const cases: [string, boolean | string][] = [
    ["none", false],
    ["minimal", "low"],
    ["low", "low"],
    ["medium", "medium"],
    ["high", "high"],
    ["xhigh", "max"],
    ["max", "max"],
  ];
  for (const [effort, think] of cases) assert.equal(body(request({ reasoningEffort: effort, extra: { think: true } })).think, think, effort);
  rejects400(() => body(request({ reasoningEffort: "extreme" })), "reasoning_effort");
  assert.equal("think" in body(request()), false);
});

test("logprobs and top_logprobs pass through when asked", () => {
  const out = body(request({ logprobs: true, topLogprobs: 3 }));
  assert.deepEqual([out.logprobs, out.top_logprobs], [true, 3]);
  assert.equal("logprobs" in body(request()), false);
});

test("what Ollama cannot do is a 400: n > 1, logit_bias; n = 1 and an empty bias are fine", () => {
  rejects400(() => body(request({ n: 2 })), "n", "unsupported_parameter");
  rejects400(() => body(request({ logitBias: { "50256": -100 } })), "logit_bias", "unsupported_parameter");
  assert.equal(body(request({ n: 1, logitBias: {} })).model, "llama3.2:3b");
});
