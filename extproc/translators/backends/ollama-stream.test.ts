/**
 * Ollama NDJSON streams → canonical chunks: every stream fixture in `test/fixtures/ollama/`,
 * every split point of a small stream, and the malformed cases (cut mid-line, invalid JSON,
 * no final `done` line, an in-band error line).
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import type { ChatChunk } from "../../../common/canonical/types.ts";
import { GatewayError } from "../../../common/errors.ts";
import { readNdjsonFixture } from "../../../test/emulators/ollama-upstream.ts";
import { ollamaBackend } from "./ollama.ts";
import { NdjsonLines } from "./ollama-stream.ts";

const CTX = { upstreamModel: "llama3.2", forceStreamUsage: true };

/** Feeds the slices to a fresh decoder, then ends it. */
function decode(...slices: (Buffer | string)[]): ChatChunk[] {
  const decoder = ollamaBackend.stream(CTX);
  const chunks = slices.flatMap((slice) => decoder.push(typeof slice === "string" ? Buffer.from(slice) : slice));
  return [...chunks, ...decoder.end()];
}

/** What a client reads off the chunks. */
function summary(chunks: readonly ChatChunk[]) {
  const choices = chunks.flatMap((c) => c.choices);
  return {
    roles: choices.filter((c) => c.delta.role !== undefined).length,
    content: choices.map((c) => c.delta.content ?? "").join(""),
    reasoning: choices.map((c) => c.delta.reasoning ?? "").join(""),
    toolCalls: choices.flatMap((c) => c.delta.toolCalls ?? []),
    finish: choices.map((c) => c.finishReason).filter((r) => r !== null),
    usage: chunks.filter((c) => c.usage).map((c) => [c.choices.length, c.usage?.inputTokens, c.usage?.outputTokens]),
    ids: new Set(chunks.map((c) => c.id)).size,
  };
}

function assertGatewayError(fn: () => unknown, status: number, code: string, message?: RegExp): void {
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof GatewayError, String(err));
    assert.equal(err.status, status);
    assert.equal(err.code, code);
    if (message) assert.match(err.message, message);
    return true;
  });
}

const STREAMS = {
  "ollama/chat-stream": { roles: 1, content: "The", reasoning: "", toolCalls: [], finish: ["stop"], usage: [[0, 26, 282]], ids: 1 },
  "ollama/chat-stream-history": { roles: 1, content: "The", reasoning: "", toolCalls: [], finish: ["stop"], usage: [[0, 61, 468]], ids: 1 },
  "ollama/chat-tool-call-stream": {
    roles: 1,
    content: "",
    reasoning: "",
    toolCalls: [{ index: 0, id: "call_0", name: "get_weather", arguments: '{"city":"Tokyo"}' }],
    finish: ["tool_calls"],
    usage: [[0, 169, 15]],
    ids: 1,
  },
  "ollama/chat-thinking": {
    roles: 1,
    content: "17 × 23 = 391",
    reasoning: "17 × 23 = 17 × 20 + 17 × 3 = 340 + 51 = 391.",
    toolCalls: [],
    finish: ["stop"],
    usage: [[0, 18, 41]],
    ids: 1,
  },
};

for (const [name, want] of Object.entries(STREAMS)) {
  test(`stream fixture ${name} → canonical chunks`, () => {
    const chunks = decode(readNdjsonFixture(name));
    assert.deepEqual(summary(chunks), want);
    assert.deepEqual(chunks[0]?.choices[0]?.delta.role, "assistant", "the first chunk carries the role");
    assert.deepEqual(chunks.at(-1)?.choices, [], "the last chunk is usage only");
    assert.equal(chunks.at(-2)?.choices[0]?.finishReason, want.finish[0]);
    assert.match(chunks[0]?.id ?? "", /^chatcmpl-[0-9a-f]{24}$/);
  });
}

