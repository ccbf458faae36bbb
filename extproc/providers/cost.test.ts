import assert from "node:assert/strict";
import { test } from "node:test";
import { callCostUsd, costUsd, roundUsd } from "./cost.ts";
import type { Provider } from "./provider.ts";

const price = { input: 2, output: 8, cached_input: 0.5 };

test("input and output tokens are billed per million at their own prices", () => {
  assert.equal(costUsd(price, { inputTokens: 1_000_000, outputTokens: 500_000, totalTokens: 1_500_000 }), 2 + 4);
});

test("cached input tokens are billed at the cached price, or as input when there is none", () => {
  const usage = { inputTokens: 1000, outputTokens: 0, totalTokens: 1000, cachedInputTokens: 400 };
  assert.equal(roundUsd(costUsd(price, usage)), roundUsd((600 * 2 + 400 * 0.5) / 1e6));
  assert.equal(roundUsd(costUsd({ input: 2, output: 8 }, usage)), roundUsd((1000 * 2) / 1e6));
});

test("a cached count above the input count (a provider quirk) never makes the cost negative", () => {
  assert.ok(costUsd(price, { inputTokens: 10, outputTokens: 0, totalTokens: 10, cachedInputTokens: 50 }) >= 0);
});

test("an unpriced model or a call without usage has no cost, not a zero cost", () => {
  const provider = { pricing: new Map([["gpt-4.1", { input: 2, output: 8 }]]) } as unknown as Provider;
  assert.equal(callCostUsd(provider, "unknown-model", { inputTokens: 1, outputTokens: 1, totalTokens: 2 }), undefined);
  assert.equal(callCostUsd(provider, "gpt-4.1", undefined), undefined);
  assert.equal(roundUsd(callCostUsd(provider, "gpt-4.1-2025-04-14", { inputTokens: 1000, outputTokens: 1000, totalTokens: 2000 }) ?? -1), 0.01);
});
