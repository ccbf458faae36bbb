/**
 * OpenAI chat requests (parsed by Gearbox's own OpenAI parser) → the Anthropic Messages body the
 * backend codec writes: one test per mapping rule, and every 400 names the field at fault.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { GatewayError } from "../../../common/errors.ts";
import { parseOpenAIChatRequest } from "../../../common/schemas/openai-chat-request.ts";
import type { BackendContext } from "../codec.ts";
import { ANTHROPIC_DEFAULT_MAX_TOKENS, anthropicBackend } from "./anthropic.ts";
import { JSON_RESPONSE_TOOL } from "./anthropic-wire.ts";

const CTX: BackendContext = { upstreamModel: "claude-haiku-4-5", forceStreamUsage: false };
const HI = [{ role: "user", content: "Hi" }];
const PNG = "iVBORw0KGgo=";
const PDF = "JVBERi0xLjQK";

/** The Anthropic body for an OpenAI request body. */
function toAnthropic(openai: Record<string, unknown>): Record<string, unknown> {
  const parsed = parseOpenAIChatRequest({ model: "gpt-4o", ...openai });
  assert.ok(parsed.ok, JSON.stringify(parsed));
  const upstream = anthropicBackend.request(parsed.value, CTX);
  assert.ok(upstream.body);
  return JSON.parse(upstream.body.toString("utf8")) as Record<string, unknown>;
}

/** Asserts the request is refused with a 400 naming `param`. */
function refuses(openai: Record<string, unknown>, param: string, message?: RegExp): void {
  assert.throws(
    () => toAnthropic(openai),
    (err: unknown) => {
      assert.ok(err instanceof GatewayError, String(err));
      assert.equal(err.status, 400);
      assert.equal(err.type, "invalid_request_error");
      assert.equal(err.param, param);
      if (message) assert.match(err.message, message);
      return true;
    },
  );
}

void test("path, headers and the minimal body: upstream model, default max_tokens, nothing else", () => {
  const parsed = parseOpenAIChatRequest({ model: "gpt-4o", messages: HI });
  assert.ok(parsed.ok);
  const upstream = anthropicBackend.request(parsed.value, CTX);
  assert.equal(upstream.path, "/messages");
  assert.deepEqual(upstream.headers, { "content-type": "application/json", "anthropic-version": "2023-06-01" });
  assert.equal(ANTHROPIC_DEFAULT_MAX_TOKENS, 4096);
  assert.deepEqual(JSON.parse(upstream.body?.toString("utf8") ?? ""), {
    model: "claude-haiku-4-5",
    max_tokens: 4096,
    messages: [{ role: "user", content: "Hi" }],
  });
  assert.equal(toAnthropic({ messages: HI, max_tokens: 100 }).max_tokens, 100);
  assert.equal(toAnthropic({ messages: HI, max_completion_tokens: 200 }).max_tokens, 200);
});

void test("system and developer messages become the top-level system, wherever they stand", () => {
  assert.equal(toAnthropic({ messages: [{ role: "system", content: "Be brief." }, ...HI] }).system, "Be brief.");
  const body = toAnthropic({
    messages: [
      { role: "system", content: "Be brief." },
      { role: "user", content: "Hi" },
      {
        role: "developer",
        content: [
          { type: "text", text: "Use French." },
          { type: "text", text: "" },
        ],
      },
      { role: "assistant", content: "Salut" },
      { role: "system", content: "" },
    ],
  });
  assert.deepEqual(body.system, [
    { type: "text", text: "Be brief." },
    { type: "text", text: "Use French." },
  ]);
  assert.deepEqual(body.messages, [
    { role: "user", content: "Hi" },
    { role: "assistant", content: "Salut" },
  ]);
  assert.deepEqual(toAnthropic({ messages: [{ role: "system", content: "Only a system prompt." }] }).messages, [], "Anthropic's own 400 says it");
});

