import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { parse } from "yaml";
import { routeSchema } from "../../config/schema.ts";
import { complexityLevel } from "../complexity.ts";
import { policyConfigFrom } from "./config.ts";
import { decidePolicy, effectiveThreshold } from "./decide.ts";
import { POLICY_DEFAULTS, routePolicyShape } from "./schema.ts";
import type { PolicyConfig, PolicyInput } from "./types.ts";

/** The brief's example, verbatim. */
const BRIEF_YAML = `
route:
  rules:
    - when:
        intent: [summarize, intent_classify, extract_entity]
        estimated_complexity: low
      target: edge
    - when:
        intent: [code_gen, multi_hop_reasoning, math]
      target: cloud
  fallback:
    enable: true
    confidence_threshold: 0.6
    upgrade_target: cloud
`;

const mergedRouteSchema = routeSchema.extend(routePolicyShape);

/**
 * These tests were written against the threshold 0.7 the policy shipped with before calibration
 * (issue 24): they set it explicitly unless a YAML sets its own, so they still specify the layers.
 */
function configFrom(yaml: string): PolicyConfig {
  const doc = parse(yaml) as { route: { heuristic?: Record<string, unknown> } };
  const route = { ...doc.route, heuristic: { complexity_threshold: 0.7, ...doc.route.heuristic } };
  return policyConfigFrom(mergedRouteSchema.parse(route));
}

const BRIEF = configFrom(BRIEF_YAML);

function input(over: Partial<PolicyInput> & { score?: number } = {}): PolicyInput {
  const { score = 0.2, ...rest } = over;
  return {
    intent: "unknown",
    intentConfidence: 0.9,
    complexity: { score, level: complexityLevel(score) },
    hasTools: false,
    clientRoute: "auto",
    model: "gpt-4o-mini",
    edgeAvailable: true,
    ...rest,
  };
}

describe("decidePolicy with the brief's example config", () => {
  for (const intent of ["summarize", "intent_classify", "extract_entity"]) {
    test(`${intent} + low complexity → edge by rule 1`, () => {
      assert.deepEqual(decidePolicy(input({ intent, score: 0.1 }), BRIEF), { target: "edge", reason: "rule:1", layer: "rules" });
    });
    test(`${intent} + high complexity → heuristic → cloud`, () => {
      assert.deepEqual(decidePolicy(input({ intent, score: 0.8 }), BRIEF), { target: "cloud", reason: "heuristic:complexity=0.8>=0.7", layer: "heuristic" });
    });
  }
  for (const intent of ["code_gen", "multi_hop_reasoning", "math"]) {
    test(`${intent} → cloud by rule 2, even at low complexity`, () => {
      assert.deepEqual(decidePolicy(input({ intent, score: 0.05 }), BRIEF), { target: "cloud", reason: "rule:2", layer: "rules" });
    });
  }
  test("other intents → heuristic: medium 0.42 goes to the edge under 0.7", () => {
    assert.deepEqual(decidePolicy(input({ intent: "qa", score: 0.42 }), BRIEF), {
      target: "edge",
      reason: "heuristic:complexity=0.42<0.7",
      layer: "heuristic",
    });
    assert.equal(decidePolicy(input({ intent: "translate", score: 0.7 }), BRIEF).target, "cloud");
    assert.equal(decidePolicy(input({ intent: "chitchat", score: 0.0 }), BRIEF).target, "edge");
  });
  test("a score that truncates to the threshold still reads as under it", () => {
    assert.equal(decidePolicy(input({ intent: "qa", score: 0.69999 }), BRIEF).reason, "heuristic:complexity=0.699<0.7");
  });
  test("a low-confidence intent is treated as unknown by the rules", () => {
    assert.equal(decidePolicy(input({ intent: "math", intentConfidence: 0.3, score: 0.1 }), BRIEF).reason, "heuristic:complexity=0.1<0.7");
  });
  test("the fallback section still parses beside the policy keys", () => {
    const parsed = mergedRouteSchema.parse((parse(BRIEF_YAML) as { route: unknown }).route);
    assert.equal(parsed.fallback.confidence_threshold, 0.6);
    assert.equal(parsed.heuristic.complexity_threshold, POLICY_DEFAULTS.complexityThreshold);
  });
});

