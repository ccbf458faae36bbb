import assert from "node:assert/strict";
import { test } from "node:test";
import type { ChatRequest } from "../canonical/types.ts";
import { parseAnthropicMessagesRequest } from "./anthropic-messages-request.ts";
import type { JsonObject } from "./fields.ts";

const PNG = "iVBORw0KGgo=";
const PDF = "JVBERi0xLjQ=";

/** Every block type and documented field at once, plus fields Gearbox does not model. */
const FULL_REQUEST = {
  model: "claude-sonnet-4-5",
  max_tokens: 1024,
  system: [
    { type: "text", text: "You are terse.", cache_control: { type: "ephemeral" } },
    { type: "text", text: "Use tools." },
  ],
  messages: [
    {
      role: "user",
      content: [
        { type: "text", text: "What is in these?" },
        { type: "image", source: { type: "base64", media_type: "image/png", data: PNG } },
        { type: "image", source: { type: "url", url: "https://example.com/cat.jpg" } },
        { type: "document", title: "report.pdf", source: { type: "base64", media_type: "application/pdf", data: PDF } },
        { type: "document", source: { type: "text", media_type: "text/plain", data: "plain doc" } },
        {
          type: "document",
          source: {
            type: "content",
            content: [
              { type: "text", text: "chunk" },
              { type: "image", source: { type: "url", url: "https://e.x/a.png" } },
            ],
          },
        },
        { type: "document", source: { type: "file", file_id: "file_011" } },
      ],
    },
    {
      role: "assistant",
      content: [
        { type: "thinking", thinking: "The user wants weather.", signature: "sig" },
        { type: "redacted_thinking", data: "opaque" },
        { type: "text", text: "Let me check." },
        { type: "tool_use", id: "toolu_1", name: "weather", input: { city: "Paris" } },
        { type: "tool_use", id: "toolu_2", name: "time", input: {} },
      ],
    },
    {
      role: "user",
      content: [
        { type: "tool_result", tool_use_id: "toolu_1", content: "sunny" },
        { type: "tool_result", tool_use_id: "toolu_2", content: [{ type: "text", text: "clock broke" }], is_error: true },
        { type: "text", text: "Thanks, and?" },
      ],
    },
    { role: "assistant", content: "It is sunny." },
  ],
  stop_sequences: ["\n\nHuman:", "END"],
  temperature: 0.5,
  top_p: 0.9,
  top_k: 40,
  stream: true,
  tools: [
    {
      name: "weather",
      description: "Weather by city",
      input_schema: { type: "object", properties: { city: { type: "string" } } },
      cache_control: { type: "ephemeral" },
    },
    { type: "custom", name: "time", input_schema: { type: "object" }, strict: true },
  ],
  tool_choice: { type: "tool", name: "weather", disable_parallel_tool_use: true },
  metadata: { user_id: "user-7" },
  thinking: { type: "enabled", budget_tokens: 512 },
  service_tier: "auto",
};

