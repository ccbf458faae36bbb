/**
 * Gemini SSE streams → canonical chunks: every recorded stream (firebase-gemini raw `.txt`,
 * vercel-ai/google `.chunks.txt` framed as the emulator frames them), every split point of small
 * streams, and malformed streams, which must throw `GatewayError`s.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import type { ChatChunk, FinishReason, Usage } from "../../../common/canonical/types.ts";
import { GatewayError } from "../../../common/errors.ts";
import { geminiStreamBytes } from "../../../test/emulators/gemini-upstream.ts";
import { geminiBackend } from "./gemini.ts";

const CTX = { upstreamModel: "gemini-2.5-flash", forceStreamUsage: false };
const G = "firebase-gemini/googleai/";
const V = "firebase-gemini/vertexai/";
const VA = "vercel-ai/google/";

/** Decodes bytes fed in the given slices, `end()` included. */
function decode(bytes: Buffer, cuts: number[] = []): ChatChunk[] {
  const decoder = geminiBackend.stream(CTX);
  const bounds = [0, ...cuts, bytes.length];
  const out: ChatChunk[] = [];
  for (let i = 1; i < bounds.length; i += 1) out.push(...decoder.push(bytes.subarray(bounds[i - 1], bounds[i])));
  return [...out, ...decoder.end()];
}

const sse = (...events: object[]): Buffer => Buffer.from(events.map((e) => `data: ${JSON.stringify(e)}\r\n\r\n`).join(""));
const content = (chunks: ChatChunk[]): string => chunks.map((c) => c.choices[0]?.delta.content ?? "").join("");
const reasoning = (chunks: ChatChunk[]): string => chunks.map((c) => c.choices[0]?.delta.reasoning ?? "").join("");
const finishes = (chunks: ChatChunk[]): FinishReason[] => chunks.flatMap((c) => c.choices.flatMap((x) => (x.finishReason ? [x.finishReason] : [])));
const calls = (chunks: ChatChunk[]): [number, string, string, unknown][] =>
  chunks
    .flatMap((c) => c.choices[0]?.delta.toolCalls ?? [])
    .map((t) => [t.index, (t.id ?? "").replace(/__gx.*$/, ""), t.name ?? "", JSON.parse(t.arguments ?? "") as unknown]);
const withoutIds = (chunks: ChatChunk[]): unknown => chunks.map(({ id: _id, created: _created, ...rest }) => rest);

/** Independent oracle: the recorded events' non-thought (or thought) text of candidate 0. */
function recorded(bytes: Buffer, thought = false): string {
  return bytes
    .toString("utf8")
    .split(/\r?\n/)
    .filter((line) => line.startsWith("data:"))
    .map((line) => JSON.parse(line.slice(5)) as { candidates?: { content?: { parts?: { text?: string; thought?: boolean }[] } }[] })
    .flatMap((e) => e.candidates?.[0]?.content?.parts ?? [])
    .filter((p) => typeof p.text === "string" && (p.thought === true) === thought)
    .map((p) => p.text)
    .join("");
}

interface StreamFacts {
  finish: FinishReason;
  calls?: [string, unknown][];
  usage?: Usage;
  refusal?: RegExp;
  reasoning?: boolean;
}