describe("rules", () => {
  const config = configFrom(`
route:
  rules:
    - when: { intent: translate }
      target: edge
    - when: { intent: [translate, qa] }
      target: cloud
    - when: { estimated_complexity: high }
      target: cloud
    - when: { intent: qa, estimated_complexity: low }
      target: edge
`);
  test("first match wins", () => {
    assert.equal(decidePolicy(input({ intent: "translate", score: 0.9 }), config).reason, "rule:1");
    assert.equal(decidePolicy(input({ intent: "qa", score: 0.1 }), config).reason, "rule:2");
  });
  test("a rule with only a complexity matches any intent", () => {
    assert.deepEqual(decidePolicy(input({ intent: "rewrite", score: 0.9 }), config), { target: "cloud", reason: "rule:3", layer: "rules" });
  });
  test("client intent hint replaces the classifier's intent only when allowed", () => {
    assert.equal(decidePolicy(input({ intent: "rewrite", clientIntentHint: "translate", score: 0.1 }), config).reason, "heuristic:complexity=0.1<0.7");
    const allowing = { ...config, allowClientIntent: true };
    assert.equal(decidePolicy(input({ intent: "rewrite", clientIntentHint: "translate", score: 0.1 }), allowing).reason, "rule:1;client_intent");
  });
});

describe("client route, tools, edge availability", () => {
  test("client force is honoured when allowed", () => {
    assert.deepEqual(decidePolicy(input({ intent: "math", clientRoute: "edge" }), BRIEF), { target: "edge", reason: "client_hint:edge", layer: "client" });
    assert.deepEqual(decidePolicy(input({ intent: "summarize", clientRoute: "cloud" }), BRIEF), {
      target: "cloud",
      reason: "client_hint:cloud",
      layer: "client",
    });
  });
  test("client force is ignored (and said so) when refused", () => {
    const refusing = configFrom(`${BRIEF_YAML}  allow_client_route: false\n`);
    assert.deepEqual(decidePolicy(input({ intent: "math", clientRoute: "edge" }), refusing), {
      target: "cloud",
      reason: "rule:2;client_route_ignored",
      layer: "rules",
    });
  });
  test("requests with tools go to the cloud unless edge_tools", () => {
    assert.deepEqual(decidePolicy(input({ intent: "summarize", hasTools: true, score: 0.1 }), BRIEF), {
      target: "cloud",
      reason: "tools_to_cloud",
      layer: "rules",
    });
    const edgeTools = configFrom(`${BRIEF_YAML}  edge_tools: true\n`);
    assert.equal(decidePolicy(input({ intent: "summarize", hasTools: true, score: 0.1 }), edgeTools).target, "edge");
  });
  test("no edge agent → cloud, saying why", () => {
    assert.deepEqual(decidePolicy(input({ intent: "summarize", score: 0.1, edgeAvailable: false }), BRIEF), {
      target: "cloud",
      reason: "edge_unavailable;rule:1",
      layer: "rules",
    });
    assert.equal(decidePolicy(input({ intent: "qa", score: 0.1, edgeAvailable: false }), BRIEF).reason, "edge_unavailable;heuristic:complexity=0.1<0.7");
  });
  test("a client's explicit edge is a data boundary: it stays edge for the caller to refuse", () => {
    assert.equal(decidePolicy(input({ clientRoute: "edge", edgeAvailable: false }), BRIEF).target, "edge");
  });
});

describe("heuristic: allowlist, stickiness, default", () => {
  const allow = configFrom(`
route:
  heuristic: { edge_models: [qwen2.5-3b], complexity_threshold: 0.6 }
`);
  test("only allowlisted models go to the edge", () => {
    assert.deepEqual(decidePolicy(input({ model: "qwen2.5-3b", score: 0.3 }), allow), {
      target: "edge",
      reason: "heuristic:complexity=0.3<0.6",
      layer: "heuristic",
    });
    assert.deepEqual(decidePolicy(input({ model: "gpt-4o", score: 0.3 }), allow), {
      target: "cloud",
      reason: "default:cloud;model_not_in_edge_models",
      layer: "default",
    });
  });
  test("sticky: a cloud conversation stays in the cloud under the threshold", () => {
    assert.deepEqual(decidePolicy(input({ intent: "qa", score: 0.2, stickyTarget: "cloud" }), BRIEF), {
      target: "cloud",
      reason: "sticky:cloud",
      layer: "heuristic",
    });
  });
  test("sticky: an edge conversation stays on the edge until the complexity jumps over the threshold", () => {
    assert.equal(decidePolicy(input({ intent: "qa", score: 0.5, stickyTarget: "edge" }), BRIEF).reason, "sticky:edge");
    assert.deepEqual(decidePolicy(input({ intent: "qa", score: 0.75, stickyTarget: "edge" }), BRIEF), {
      target: "cloud",
      reason: "heuristic:complexity=0.75>=0.7",
      layer: "heuristic",
    });
  });
  test("sticky never overrides a rule", () => {
    assert.equal(decidePolicy(input({ intent: "math", score: 0.1, stickyTarget: "edge" }), BRIEF).reason, "rule:2");
  });
  test("sticky: false ignores the previous target", () => {
    const notSticky = configFrom("route:\n  heuristic: { sticky: false }\n");
    assert.equal(decidePolicy(input({ score: 0.2, stickyTarget: "cloud" }), notSticky).target, "edge");
  });
  test("heuristic disabled → the default target", () => {
    const off = configFrom("route:\n  heuristic: { enable: false }\n  default_target: edge\n");
    assert.deepEqual(decidePolicy(input({ score: 0.9 }), off), { target: "edge", reason: "default:edge", layer: "default" });
  });
});

