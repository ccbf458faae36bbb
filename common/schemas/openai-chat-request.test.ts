import assert from "node:assert/strict";
import { test } from "node:test";
import { parseOpenAIChatRequest } from "./openai-chat-request.ts";
import { toOpenAIChatRequest } from "./openai-chat-emit.ts";

/** Every documented field at once, plus fields Gearbox does not model. */
const FULL_REQUEST = {
  model: "gpt-4o",
  messages: [
    { role: "developer", content: "Be brief." },
    { role: "system", content: [{ type: "text", text: "You are helpful." }], name: "sys" },
    {
      role: "user",
      name: "ann",
      content: [
        { type: "text", text: "What is in these?" },
        { type: "image_url", image_url: { url: "https://example.com/cat.png", detail: "high" } },
        { type: "image_url", image_url: { url: "data:image/png;base64,iVBORw0KGgo=" } },
        { type: "input_audio", input_audio: { data: "UklGRg==", format: "wav" } },
        { type: "file", file: { file_id: "file-1", filename: "a.pdf" } },
      ],
    },
    {
      role: "assistant",
      content: null,
      tool_calls: [
        { id: "call_1", type: "function", function: { name: "weather", arguments: '{"city":"Paris"}' } },
        { id: "call_2", type: "function", function: { name: "time", arguments: "{}" } },
      ],
    },
    { role: "tool", tool_call_id: "call_1", content: "sunny" },
    { role: "tool", tool_call_id: "call_2", content: [{ type: "text", text: "noon" }] },
    { role: "assistant", content: "It is sunny at noon.", refusal: null },
  ],
  stream: true,
  stream_options: { include_usage: true },
  max_completion_tokens: 256,
  temperature: 0.3,
  top_p: 0.9,
  n: 2,
  stop: ["\n\n", "END"],
  presence_penalty: 0.5,
  frequency_penalty: -0.5,
  logit_bias: { "50256": -100 },
  logprobs: true,
  top_logprobs: 3,
  seed: 42,
  user: "user-7",
  metadata: { team: "search" },
  tools: [
    {
      type: "function",
      function: { name: "weather", description: "Weather by city", parameters: { type: "object", properties: { city: { type: "string" } } }, strict: true },
    },
    { type: "function", function: { name: "time" } },
  ],
  tool_choice: { type: "function", function: { name: "weather" } },
  parallel_tool_calls: true,
  response_format: { type: "json_schema", json_schema: { name: "answer", schema: { type: "object" }, strict: true } },
  reasoning_effort: "low",
  service_tier: "flex",
  prediction: { type: "content", content: "x" },
};

test("OpenAI → canonical → OpenAI is lossless for every documented field and unknown ones", () => {
  const parsed = parseOpenAIChatRequest(FULL_REQUEST);
  assert.ok(parsed.ok, JSON.stringify(!parsed.ok && parsed.errors));
  assert.deepEqual(toOpenAIChatRequest(parsed.value), FULL_REQUEST);
});

test("canonical model holds the parts in Gearbox's terms", () => {
  const parsed = parseOpenAIChatRequest(FULL_REQUEST);
  assert.ok(parsed.ok);
  const req = parsed.value;
  assert.equal(req.maxTokens, 256);
  assert.equal(req.includeUsage, true);
  assert.deepEqual(req.toolChoice, { type: "function", name: "weather" });
  assert.deepEqual(Object.keys(req.extra).sort(), ["prediction", "service_tier"]);
  const user = req.messages[2];
  assert.ok(user?.role === "user" && Array.isArray(user.content));
  assert.deepEqual(user.content[2], { type: "image", mediaType: "image/png", data: "iVBORw0KGgo=" });
});

test("legacy forms: max_tokens kept by name, string stop, string tool_choice, function role", () => {
  const parsed = parseOpenAIChatRequest({
    model: "m",
    messages: [
      { role: "user", content: "x" },
      { role: "assistant", content: null, function_call: { name: "f", arguments: "{}" } },
      { role: "function", name: "f", content: "1" },
    ],
    max_tokens: 5,
    stop: "END",
    tool_choice: "required",
  });
  assert.ok(parsed.ok);
  const out = toOpenAIChatRequest(parsed.value);
  assert.equal(out.max_tokens, 5);
  assert.equal(out.max_completion_tokens, undefined);
  assert.deepEqual(out.stop, ["END"]);
  assert.equal(out.tool_choice, "required");
});

const BAD: [string, unknown, string][] = [
  ["not an object", [1, 2], ""],
  ["missing model", { messages: [{ role: "user", content: "x" }] }, "model"],
  ["empty model", { model: "", messages: [{ role: "user", content: "x" }] }, "model"],
  ["missing messages", { model: "m" }, "messages"],
  ["empty messages", { model: "m", messages: [] }, "messages"],
  ["messages not array", { model: "m", messages: "hi" }, "messages"],
  ["bad role", { model: "m", messages: [{ role: "robot", content: "x" }] }, "messages[0].role"],
  ["missing role", { model: "m", messages: [{ content: "x" }] }, "messages[0].role"],
  ["user content number", { model: "m", messages: [{ role: "user", content: 5 }] }, "messages[0].content"],
  [
    "image part without url",
    { model: "m", messages: [{ role: "user", content: [{ type: "image_url", image_url: {} }] }] },
    "messages[0].content[0].image_url.url",
  ],
  ["unknown part type", { model: "m", messages: [{ role: "user", content: [{ type: "video" }] }] }, "messages[0].content[0].type"],
  ["tool message without id", { model: "m", messages: [{ role: "tool", content: "x" }] }, "messages[0].tool_call_id"],
  ["assistant without content or calls", { model: "m", messages: [{ role: "assistant" }] }, "messages[0].content"],
  ["temperature out of range", { model: "m", messages: [{ role: "user", content: "x" }], temperature: 3 }, "temperature"],
  ["n not integer", { model: "m", messages: [{ role: "user", content: "x" }], n: 1.5 }, "n"],
  ["stream not boolean", { model: "m", messages: [{ role: "user", content: "x" }], stream: "yes" }, "stream"],
  ["stream_options without stream", { model: "m", messages: [{ role: "user", content: "x" }], stream_options: { include_usage: true } }, "stream_options"],
  ["too many stops", { model: "m", messages: [{ role: "user", content: "x" }], stop: ["a", "b", "c", "d", "e"] }, "stop"],
  [
    "bad tool name",
    { model: "m", messages: [{ role: "user", content: "x" }], tools: [{ type: "function", function: { name: "has space" } }] },
    "tools[0].function.name",
  ],
  ["bad tool_choice", { model: "m", messages: [{ role: "user", content: "x" }], tool_choice: "sometimes" }, "tool_choice"],
  ["bad response_format", { model: "m", messages: [{ role: "user", content: "x" }], response_format: { type: "yaml" } }, "response_format.type"],
  ["metadata value not string", { model: "m", messages: [{ role: "user", content: "x" }], metadata: { a: 1 } }, "metadata.a"],
  ["logit_bias out of range", { model: "m", messages: [{ role: "user", content: "x" }], logit_bias: { "1": 200 } }, "logit_bias.1"],
];

for (const [name, body, param] of BAD) {
  test(`rejects ${name}, naming '${param || "(body)"}'`, () => {
    const parsed = parseOpenAIChatRequest(body);
    assert.equal(parsed.ok, false);
    if (parsed.ok) return;
    assert.equal(parsed.errors[0]?.param, param);
    assert.ok((parsed.errors[0]?.message.length ?? 0) > 0);
  });
}
