/**
 * Every recorded Anthropic response in `test/fixtures/vercel-ai/anthropic/` through the backend
 * codec. Two kinds of expectation: facts read off each recording by hand and written down below
 * (finish reason, usage, tool-call names), and, computed straight from the recording, the text,
 * reasoning and tool-call arguments the canonical result must carry (the text blocks or deltas
 * concatenated; the `input_json_delta`s of each `tool_use` block concatenated, parsed as JSON).
 *
 * Oddities of the recordings (Vercel AI SDK test fixtures):
 * - Several `.chunks.txt` files hold a multi-step exchange: several streams back to back (one
 *   `message_start` … `message_stop` each). They are cut at each `message_stop` and decoded as
 *   the separate streams they were; the table lists one entry per stream.
 * - In `anthropic-programmatic-tool-calling.1.chunks.txt`, 13 of the 15 streams are a
 *   `message_start` that already holds a `tool_use` block and `stop_reason`, then `message_stop`.
 * - `spliced-message-start` is a broken stream (a second message starts inside the first): it
 *   must fail. `duplicate-message-start` repeats the same `message_start`: it must not.
 * - Model names such as `claude-fable-5` and block types such as `fallback`, `advisor_tool_result`
 *   or `compaction` appear; unknown block types are skipped.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readdirSync } from "node:fs";
import type { ChatChunk, ChatResponse } from "../../../common/canonical/types.ts";
import { GatewayError } from "../../../common/errors.ts";
import { anthropicSseEvents } from "../../../test/emulators/anthropic-upstream.ts";
import { FIXTURES_DIR, loadChunkLines, loadJsonFixture, readFixtureBytes } from "../../../test/emulators/fixtures.ts";
import { DEFAULT_PACING, planSseWrites } from "../../../test/emulators/sse.ts";
import type { BackendContext } from "../codec.ts";
import { anthropicBackend } from "./anthropic.ts";

const DIR = "vercel-ai/anthropic";
const CTX: BackendContext = { upstreamModel: "claude-upstream", forceStreamUsage: true };

/** [finish reason, [input tokens (cache included), output tokens, cached input tokens, thinking tokens if reported], tool-call names]. */
type Facts = [string, [number, number, number, number?], string[]];

function usageOf([input, output, cached, reasoning]: Facts[1]): Record<string, number> {
  const usage: Record<string, number> = { inputTokens: input, outputTokens: output, totalTokens: input + output, cachedInputTokens: cached };
  if (reasoning !== undefined) usage.reasoningTokens = reasoning;
  return usage;
}

const BODIES: Record<string, Facts> = {
  "anthropic-advisor-20260301.1": ["stop", [2414, 3200, 0], []],
  "anthropic-advisor-stop-reasons": ["stop", [10, 20, 0], []],
  "anthropic-claude-opus-5-reasoning-high.1": ["stop", [51, 1699, 0, 139], []],
  "anthropic-clear-thinking.1": ["stop", [69, 33, 0], []],
  "anthropic-clear-tool-uses.1": ["stop", [859, 132, 0], []],
  "anthropic-code-execution-20250825.1": ["stop", [7881, 608, 0], []],
  "anthropic-code-execution-20250825.2": ["stop", [12546, 1359, 0], []],
  "anthropic-code-execution-file-upload.1": ["stop", [7451, 521, 0], []],
  "anthropic-combined-context-editing.1": ["stop", [50, 418, 0], []],
  "anthropic-compaction.1": ["stop", [682, 1320, 0], []],
  "anthropic-fallback": ["stop", [412, 264, 0], []],
  "anthropic-json-other-tool.1": ["tool_calls", [843, 28, 0], ["weather"]],
  "anthropic-json-output-format.1": ["stop", [371, 629, 0], []],
  "anthropic-json-tool.1": ["tool_calls", [1151, 87, 0], ["json"]],
  "anthropic-mcp.1": ["stop", [1250, 88, 0], []],
  "anthropic-memory-20250818.1": ["tool_calls", [1614, 69, 0], ["memory"]],
  // A finished multi-step message: end_turn, yet it still holds the four code-execution tool calls.
  "anthropic-programmatic-tool-calling.1": ["stop", [4243, 229, 0], ["rollDie", "rollDie", "rollDie", "rollDie"]],
  "anthropic-refusal-no-details": ["content_filter", [18, 5, 0], []],
  "anthropic-refusal": ["content_filter", [18, 5, 0], []],
  "anthropic-text": ["stop", [12, 29, 0], []],
  "anthropic-tool-no-args": ["tool_calls", [602, 93, 0], ["updateIssueList"]],
  "anthropic-tool-search-bm25.1": ["tool_calls", [1631, 161, 0], ["get_weather"]],
  "anthropic-tool-search-deferred-bm25.2": ["tool_calls", [1398, 213, 0], ["executeEditorOperation"]],
  "anthropic-tool-search-deferred-regex.2": ["tool_calls", [1520, 203, 0], ["executeEditorOperation"]],
  "anthropic-tool-search-regex.1": ["tool_calls", [1676, 184, 0], ["get_temp_data"]],
  "anthropic-web-fetch-tool-20260209.1": ["stop", [7204, 162, 0], []],
  "anthropic-web-fetch-tool.1": ["stop", [4234, 462, 0], []],
  "anthropic-web-fetch-tool.2": ["stop", [28638, 365, 0], []],
  "anthropic-web-fetch-tool.error": ["stop", [1902, 214, 0], []],
};