test("the docs' text stream, chunk by chunk: created from the first line, model on every chunk", () => {
  const chunks = decode(readNdjsonFixture("ollama/chat-stream"));
  const created = Math.floor(Date.parse("2023-08-04T08:52:19.385406455-07:00") / 1000);
  assert.deepEqual(
    chunks.map((c) => ({ ...c, id: "" })),
    [
      { id: "", created, model: "llama3.2", extra: {}, choices: [{ index: 0, delta: { role: "assistant", content: "The" }, finishReason: null }] },
      { id: "", created, model: "llama3.2", extra: {}, choices: [{ index: 0, delta: {}, finishReason: "stop" }] },
      { id: "", created, model: "llama3.2", extra: {}, choices: [], usage: { inputTokens: 26, outputTokens: 282, totalTokens: 308 } },
    ],
  );
});

test("every split point of a small stream gives the same chunks as one push (UTF-8 cut included)", () => {
  const bytes = readNdjsonFixture("ollama/chat-thinking");
  assert.ok(bytes.length > bytes.toString("utf8").length, "the stream holds multi-byte characters (×), so some cuts fall inside one");
  const whole = decode(bytes).map((c) => ({ ...c, id: "" }));
  for (let cut = 0; cut <= bytes.length; cut += 1) {
    const split = decode(bytes.subarray(0, cut), bytes.subarray(cut)).map((c) => ({ ...c, id: "" }));
    assert.deepEqual(split, whole, `cut at byte ${cut}`);
  }
  const byteByByte = decode(...Array.from(bytes, (_, i) => bytes.subarray(i, i + 1))).map((c) => ({ ...c, id: "" }));
  assert.deepEqual(byteByByte, whole);
});

test("tool calls get a running index across lines; Ollama's ids are kept; thinking comes before the answer", () => {
  // Constructed (not from the docs): two calls on two lines, the second line also thinking.
  const line = (message: object, done = false, extra = ""): string =>
    `{"model":"qwen3","created_at":"2025-06-01T12:00:00Z","message":${JSON.stringify({ role: "assistant", content: "", ...message })},"done":${done}${extra}}\n`;
  const chunks = decode(
    line({ tool_calls: [{ function: { name: "get_weather", arguments: { city: "Tokyo" } } }] }),
    line({ thinking: "Also the time.", tool_calls: [{ id: "call_x1y2z3w4", function: { name: "get_time", arguments: {} } }] }),
    line({}, true, ',"done_reason":"stop","prompt_eval_count":30,"eval_count":20'),
  );
  assert.deepEqual(
    chunks.map((c) => c.choices[0]?.delta),
    [
      { role: "assistant", toolCalls: [{ index: 0, id: "call_0", name: "get_weather", arguments: '{"city":"Tokyo"}' }] },
      { reasoning: "Also the time." },
      { toolCalls: [{ index: 1, id: "call_x1y2z3w4", name: "get_time", arguments: "{}" }] },
      {},
      undefined,
    ],
  );
  assert.equal(chunks[3]?.choices[0]?.finishReason, "tool_calls");
});

test("content on the done line comes before the finish chunk; length; logprobs ride on the line's first chunk; CRLF is fine", () => {
  // Constructed: the streaming.mdx example puts the last token on the `done` line.
  const chunks = decode(
    '{"model":"gemma4","created_at":"2025-10-26T17:15:24.155176Z","message":{"role":"assistant","content":" question"},"done":false,"logprobs":[{"token":" question","logprob":-0.5}]}\r\n',
    '{"model":"gemma4","created_at":"2025-10-26T17:15:24.166576Z","message":{"role":"assistant","content":"!"},"done":true,"done_reason":"length","eval_count":2}\n',
  );
  assert.deepEqual(summary(chunks), { roles: 1, content: " question!", reasoning: "", toolCalls: [], finish: ["length"], usage: [[0, 0, 2]], ids: 1 });
  assert.deepEqual(chunks[0]?.choices[0]?.logprobs, { content: [{ token: " question", logprob: -0.5, bytes: null, top_logprobs: [] }] });
  assert.equal(chunks[1]?.choices[0]?.logprobs, undefined);
});

