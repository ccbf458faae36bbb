/** Provider errors reach OpenAI clients as OpenAI errors with the right status, retry-after kept. */
import assert from "node:assert/strict";
import { test } from "node:test";
import OpenAI from "openai";
import { startAnthropicUpstream } from "../emulators/anthropic-upstream.ts";
import { startGeminiUpstream } from "../emulators/gemini-upstream.ts";
import { startEnvoy } from "../harness/envoy.ts";
import { shippedEnvoySettings } from "../support/envoy-settings.ts";
import { startTestGateway, testConfig } from "../support/gateway.ts";

const KEY = "sk-provider-key-for-errors";

test("Anthropic 429 → OpenAI RateLimitError 429 with retry-after; 529 overloaded → 503", async () => {
  const up = await startAnthropicUpstream({ apiKey: KEY });
  // No retries: the provider's errors themselves are what this test reads (`resilience/retrying.test.ts` has the retries).
  const gateway = await startTestGateway(
    testConfig(`providers:\n  - { name: a, kind: anthropic, base_url: '${up.baseURL}', api_key_env: K }\nresilience: { retry: { max_attempts: 1 } }\n`, {
      K: KEY,
    }),
  );
  try {
    const client = new OpenAI({ baseURL: gateway.baseURL, apiKey: "client", maxRetries: 0 });
    up.queue({
      error: { type: "rate_limit_error", message: "Number of request tokens has exceeded your per-minute rate limit" },
      status: 429,
      headers: { "retry-after": "7" },
    });
    await assert.rejects(client.chat.completions.create({ model: "claude-haiku-4-5", messages: [{ role: "user", content: "x" }] }), (err: unknown) => {
      assert.ok(err instanceof OpenAI.RateLimitError);
      assert.equal(err.headers.get("retry-after"), "7");
      assert.match(err.message, /per-minute rate limit/);
      return true;
    });
    up.queue({ error: { type: "overloaded_error", message: "Overloaded" } });
    await assert.rejects(
      client.chat.completions.create({ model: "claude-haiku-4-5", messages: [{ role: "user", content: "x" }] }),
      (err: unknown) => err instanceof OpenAI.APIError && err.status === 503,
    );
    // Through Envoy the status is restated by a `:status` mutation on the buffered response body.
    const shipped = shippedEnvoySettings();
    const envoy = await startEnvoy({
      extProc: { ...shipped.extProc, address: gateway.extProcAddress },
      routes: [{ header: "x-gearbox-upstream", value: "a", cluster: "a" }],
      clusters: { a: { url: up.url } },
    });
    try {
      const viaEnvoy = new OpenAI({ baseURL: `${envoy.url}/v1`, apiKey: "client", maxRetries: 0 });
      up.queue({ error: { type: "overloaded_error", message: "Overloaded" } });
      await assert.rejects(
        viaEnvoy.chat.completions.create({ model: "claude-haiku-4-5", messages: [{ role: "user", content: "x" }] }),
        (err: unknown) => err instanceof OpenAI.APIError && err.status === 503,
      );
      assert.deepEqual(envoy.stats.ignoredMutations, []);
    } finally {
      await envoy.close();
    }
  } finally {
    await gateway.close();
    await up.close();
  }
});

test("Gemini errors keep their status and message; a safety block surfaces as content_filter", async () => {
  const up = await startGeminiUpstream({ apiKey: KEY });
  const gateway = await startTestGateway(testConfig(`providers:\n  - { name: g, kind: gemini, base_url: '${up.baseURL}', api_key_env: K }\n`, { K: KEY }));
  try {
    const client = new OpenAI({ baseURL: gateway.baseURL, apiKey: "client", maxRetries: 0 });
    up.queue({ fixture: "firebase-gemini/googleai/unary-failure-unknown-model", status: 404 });
    await assert.rejects(
      client.chat.completions.create({ model: "gemini-9", messages: [{ role: "user", content: "x" }] }),
      (err: unknown) => err instanceof OpenAI.NotFoundError,
    );
    up.queue({ fixture: "firebase-gemini/googleai/unary-failure-finish-reason-safety" });
    const res = await client.chat.completions.create({ model: "gemini-2.5-flash", messages: [{ role: "user", content: "x" }] });
    assert.equal(res.choices[0]?.finish_reason, "content_filter");
    assert.ok((res.choices[0]?.message.refusal ?? "").length > 0, "the block is explained, not swallowed");
  } finally {
    await gateway.close();
    await up.close();
  }
});