const roll: Facts = ["tool_calls", [0, 0, 0], ["rollDie"]];

/** One entry per stream in the file; `"fails"` for a stream that must not decode. */
const STREAMS: Record<string, Facts[] | "fails"> = {
  "anthropic-advisor-20250301.1": [["stop", [4727, 3391, 0], []]],
  "anthropic-advisor-stop-reasons": [["stop", [10, 20, 0], []]],
  "anthropic-clear-thinking.1": [["stop", [69, 53, 0], []]],
  "anthropic-clear-tool-uses.1": [["stop", [859, 122, 0], []]],
  "anthropic-code-execution-20250825.1": [["stop", [8050, 771, 0], []]],
  "anthropic-code-execution-20260120-prompt-cache.1": [["stop", [9632, 198, 6289, 0], []]],
  "anthropic-code-execution-file-upload.1": [["stop", [11505, 1103, 0], []]],
  "anthropic-combined-context-editing.1": [["stop", [50, 485, 0], []]],
  "anthropic-fallback": [["stop", [412, 264, 0], []]],
  "anthropic-json-other-tool.1": [["tool_calls", [843, 28, 0], ["weather"]]],
  "anthropic-json-output-format.1": [["stop", [313, 305, 0], []]],
  "anthropic-json-tool.1": [["tool_calls", [849, 47, 0], ["json"]]],
  "anthropic-json-tool.2": [["tool_calls", [849, 47, 0], ["json"]]],
  "anthropic-mcp.1": [["stop", [1250, 83, 0], []]],
  // message_start says 43 input tokens, message_delta 61: the later count wins.
  "anthropic-message-delta-input-tokens": [["stop", [61, 2, 0], []]],
  "anthropic-programmatic-tool-calling.1": [
    ["tool_calls", [3369, 725, 0], ["rollDie"]],
    roll,
    roll,
    roll,
    roll,
    roll,
    roll,
    roll,
    roll,
    roll,
    roll,
    roll,
    roll,
    roll,
    ["stop", [4551, 197, 0], []],
  ],
  "anthropic-refusal": [["content_filter", [18, 5, 0], []]],
  "anthropic-text": [["stop", [12, 30, 0], []]],
  "anthropic-tool-no-args": [["tool_calls", [565, 48, 0], ["updateIssueList"]]],
  "anthropic-tool-search-bm25.1": [
    ["tool_calls", [1630, 158, 0], ["get_weather"]],
    ["stop", [1040, 41, 0], []],
  ],
  "anthropic-tool-search-deferred-bm25": [
    ["tool_calls", [879, 177, 0], ["readNoteTree"]],
    ["tool_calls", [1398, 213, 0], ["executeEditorOperation"]],
    ["stop", [1639, 95, 0], []],
  ],
  "anthropic-tool-search-deferred-regex": [
    ["tool_calls", [904, 175, 0], ["readNoteTree"]],
    ["tool_calls", [1519, 211, 0], ["executeEditorOperation"]],
    ["stop", [1758, 118, 0], []],
  ],
  "anthropic-tool-search-regex.1": [
    ["tool_calls", [1681, 163, 0], ["get_temp_data"]],
    ["stop", [1071, 67, 0], []],
  ],
  "anthropic-web-fetch-tool-20260209.1": [["stop", [7172, 144, 0], []]],
  "anthropic-web-fetch-tool.1": [["stop", [4230, 446, 0], []]],
  "duplicate-message-start": [["stop", [17, 227, 0], []]],
  "spliced-message-start": "fails",
};

