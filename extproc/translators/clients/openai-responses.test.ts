/** The Responses API request parser and client codec: each mapping rule, and the stream's event grammar. */
import assert from "node:assert/strict";
import { test } from "node:test";
import type { ChatChunk, ChatRequest } from "../../../common/canonical/types.ts";
import { GatewayError } from "../../../common/errors.ts";
import { parseResponsesRequest } from "../../../common/schemas/openai-responses-request.ts";
import { responsesClient } from "./openai-responses.ts";

function parse(body: Record<string, unknown>): ChatRequest {
  const parsed = parseResponsesRequest({ model: "m", ...body });
  assert.ok(parsed.ok, JSON.stringify(parsed.ok ? null : parsed.errors));
  return parsed.value.request;
}

function refuses(body: Record<string, unknown>, param: string): void {
  const parsed = parseResponsesRequest({ model: "m", ...body });
  assert.ok(!parsed.ok, `accepted ${JSON.stringify(body)}`);
  assert.equal(parsed.errors[0]?.param, param);
}

test("input items: instructions first, calls in a row join one assistant message, outputs are tool messages, reasoning goes to the next assistant turn", () => {
  const req = parse({
    instructions: "Be brief.",
    input: [
      { role: "user", content: "Weather in Paris and Rome?" },
      { type: "reasoning", id: "rs_1", summary: [{ type: "summary_text", text: "Two cities." }] },
      { type: "function_call", call_id: "c1", name: "weather", arguments: '{"city":"Paris"}' },
      { type: "function_call", call_id: "c2", name: "weather", arguments: '{"city":"Rome"}' },
      { type: "function_call_output", call_id: "c1", output: "18" },
      { type: "function_call_output", call_id: "c2", output: [{ type: "input_text", text: "21" }] },
      { type: "message", role: "assistant", content: [{ type: "output_text", text: "18 and 21." }] },
      {
        role: "user",
        content: [
          { type: "input_text", text: "Thanks" },
          { type: "input_image", image_url: "data:image/png;base64,iVBO", detail: "low" },
        ],
      },
    ],
  });
  assert.deepEqual(req.messages, [
    { role: "system", content: "Be brief." },
    { role: "user", content: "Weather in Paris and Rome?" },
    {
      role: "assistant",
      content: null,
      reasoning: "Two cities.",
      toolCalls: [
        { id: "c1", name: "weather", arguments: '{"city":"Paris"}' },
        { id: "c2", name: "weather", arguments: '{"city":"Rome"}' },
      ],
    },
    { role: "tool", toolCallId: "c1", content: "18" },
    { role: "tool", toolCallId: "c2", content: [{ type: "text", text: "21" }] },
    { role: "assistant", content: [{ type: "text", text: "18 and 21." }] },
    {
      role: "user",
      content: [
        { type: "text", text: "Thanks" },
        { type: "image", mediaType: "image/png", data: "iVBO", detail: "low" },
      ],
    },
  ]);
});

test("settings: max_output_tokens, reasoning.effort, text.format, flat function tools, tool_choice forms", () => {
  const req = parse({
    input: "x",
    max_output_tokens: 50,
    reasoning: { effort: "low" },
    text: { format: { type: "json_schema", name: "out", schema: { type: "object" }, strict: true } },
    tools: [{ type: "function", name: "f", description: "d", parameters: { type: "object" }, strict: true }],
    tool_choice: { type: "allowed_tools", mode: "required", tools: [{ type: "function", name: "f" }] },
  });
  assert.equal(req.maxTokens, 50);
  assert.equal(req.reasoningEffort, "low");
  assert.deepEqual(req.responseFormat, { type: "json_schema", name: "out", schema: { type: "object" }, strict: true });
  assert.deepEqual(req.tools, [{ type: "function", name: "f", description: "d", parameters: { type: "object" }, strict: true }]);
  assert.deepEqual(req.toolChoice, { type: "allowed", mode: "required", names: ["f"] });
  assert.deepEqual(parse({ input: "x", tool_choice: { type: "function", name: "f" } }).toolChoice, { type: "function", name: "f" });
  assert.deepEqual(parse({ input: "x", tool_choice: "required" }).toolChoice, { type: "required" });
});

test("refused, naming the field: built-in tools, item references, file ids, server-side state, bad values", () => {
  refuses({ input: "x", tools: [{ type: "file_search" }] }, "tools[0].type");
  refuses({ input: "x", tool_choice: { type: "web_search_preview" } }, "tool_choice.type");
  refuses({ input: [{ type: "item_reference", id: "x" }] }, "input[0].type");
  refuses({ input: [{ type: "computer_call_output" }] }, "input[0].type");
  refuses({ input: [{ role: "user", content: [{ type: "input_image", file_id: "file-1" }] }] }, "input[0].content[0].file_id");
  refuses({ input: "x", conversation: "conv_1" }, "conversation");
  refuses({ input: "x", prompt: { id: "pmpt_1" } }, "prompt");
  refuses({ input: 5 }, "input");
  refuses({ instructions: "only this", input: [] }, "input");
  refuses({ input: "x", temperature: 3 }, "temperature");
  refuses({ input: "x", previous_response_id: "" }, "previous_response_id");
  refuses({ input: [{ type: "function_call_output", call_id: "c", output: 1 }] }, "input[0].output");
});

/** Parses the SSE bytes into events. */
function events(bytes: Buffer): { event: string; data: Record<string, unknown> }[] {
  return bytes
    .toString("utf8")
    .split("\n\n")
    .filter((b) => b.trim() !== "")
    .map((block) => {
      const [line1, line2] = block.split("\n");
      return { event: (line1 ?? "").replace("event: ", ""), data: JSON.parse((line2 ?? "").replace("data: ", "")) as Record<string, unknown> };
    });
}

