export * from "./types.ts";
export { decidePolicy, effectiveThreshold, guardEdgeAvailability, type EffectiveThreshold } from "./decide.ts";
export { POLICY_DEFAULTS, routePolicySchema, routePolicyShape, type RoutePolicyYaml } from "./schema.ts";
export { parsePolicyConfig, policyConfigFrom, type RouteRuleYaml, type RouteYaml } from "./config.ts";
export * from "./plugins.ts";
