/**
 * The routing policy: edge or cloud for one request, and why. Pure and synchronous: every input
 * (intent, complexity, budget, latency, edge availability) is gathered before the call.
 *
 * Layers, first decisive one wins:
 * 1. client   — `x-gearbox-route: edge|cloud` when `allowClientRoute`;
 * 2. rules    — requests with tools go to the cloud unless `edgeTools`; then the configured rules,
 *               first match wins (`when.intent` one of the listed intents, `when.estimated_complexity`
 *               the level; both must match when both are given);
 * 3. heuristic / dynamic — edge when the complexity score is under the cloud threshold and the
 *               model is allowed on the edge; the dynamic layer raises (or lowers) that threshold
 *               by budget spent and cloud latency, the highest matching step applying; a sticky
 *               conversation keeps its previous target unless the score reaches the threshold;
 * 4. default  — `defaultTarget`.
 * Whatever the layer, an edge decision with no edge agent available becomes cloud, with reason
 * `edge_unavailable;<the original reason>` — except a client's explicit `edge`, which is a data
 * boundary: it stays `edge` and the caller refuses the request (503) rather than send it out.
 */
import type { PolicyConfig, PolicyDecision, PolicyInput, RouteTarget } from "./types.ts";

/** Scores in reasons are truncated (not rounded) to 3 decimals, so `0.6999` never reads `0.7<0.7`. */
function fmt(x: number): string {
  return String(Math.floor(x * 1000) / 1000);
}

export interface EffectiveThreshold {
  threshold: number;
  /** The dynamic step that set it, e.g. `budget_spent>0.6`; absent when the base applies. */
  source?: string;
}

/** The cloud threshold after the dynamic steps: the highest matching step, else the base. */
export function effectiveThreshold(input: PolicyInput, config: PolicyConfig): EffectiveThreshold {
  let best: EffectiveThreshold | undefined;
  const spent = input.budget?.cloudSpentFraction;
  if (spent !== undefined) {
    for (const step of config.dynamic.budgetSteps) {
      if (spent > step.spentAbove && (best === undefined || step.threshold > best.threshold)) {
        best = { threshold: step.threshold, source: `budget_spent>${step.spentAbove}` };
      }
    }
  }
  const p50 = input.cloudLatencyP50Ms;
  if (p50 !== undefined) {
    for (const step of config.dynamic.latencySteps) {
      if (p50 > step.p50AboveMs && (best === undefined || step.threshold > best.threshold)) {
        best = { threshold: step.threshold, source: `latency_p50>${step.p50AboveMs}ms` };
      }
    }
  }
  if (best !== undefined) return best;
  if (input.calibratedThreshold !== undefined) return { threshold: input.calibratedThreshold.threshold, source: input.calibratedThreshold.source };
  const own = config.heuristic.intentThresholds?.[input.intent];
  return own === undefined ? { threshold: config.heuristic.complexityThreshold } : { threshold: own, source: `intent=${input.intent}` };
}

function matchRules(input: PolicyInput, config: PolicyConfig): PolicyDecision | undefined {
  const useHint = config.allowClientIntent && input.clientIntentHint !== undefined && input.clientIntentHint !== "";
  const intent = useHint ? (input.clientIntentHint ?? "unknown") : input.intentConfidence >= config.intentMinConfidence ? input.intent : "unknown";
  for (let i = 0; i < config.rules.length; i++) {
    const rule = config.rules[i];
    if (rule === undefined) continue;
    if (rule.intents !== undefined && !rule.intents.includes(intent)) continue;
    if (rule.complexity !== undefined && rule.complexity !== input.complexity.level) continue;
    return { target: rule.target, reason: useHint ? `rule:${i + 1};client_intent` : `rule:${i + 1}`, layer: "rules" };
  }
  return undefined;
}

function heuristic(input: PolicyInput, config: PolicyConfig): PolicyDecision | undefined {
  if (!config.heuristic.enable) return undefined;
  const { threshold, source } = effectiveThreshold(input, config);
  const dynamicStep = source !== undefined && (source.startsWith("budget_spent") || source.startsWith("latency_p50"));
  const layer = dynamicStep ? "dynamic" : "heuristic";
  const prefix = source === undefined ? "heuristic:" : dynamicStep ? `dynamic:${source};` : `heuristic:${source};`;
  const score = input.complexity.score;
  if (score >= threshold) return { target: "cloud", reason: `${prefix}complexity=${fmt(score)}>=${threshold}`, layer };
  if (config.heuristic.sticky && input.stickyTarget !== undefined) {
    // Under the threshold: a conversation stays where it was (its context lives there).
    if (input.stickyTarget === "cloud" || config.heuristic.edgeModels === undefined || config.heuristic.edgeModels.has(input.model)) {
      return { target: input.stickyTarget, reason: `sticky:${input.stickyTarget}`, layer };
    }
  }
  if (config.heuristic.edgeModels !== undefined && !config.heuristic.edgeModels.has(input.model)) return undefined;
  return { target: "edge", reason: `${prefix}complexity=${fmt(score)}<${threshold}`, layer };
}

function builtIn(input: PolicyInput, config: PolicyConfig): PolicyDecision {
  const clientIgnored = input.clientRoute !== "auto" && !config.allowClientRoute;
  if (input.clientRoute !== "auto" && config.allowClientRoute) {
    return { target: input.clientRoute, reason: `client_hint:${input.clientRoute}`, layer: "client" };
  }
  const decided: PolicyDecision = (input.hasTools && !config.edgeTools ? { target: "cloud", reason: "tools_to_cloud", layer: "rules" } : undefined) ??
    matchRules(input, config) ??
    heuristic(input, config) ?? {
      target: config.defaultTarget,
      reason: config.heuristic.enable ? `default:${config.defaultTarget};model_not_in_edge_models` : `default:${config.defaultTarget}`,
      layer: "default",
    };
  return clientIgnored ? { ...decided, reason: `${decided.reason};client_route_ignored` } : decided;
}

/** Edge chosen but no edge agent serves the request → cloud, saying so. Client-forced edge stays. */
export function guardEdgeAvailability(decision: PolicyDecision, input: PolicyInput): PolicyDecision {
  if (decision.target !== "edge" || input.edgeAvailable || decision.layer === "client") return decision;
  const target: RouteTarget = "cloud";
  return { target, reason: `edge_unavailable;${decision.reason}`, layer: decision.layer };
}

export function decidePolicy(input: PolicyInput, config: PolicyConfig): PolicyDecision {
  return guardEdgeAvailability(builtIn(input, config), input);
}