const STREAMS: Record<string, StreamFacts> = {
  [`${G}streaming-success-basic-reply-short`]: { finish: "stop", usage: { inputTokens: 7, outputTokens: 10, totalTokens: 17 } },
  [`${G}streaming-success-basic-reply-long`]: { finish: "stop", usage: { inputTokens: 10, outputTokens: 1996, totalTokens: 2006 } },
  [`${G}streaming-success-citations`]: { finish: "stop", usage: { inputTokens: 15, outputTokens: 1381, totalTokens: 1396 } },
  [`${G}streaming-success-empty-parts`]: { finish: "stop", usage: { inputTokens: 16, outputTokens: 1307, totalTokens: 1323 } },
  [`${G}streaming-success-finish-message`]: { finish: "stop" },
  [`${G}streaming-success-no-content-parts`]: { finish: "stop", usage: { inputTokens: 34, outputTokens: 1370, totalTokens: 1404 } },
  [`${G}streaming-success-thinking-reply-thought-summary`]: {
    finish: "stop",
    reasoning: true,
    usage: { inputTokens: 10, outputTokens: 588, totalTokens: 598, reasoningTokens: 540 },
  },
  [`${G}streaming-success-thinking-function-call-thought-summary-signature`]: {
    finish: "tool_calls",
    calls: [["now", {}]],
    reasoning: true,
    usage: { inputTokens: 38, outputTokens: 174, totalTokens: 212, reasoningTokens: 168 },
  },
  [`${G}streaming-success-url-context`]: { finish: "stop", usage: { inputTokens: 1057, outputTokens: 120, totalTokens: 1177, reasoningTokens: 39 } },
  [`${G}streaming-failure-recitation-no-content`]: {
    finish: "content_filter",
    refusal: /\(RECITATION\)/,
    usage: { inputTokens: 9, outputTokens: 261, totalTokens: 270 },
  },
  [`${G}streaming-failure-prompt-blocked-safety`]: { finish: "content_filter", refusal: /^Gemini blocked the prompt \(SAFETY\)/ },
  [`${V}streaming-failure-prompt-blocked-safety-with-message`]: { finish: "content_filter", refusal: /\(SAFETY\).* Reasons$/ },
  [`${V}streaming-failure-finish-reason-safety`]: {
    finish: "content_filter",
    refusal: /Blocked categories: HARM_CATEGORY_HARASSMENT\./,
    usage: { inputTokens: 10, outputTokens: 66, totalTokens: 76 },
  },
  [`${V}streaming-failure-unknown-finish-enum`]: { finish: "stop" },
  [`${V}streaming-success-empty-text-part`]: { finish: "stop", usage: { inputTokens: 8, outputTokens: 1, totalTokens: 9 } },
  [`${V}streaming-success-function-call-short`]: { finish: "tool_calls", calls: [["getTemperature", { city: "San Jose" }]] },
  [`${V}streaming-success-utf8`]: { finish: "stop" },
  [`${VA}google-text`]: { finish: "stop", usage: { inputTokens: 9, outputTokens: 208, totalTokens: 217, reasoningTokens: 185 } },
  [`${VA}google-reasoning`]: { finish: "stop", usage: { inputTokens: 9, outputTokens: 285, totalTokens: 294, reasoningTokens: 256 } },
  [`${VA}google-reasoning-gemini3`]: { finish: "stop", usage: { inputTokens: 9, outputTokens: 325, totalTokens: 334, reasoningTokens: 302 } },
  [`${VA}google-tool-call`]: {
    finish: "tool_calls",
    calls: [["weather", { location: "San Francisco" }]],
    usage: { inputTokens: 29, outputTokens: 60, totalTokens: 89, reasoningTokens: 45 },
  },
  [`${VA}google-tool-call-gemini3`]: {
    finish: "tool_calls",
    calls: [["weather", { location: "San Francisco" }]],
    usage: { inputTokens: 29, outputTokens: 819, totalTokens: 848, reasoningTokens: 804 },
  },
  [`${VA}google-stream-no-args-tool-call`]: {
    finish: "tool_calls",
    reasoning: true,
    calls: [
      ["read_theme", {}],
      ["read_screen", { id: "A" }],
      ["read_screen", { id: "B" }],
      ["read_screen", { id: "C" }],
    ],
    usage: { inputTokens: 249, outputTokens: 241, totalTokens: 490, reasoningTokens: 183 },
  },
  [`${VA}google-stream-tool-call-arguments`]: {
    finish: "tool_calls",
    calls: [
      ["getWeather", { location: "Boston" }],
      ["getWeather", { location: "San Francisco" }],
    ],
    usage: { inputTokens: 26, outputTokens: 155, totalTokens: 181, reasoningTokens: 132 },
  },
  [`${VA}google-stream-tool-call-array-arguments-missing-terminal-function-call`]: {
    finish: "tool_calls",
    calls: [
      [
        "writeItems",
        {
          operations: [
            { action: "add", description: "Fresh red apple", itemid: "apple_001", price: 0.5 },
            { action: "add", description: "Ripe yellow banana", itemid: "banana_001", price: 0.3 },
          ],
        },
      ],
    ],
    usage: { inputTokens: 54, outputTokens: 195, totalTokens: 249, reasoningTokens: 121 },
  },
  [`${VA}google-vertex-stream-tool-call-arguments-nested.1`]: {
    finish: "tool_calls",
    usage: { inputTokens: 31, outputTokens: 1710, totalTokens: 1741, reasoningTokens: 1026 },
  },
};