test("parses every block type and field into the canonical model", () => {
  const parsed = parseAnthropicMessagesRequest(FULL_REQUEST);
  assert.ok(parsed.ok, JSON.stringify(!parsed.ok && parsed.errors));
  const expected: ChatRequest = {
    model: "claude-sonnet-4-5",
    messages: [
      {
        role: "system",
        content: [
          { type: "text", text: "You are terse." },
          { type: "text", text: "Use tools." },
        ],
      },
      {
        role: "user",
        content: [
          { type: "text", text: "What is in these?" },
          { type: "image", mediaType: "image/png", data: PNG },
          { type: "image", url: "https://example.com/cat.jpg" },
          { type: "file", filename: "report.pdf", data: `data:application/pdf;base64,${PDF}` },
          { type: "text", text: "plain doc" },
          { type: "text", text: "chunk" },
          { type: "image", url: "https://e.x/a.png" },
          { type: "file", fileId: "file_011" },
        ],
      },
      {
        role: "assistant",
        content: [{ type: "text", text: "Let me check." }],
        toolCalls: [
          { id: "toolu_1", name: "weather", arguments: '{"city":"Paris"}' },
          { id: "toolu_2", name: "time", arguments: "{}" },
        ],
        reasoning: "The user wants weather.",
      },
      { role: "tool", toolCallId: "toolu_1", content: "sunny" },
      {
        role: "tool",
        toolCallId: "toolu_2",
        content: [
          { type: "text", text: "Error:" },
          { type: "text", text: "clock broke" },
        ],
      },
      { role: "user", content: [{ type: "text", text: "Thanks, and?" }] },
      { role: "assistant", content: "It is sunny." },
    ],
    stream: true,
    includeUsage: true,
    maxTokens: 1024,
    temperature: 0.5,
    topP: 0.9,
    stop: ["\n\nHuman:", "END"],
    user: "user-7",
    tools: [
      { type: "function", name: "weather", description: "Weather by city", parameters: { type: "object", properties: { city: { type: "string" } } } },
      { type: "function", name: "time", parameters: { type: "object" }, strict: true },
    ],
    toolChoice: { type: "function", name: "weather" },
    parallelToolCalls: false,
    extra: { top_k: 40, thinking: { type: "enabled", budget_tokens: 512 }, service_tier: "auto" },
  };
  assert.deepEqual(parsed.value, expected);
});

function parse(body: JsonObject): ChatRequest {
  const parsed = parseAnthropicMessagesRequest(body);
  assert.ok(parsed.ok, JSON.stringify(!parsed.ok && parsed.errors));
  return parsed.value;
}

const MINIMAL = { model: "claude-haiku-4-5", max_tokens: 16, messages: [{ role: "user", content: "Hi" }] };

test("a minimal request: string content, no stream, no usage flag, nothing extra", () => {
  assert.deepEqual(parse(MINIMAL), {
    model: "claude-haiku-4-5",
    messages: [{ role: "user", content: "Hi" }],
    stream: false,
    maxTokens: 16,
    extra: {},
  });
});

test("system as a string, and role 'system' turns inside messages", () => {
  const req = parse({
    ...MINIMAL,
    system: "Be brief.",
    messages: [
      { role: "user", content: "Hi" },
      { role: "system", content: [{ type: "text", text: "Now in French." }] },
    ],
  });
  assert.deepEqual(req.messages, [
    { role: "system", content: "Be brief." },
    { role: "user", content: "Hi" },
    { role: "system", content: [{ type: "text", text: "Now in French." }] },
  ]);
});

test("tool_choice variants", () => {
  const cases: [JsonObject, Partial<ChatRequest>][] = [
    [{ type: "auto" }, { toolChoice: { type: "auto" } }],
    [{ type: "any" }, { toolChoice: { type: "required" } }],
    [{ type: "none" }, { toolChoice: { type: "none" } }],
    [
      { type: "auto", disable_parallel_tool_use: true },
      { toolChoice: { type: "auto" }, parallelToolCalls: false },
    ],
    [{ type: "any", disable_parallel_tool_use: false }, { toolChoice: { type: "required" } }],
  ];
  for (const [choice, expected] of cases) {
    const req = parse({ ...MINIMAL, tool_choice: choice });
    assert.deepEqual({ toolChoice: req.toolChoice, ...(req.parallelToolCalls !== undefined && { parallelToolCalls: req.parallelToolCalls }) }, expected);
  }
});

test("assistant turns: only tool calls → null content; only redacted thinking → empty text", () => {
  const req = parse({
    ...MINIMAL,
    messages: [
      { role: "user", content: "Hi" },
      { role: "assistant", content: [{ type: "tool_use", id: "t1", name: "f", input: { a: [1, 2] } }] },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "t1" }] },
      { role: "assistant", content: [{ type: "redacted_thinking", data: "x" }] },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "t1", content: "boom", is_error: true }] },
    ],
  });
  assert.deepEqual(req.messages.slice(1), [
    { role: "assistant", content: null, toolCalls: [{ id: "t1", name: "f", arguments: '{"a":[1,2]}' }] },
    { role: "tool", toolCallId: "t1", content: "" },
    { role: "assistant", content: "" },
    { role: "tool", toolCallId: "t1", content: "Error: boom" },
  ]);
});

