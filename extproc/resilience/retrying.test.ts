import assert from "node:assert/strict";
import { test } from "node:test";
import { resilienceSchema, type ResilienceConfig } from "./config-schema.ts";
import { ProviderHealth } from "./provider-health.ts";
import { withRetries, type Answered } from "./retrying.ts";

function settings(retry: Partial<ResilienceConfig["retry"]> = {}, breaker: Partial<ResilienceConfig["breaker"]> = {}): ResilienceConfig {
  return resilienceSchema.parse({ retry: { base_backoff_ms: 1, max_backoff_ms: 1, ...retry }, breaker });
}

/** A provider answering `statuses` in turn (then 200), counting its calls. */
function provider(statuses: (number | "reset")[], headers: Record<string, string> = {}) {
  let calls = 0;
  return {
    get calls() {
      return calls;
    },
    attempt: (): Promise<Answered<string>> => {
      const s = statuses[calls++] ?? 200;
      if (s === "reset") return Promise.reject(new Error("socket hang up"));
      return Promise.resolve({ status: s, headers, value: `answer ${calls}` });
    },
  };
}

test("429, 5xx and connection failures are retried up to max_attempts; the last answer is returned", async () => {
  const health = new ProviderHealth(settings({ max_attempts: 3 }));
  const p = provider([429, "reset"]);
  const causes: string[] = [];
  const result = await withRetries({
    provider: "p",
    health,
    retry: settings({ max_attempts: 3 }).retry,
    attempt: p.attempt,
    gated: false,
    onRetry: (c) => causes.push(c),
  });
  assert.equal(result.kind, "answer");
  assert.equal(result.kind === "answer" && result.value, "answer 3");
  assert.equal(p.calls, 3);
  assert.deepEqual(causes, ["429", "connect"]);
  const failing = provider([503, 503, 503]);
  const last = await withRetries({ provider: "q", health, retry: settings({ max_attempts: 2 }).retry, attempt: failing.attempt, gated: false });
  assert.equal(failing.calls, 2);
  assert.ok(last.kind === "answer" && last.failure === "503" && last.attempts === 2);
});

test("another 4xx is the provider's answer: no retry", async () => {
  const p = provider([400]);
  const s = settings();
  const result = await withRetries({ provider: "p", health: new ProviderHealth(s), retry: s.retry, attempt: p.attempt, gated: false });
  assert.equal(p.calls, 1);
  assert.ok(result.kind === "answer" && result.status === 400 && result.failure === undefined);
});

test("a retry-after over max_retry_after_ms is not waited for; one under it is", async () => {
  const s = settings({ max_retry_after_ms: 1000 });
  const long = provider([429], { "retry-after": "2" });
  const result = await withRetries({ provider: "p", health: new ProviderHealth(s), retry: s.retry, attempt: long.attempt, gated: false });
  assert.equal(long.calls, 1);
  assert.ok(result.kind === "answer" && result.failure === "429");
  const short = provider([429], { "retry-after": "0" });
  await withRetries({ provider: "p", health: new ProviderHealth(s), retry: s.retry, attempt: short.attempt, gated: false });
  assert.equal(short.calls, 2);
});

test("a 429 storm: the retry budget keeps extra calls to budget_ratio", async () => {
  const s = settings({ max_attempts: 5, budget_ratio: 0.2, min_retries_per_second: 0 }, { enable: false });
  const health = new ProviderHealth(s);
  const p = provider(new Array<number>(10_000).fill(429));
  for (let i = 0; i < 500; i++) await withRetries({ provider: "p", health, retry: s.retry, attempt: p.attempt, gated: false });
  assert.ok(p.calls <= 600, `${p.calls} upstream calls for 500 requests`);
});

test("an open breaker refuses a gated call, and stops retries", async () => {
  const s = settings({ max_attempts: 5 }, { failure_threshold: 2 });
  const health = new ProviderHealth(s);
  const p = provider([500, 500, 500, 500]);
  const first = await withRetries({ provider: "p", health, retry: s.retry, attempt: p.attempt, gated: true });
  assert.equal(p.calls, 2, "the breaker opened after 2 failures: no third attempt");
  assert.ok(first.kind === "answer" && first.failure === "500");
  const refused = await withRetries({ provider: "p", health, retry: s.retry, attempt: p.attempt, gated: true });
  assert.equal(refused.kind, "refused");
  assert.equal(p.calls, 2);
});
