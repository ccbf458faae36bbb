import assert from "node:assert/strict";
import { test } from "node:test";
import { parseAnthropicMessagesRequest } from "./anthropic-messages-request.ts";
import { FieldReader } from "./fields.ts";
import { parseOpenAIChatRequest } from "./openai-chat-request.ts";
import { parseOpenAIEmbeddingsRequest } from "./openai-embeddings.ts";

/** A body as the gateway reads it: JSON text, where `1e999` becomes Infinity. */
const withNumber = (base: string, field: string, literal: string): unknown => JSON.parse(`{${base}, "${field}": ${literal}}`);

const CHAT = `"model": "m", "messages": [{"role": "user", "content": "x"}]`;
const ANTHROPIC = `"model": "m", "max_tokens": 10, "messages": [{"role": "user", "content": "x"}]`;
const EMBEDDINGS = `"model": "m", "input": "x"`;

/** Every numeric field of every request schema, with the parser that reads it. */
const NUMERIC: [string, (json: unknown) => { ok: boolean; errors?: { param: string; message: string }[] }, string, string][] = [
  ...["temperature", "top_p", "n", "presence_penalty", "frequency_penalty", "top_logprobs", "seed", "max_tokens", "max_completion_tokens"].map(
    (f) => ["OpenAI chat", parseOpenAIChatRequest, CHAT, f] as [string, typeof parseOpenAIChatRequest, string, string],
  ),
  ...["temperature", "top_p", "top_k", "max_tokens"].map(
    (f) => ["Anthropic messages", parseAnthropicMessagesRequest, ANTHROPIC, f] as [string, typeof parseAnthropicMessagesRequest, string, string],
  ),
  ["OpenAI embeddings", parseOpenAIEmbeddingsRequest, EMBEDDINGS, "dimensions"],
];

for (const [api, parse, base, field] of NUMERIC) {
  for (const literal of ["1e999", "-1e999"]) {
    test(`${api}: '${field}: ${literal}' (Infinity once parsed) is refused as not finite, naming the field`, () => {
      const parsed = parse(withNumber(base, field, literal));
      assert.equal(parsed.ok, false);
      const error = parsed.errors?.[0];
      assert.equal(error?.param, field);
      assert.equal(error?.message, `'${field}' must be a finite number, got ${literal.startsWith("-") ? "-" : ""}Infinity.`);
    });
  }
}

test("a value that is not a number still says what it is", () => {
  const r = new FieldReader();
  assert.equal(r.number({ temperature: "hot" }, "temperature", "temperature"), undefined);
  assert.equal(r.errors[0]?.message, "'temperature' must be a number, got a string.");
});

test("a finite number in range passes", () => {
  const r = new FieldReader();
  assert.equal(r.number({ temperature: 1e-300 }, "temperature", "temperature", { min: 0, max: 2 }), 1e-300);
  assert.deepEqual(r.errors, []);
});