test("null optional fields count as absent", () => {
  const req = parse({ ...MINIMAL, temperature: null, stop_sequences: null, tools: null, metadata: { user_id: null } });
  assert.equal(req.temperature, undefined);
  assert.equal(req.user, undefined);
  assert.equal(parse({ ...MINIMAL, stop_sequences: [] }).stop, undefined);
});

/** [what is wrong, the body, the field the error must name]. */
const BAD: [string, unknown, string][] = [
  ["not an object", [], ""],
  ["missing model", { max_tokens: 1, messages: MINIMAL.messages }, "model"],
  ["empty model", { ...MINIMAL, model: "" }, "model"],
  ["missing max_tokens", { model: "m", messages: MINIMAL.messages }, "max_tokens"],
  ["max_tokens zero", { ...MINIMAL, max_tokens: 0 }, "max_tokens"],
  ["max_tokens fractional", { ...MINIMAL, max_tokens: 1.5 }, "max_tokens"],
  ["missing messages", { model: "m", max_tokens: 1 }, "messages"],
  ["empty messages", { ...MINIMAL, messages: [] }, "messages"],
  ["message not an object", { ...MINIMAL, messages: ["hi"] }, "messages[0]"],
  ["unknown role", { ...MINIMAL, messages: [{ role: "tool", content: "x" }] }, "messages[0].role"],
  ["missing role", { ...MINIMAL, messages: [{ content: "x" }] }, "messages[0].role"],
  ["missing content", { ...MINIMAL, messages: [{ role: "user" }] }, "messages[0].content"],
  ["content a number", { ...MINIMAL, messages: [{ role: "user", content: 3 }] }, "messages[0].content"],
  ["empty user content", { ...MINIMAL, messages: [{ role: "user", content: [] }] }, "messages[0].content"],
  ["block without type", { ...MINIMAL, messages: [{ role: "user", content: [{ text: "x" }] }] }, "messages[0].content[0].type"],
  ["text without text", { ...MINIMAL, messages: [{ role: "user", content: [{ type: "text" }] }] }, "messages[0].content[0].text"],
  ["image without source", { ...MINIMAL, messages: [{ role: "user", content: [{ type: "image" }] }] }, "messages[0].content[0].source"],
  [
    "image without data",
    {
      ...MINIMAL,
      messages: [
        { role: "user", content: "a" },
        { role: "user", content: [{ type: "image", source: { type: "base64", media_type: "image/png" } }] },
      ],
    },
    "messages[1].content[0].source.data",
  ],
  [
    "image with a bad media type",
    { ...MINIMAL, messages: [{ role: "user", content: [{ type: "image", source: { type: "base64", media_type: "image/tiff", data: PNG } }] }] },
    "messages[0].content[0].source.media_type",
  ],
  [
    "image from the Files API",
    { ...MINIMAL, messages: [{ role: "user", content: [{ type: "image", source: { type: "file", file_id: "f" } }] }] },
    "messages[0].content[0].source.type",
  ],
  [
    "PDF by URL",
    { ...MINIMAL, messages: [{ role: "user", content: [{ type: "document", source: { type: "url", url: "https://e.x/a.pdf" } }] }] },
    "messages[0].content[0].source.type",
  ],
  [
    "base64 document that is not a PDF",
    { ...MINIMAL, messages: [{ role: "user", content: [{ type: "document", source: { type: "base64", media_type: "text/html", data: "x" } }] }] },
    "messages[0].content[0].source.media_type",
  ],
  [
    "tool_use in a user turn",
    { ...MINIMAL, messages: [{ role: "user", content: [{ type: "tool_use", id: "t", name: "f", input: {} }] }] },
    "messages[0].content[0].type",
  ],
  [
    "tool_result in an assistant turn",
    {
      ...MINIMAL,
      messages: [
        { role: "user", content: "x" },
        { role: "assistant", content: [{ type: "tool_result", tool_use_id: "t" }] },
      ],
    },
    "messages[1].content[0].type",
  ],
  [
    "server tool block",
    {
      ...MINIMAL,
      messages: [
        { role: "user", content: "x" },
        { role: "assistant", content: [{ type: "server_tool_use", id: "s", name: "web_search", input: {} }] },
      ],
    },
    "messages[1].content[0].type",
  ],
  [
    "tool_use input not an object",
    {
      ...MINIMAL,
      messages: [
        { role: "user", content: "x" },
        { role: "assistant", content: [{ type: "tool_use", id: "t", name: "f", input: "{}" }] },
      ],
    },
    "messages[1].content[0].input",
  ],
  [
    "tool_use without id",
    {
      ...MINIMAL,
      messages: [
        { role: "user", content: "x" },
        { role: "assistant", content: [{ type: "tool_use", name: "f", input: {} }] },
      ],
    },
    "messages[1].content[0].id",
  ],
  [
    "tool_result without tool_use_id",
    { ...MINIMAL, messages: [{ role: "user", content: [{ type: "tool_result", content: "x" }] }] },
    "messages[0].content[0].tool_use_id",
  ],
  [
    "image inside a tool_result",
    {
      ...MINIMAL,
      messages: [{ role: "user", content: [{ type: "tool_result", tool_use_id: "t", content: [{ type: "image", source: { type: "url", url: "u" } }] }] }],
    },
    "messages[0].content[0].content[0].type",
  ],
  ["system with an image block", { ...MINIMAL, system: [{ type: "image", source: {} }] }, "system[0].type"],
  ["system a number", { ...MINIMAL, system: 1 }, "system"],
  ["temperature above 1", { ...MINIMAL, temperature: 1.5 }, "temperature"],
  ["top_p a string", { ...MINIMAL, top_p: "0.5" }, "top_p"],
  ["top_k negative", { ...MINIMAL, top_k: -1 }, "top_k"],
  ["stream a string", { ...MINIMAL, stream: "yes" }, "stream"],
  ["stop sequence not a string", { ...MINIMAL, stop_sequences: ["a", 2] }, "stop_sequences[1]"],
  ["metadata.user_id a number", { ...MINIMAL, metadata: { user_id: 7 } }, "metadata.user_id"],
  ["server tool", { ...MINIMAL, tools: [{ type: "web_search_20250305", name: "web_search" }] }, "tools[0].type"],
  ["tool without input_schema", { ...MINIMAL, tools: [{ name: "f" }] }, "tools[0].input_schema"],
  ["tool with a bad name", { ...MINIMAL, tools: [{ name: "no spaces", input_schema: {} }] }, "tools[0].name"],
  ["tool_choice without type", { ...MINIMAL, tool_choice: {} }, "tool_choice.type"],
  ["tool_choice of an unknown type", { ...MINIMAL, tool_choice: { type: "required" } }, "tool_choice.type"],
  ["tool_choice 'tool' without name", { ...MINIMAL, tool_choice: { type: "tool" } }, "tool_choice.name"],
];

for (const [what, body, param] of BAD) {
  test(`rejects ${what}, naming '${param || "(body)"}'`, () => {
    const parsed = parseAnthropicMessagesRequest(body);
    assert.equal(parsed.ok, false);
    if (parsed.ok) return;
    const first = parsed.errors[0];
    assert.equal(first?.param, param, JSON.stringify(parsed.errors));
    if (param !== "") assert.ok(first.message.includes(`'${param}'`), first.message);
  });
}

test("reports every bad field in one pass", () => {
  const parsed = parseAnthropicMessagesRequest({ model: 1, messages: [{ role: "user", content: [{ type: "tool_use" }] }], temperature: 3 });
  assert.equal(parsed.ok, false);
  if (parsed.ok) return;
  assert.deepEqual(
    parsed.errors.map((e) => e.param),
    ["model", "max_tokens", "messages[0].content[0].type", "temperature"],
  );
});