type Json = Record<string, unknown>;
const obj = (v: unknown): Json => (typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Json) : {});
const blocksOf = (message: Json): Json[] => (Array.isArray(message.content) ? message.content.map(obj) : []);

/** What the canonical result must carry, read straight off a recording. */
interface Recorded {
  text: string;
  reasoning: string;
  /** Per `tool_use` block, in order: name and arguments as JSON text. */
  tools: Array<{ id: string; name: string; args: string }>;
}

function readMessage(message: Json): Recorded {
  const out: Recorded = { text: "", reasoning: "", tools: [] };
  for (const b of blocksOf(message)) {
    if (b.type === "text") out.text += String(b.text);
    if (b.type === "thinking") out.reasoning += String(b.thinking);
    if (b.type === "tool_use") out.tools.push({ id: String(b.id), name: String(b.name), args: JSON.stringify(b.input) });
  }
  return out;
}

function readStream(events: readonly Json[]): Recorded {
  const out: Recorded = { text: "", reasoning: "", tools: [] };
  const toolAt = new Map<number, { id: string; name: string; args: string; input: unknown }>();
  for (const e of events) {
    if (e.type === "message_start") {
      const prefilled = readMessage(obj(e.message));
      out.text += prefilled.text;
      out.tools.push(...prefilled.tools);
    }
    const block = obj(e.content_block);
    const delta = obj(e.delta);
    const index = Number(e.index);
    if (e.type === "content_block_start" && block.type === "text" && typeof block.text === "string") out.text += block.text;
    if (e.type === "content_block_start" && block.type === "tool_use")
      toolAt.set(index, { id: String(block.id), name: String(block.name), args: "", input: block.input });
    if (delta.type === "text_delta") out.text += String(delta.text);
    if (delta.type === "thinking_delta") out.reasoning += String(delta.thinking);
    const tool = toolAt.get(index);
    if (delta.type === "input_json_delta" && tool) tool.args += String(delta.partial_json);
    if (e.type === "content_block_stop" && tool) {
      out.tools.push({ id: tool.id, name: tool.name, args: tool.args === "" ? JSON.stringify(tool.input) : tool.args });
      toolAt.delete(index);
    }
  }
  return out;
}

/** The recorded `.chunks.txt` lines, cut into streams at each `message_stop`. */
function streamsOf(fixture: string): string[][] {
  const streams: string[][] = [[]];
  for (const line of loadChunkLines(fixture)) {
    streams.at(-1)?.push(line);
    if ((JSON.parse(line) as Json).type === "message_stop") streams.push([]);
  }
  return streams.filter((s) => s.length > 0);
}

function decodeStream(writes: readonly Buffer[]): ChatChunk[] {
  const decoder = anthropicBackend.stream(CTX);
  const chunks = writes.flatMap((w) => decoder.push(w));
  chunks.push(...decoder.end());
  return chunks.map((c) => ({ ...c, created: 0 }));
}

/** The canonical message a stream's chunks add up to, as an OpenAI client assembles it. */
function assemble(chunks: readonly ChatChunk[]): { text: string; reasoning: string; tools: Recorded["tools"]; finish: string[]; usage: unknown[] } {
  const tools: Recorded["tools"] = [];
  let text = "";
  let reasoning = "";
  const finish: string[] = [];
  for (const choice of chunks.flatMap((c) => c.choices)) {
    text += choice.delta.content ?? "";
    reasoning += choice.delta.reasoning ?? "";
    for (const d of choice.delta.toolCalls ?? []) {
      const call = (tools[d.index] ??= { id: "", name: "", args: "" });
      call.id += d.id ?? "";
      call.name += d.name ?? "";
      call.args += d.arguments ?? "";
    }
    if (choice.finishReason !== null) finish.push(choice.finishReason);
  }
  return { text, reasoning, tools, finish, usage: chunks.filter((c) => c.usage).map((c) => c.usage) };
}

