/**
 * An OpenAI answer passed on unchanged is read only for its usage, from the last `"usage"` key
 * in its bytes: the figures are those a full parse gives, whatever the layout, and a `"usage"`
 * that is not the answer's (in a string, in an extension object, absent) falls back to the
 * whole body.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import type { ChatRequest } from "../../common/canonical/types.ts";
import { parseOpenAIUsage } from "../../common/schemas/openai-chat-response.ts";
import { planOpenAIToOpenAIChat } from "./openai-openai.ts";

const RECORDED = readFileSync(new URL("../../test/fixtures/vercel-ai/openai/openai-text.json", import.meta.url));
const plan = planOpenAIToOpenAIChat(
  { model: "m", messages: [], stream: false } as unknown as ChatRequest,
  { model: "m", messages: [] },
  { upstreamModel: "m", forceStreamUsage: true },
  { path: "/chat/completions", params: {} },
);
const usageOf = (body: string | Buffer) => plan.response(200, {}, Buffer.isBuffer(body) ? body : Buffer.from(body)).usage;
const fullParse = (body: string | Buffer) => parseOpenAIUsage((JSON.parse(body.toString()) as { usage?: unknown }).usage);

const USAGE = {
  prompt_tokens: 7,
  completion_tokens: 11,
  total_tokens: 18,
  prompt_tokens_details: { cached_tokens: 2 },
  completion_tokens_details: { reasoning_tokens: 3 },
};
const CHOICE = { index: 0, message: { role: "assistant", content: "hi" }, finish_reason: "stop" };

test("the recorded answer's usage, as a full parse reads it", () => {
  assert.deepEqual(usageOf(RECORDED), fullParse(RECORDED));
  assert.equal(usageOf(RECORDED)?.outputTokens, 363);
});

test("any layout gives the usage a full parse gives", () => {
  const bodies = [
    JSON.stringify({ id: "a", choices: [CHOICE], usage: USAGE }),
    JSON.stringify({ usage: USAGE, id: "b", choices: [CHOICE] }, null, 2),
    // The content quotes a usage object: escaped inside the string, so not the answer's.
    JSON.stringify({ choices: [{ ...CHOICE, message: { role: "assistant", content: 'say "usage": {"prompt_tokens": 999}' } }], usage: USAGE }),
    JSON.stringify({ usage: USAGE, choices: [{ ...CHOICE, message: { role: "assistant", content: '"usage": {"prompt_tokens": 999}' } }] }),
    // A provider's extension object after the answer's usage, with a usage of its own.
    JSON.stringify({ choices: [CHOICE], usage: USAGE, provider_meta: { usage: { units: 4 } } }),
    // Braces and escaped quotes inside a string of the usage object.
    JSON.stringify({ choices: [CHOICE], usage: { ...USAGE, note: 'a } and a \\" and a {' } }),
    '{"choices":[],"usage"  :\n  {"prompt_tokens":1,"completion_tokens":2}}',
  ];
  for (const body of bodies) assert.deepEqual(usageOf(body), fullParse(body), body);
});

test("no usage, or a body that is not JSON, reads as no usage", () => {
  assert.equal(usageOf(JSON.stringify({ choices: [CHOICE] })), undefined);
  assert.equal(usageOf('{"choices": [], "usage": '), undefined);
  assert.equal(usageOf("not json"), undefined);
});