const chunk = (delta: ChatChunk["choices"][number]["delta"], finishReason: ChatChunk["choices"][number]["finishReason"] = null): ChatChunk => ({
  id: "x",
  created: 1,
  model: "up-model",
  choices: [{ index: 0, delta, finishReason }],
  extra: {},
});

test("stream: reasoning, text, two calls → items in order, each opened and closed, sequence numbers 0..n, completed holds them all with usage", () => {
  const req = parse({ input: "x" });
  const enc = responsesClient({ id: "resp_1" }).stream(req);
  const bytes = Buffer.concat([
    enc.chunk(chunk({ role: "assistant", reasoning: "think" })),
    enc.chunk(chunk({ content: "Hel" })),
    enc.chunk(chunk({ content: "lo" })),
    enc.chunk(chunk({ toolCalls: [{ index: 0, id: "c1", name: "f", arguments: '{"a"' }] })),
    enc.chunk(chunk({ toolCalls: [{ index: 0, arguments: ":1}" }] })),
    enc.chunk(chunk({ toolCalls: [{ index: 1, id: "c2", name: "g", arguments: "{}" }] }, "tool_calls")),
    enc.chunk({
      id: "x",
      created: 1,
      model: "up-model",
      choices: [],
      usage: { inputTokens: 3, outputTokens: 5, totalTokens: 8, reasoningTokens: 2 },
      extra: {},
    }),
    enc.end(),
  ]);
  const list = events(bytes);
  assert.deepEqual(
    list.map((e) => e.data.sequence_number),
    list.map((_, i) => i),
  );
  assert.ok(list.every((e) => e.event === e.data.type));
  assert.deepEqual(
    list.map((e) => e.event),
    [
      "response.created",
      "response.in_progress",
      "response.output_item.added",
      "response.reasoning_summary_part.added",
      "response.reasoning_summary_text.delta",
      "response.reasoning_summary_text.done",
      "response.reasoning_summary_part.done",
      "response.output_item.done",
      "response.output_item.added",
      "response.content_part.added",
      "response.output_text.delta",
      "response.output_text.delta",
      "response.output_text.done",
      "response.content_part.done",
      "response.output_item.done",
      "response.output_item.added",
      "response.function_call_arguments.delta",
      "response.function_call_arguments.delta",
      "response.function_call_arguments.done",
      "response.output_item.done",
      "response.output_item.added",
      "response.function_call_arguments.delta",
      "response.function_call_arguments.done",
      "response.output_item.done",
      "response.completed",
    ],
  );
  const response = list.at(-1)?.data.response as {
    id: string;
    status: string;
    model: string;
    output: Record<string, unknown>[];
    usage: Record<string, unknown>;
  };
  assert.equal(response.id, "resp_1");
  assert.equal(response.status, "completed");
  assert.equal(response.model, "up-model");
  assert.deepEqual(
    response.output.map((o) => [o.type, o.type === "function_call" ? [o.call_id, o.name, o.arguments] : o.type === "message" ? o.content : o.summary]),
    [
      ["reasoning", [{ type: "summary_text", text: "think" }]],
      ["message", [{ type: "output_text", text: "Hello", annotations: [] }]],
      ["function_call", ["c1", "f", '{"a":1}']],
      ["function_call", ["c2", "g", "{}"]],
    ],
  );
  assert.deepEqual(response.usage, {
    input_tokens: 3,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: 5,
    output_tokens_details: { reasoning_tokens: 2 },
    total_tokens: 8,
  });
});

test("stream: a length finish is response.incomplete (max_output_tokens); an in-band failure is error then response.failed", () => {
  const req = parse({ input: "x" });
  const enc = responsesClient({ id: "resp_2" }).stream(req);
  const cut = events(Buffer.concat([enc.chunk(chunk({ content: "a" }, "length")), enc.end()]));
  const last = cut.at(-1)?.data as { type: string; response: { status: string; incomplete_details: unknown } };
  assert.equal(last.type, "response.incomplete");
  assert.deepEqual([last.response.status, last.response.incomplete_details], ["incomplete", { reason: "max_output_tokens" }]);
  const broken = responsesClient({ id: "resp_3" }).stream(req);
  broken.chunk(chunk({ content: "a" }));
  const failed = events(broken.error(new GatewayError(502, "upstream_error", "stream cut", { code: "upstream_stream" })));
  assert.deepEqual(
    failed.map((e) => e.event),
    ["error", "response.failed"],
  );
  assert.equal(failed[0]?.data.message, "stream cut");
});

test("complete response: refusal part, function calls, store hook called with the body", () => {
  const req = parse({ input: "x", previous_response_id: "resp_0" });
  const stored: unknown[] = [];
  const client = responsesClient({ id: "resp_9", previousResponseId: "resp_0", onComplete: (r) => stored.push(r) });
  const body = JSON.parse(
    client
      .response(
        {
          id: "u",
          created: 5,
          model: "m",
          choices: [
            {
              index: 0,
              message: { role: "assistant", content: null, refusal: "No.", toolCalls: [{ id: "c", name: "f", arguments: "{}" }] },
              finishReason: "tool_calls",
            },
          ],
          extra: {},
        },
        req,
      )
      .toString("utf8"),
  ) as { id: string; previous_response_id: string; output: Record<string, unknown>[] };
  assert.equal(body.id, "resp_9");
  assert.equal(body.previous_response_id, "resp_0");
  assert.deepEqual(
    body.output.map((o) => o.type),
    ["message", "function_call"],
  );
  assert.deepEqual((body.output[0] as { content: unknown }).content, [{ type: "refusal", refusal: "No." }]);
  assert.deepEqual(stored, [body]);
});