for (const [name, facts] of Object.entries(STREAMS)) {
  test(`recorded stream ${name}: text, calls, one ${facts.finish} finish, usage last`, () => {
    const bytes = geminiStreamBytes(name);
    const chunks = decode(bytes);
    assert.equal(content(chunks), recorded(bytes));
    assert.equal(reasoning(chunks) !== "", facts.reasoning === true);
    if (facts.reasoning) assert.equal(reasoning(chunks), recorded(bytes, true));
    assert.deepEqual(finishes(chunks), [facts.finish]);
    const first = chunks.find((c) => c.choices.length > 0);
    assert.equal(first?.choices[0]?.delta.role, "assistant", "role on the first delta");
    assert.equal(chunks.filter((c) => c.choices.some((x) => x.delta.role !== undefined)).length, 1, "role only once");
    assert.equal(new Set(chunks.map((c) => c.id)).size, 1, "one id for the stream");
    if (facts.calls)
      assert.deepEqual(
        calls(chunks),
        facts.calls.map(([n, args], i) => [i, `call_${i}`, n, args]),
      );
    if (facts.refusal) assert.match(chunks.map((c) => c.choices[0]?.delta.refusal ?? "").join(""), facts.refusal);
    const last = chunks.at(-1);
    if (facts.usage) assert.deepEqual([last?.choices, last?.usage], [[], facts.usage]);
    else assert.ok(chunks.every((c) => c.usage === undefined));
  });
}

test("the nested streamed-arguments call assembles to the whole recipe", () => {
  const [call] = calls(decode(geminiStreamBytes(`${VA}google-vertex-stream-tool-call-arguments-nested.1`)));
  const args = call?.[3] as { recipe: { name: string; ingredients: { amount: string; name: string }[]; steps: string[] } };
  assert.equal(call?.[2], "cookRecipe");
  assert.equal(args.recipe.name, "Lasagna");
  assert.equal(args.recipe.ingredients.length, 10);
  assert.deepEqual(args.recipe.ingredients[9], { amount: "1/2 tsp", name: "Pepper" });
  assert.equal(args.recipe.steps[1], "Cook lasagna noodles according to package directions, drain and set aside.", "a string continued over parts");
  assert.equal(args.recipe.steps[4], "In a 9x13 baking dish, spread a thin layer of meat sauce.");
});

