import assert from "node:assert/strict";
import { test } from "node:test";
import { parseConfigText, resolveConfig, type GatewayConfig } from "../config/load.ts";
import { chainFor } from "./fallback-chains.ts";

const PROVIDERS = `
providers:
  - { name: openai, preset: openai, default: true }
  - { name: deepseek, preset: deepseek }
  - { name: anthropic, preset: anthropic, models: [claude-haiku-4-5] }
edge:
  default_model: tiny
`;

function load(yaml: string): { config?: GatewayConfig; errors: string[] } {
  const raw = parseConfigText(PROVIDERS + yaml, "gearbox.yaml");
  if (!raw.ok) return { errors: raw.errors };
  const resolved = resolveConfig(raw.value, {}, "gearbox.yaml");
  return resolved.ok ? { config: resolved.value, errors: [] } : { errors: resolved.errors };
}

test("the issue's chain loads and resolves through routing's model → provider resolution", () => {
  const { config, errors } = load(
    `resilience:\n  fallbacks:\n    gpt-4o-mini: [deepseek/deepseek-chat, claude-haiku-4-5, edge]\n    "*": [claude-haiku-4-5]\n`,
  );
  assert.deepEqual(errors, []);
  assert.ok(config);
  const openai = config.providers.find((p) => p.name === "openai");
  assert.ok(openai);
  const chain = chainFor(config, "gpt-4o-mini", { provider: openai, upstreamModel: "gpt-4o-mini" });
  assert.deepEqual(
    chain.map((m) => (m.kind === "edge" ? `edge:${m.model}` : `${m.provider.name}:${m.upstreamModel}`)),
    ["deepseek:deepseek-chat", "anthropic:claude-haiku-4-5", "edge:tiny"],
  );
  const other = chainFor(config, "gpt-4.1", { provider: openai, upstreamModel: "gpt-4.1" });
  assert.deepEqual(
    other.map((m) => m.model),
    ["claude-haiku-4-5"],
    "'*' for models without a chain",
  );
  const anthropic = config.providers.find((p) => p.name === "anthropic");
  assert.ok(anthropic);
  assert.deepEqual(chainFor(config, "claude-haiku-4-5", { provider: anthropic, upstreamModel: "claude-haiku-4-5" }), [], "the primary itself is no fallback");
});

test("bad chains are start-up errors naming the field", () => {
  const cases: [string, RegExp][] = [
    [`gpt-4o-mini: [deepseek/deepseek-chat, x/some-model]`, /^gearbox\.yaml: resilience\.fallbacks\.gpt-4o-mini\[1\]: unknown provider 'x'/],
    [`gpt-4o-mini: [no-such-model]`, /^gearbox\.yaml: resilience\.fallbacks\.gpt-4o-mini\[0\]: unknown model 'no-such-model'/],
    [`gpt-4o-mini: [edge, claude-haiku-4-5]`, /^gearbox\.yaml: resilience\.fallbacks\.gpt-4o-mini\[0\]: 'edge' can only be the last member/],
    [
      `gpt-4o-mini: [claude-haiku-4-5, anthropic/claude-haiku-4-5]`,
      /resilience\.fallbacks\.gpt-4o-mini\[1\]: 'anthropic\/claude-haiku-4-5' is already in this chain/,
    ],
    [`gpt-4o-mini: [openai/gpt-4o-mini]`, /resilience\.fallbacks\.gpt-4o-mini\[0\]: fallback cycle openai\/gpt-4o-mini → openai\/gpt-4o-mini/],
    [
      `gpt-4o-mini: [claude-haiku-4-5]\n    claude-haiku-4-5: [deepseek/deepseek-chat]\n    deepseek/deepseek-chat: [gpt-4o-mini]`,
      /resilience\.fallbacks\.gpt-4o-mini\[0\]: fallback cycle openai\/gpt-4o-mini → anthropic\/claude-haiku-4-5 → deepseek\/deepseek-chat → openai\/gpt-4o-mini/,
    ],
    [`gpt-4o-mini: []`, /resilience\.fallbacks\.gpt-4o-mini: Too small/],
  ];
  for (const [chain, expected] of cases) {
    const { errors } = load(`resilience:\n  fallbacks:\n    ${chain}\n`);
    assert.ok(
      errors.some((e) => expected.test(e)),
      `${chain}\n→ ${errors.join("\n")}`,
    );
  }
});

test("'edge' needs an edge model", () => {
  const raw = parseConfigText(`providers: [{ name: openai, preset: openai }]\nresilience: { fallbacks: { "*": [edge] } }\n`, "g.yaml");
  assert.ok(raw.ok);
  const resolved = resolveConfig(raw.value, {}, "g.yaml");
  assert.ok(!resolved.ok);
  assert.match(resolved.errors.join("\n"), /resilience\.fallbacks\.\*\[0\]: 'edge' needs edge\.default_model/);
});

test("retry, breaker and timeout settings: defaults, and a misspelt key is named", () => {
  const { config } = load("");
  assert.ok(config);
  assert.deepEqual(config.resilience.retry, {
    max_attempts: 2,
    base_backoff_ms: 100,
    max_backoff_ms: 2000,
    max_retry_after_ms: 5000,
    budget_ratio: 0.2,
    min_retries_per_second: 1,
    budget_window_ms: 10_000,
  });
  assert.equal(config.resilience.breaker.failure_threshold, 5);
  assert.deepEqual(config.providers[0]?.timeouts, { connectMs: 5000, firstByteMs: 600_000, idleMs: 120_000, totalMs: 600_000 });
  const timed = parseConfigText(
    `providers: [{ name: slow, preset: openai, timeout_ms: 30000, timeouts: { connect_ms: 250, first_byte_ms: 2000 } }]\n`,
    "t.yaml",
  );
  assert.ok(timed.ok);
  const resolved = resolveConfig(timed.value, {}, "t.yaml");
  assert.ok(resolved.ok);
  assert.deepEqual(resolved.value.providers[0]?.timeouts, { connectMs: 250, firstByteMs: 2000, idleMs: 120_000, totalMs: 30_000 });
  assert.equal(resolved.value.providers[0]?.timeoutMs, 30_000);
  assert.match(load(`resilience: { retry: { max_attemps: 3 } }\n`).errors.join("\n"), /resilience\.retry: Unrecognized key: "max_attemps"/);
});