void test("user images: URL and base64 sources; unsupported image types name the part", () => {
  const body = toAnthropic({
    messages: [
      {
        role: "user",
        content: [
          { type: "text", text: "Compare" },
          { type: "image_url", image_url: { url: "https://example.com/a.jpg", detail: "high" } },
          { type: "image_url", image_url: { url: `data:image/png;base64,${PNG}` } },
        ],
      },
    ],
  });
  assert.deepEqual(body.messages, [
    {
      role: "user",
      content: [
        { type: "text", text: "Compare" },
        { type: "image", source: { type: "url", url: "https://example.com/a.jpg" } },
        { type: "image", source: { type: "base64", media_type: "image/png", data: PNG } },
      ],
    },
  ]);
  const bmp = { type: "image_url", image_url: { url: "data:image/bmp;base64,Qk0=" } };
  refuses({ messages: [{ role: "user", content: [{ type: "text", text: "x" }, bmp] }] }, "messages[0].content[1].image_url", /JPEG, PNG, GIF and WebP/);
});

void test("files: PDF and text become document blocks, images image blocks; audio and file ids are 400s", () => {
  const text = Buffer.from("Quarterly numbers: up.").toString("base64");
  const body = toAnthropic({
    messages: [
      {
        role: "user",
        content: [
          { type: "file", file: { filename: "report.pdf", file_data: `data:application/pdf;base64,${PDF}` } },
          { type: "file", file: { file_data: `data:text/plain;base64,${text}` } },
          { type: "file", file: { file_data: PDF } },
          { type: "file", file: { file_data: `data:image/png;base64,${PNG}` } },
        ],
      },
    ],
  });
  assert.deepEqual((body.messages as Array<{ content: unknown }>)[0]?.content, [
    { type: "document", source: { type: "base64", media_type: "application/pdf", data: PDF }, title: "report.pdf" },
    { type: "document", source: { type: "text", media_type: "text/plain", data: "Quarterly numbers: up." } },
    { type: "document", source: { type: "base64", media_type: "application/pdf", data: PDF } },
    { type: "image", source: { type: "base64", media_type: "image/png", data: PNG } },
  ]);
  const userWith = (part: unknown): Record<string, unknown> => ({ messages: [{ role: "user", content: [{ type: "text", text: "x" }, part] }] });
  refuses(userWith({ type: "input_audio", input_audio: { data: "UklGRg==", format: "wav" } }), "messages[0].content[1]", /audio/);
  refuses(userWith({ type: "file", file: { file_id: "file-abc" } }), "messages[0].content[1].file.file_id", /file_data/);
  refuses(userWith({ type: "file", file: { file_data: "data:application/zip;base64,UEsDBA==" } }), "messages[0].content[1].file.file_data", /application\/zip/);
  refuses(userWith({ type: "file", file: { file_data: "UEsDBA==" } }), "messages[0].content[1].file.file_data", /type is unknown/);
  refuses(userWith({ type: "file", file: { filename: "a.pdf" } }), "messages[0].content[1].file");
});

void test("assistant tool calls become tool_use blocks with parsed input; bad arguments name the message", () => {
  const call = (id: string, name: string, args: string): unknown => ({ id, type: "function", function: { name, arguments: args } });
  const body = toAnthropic({
    messages: [
      { role: "user", content: "Weather in Paris and the time?" },
      { role: "assistant", content: "", tool_calls: [call("toolu_1", "weather", '{"city":"Paris"}'), call("toolu_2", "now", "")] },
      { role: "tool", tool_call_id: "toolu_1", content: "18°C" },
      { role: "tool", tool_call_id: "toolu_2", content: [{ type: "text", text: "12:00" }] },
    ],
    tools: [
      { type: "function", function: { name: "weather" } },
      { type: "function", function: { name: "now" } },
    ],
  });
  assert.deepEqual((body.messages as unknown[])[1], {
    role: "assistant",
    content: [
      { type: "tool_use", id: "toolu_1", name: "weather", input: { city: "Paris" } },
      { type: "tool_use", id: "toolu_2", name: "now", input: {} },
    ],
  });
  const history = (args: string): Record<string, unknown> => ({ messages: [...HI, { role: "assistant", content: null, tool_calls: [call("t", "f", args)] }] });
  refuses(history('{"city":'), "messages[1].tool_calls[0].function.arguments", /not valid JSON/);
  refuses(history("[1,2]"), "messages[1].tool_calls[0].function.arguments", /JSON object/);
});

