/** The exact cache's key: what scopes an entry, and what does not. */
import assert from "node:assert/strict";
import { test } from "node:test";
import type { ChatRequest } from "../../common/canonical/types.ts";
import { cacheable, cacheKey, canonicalJson } from "./cache-key.ts";

const BASE: ChatRequest = {
  model: "gpt-4.1-nano",
  messages: [
    { role: "system", content: "You are terse." },
    { role: "user", content: "Say hi" },
  ],
  stream: false,
  temperature: 0,
  extra: {},
};
const hashOf = (request: ChatRequest, tenant = "shop") => cacheKey(tenant, request).hash;
const WEATHER = { type: "function" as const, name: "weather", parameters: { type: "object" } };

test("the key is scoped by tenant, model, system prompt, messages, tools, tool_choice, format and sampling", () => {
  const base = hashOf(BASE);
  const variants: [string, string][] = [
    ["other tenant", hashOf(BASE, "other")],
    ["other model", hashOf({ ...BASE, model: "gpt-4o" })],
    [
      "other system prompt",
      hashOf({
        ...BASE,
        messages: [
          { role: "system", content: "You are verbose." },
          { role: "user", content: "Say hi" },
        ],
      }),
    ],
    [
      "other user message",
      hashOf({
        ...BASE,
        messages: [
          { role: "system", content: "You are terse." },
          { role: "user", content: "Say bye" },
        ],
      }),
    ],
    ["tools", hashOf({ ...BASE, tools: [WEATHER] })],
    ["tool_choice", hashOf({ ...BASE, tools: [WEATHER], toolChoice: { type: "required" } })],
    ["response_format", hashOf({ ...BASE, responseFormat: { type: "json_object" } })],
    ["temperature", hashOf({ ...BASE, temperature: 0.5 })],
    ["top_p", hashOf({ ...BASE, topP: 0.5 })],
    ["max_tokens", hashOf({ ...BASE, maxTokens: 8 })],
    ["n", hashOf({ ...BASE, n: 2 })],
    ["seed", hashOf({ ...BASE, seed: 7 })],
    ["stop", hashOf({ ...BASE, stop: ["\n"] })],
    ["presence_penalty", hashOf({ ...BASE, presencePenalty: 1 })],
    ["logprobs", hashOf({ ...BASE, logprobs: true })],
    ["an unmodelled field", hashOf({ ...BASE, extra: { prediction: { type: "content", content: "hi" } } })],
  ];
  for (const [what, hash] of variants) assert.notEqual(hash, base, what);
  assert.equal(new Set(variants.map(([, h]) => h)).size, variants.length, "every variant has its own key");
});

test("stream, stream_options, user and metadata do not change the key; field order does not either", () => {
  const base = hashOf(BASE);
  assert.equal(hashOf({ ...BASE, stream: true, includeUsage: true }), base);
  assert.equal(hashOf({ ...BASE, user: "u-1", metadata: { run: "1" } }), base);
  const reordered: ChatRequest = { extra: {}, temperature: 0, stream: false, messages: BASE.messages, model: BASE.model };
  assert.equal(hashOf(reordered), base);
  assert.equal(cacheKey("shop", BASE).tenant, "shop");
});

test("canonical JSON sorts keys at every depth and drops undefined fields", () => {
  assert.equal(canonicalJson({ b: 1, a: { d: [1, { z: 1, y: 2 }], c: undefined } }), '{"a":{"d":[1,{"y":2,"z":1}]},"b":1}');
});

test("cacheable: temperature 0 or a seed; other temperatures only with any_temperature", () => {
  assert.equal(cacheable(BASE, false), true);
  assert.equal(cacheable({ ...BASE, temperature: 0.7, seed: 1 }, false), true);
  const { temperature: _, ...unset } = BASE;
  assert.equal(cacheable(unset, false), false, "unset means OpenAI's default of 1");
  assert.equal(cacheable({ ...BASE, temperature: 0.7 }, false), false);
  assert.equal(cacheable({ ...BASE, temperature: 0.7 }, true), true);
});
