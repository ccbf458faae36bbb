import assert from "node:assert/strict";
import { test } from "node:test";
import { RetryBudget } from "./retry-budget.ts";

function clock() {
  let t = 0;
  return { now: () => t, advance: (ms: number) => void (t += ms) };
}

test("retries are at most budget_ratio of the calls in the window", () => {
  const c = clock();
  const budget = new RetryBudget({ budget_ratio: 0.2, min_retries_per_second: 0, budget_window_ms: 10_000 }, c.now);
  let retried = 0;
  // A 429 storm: every one of 1000 calls wants a retry.
  for (let i = 0; i < 1000; i++) {
    budget.recordCall();
    if (budget.tryRetry()) retried++;
    c.advance(5);
  }
  assert.ok(retried <= 200, `${retried} retries for 1000 calls`);
  assert.ok(retried >= 190, `the budget is used, not starved: ${retried}`);
});

test("min_retries_per_second allows retries at low traffic; the window slides", () => {
  const c = clock();
  const budget = new RetryBudget({ budget_ratio: 0.2, min_retries_per_second: 0.3, budget_window_ms: 10_000 }, c.now);
  budget.recordCall();
  assert.equal(budget.tryRetry(), true);
  assert.equal(budget.tryRetry(), true);
  assert.equal(budget.tryRetry(), true);
  assert.equal(budget.tryRetry(), false, "3 per 10 s window");
  c.advance(10_000);
  assert.equal(budget.tryRetry(), true, "a new window");
});

test("a zero budget never retries", () => {
  const budget = new RetryBudget({ budget_ratio: 0, min_retries_per_second: 0, budget_window_ms: 1000 }, () => 0);
  for (let i = 0; i < 100; i++) budget.recordCall();
  assert.equal(budget.tryRetry(), false);
});