function assertToolsMatch(actual: Recorded["tools"], expected: Recorded["tools"], names: string[], label: string): void {
  assert.deepEqual(
    actual.map((t) => t.name),
    names,
    `${label}: tool names`,
  );
  assert.deepEqual(
    actual.map((t) => t.id),
    expected.map((t) => t.id),
    `${label}: tool ids`,
  );
  actual.forEach((t, i) => assert.deepEqual(JSON.parse(t.args), JSON.parse(expected[i]?.args ?? ""), `${label}: arguments of call ${i}`));
}

const files = readdirSync(`${FIXTURES_DIR}${DIR}`);

void test("the tables cover every recorded body and stream", () => {
  const names = (suffix: string): string[] =>
    files
      .filter((f) => f.endsWith(suffix))
      .map((f) => f.slice(0, -suffix.length))
      .sort();
  assert.deepEqual(names(".json"), Object.keys(BODIES).sort());
  assert.deepEqual(names(".chunks.txt"), Object.keys(STREAMS).sort());
});

for (const [name, [finish, usage, toolNames]] of Object.entries(BODIES)) {
  void test(`body ${name}`, () => {
    const fixture = `${DIR}/${name}`;
    const result = anthropicBackend.response(readFixtureBytes(fixture, "json"), { "content-type": "application/json" }, CTX);
    assert.ok(result.ok);
    const res: ChatResponse = result.value;
    const recorded = readMessage(obj(loadJsonFixture(fixture)));
    const message = res.choices[0]?.message;
    assert.equal(res.choices.length, 1);
    assert.equal(res.choices[0]?.finishReason, finish);
    assert.equal(message?.content, recorded.text === "" ? null : recorded.text);
    assert.equal(message?.reasoning ?? "", recorded.reasoning);
    assertToolsMatch(
      (message?.toolCalls ?? []).map((c) => ({ id: c.id, name: c.name, args: c.arguments })),
      recorded.tools,
      toolNames,
      name,
    );
    assert.deepEqual(res.usage, usageOf(usage));
    if (finish === "content_filter") assert.ok((message?.refusal ?? "").length > 0, "a refusal says why");
  });
}

for (const [name, expected] of Object.entries(STREAMS)) {
  void test(`stream ${name}`, () => {
    const fixture = `${DIR}/${name}`;
    const streams = streamsOf(fixture);
    if (expected === "fails") {
      const bytes = Buffer.from(anthropicSseEvents(streams.flat()).join(""));
      assert.throws(
        () => decodeStream([bytes]),
        (err: unknown) => err instanceof GatewayError && err.status === 502,
      );
      return;
    }
    assert.equal(streams.length, expected.length, "streams in the file");
    streams.forEach((lines, s) => {
      const [finish, usage, toolNames] = expected[s] ?? ["?", [0, 0, 0], []];
      const label = `${name} #${s}`;
      const events = anthropicSseEvents(lines);
      const whole = decodeStream([Buffer.from(events.join(""))]);
      const split = decodeStream(planSseWrites(events, { ...DEFAULT_PACING, splitEvents: true }));
      assert.deepEqual(split, whole, `${label}: writes cut mid-event decode the same`);
      const recorded = readStream(lines.map((l) => obj(JSON.parse(l))));
      const got = assemble(whole);
      assert.deepEqual(whole[0]?.choices[0]?.delta, { role: "assistant", content: "" }, `${label}: first chunk`);
      assert.equal(got.text, recorded.text, `${label}: text`);
      assert.equal(got.reasoning, recorded.reasoning, `${label}: reasoning`);
      assertToolsMatch(got.tools, recorded.tools, toolNames, label);
      assert.deepEqual(got.finish, [finish], `${label}: one finish reason`);
      assert.deepEqual(whole.at(-1)?.choices, [], `${label}: usage chunk last, without choices`);
      assert.deepEqual(got.usage, [usageOf(usage)], `${label}: usage`);
    });
  });
}