void test("consecutive tool results share one user turn, results first, with a following user message", () => {
  const body = toAnthropic({
    messages: [
      { role: "user", content: "Go" },
      {
        role: "assistant",
        content: "Calling both.",
        tool_calls: [
          { id: "a", type: "function", function: { name: "f", arguments: "{}" } },
          { id: "b", type: "function", function: { name: "f", arguments: "{}" } },
        ],
      },
      { role: "tool", tool_call_id: "a", content: "one" },
      { role: "tool", tool_call_id: "b", content: "" },
      { role: "user", content: "Summarize." },
    ],
    tools: [{ type: "function", function: { name: "f" } }],
  });
  assert.deepEqual(body.messages, [
    { role: "user", content: "Go" },
    {
      role: "assistant",
      content: [
        { type: "text", text: "Calling both." },
        { type: "tool_use", id: "a", name: "f", input: {} },
        { type: "tool_use", id: "b", name: "f", input: {} },
      ],
    },
    {
      role: "user",
      content: [
        { type: "tool_result", tool_use_id: "a", content: "one" },
        { type: "tool_result", tool_use_id: "b" },
        { type: "text", text: "Summarize." },
      ],
    },
  ]);
});

void test("same-role messages merge so roles alternate; turns left empty are dropped", () => {
  const body = toAnthropic({
    messages: [
      { role: "user", content: "First." },
      { role: "user", content: [{ type: "text", text: "Second." }] },
      { role: "assistant", content: "" },
      { role: "user", content: "Third." },
      { role: "assistant", content: "A." },
      { role: "assistant", content: "", refusal: "I can't help with that." },
    ],
  });
  assert.deepEqual(body.messages, [
    {
      role: "user",
      content: [
        { type: "text", text: "First." },
        { type: "text", text: "Second." },
        { type: "text", text: "Third." },
      ],
    },
    {
      role: "assistant",
      content: [
        { type: "text", text: "A." },
        { type: "text", text: "I can't help with that." },
      ],
    },
  ]);
});

void test("sampling: temperature clamped to Anthropic's 0–1, top_p and stop sequences as is", () => {
  assert.equal(toAnthropic({ messages: HI, temperature: 1.7 }).temperature, 1);
  assert.equal(toAnthropic({ messages: HI, temperature: 2 }).temperature, 1);
  assert.equal(toAnthropic({ messages: HI, temperature: 0.3 }).temperature, 0.3);
  assert.equal(toAnthropic({ messages: HI, temperature: 0 }).temperature, 0);
  assert.equal(toAnthropic({ messages: HI }).temperature, undefined);
  assert.equal(toAnthropic({ messages: HI, top_p: 0.9 }).top_p, 0.9);
  assert.deepEqual(toAnthropic({ messages: HI, stop: "END" }).stop_sequences, ["END"]);
  assert.deepEqual(toAnthropic({ messages: HI, stop: ["a", "b"] }).stop_sequences, ["a", "b"]);
  refuses({ messages: HI, stop: "\n" }, "stop", /whitespace/);
  refuses({ messages: HI, stop: ["END", " "] }, "stop[1]", /whitespace/);
});

void test("user → metadata.user_id; stream; fields Anthropic has no place for are not sent", () => {
  const body = toAnthropic({
    messages: HI,
    user: "user-42",
    stream: true,
    stream_options: { include_usage: true },
    metadata: { team: "a" },
    seed: 7,
    presence_penalty: 0.5,
    frequency_penalty: 0.5,
    logit_bias: { "50256": -100 },
    reasoning_effort: "none",
    service_tier: "auto",
    n: 1,
    logprobs: false,
  });
  assert.deepEqual(body, {
    model: "claude-haiku-4-5",
    max_tokens: 4096,
    messages: [{ role: "user", content: "Hi" }],
    stream: true,
    metadata: { user_id: "user-42" },
  });
  assert.equal(toAnthropic({ messages: HI, stream: false }).stream, undefined);
});