test("an empty answer still opens with the role (on the finish chunk); blank lines are skipped", () => {
  const chunks = decode(
    '\n{"model":"m","message":{"role":"assistant","content":""},"done":false}\n\n',
    '{"model":"m","message":{"role":"assistant","content":""},"done":true}\n',
  );
  assert.deepEqual(chunks[0]?.choices[0], { index: 0, delta: { role: "assistant" }, finishReason: "stop" });
  assert.equal(chunks.length, 2);
});

test("a complete last line without its newline is accepted", () => {
  const bytes = readNdjsonFixture("ollama/chat-stream");
  assert.deepEqual(summary(decode(bytes.subarray(0, bytes.length - 1))), STREAMS["ollama/chat-stream"]);
});

test("a stream cut mid-line throws a 502 at end(), at every cut inside the last line", () => {
  const bytes = readNdjsonFixture("ollama/chat-tool-call-stream");
  const lastLineStart = bytes.subarray(0, bytes.length - 1).lastIndexOf(0x0a) + 1;
  for (let cut = lastLineStart + 1; cut < bytes.length - 1; cut += 1) {
    const decoder = ollamaBackend.stream(CTX);
    assert.equal(decoder.push(bytes.subarray(0, cut)).length, 1, "the complete tool-call line decodes");
    assertGatewayError(() => decoder.end(), 502, "upstream_stream_truncated", /middle of a line/);
  }
});

test("a stream without a done line throws a 502 at end()", () => {
  const first = readNdjsonFixture("ollama/chat-stream").toString("utf8").split("\n")[0] ?? "";
  const decoder = ollamaBackend.stream(CTX);
  assert.equal(decoder.push(Buffer.from(`${first}\n`)).length, 1);
  assertGatewayError(() => decoder.end(), 502, "upstream_stream_truncated", /before its final line/);
  assertGatewayError(() => decode(""), 502, "upstream_stream_truncated");
});

test("an invalid JSON line, a non-object line and a line after done throw 502s", () => {
  assertGatewayError(() => decode('{"model":"m","message":{"content":"a"},"done":false}\n{not json}\n'), 502, "upstream_malformed", /invalid JSON/);
  assertGatewayError(() => decode("[1,2]\n"), 502, "upstream_malformed");
  assertGatewayError(() => decode('{"message":{"content":7},"done":false}\n'), 502, "upstream_malformed");
  assertGatewayError(
    () => decode(readNdjsonFixture("ollama/chat-stream"), '{"model":"m","message":{"content":"late"},"done":false}\n'),
    502,
    "upstream_malformed",
    /after the final/,
  );
});

test('an {"error"} line throws a GatewayError with Ollama\'s message, after the chunks before it', () => {
  const bytes = readNdjsonFixture("ollama/chat-stream-error");
  const errorLineStart = bytes.subarray(0, bytes.length - 1).lastIndexOf(0x0a) + 1;
  const decoder = ollamaBackend.stream(CTX);
  const before = decoder.push(bytes.subarray(0, errorLineStart));
  assert.equal(summary(before).content, " Yes.Ican");
  assertGatewayError(() => decoder.push(bytes.subarray(errorLineStart)), 502, "upstream_stream_error", /^an error was encountered while running the model$/);
});

test("NdjsonLines keeps partial lines and multi-byte characters across slices", () => {
  const lines = new NdjsonLines();
  const text = Buffer.from('{"a":"°"}\n{"b":2}\n{"c"');
  assert.deepEqual(lines.push(text.subarray(0, 7)), []);
  assert.deepEqual(lines.push(text.subarray(7, 12)), ['{"a":"°"}']);
  assert.deepEqual(lines.push(text.subarray(12)), ['{"b":2}']);
  assert.equal(lines.flush(), '{"c"');
  assert.equal(lines.flush(), undefined);
});
