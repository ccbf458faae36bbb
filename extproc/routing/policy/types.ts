/**
 * The routing policy's vocabulary: what a decision is made from (`PolicyInput`), how it is
 * configured (`PolicyConfig`, the typed form of the `route:` YAML section) and what it says
 * (`PolicyDecision`). The decision itself is `decidePolicy` in `decide.ts`, a pure function;
 * plugins (`plugins.ts`) may override it within a time budget.
 *
 * The intent is a plain string here: the classifier's `Intent` union is one producer of it, a
 * client's intent hint another, and rules may name intents the classifier does not know yet.
 */
import type { ComplexityLevel } from "../complexity.ts";

export type RouteTarget = "edge" | "cloud";
export type ClientRoute = "auto" | "edge" | "cloud";
/** Which layer made the decision, in evaluation order. */
export type PolicyLayer = "client" | "rules" | "heuristic" | "dynamic" | "plugin" | "default";

export interface PolicyInput {
  intent: string;
  /** 0–1; below `intentMinConfidence` the intent is treated as `unknown` by the rules. */
  intentConfidence: number;
  complexity: { score: number; level: ComplexityLevel };
  /** The request offers tools (function calling). */
  hasTools: boolean;
  /** `x-gearbox-route`. */
  clientRoute: ClientRoute;
  /** An intent the client declared (header or metadata), used when `allowClientIntent`. */
  clientIntentHint?: string;
  model: string;
  /** An edge agent serves a model for this request. */
  edgeAvailable: boolean;
  /** The conversation's previous target. */
  stickyTarget?: RouteTarget;
  budget?: { /** 0–1 of the period's cloud budget used. */ cloudSpentFraction: number };
  cloudLatencyP50Ms?: number;
  /** For plugins (per-tenant policies); the built-in layers do not read it. */
  tenant?: string;
  /**
   * The threshold online calibration holds for this tenant and intent (`ThresholdHolder.current`):
   * replaces the configured base when present; `source` goes into the reason (`calibrated:…`).
   */
  calibratedThreshold?: { threshold: number; source: string };
}

export interface PolicyDecision {
  target: RouteTarget;
  /** Machine-readable, for `x-gearbox-reason`: `rule:1`, `heuristic:complexity=0.42<0.7`, `tools_to_cloud`… */
  reason: string;
  layer: PolicyLayer;
}

export interface PolicyRule {
  /** Intents that match; absent → any intent. */
  intents?: readonly string[];
  /** Complexity level that matches; absent → any level. */
  complexity?: ComplexityLevel;
  target: RouteTarget;
}

/** A threshold step: when its condition holds, the cloud threshold becomes `threshold`. */
export interface BudgetStep {
  spentAbove: number;
  threshold: number;
}

export interface LatencyStep {
  p50AboveMs: number;
  threshold: number;
}

export interface PluginSpec {
  name: string;
  /** Path of an ES module (absolute, or relative to the config file's folder). */
  module: string;
  timeoutMs: number;
}

export interface PolicyConfig {
  /** First match wins. */
  rules: readonly PolicyRule[];
  intentMinConfidence: number;
  heuristic: {
    enable: boolean;
    /** Cloud threshold: complexity scores under it go to the edge. */
    complexityThreshold: number;
    /** Per-intent cloud thresholds; absent intents use `complexityThreshold`. */
    intentThresholds?: Readonly<Record<string, number>>;
    /** Client-facing models the heuristic may send to the edge; absent → any model. */
    edgeModels?: ReadonlySet<string>;
    /** Keep a conversation on its previous target unless complexity reaches the threshold. */
    sticky: boolean;
  };
  dynamic: { monthlyCloudBudgetUsd?: number; budgetSteps: readonly BudgetStep[]; latencySteps: readonly LatencyStep[] };
  /** Honour `x-gearbox-route: edge|cloud`. */
  allowClientRoute: boolean;
  /** Honour a client's intent hint in place of the classifier's intent. */
  allowClientIntent: boolean;
  /** Let requests with tools go to the edge (small models call tools poorly; off by default). */
  edgeTools: boolean;
  /** Where a request goes when no layer decides. */
  defaultTarget: RouteTarget;
  plugins: readonly PluginSpec[];
}
