/**
 * Parsed `route:` YAML → `PolicyConfig`. Accepts the brief's keys (`rules`) with or without the
 * policy's own keys (absent ones take `POLICY_DEFAULTS`), so it works on the main config schema
 * before and after `routePolicyShape` is merged into it.
 */
import type { ComplexityLevel } from "../complexity.ts";
import { fail, ok, type Result } from "../../../common/result.ts";
import { POLICY_DEFAULTS, routePolicySchema, type RoutePolicyYaml } from "./schema.ts";
import type { PolicyConfig, PolicyRule, RouteTarget } from "./types.ts";

export interface RouteRuleYaml {
  when: { intent?: string | string[]; estimated_complexity?: ComplexityLevel };
  target: RouteTarget;
}

export type RouteYaml = { rules?: readonly RouteRuleYaml[] } & Partial<RoutePolicyYaml>;

export function policyConfigFrom(route: RouteYaml): PolicyConfig {
  const rules: PolicyRule[] = (route.rules ?? []).map((rule) => {
    const intent = rule.when.intent;
    return {
      ...(intent === undefined ? {} : { intents: typeof intent === "string" ? [intent] : [...intent] }),
      ...(rule.when.estimated_complexity === undefined ? {} : { complexity: rule.when.estimated_complexity }),
      target: rule.target,
    };
  });
  const edgeModels = route.heuristic?.edge_models;
  return {
    rules,
    intentMinConfidence: route.intent_min_confidence ?? POLICY_DEFAULTS.intentMinConfidence,
    heuristic: {
      enable: route.heuristic?.enable ?? true,
      complexityThreshold: route.heuristic?.complexity_threshold ?? POLICY_DEFAULTS.complexityThreshold,
      ...(route.heuristic?.intent_thresholds === undefined ? {} : { intentThresholds: { ...route.heuristic.intent_thresholds } }),
      ...(edgeModels === undefined ? {} : { edgeModels: new Set(edgeModels) }),
      sticky: route.heuristic?.sticky ?? POLICY_DEFAULTS.sticky,
    },
    dynamic: {
      ...(route.dynamic?.monthly_cloud_budget_usd === undefined ? {} : { monthlyCloudBudgetUsd: route.dynamic.monthly_cloud_budget_usd }),
      budgetSteps: (route.dynamic?.budget_steps ?? []).map((s) => ({ spentAbove: s.spent_above, threshold: s.threshold })),
      latencySteps: (route.dynamic?.latency_steps ?? []).map((s) => ({ p50AboveMs: s.p50_above_ms, threshold: s.threshold })),
    },
    allowClientRoute: route.allow_client_route ?? POLICY_DEFAULTS.allowClientRoute,
    allowClientIntent: route.allow_client_intent ?? POLICY_DEFAULTS.allowClientIntent,
    edgeTools: route.edge_tools ?? POLICY_DEFAULTS.edgeTools,
    defaultTarget: route.default_target ?? POLICY_DEFAULTS.defaultTarget,
    plugins: (route.plugins ?? []).map((p) => ({ name: p.name, module: p.module, timeoutMs: p.timeout_ms })),
  };
}

/**
 * Validates the policy's own keys of a raw `route:` object (other keys — `rules`, `fallback` —
 * are the main schema's) and builds the config. Errors name the field: `route.heuristic.complexity_threshold: …`.
 */
export function parsePolicyConfig(route: unknown, rules: readonly RouteRuleYaml[] = []): Result<PolicyConfig> {
  const own: Record<string, unknown> = {};
  if (typeof route === "object" && route !== null) {
    for (const [key, value] of Object.entries(route)) if (key in routePolicySchema.shape) own[key] = value;
  }
  const parsed = routePolicySchema.safeParse(own);
  if (!parsed.success) return fail(...parsed.error.issues.map((i) => `route.${i.path.join(".")}: ${i.message}`));
  return ok(policyConfigFrom({ ...parsed.data, rules }));
}