test("a code-execution stream: code and its output as fenced blocks between the text deltas; tool-use prompt tokens are input", () => {
  const bytes = geminiStreamBytes(`${G}streaming-success-code-execution`);
  const chunks = decode(bytes);
  const text = content(chunks);
  assert.ok(text.startsWith("To find the sum of the first 5 prime numbers"));
  assert.match(
    text,
    /sum using a Python tool:\n\n\n```python\nprime_numbers = \[2, 3, 5, 7, 11\]\n[^`]*```\n\n```\nThe sum of the first 5 prime numbers is: 28\n```\nThe sum of the/,
  );
  assert.ok(text.endsWith(recorded(bytes).slice(-30)));
  assert.deepEqual(finishes(chunks), ["stop"]);
  assert.deepEqual(chunks.at(-1)?.usage, { inputTokens: 264, outputTokens: 221, totalTokens: 485, reasoningTokens: 95 });
});

test("every split point of small streams gives the same chunks as one push", () => {
  for (const name of [
    `${V}streaming-success-empty-text-part`,
    `${G}streaming-success-basic-reply-short`,
    `${VA}google-tool-call`,
    `${G}streaming-failure-prompt-blocked-safety`,
  ]) {
    const bytes = geminiStreamBytes(name);
    const whole = withoutIds(decode(bytes));
    for (let cut = 1; cut < bytes.length; cut += 1) assert.deepEqual(withoutIds(decode(bytes, [cut])), whole, `${name} cut at ${cut}`);
  }
});

test("byte-by-byte feeding keeps multi-byte UTF-8 intact", () => {
  const bytes = geminiStreamBytes(`${V}streaming-success-utf8`);
  const chunks = decode(
    bytes,
    Array.from({ length: bytes.length - 1 }, (_, i) => i + 1),
  );
  assert.equal(content(chunks), recorded(bytes));
  assert.match(content(chunks), /^秋风瑟瑟，叶落纷纷/);
});

function rejects(fn: () => unknown, status: number, code: string | null, message?: RegExp): void {
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof GatewayError, String(err));
    assert.deepEqual([err.status, err.code], [status, code]);
    if (message) assert.match(err.message, message);
    return true;
  });
}

test("recorded failures: a bare error after events throws its status at end(); invalid responses and empty content throw 502", () => {
  const midStream = geminiBackend.stream(CTX);
  const early = midStream.push(geminiStreamBytes(`${V}streaming-failure-error-mid-stream`));
  assert.equal(content(early), "First Second ", "the events before the error are delivered");
  rejects(() => midStream.end(), 502, "CANCELLED", /^The operation was cancelled\.$/);
  rejects(() => decode(geminiStreamBytes(`${V}streaming-failure-invalid-json`)), 502, "upstream_malformed");
  rejects(() => decode(geminiStreamBytes(`${V}streaming-failure-empty-content`)), 502, "stream_truncated", /before candidate 0 finished/);
  rejects(() => decode(geminiStreamBytes(`${G}streaming-failure-image-rejected`)), 400, "INVALID_ARGUMENT", /^Request contains an invalid argument\.$/);
});

test("malformed streams throw GatewayErrors", () => {
  const text = { candidates: [{ content: { role: "model", parts: [{ text: "Hi" }] } }] };
  const done = { candidates: [{ content: { role: "model", parts: [{ text: "!" }] }, finishReason: "STOP" }] };
  const full = sse(text, done);
  rejects(() => decode(full.subarray(0, full.length - 10)), 502, "stream_truncated", /middle of an event/);
  rejects(() => decode(sse(text)), 502, "stream_truncated", /before candidate 0 finished/);
  rejects(() => decode(Buffer.alloc(0)), 502, "stream_truncated", /without sending a response/);
  rejects(() => geminiBackend.stream(CTX).push(Buffer.from("data: {not json}\n\n")), 502, "upstream_malformed", /invalid JSON/);
  const quota = { error: { code: 429, message: "Resource has been exhausted", status: "RESOURCE_EXHAUSTED" } };
  rejects(() => geminiBackend.stream(CTX).push(sse(text, quota)), 429, "RESOURCE_EXHAUSTED");
  const bare = Buffer.concat([sse(text), Buffer.from(`${JSON.stringify(quota, null, 2)}\n\n`), sse(done)]);
  for (let cut = 0; cut < bare.length; cut += 7) rejects(() => decode(bare, cut === 0 ? [] : [cut]), 429, "RESOURCE_EXHAUSTED", /exhausted/);
  rejects(() => decode(Buffer.from(`${JSON.stringify(done)}\n\n`)), 502, "upstream_malformed", /without 'data:'/);
  rejects(() => decode(sse({ candidates: [{ finishReason: "MALFORMED_FUNCTION_CALL" }] })), 502, "MALFORMED_FUNCTION_CALL");
  const stray = { candidates: [{ content: { parts: [{ functionCall: { partialArgs: [{ jsonPath: "$.a", stringValue: "x" }] } }] } }] };
  rejects(() => decode(sse(stray)), 502, "malformed_function_call");
});

test("comments, extra blank lines and an unterminated last event with complete JSON are fine", () => {
  const done = { candidates: [{ content: { parts: [{ text: "ok" }] }, finishReason: "STOP" }] };
  const bytes = Buffer.from(`: keep-alive\n\n\n\ndata: ${JSON.stringify(done)}\n`);
  assert.equal(content(decode(bytes)), "ok");
});

test("several candidates: each has its role, its own tool-call indexes and its finish", () => {
  const chunks = decode(
    sse(
      {
        candidates: [
          { index: 0, content: { parts: [{ text: "A" }] } },
          { index: 1, content: { parts: [{ functionCall: { name: "f", args: {} } }] } },
        ],
      },
      {
        candidates: [
          { index: 0, content: { parts: [{ text: "B" }] }, finishReason: "STOP" },
          { index: 1, content: { parts: [{ functionCall: { name: "g", args: { x: 1 } } }] }, finishReason: "STOP" },
        ],
      },
    ),
  );
  const of = (i: number) => chunks.flatMap((c) => c.choices.filter((x) => x.index === i));
  assert.deepEqual(
    of(0).map((x) => [x.delta.role, x.delta.content, x.finishReason]),
    [
      ["assistant", "A", null],
      [undefined, "B", "stop"],
    ],
  );
  assert.deepEqual(
    of(1).map((x) => [x.delta.role, x.delta.toolCalls?.map((t) => [t.index, t.id, t.name, t.arguments]), x.finishReason]),
    [
      ["assistant", [[0, "call_0", "f", "{}"]], null],
      [undefined, [[1, "call_1", "g", '{"x":1}']], "tool_calls"],
    ],
  );
});

test("stream meta: responseId and modelVersion of the first event", () => {
  const chunks = decode(geminiStreamBytes(`${VA}google-text`));
  assert.deepEqual([...new Set(chunks.map((c) => `${c.id} ${c.model}`))], ["bH6LaZW8Fp_3nsEPqtaSwQ4 gemini-3-pro-preview"]);
});