describe("dynamic thresholds", () => {
  const dyn = configFrom(`
route:
  dynamic:
    monthly_cloud_budget_usd: 500
    budget_steps:
      - { spent_above: 0.6, threshold: 0.85 }
      - { spent_above: 0.9, threshold: 0.95 }
    latency_steps:
      - { p50_above_ms: 2000, threshold: 0.8 }
`);
  test("no budget or latency → the base threshold", () => {
    assert.deepEqual(effectiveThreshold(input(), dyn), { threshold: 0.7 });
    assert.equal(decidePolicy(input({ score: 0.78 }), dyn).target, "cloud");
  });
  test("60 % of the budget spent raises the threshold to 0.85", () => {
    assert.deepEqual(decidePolicy(input({ score: 0.78, budget: { cloudSpentFraction: 0.65 } }), dyn), {
      target: "edge",
      reason: "dynamic:budget_spent>0.6;complexity=0.78<0.85",
      layer: "dynamic",
    });
  });
  test("the highest matching step applies", () => {
    assert.equal(effectiveThreshold(input({ budget: { cloudSpentFraction: 0.95 }, cloudLatencyP50Ms: 3000 }), dyn).threshold, 0.95);
    assert.equal(effectiveThreshold(input({ budget: { cloudSpentFraction: 0.7 }, cloudLatencyP50Ms: 3000 }), dyn).threshold, 0.85);
    assert.deepEqual(effectiveThreshold(input({ budget: { cloudSpentFraction: 0.1 }, cloudLatencyP50Ms: 2500 }), dyn), {
      threshold: 0.8,
      source: "latency_p50>2000ms",
    });
  });
  test("slow cloud raises the threshold; a score over it still goes to the cloud", () => {
    assert.equal(decidePolicy(input({ score: 0.75, cloudLatencyP50Ms: 2500 }), dyn).reason, "dynamic:latency_p50>2000ms;complexity=0.75<0.8");
    assert.deepEqual(decidePolicy(input({ score: 0.82, cloudLatencyP50Ms: 2500 }), dyn), {
      target: "cloud",
      reason: "dynamic:latency_p50>2000ms;complexity=0.82>=0.8",
      layer: "dynamic",
    });
  });
  test("steps are strict: exactly at spent_above does not match", () => {
    assert.equal(effectiveThreshold(input({ budget: { cloudSpentFraction: 0.6 } }), dyn).threshold, 0.7);
  });
});

describe("calibrated thresholds", () => {
  const calibrated = configFrom(`
route:
  heuristic:
    complexity_threshold: 0.05
    intent_thresholds: { qa: 0.069 }
`);
  test("an intent with its own threshold uses it, and says so", () => {
    assert.deepEqual(decidePolicy(input({ intent: "qa", score: 0.06 }), calibrated), {
      target: "edge",
      reason: "heuristic:intent=qa;complexity=0.06<0.069",
      layer: "heuristic",
    });
    assert.deepEqual(decidePolicy(input({ intent: "translate", score: 0.06 }), calibrated), {
      target: "cloud",
      reason: "heuristic:complexity=0.06>=0.05",
      layer: "heuristic",
    });
  });
  test("online calibration's threshold replaces the configured one; a dynamic step still wins", () => {
    const online = { threshold: 0.2, source: "calibrated:q=0.962" };
    assert.equal(
      decidePolicy(input({ intent: "qa", score: 0.1, calibratedThreshold: online }), calibrated).reason,
      "heuristic:calibrated:q=0.962;complexity=0.1<0.2",
    );
    const dyn = configFrom("route:\n  dynamic: { latency_steps: [{ p50_above_ms: 100, threshold: 0.9 }] }\n");
    assert.equal(
      decidePolicy(input({ score: 0.5, cloudLatencyP50Ms: 500, calibratedThreshold: online }), dyn).reason,
      "dynamic:latency_p50>100ms;complexity=0.5<0.9",
    );
  });
});
