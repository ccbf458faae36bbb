/** `cache.semantic` in gearbox.yaml: defaults, a full block, and errors that name the field. */
import assert from "node:assert/strict";
import { test } from "node:test";
import { EdgeAgents } from "../../edge/agents.ts";
import { parseConfigText, resolveConfig } from "../../config/load.ts";
import { testConfig } from "../../../test/support/gateway.ts";
import { createEmbedder, createVerifier } from "./embedder-factory.ts";
import { EdgeEmbedder } from "./edge-embedder.ts";
import { HashedEmbedder } from "./hashed-embedder.ts";
import { ProviderEmbedder } from "./provider-embedder.ts";
import { DEFAULT_SEMANTIC_THRESHOLD } from "./semantic-cache.ts";
import { EdgeVerifier } from "./verifier.ts";

function errorsOf(text: string): string[] {
  const raw = parseConfigText(text, "g.yaml");
  if (!raw.ok) return raw.errors;
  const resolved = resolveConfig(raw.value, {}, "g.yaml");
  return resolved.ok ? [] : resolved.errors;
}

test("defaults: off, the tuned threshold, built-in embedder, guard and fingerprint on, no verification", () => {
  const s = testConfig("").cache.semantic;
  assert.equal(s.enable, false);
  assert.equal(s.threshold, DEFAULT_SEMANTIC_THRESHOLD);
  assert.deepEqual(s.thresholds, { intents: {}, tenants: {} });
  assert.deepEqual(s.embedder, { kind: "builtin", timeout_ms: 200 });
  assert.equal(s.entity_guard, true);
  assert.equal(s.fingerprint, true);
  assert.deepEqual(s.verify, { enable: false, timeout_ms: 300, min_confidence: 0.7 });
  assert.deepEqual(s.index, { quantization: "i8", connectivity: 16, expansion_search: 64 });
  assert.ok(s.ttl_ms > 0 && s.max_bytes > 0 && s.max_entries > 0 && s.max_entry_bytes > 0);
  assert.equal(testConfig("cache:\n  exact: { enable: true }\n").cache.semantic.enable, false, "the exact cache does not turn it on");
});

test("a full block loads", () => {
  const s = testConfig(
    "cache:\n  semantic:\n    enable: true\n    threshold: 0.8\n    thresholds: { intents: { summarize: 0.9 }, tenants: { acme: 0.95 } }\n" +
      "    embedder: { kind: edge, model: minilm, dimensions: 384, timeout_ms: 100 }\n    entity_guard: false\n    fingerprint: false\n" +
      "    verify: { enable: true, model: qwen, timeout_ms: 250, min_confidence: 0.8 }\n    ttl_ms: 1000\n    max_bytes: 1000000\n    max_entries: 10\n    max_entry_bytes: 1000\n    index: { quantization: f16, connectivity: 32 }\n",
  ).cache.semantic;
  assert.equal(s.thresholds.tenants.acme, 0.95);
  assert.deepEqual(s.embedder, { kind: "edge", model: "minilm", dimensions: 384, timeout_ms: 100 });
  assert.equal(s.verify.model, "qwen");
  assert.equal(s.index.quantization, "f16");
});

test("errors name the bad field", () => {
  const cases: [string, RegExp][] = [
    ["cache:\n  semantic:\n    threshold: 1.5\n", /cache\.semantic\.threshold/],
    ["cache:\n  semantic:\n    threshold: 0\n", /cache\.semantic\.threshold/],
    ["cache:\n  semantic:\n    thresholds: { intents: { qa: 2 } }\n", /cache\.semantic\.thresholds\.intents\.qa/],
    ["cache:\n  semantic:\n    thresholds: { users: {} }\n", /cache\.semantic\.thresholds.*users/],
    ["cache:\n  semantic:\n    embedder: { kind: bert }\n", /cache\.semantic\.embedder\.kind/],
    ["cache:\n  semantic:\n    embedder: { kind: edge, dimensions: 64 }\n", /cache\.semantic\.embedder\.model/],
    ["cache:\n  semantic:\n    embedder: { kind: edge, model: minilm }\n", /cache\.semantic\.embedder\.dimensions/],
    ["cache:\n  semantic:\n    embedder: { kind: provider, model: m, dimensions: 64 }\n", /cache\.semantic\.embedder\.provider/],
    ["cache:\n  semantic:\n    verify: { min_confidence: 2 }\n", /cache\.semantic\.verify\.min_confidence/],
    ["cache:\n  semantic:\n    verify: { timeout_ms: -1 }\n", /cache\.semantic\.verify\.timeout_ms/],
    ["cache:\n  semantic:\n    index: { quantization: b1 }\n", /cache\.semantic\.index\.quantization/],
    ["cache:\n  semantic:\n    index: { expansion_search: 4 }\n", /cache\.semantic\.index\.expansion_search/],
    ["cache:\n  semantic:\n    max_entries: 0\n", /cache\.semantic\.max_entries/],
    ["cache:\n  semantic:\n    enabel: true\n", /cache\.semantic.*enabel/],
  ];
  for (const [text, pattern] of cases) {
    const errors = errorsOf(text);
    assert.ok(
      errors.some((e) => pattern.test(e)),
      `${JSON.stringify(text)} → ${JSON.stringify(errors)}`,
    );
  }
});

test("the parts from the config: embedders, the verifier, and references that cannot be met", () => {
  const edges = new EdgeAgents(testConfig("").edge);
  assert.ok((createEmbedder(testConfig(""), edges) as { value: unknown }).value instanceof HashedEmbedder);
  const edge = createEmbedder(testConfig("cache:\n  semantic:\n    embedder: { kind: edge, model: minilm, dimensions: 384 }\n"), edges);
  assert.ok(edge.ok && edge.value instanceof EdgeEmbedder && edge.value.name === "edge:minilm");
  const withProvider = testConfig(
    "providers:\n  - { name: oai, kind: openai, base_url: 'https://api.openai.com/v1' }\ncache:\n  semantic:\n    embedder: { kind: provider, provider: oai, model: text-embedding-3-small, dimensions: 1536 }\n",
  );
  const provider = createEmbedder(withProvider, edges);
  assert.ok(provider.ok && provider.value instanceof ProviderEmbedder);
  const unknown = createEmbedder(testConfig("cache:\n  semantic:\n    embedder: { kind: provider, provider: nope, model: m, dimensions: 64 }\n"), edges);
  assert.ok(!unknown.ok && /cache\.semantic\.embedder\.provider/.test(unknown.errors[0] ?? ""));
  assert.deepEqual(createVerifier(testConfig(""), edges), { ok: true, value: undefined });
  const noModel = createVerifier(testConfig("cache:\n  semantic:\n    verify: { enable: true }\n"), edges);
  assert.ok(!noModel.ok && /cache\.semantic\.verify\.model/.test(noModel.errors[0] ?? ""));
  const verifier = createVerifier(testConfig("edge:\n  default_model: qwen\ncache:\n  semantic:\n    verify: { enable: true }\n"), edges);
  assert.ok(verifier.ok && verifier.value instanceof EdgeVerifier);
});
