/** Rebuilding a completion from an OpenAI stream: clean text streams only. */
import assert from "node:assert/strict";
import { test } from "node:test";
import { sseData } from "../../common/schemas/sse.ts";
import { StreamAccumulator } from "./stream-accumulator.ts";

const head = { id: "chatcmpl-9", object: "chat.completion.chunk", created: 1700000000, model: "gpt-4.1-nano" };
const chunk = (choices: unknown[], extra: object = {}) => sseData(JSON.stringify({ ...head, choices, ...extra }));
const text = (content: string, finish: string | null = null) => chunk([{ index: 0, delta: { content }, logprobs: null, finish_reason: finish }]);
const DONE = sseData("[DONE]");

test("a clean stream becomes the completion, content joined, usage kept, split anywhere", () => {
  const bytes = Buffer.concat([
    chunk([{ index: 0, delta: { role: "assistant", content: "" }, finish_reason: null }]),
    text("Hel"),
    text("lo", "stop"),
    chunk([], { usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 } }),
    DONE,
  ]);
  const acc = new StreamAccumulator();
  for (let i = 0; i < bytes.length; i += 7) acc.push(bytes.subarray(i, i + 7));
  assert.deepEqual(JSON.parse(acc.end() ?? "null"), {
    id: "chatcmpl-9",
    object: "chat.completion",
    created: 1700000000,
    model: "gpt-4.1-nano",
    choices: [{ index: 0, message: { role: "assistant", content: "Hello", refusal: null }, logprobs: null, finish_reason: "stop" }],
    usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 },
  });
});

test("no completion from a stream cut short, without a finish_reason, with an error, or with tool calls", () => {
  const cases: [string, Buffer][] = [
    ["no [DONE]", Buffer.concat([text("Hi", "stop")])],
    ["no finish_reason", Buffer.concat([text("Hi"), DONE])],
    ["an error chunk", Buffer.concat([text("Hi"), sseData(JSON.stringify({ error: { message: "boom" } })), DONE])],
    [
      "tool calls",
      Buffer.concat([
        chunk([{ index: 0, delta: { tool_calls: [{ index: 0, id: "c", function: { name: "f", arguments: "{}" } }] }, finish_reason: "tool_calls" }]),
        DONE,
      ]),
    ],
    ["not JSON", Buffer.concat([sseData("{oops"), DONE])],
  ];
  for (const [what, bytes] of cases) {
    const acc = new StreamAccumulator();
    acc.push(bytes);
    assert.equal(acc.end(), undefined, what);
  }
});
