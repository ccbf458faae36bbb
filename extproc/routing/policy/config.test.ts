import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { parse } from "yaml";
import { parsePolicyConfig, policyConfigFrom } from "./config.ts";
import { routePolicySchema } from "./schema.ts";

const FULL = `
route:
  allow_client_route: false
  allow_client_intent: true
  edge_tools: true
  intent_min_confidence: 0.4
  default_target: edge
  heuristic:
    complexity_threshold: 0.65
    edge_models: [qwen2.5-3b, llama-3.2-3b]
    sticky: false
  dynamic:
    monthly_cloud_budget_usd: 1200
    budget_steps: [{ spent_above: 0.6, threshold: 0.85 }]
    latency_steps: [{ p50_above_ms: 2000, threshold: 0.8 }]
  plugins:
    - { name: tenant-pin, module: ./plugins/tenant-pin.mjs, timeout_ms: 10 }
`;

describe("policy config", () => {
  test("every key maps onto PolicyConfig", () => {
    const route = (parse(FULL) as { route: unknown }).route;
    const parsed = parsePolicyConfig(route, [{ when: { intent: "translate" }, target: "edge" }]);
    assert.ok(parsed.ok);
    const c = parsed.value;
    assert.deepEqual(c.rules, [{ intents: ["translate"], target: "edge" }]);
    assert.equal(c.allowClientRoute, false);
    assert.equal(c.allowClientIntent, true);
    assert.equal(c.edgeTools, true);
    assert.equal(c.intentMinConfidence, 0.4);
    assert.equal(c.defaultTarget, "edge");
    assert.equal(c.heuristic.complexityThreshold, 0.65);
    assert.deepEqual([...(c.heuristic.edgeModels ?? [])], ["qwen2.5-3b", "llama-3.2-3b"]);
    assert.equal(c.heuristic.sticky, false);
    assert.deepEqual(c.dynamic, {
      monthlyCloudBudgetUsd: 1200,
      budgetSteps: [{ spentAbove: 0.6, threshold: 0.85 }],
      latencySteps: [{ p50AboveMs: 2000, threshold: 0.8 }],
    });
    assert.deepEqual(c.plugins, [{ name: "tenant-pin", module: "./plugins/tenant-pin.mjs", timeoutMs: 10 }]);
  });

  test("defaults: the calibrated threshold 0.069, sticky, client route allowed, tools to cloud, 5 ms plugins", () => {
    const c = policyConfigFrom({});
    assert.equal(c.heuristic.complexityThreshold, 0.069);
    assert.equal(c.heuristic.enable, true);
    assert.equal(c.heuristic.sticky, true);
    assert.equal(c.heuristic.edgeModels, undefined);
    assert.equal(c.allowClientRoute, true);
    assert.equal(c.allowClientIntent, false);
    assert.equal(c.edgeTools, false);
    assert.equal(c.defaultTarget, "cloud");
    const plugin = routePolicySchema.parse({ plugins: [{ name: "p", module: "p.mjs" }] }).plugins[0];
    assert.equal(plugin?.timeout_ms, 5);
  });

  test("errors name the field", () => {
    const bad = parsePolicyConfig({
      heuristic: { complexity_threshold: 1.5, sticky: "yes" },
      plugins: [
        { name: "a", module: "a.mjs" },
        { name: "a", module: "b.mjs" },
      ],
    });
    assert.equal(bad.ok, false);
    const errors = bad.ok ? [] : bad.errors;
    assert.ok(
      errors.some((e) => e.startsWith("route.heuristic.complexity_threshold:")),
      errors.join("\n"),
    );
    assert.ok(
      errors.some((e) => e.startsWith("route.heuristic.sticky:")),
      errors.join("\n"),
    );
    assert.ok(
      errors.some((e) => e.startsWith("route.plugins.1.name: duplicate")),
      errors.join("\n"),
    );
    const typo = parsePolicyConfig({ heuristic: { complexity_treshold: 0.5 } });
    assert.equal(typo.ok, false);
  });

  test("budget steps without a monthly budget are refused: there would be nothing to measure against", () => {
    const bad = parsePolicyConfig({ dynamic: { budget_steps: [{ spent_above: 0.6, threshold: 0.85 }] } });
    assert.equal(bad.ok, false);
    assert.match(bad.ok ? "" : bad.errors.join("\n"), /route\.dynamic\.monthly_cloud_budget_usd: budget_steps need/);
    assert.equal(parsePolicyConfig({ dynamic: { monthly_cloud_budget_usd: 0 } }).ok, false);
  });
});