void test("reasoning_effort → thinking budget inside max_tokens; temperature off, top_p raised; forced tools and tool loops go without", () => {
  const low = toAnthropic({ messages: HI, reasoning_effort: "low", temperature: 0.2, top_p: 0.5 });
  assert.deepEqual(low.thinking, { type: "enabled", budget_tokens: 2048 });
  assert.equal(low.max_tokens, 2048 + ANTHROPIC_DEFAULT_MAX_TOKENS);
  assert.equal(low.temperature, undefined);
  assert.equal(low.top_p, 0.95);
  assert.deepEqual(toAnthropic({ messages: HI, reasoning_effort: "high" }).thinking, { type: "enabled", budget_tokens: 24576 });
  const capped = toAnthropic({ messages: HI, reasoning_effort: "high", max_completion_tokens: 3000 });
  assert.deepEqual(capped.thinking, { type: "enabled", budget_tokens: 2999 });
  assert.equal(capped.max_tokens, 3000);
  assert.equal(toAnthropic({ messages: HI, reasoning_effort: "none" }).thinking, undefined);
  refuses({ messages: HI, reasoning_effort: "low", max_tokens: 800 }, "reasoning_effort", /1024/);
  refuses({ messages: HI, reasoning_effort: "turbo" }, "reasoning_effort", /'low'/);
  const tools = [{ type: "function", function: { name: "weather" } }];
  assert.equal(toAnthropic({ messages: HI, tools, tool_choice: "required", reasoning_effort: "low" }).thinking, undefined);
  assert.ok(toAnthropic({ messages: HI, tools, tool_choice: "auto", reasoning_effort: "low" }).thinking);
  const loop = [
    ...HI,
    { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "weather", arguments: "{}" } }] },
    { role: "tool", tool_call_id: "c1", content: "sunny" },
  ];
  assert.equal(toAnthropic({ messages: loop, tools, reasoning_effort: "low" }).thinking, undefined);
});

void test("n > 1 and logprobs are 400s naming the field", () => {
  refuses({ messages: HI, n: 2 }, "n", /single choice/);
  refuses({ messages: HI, logprobs: true }, "logprobs", /log probabilities/);
});

void test("tools: name, description, input_schema (defaulted and typed); the JSON tool's name is reserved", () => {
  const params = { type: "object", properties: { city: { type: "string" } }, required: ["city"] };
  const body = toAnthropic({
    messages: HI,
    tools: [
      { type: "function", function: { name: "weather", description: "Weather by city", parameters: params, strict: true } },
      { type: "function", function: { name: "now" } },
      { type: "function", function: { name: "echo", parameters: { properties: { text: { type: "string" } } } } },
    ],
  });
  assert.deepEqual(body.tools, [
    { name: "weather", description: "Weather by city", input_schema: params, strict: true },
    { name: "now", input_schema: { type: "object", properties: {} } },
    { name: "echo", input_schema: { type: "object", properties: { text: { type: "string" } } } },
  ]);
  assert.equal(body.tool_choice, undefined);
  refuses({ messages: HI, tools: [{ type: "function", function: { name: JSON_RESPONSE_TOOL } }] }, "tools[0].function.name", /reserved/);
});

