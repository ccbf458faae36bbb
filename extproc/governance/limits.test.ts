import assert from "node:assert/strict";
import { test } from "node:test";
import type { ChatRequest } from "../../common/canonical/types.ts";
import { costUsd } from "../providers/cost.ts";
import { DAY_MS, DEFAULT_MAX_OUTPUT_TOKENS, estimateChat, estimateEmbeddings, estimateTokens, MINUTE_MS, nanoUsd, planChecks, rateWindow } from "./limits.ts";
import type { Caller } from "./model.ts";
import { runawayCheck } from "./runaway.ts";

const price = { input: 2, output: 8 };

test("tokens: 4 characters a token, CJK characters 1 each", () => {
  assert.equal(estimateTokens(""), 0);
  assert.equal(estimateTokens("hello world"), 3);
  assert.equal(estimateTokens("你好世界"), 4);
  assert.equal(estimateTokens("こんにちは 안녕 ok"), 5 + 2 + 1);
});

test("tokens: text with no CJK counted without reading it character by character, alike with the character count", () => {
  const CJK: [number, number][] = [
    [0x3040, 0x30ff],
    [0x3400, 0x4dbf],
    [0x4e00, 0x9fff],
    [0xac00, 0xd7af],
    [0xf900, 0xfaff],
  ];
  const counted = (text: string) => {
    let cjk = 0;
    for (const c of Array.from(text, (ch) => ch.charCodeAt(0))) if (CJK.some(([from, to]) => c >= from && c <= to)) cjk++;
    return cjk + Math.ceil((text.length - cjk) / 4);
  };
  // Each range's edges and their neighbours, Latin-1, other scripts, an emoji (two UTF-16 units).
  const edges = CJK.flatMap(([from, to]) => [from - 1, from, to, to + 1]).map((c) => String.fromCharCode(c));
  const pieces = ["plain ASCII text", "café naïve ß", "Привет мир", "مرحبا", "😀", "\u303f", ...edges];
  for (const a of pieces)
    for (const b of pieces)
      for (const text of [a, `${a}${b}`, `${a} and ${b}`.repeat(3)]) assert.equal(estimateTokens(text), counted(text), JSON.stringify(text));
  assert.equal(estimateTokens("x".repeat(20_001)), 5_001);
});

test("chat estimate: messages, template overhead, parts, tools; output is max_tokens × n or 512", () => {
  const req: ChatRequest = {
    model: "gpt-4.1",
    stream: true,
    messages: [
      { role: "system", content: "Be brief." },
      {
        role: "user",
        content: [
          { type: "text", text: "What is in this image?" },
          { type: "image", url: "https://x/y.png" },
        ],
      },
      { role: "assistant", content: null, toolCalls: [{ id: "c1", name: "look", arguments: '{"a":1}' }] },
    ],
    extra: {},
  };
  const base = estimateChat(req, price);
  assert.equal(base.inputTokens, 4 + 3 + 4 + 6 + 765 + 4 + 1 + 2);
  assert.equal(base.maxOutputTokens, DEFAULT_MAX_OUTPUT_TOKENS);
  assert.equal(base.costUsd, costUsd(price, { inputTokens: base.inputTokens, outputTokens: 512, totalTokens: base.inputTokens + 512 }));
  const capped = estimateChat({ ...req, maxTokens: 100, n: 2, tools: [{ type: "function", name: "look" }] }, undefined);
  assert.equal(capped.maxOutputTokens, 200);
  assert.equal(capped.inputTokens, base.inputTokens + estimateTokens(JSON.stringify([{ type: "function", name: "look" }])));
  assert.equal(capped.costUsd, 0, "an unpriced model reserves no cost");
});

test("embeddings estimate: texts by characters, token arrays by length, no output", () => {
  const estimate = estimateEmbeddings({ model: "e", input: ["abcdefgh", "你好"], singleInput: false, extra: {} }, price);
  assert.deepEqual({ ...estimate, costUsd: undefined }, { inputTokens: 4, maxOutputTokens: 0, costUsd: undefined });
  assert.equal(estimateEmbeddings({ model: "e", input: [[1, 2, 3]], singleInput: true, extra: {} }, undefined).inputTokens, 3);
});

test("requests/s as whole requests per window, the rate kept exactly", () => {
  assert.deepEqual(rateWindow(100), { limit: 100, windowMs: 1000 });
  assert.deepEqual(rateWindow(0.5), { limit: 1, windowMs: 2000 });
  assert.deepEqual(rateWindow(2.5), { limit: 2, windowMs: 800 });
});

test("USD in nano-dollars: a cap and an equal estimate round alike", () => {
  assert.equal(nanoUsd(0.1 + 0.2), nanoUsd(0.3));
  assert.equal(nanoUsd(1.5e-9), 2);
});

const caller: Caller = {
  tenant: {
    id: "shop",
    limits: { requests_per_second: 10, tokens_per_minute: 1000, max_concurrent: 4, daily_cost_usd: 5 },
    degrade_to_edge: false,
    source: "config",
  },
  key: {
    id: "key_1",
    role: "call",
    name: "n",
    prefix: "gbx_call_Ab12",
    hash: "h",
    created_at: "",
    created_by: "",
    limits: { requests_per_second: 2, daily_cost_usd: 1 },
  },
  via: "key",
};
const estimate = { inputTokens: 100, maxOutputTokens: 50, costUsd: 0.25 };

test("checks: runaway first, then concurrency, requests/s, tokens/min and cost, the tenant before the key", () => {
  const runaway = runawayCheck({ enable: true, window_ms: 10_000, max_identical: 3 }, "f00");
  const planned = planChecks(caller, "cloud", estimate, runaway);
  assert.deepEqual(
    planned.map((p) => p.check.label),
    [
      "tenant/runaway",
      "tenant/max_concurrent",
      "tenant/requests_per_second",
      "key:key_1/requests_per_second",
      "tenant/tokens_per_minute",
      "tenant/daily_cost_usd",
      "key:key_1/daily_cost_usd",
    ],
  );
  assert.deepEqual(
    planned.map((p) => p.check.key),
    ["fp:f00", "conc", "rps", "k:key_1:rps", "tpm", "usd", "k:key_1:usd"],
  );
  assert.deepEqual(planned[4]?.check, {
    kind: "budget",
    key: "tpm",
    label: "tenant/tokens_per_minute",
    limit: 1000,
    amount: 150,
    windowMs: MINUTE_MS,
    meter: "tokens",
  });
  assert.deepEqual(planned[6]?.check, {
    kind: "budget",
    key: "k:key_1:usd",
    label: "key:key_1/daily_cost_usd",
    limit: 1e9,
    amount: 2.5e8,
    windowMs: DAY_MS,
    meter: "nano_usd",
  });
  assert.deepEqual(planned[3]?.key, { id: "key_1", prefix: "gbx_call_Ab12" });
});

test("checks: an edge call meters no tokens and no cost", () => {
  assert.deepEqual(
    planChecks(caller, "edge", estimate).map((p) => p.limit),
    ["max_concurrent", "requests_per_second", "requests_per_second"],
  );
  assert.deepEqual(planChecks({ ...caller, tenant: { ...caller.tenant, limits: {} }, key: undefined }, "cloud", estimate), []);
});