void test("tool_choice: auto, required → any, none, named → tool; parallel_tool_calls false disables parallel use", () => {
  const tools = [{ type: "function", function: { name: "weather" } }];
  const choice = (extra: Record<string, unknown>): unknown => toAnthropic({ messages: HI, tools, ...extra }).tool_choice;
  assert.deepEqual(choice({ tool_choice: "auto" }), { type: "auto" });
  assert.deepEqual(choice({ tool_choice: "required" }), { type: "any" });
  assert.deepEqual(choice({ tool_choice: "none" }), { type: "none" });
  assert.deepEqual(choice({ tool_choice: { type: "function", function: { name: "weather" } } }), { type: "tool", name: "weather" });
  assert.deepEqual(choice({ parallel_tool_calls: false }), { type: "auto", disable_parallel_tool_use: true });
  assert.deepEqual(choice({ parallel_tool_calls: false, tool_choice: "required" }), { type: "any", disable_parallel_tool_use: true });
  assert.deepEqual(choice({ parallel_tool_calls: false, tool_choice: { type: "function", function: { name: "weather" } } }), {
    type: "tool",
    name: "weather",
    disable_parallel_tool_use: true,
  });
  assert.deepEqual(choice({ parallel_tool_calls: false, tool_choice: "none" }), { type: "none" });
  assert.equal(choice({ parallel_tool_calls: true }), undefined);
  refuses({ messages: HI, tools, tool_choice: { type: "function", function: { name: "nope" } } }, "tool_choice.function.name", /not in 'tools'/);
  refuses({ messages: HI, tool_choice: { type: "function", function: { name: "nope" } } }, "tool_choice.function.name", /defines no tools/);
  assert.equal(toAnthropic({ messages: HI, tool_choice: "required" }).tool_choice, undefined, "no tools, no tool_choice");
});

void test("tool history without tools: a placeholder tool with tool_choice none (Anthropic requires tools then)", () => {
  const body = toAnthropic({
    messages: [
      ...HI,
      { role: "assistant", content: null, tool_calls: [{ id: "t1", type: "function", function: { name: "f", arguments: "{}" } }] },
      { role: "tool", tool_call_id: "t1", content: "done" },
    ],
  });
  assert.deepEqual(body.tool_choice, { type: "none" });
  assert.deepEqual(
    (body.tools as Array<{ name: string }>).map((t) => t.name),
    ["gearbox_no_tools"],
  );
});

void test("response_format: a forced JSON tool without tools of the client's; a system instruction with them", () => {
  const objectMode = toAnthropic({ messages: HI, response_format: { type: "json_object" } });
  assert.deepEqual(objectMode.tool_choice, { type: "tool", name: JSON_RESPONSE_TOOL });
  assert.deepEqual((objectMode.tools as Array<{ input_schema: unknown }>)[0]?.input_schema, { type: "object" });
  assert.equal(objectMode.system, undefined);

  const schema = { type: "object", properties: { name: { type: "string" } }, required: ["name"] };
  const schemaMode = toAnthropic({
    messages: HI,
    response_format: { type: "json_schema", json_schema: { name: "person", schema, description: "A person.", strict: true } },
  });
  assert.deepEqual(schemaMode.tools, [
    {
      name: JSON_RESPONSE_TOOL,
      description: "Give your final answer by calling this tool: its input is the answer, as JSON. A person.",
      input_schema: schema,
    },
  ]);
  assert.deepEqual(schemaMode.tool_choice, { type: "tool", name: JSON_RESPONSE_TOOL });

  const withTools = toAnthropic({
    messages: [{ role: "system", content: "Be brief." }, ...HI],
    tools: [{ type: "function", function: { name: "weather" } }],
    response_format: { type: "json_schema", json_schema: { name: "person", schema } },
  });
  assert.deepEqual(
    (withTools.tools as Array<{ name: string }>).map((t) => t.name),
    ["weather"],
  );
  assert.equal(withTools.tool_choice, undefined);
  const system = withTools.system as Array<{ text: string }>;
  assert.equal(system[0]?.text, "Be brief.");
  assert.match(system[1]?.text ?? "", /JSON Schema named 'person'.*\n\{"type":"object"/s);

  const arrayRoot = toAnthropic({ messages: HI, response_format: { type: "json_schema", json_schema: { name: "list", schema: { type: "array" } } } });
  assert.equal(arrayRoot.tools, undefined);
  assert.match(String(arrayRoot.system), /JSON Schema named 'list'/);
  assert.equal(
    toAnthropic({ messages: HI, tools: [{ type: "function", function: { name: "f" } }], response_format: { type: "json_object" } }).system,
    "Answer with a single JSON object and nothing else: no prose, no code fences.",
  );
  assert.deepEqual(toAnthropic({ messages: HI, response_format: { type: "text" } }), toAnthropic({ messages: HI }));
});
