/**
 * Zod schema of the `route:` keys the policy engine adds to the brief's `rules` and `fallback`.
 * `routePolicyShape` is meant to be merged into the main route schema
 * (`routeSchema.extend(routePolicyShape)`); `routePolicySchema` validates these keys alone.
 * Every key is optional; the defaults are in `POLICY_DEFAULTS`.
 */
import { z } from "zod";

export const POLICY_DEFAULTS = Object.freeze({
  /** Fitted by `gearbox calibrate` on ../shared/data/routing/mmlu (all 29 subjects, target 0.95, 95 % bound): see the README. */
  complexityThreshold: 0.069,
  sticky: true,
  allowClientRoute: true,
  allowClientIntent: false,
  edgeTools: false,
  intentMinConfidence: 0.5,
  defaultTarget: "cloud",
  pluginTimeoutMs: 5,
} as const);

const fraction = z.number().min(0).max(1);
const target = z.enum(["edge", "cloud"]);

export const routePolicyShape = {
  /** Honour `x-gearbox-route: edge|cloud` from clients. */
  allow_client_route: z.boolean().default(POLICY_DEFAULTS.allowClientRoute),
  /** Honour a client's intent hint in place of the classifier's intent. */
  allow_client_intent: z.boolean().default(POLICY_DEFAULTS.allowClientIntent),
  /** Requests offering tools may go to the edge. */
  edge_tools: z.boolean().default(POLICY_DEFAULTS.edgeTools),
  /** The classifier's intent is used by the rules only at or above this confidence. */
  intent_min_confidence: fraction.default(POLICY_DEFAULTS.intentMinConfidence),
  /** Where a request goes when no layer decides. */
  default_target: target.default(POLICY_DEFAULTS.defaultTarget),
  heuristic: z
    .strictObject({
      enable: z.boolean().default(true),
      /** The cloud threshold: complexity scores under it go to the edge. */
      complexity_threshold: fraction.default(POLICY_DEFAULTS.complexityThreshold),
      /** Per-intent cloud thresholds (as `gearbox calibrate` fits them); an intent not listed uses `complexity_threshold`. */
      intent_thresholds: z.record(z.string().min(1), fraction).optional(),
      /** Client-facing models the heuristic may send to the edge; absent → any. */
      edge_models: z.array(z.string().min(1)).min(1).optional(),
      sticky: z.boolean().default(POLICY_DEFAULTS.sticky),
    })
    .prefault({}),
  dynamic: z
    .strictObject({
      /** The cloud budget of a calendar month (UTC), in USD; `budget_steps` read the share spent. */
      monthly_cloud_budget_usd: z.number().positive().optional(),
      budget_steps: z.array(z.strictObject({ spent_above: fraction, threshold: fraction })).default([]),
      latency_steps: z.array(z.strictObject({ p50_above_ms: z.number().min(0), threshold: fraction })).default([]),
    })
    .prefault({})
    .superRefine((dynamic, ctx) => {
      if (dynamic.budget_steps.length > 0 && dynamic.monthly_cloud_budget_usd === undefined) {
        ctx.addIssue({
          code: "custom",
          path: ["monthly_cloud_budget_usd"],
          message: "budget_steps need monthly_cloud_budget_usd: the share spent is measured against it",
        });
      }
    }),
  /** Quality to keep relative to all-cloud answers (0–1): what `gearbox calibrate` fitted for and online calibration holds. */
  target_quality: fraction.optional(),
  calibration: z
    .strictObject({
      /** The cloud's own accuracy on the calibration data: the yardstick of "relative to cloud" online. */
      cloud_quality: fraction.optional(),
      /** What the fit saw (rows, edge share, quality, bound): written by `gearbox calibrate`, read by people. */
      evidence: z.record(z.string(), z.union([z.number(), z.string()])).optional(),
      online: z
        .strictObject({
          enable: z.boolean().default(false),
          /** Share of edge-routed requests also answered by the cloud in the background. */
          shadow_fraction: fraction.default(0.02),
          /** At most this many shadow calls per tenant per minute. */
          max_per_minute: z.number().int().min(0).default(30),
          judge: z.enum(["exact", "embedding", "cloud"]).default("exact"),
          /** Judged samples before the threshold may move. */
          min_samples: z.number().int().min(1).default(200),
          /** Half-width of the dead band around the target, in quality points (0–1). */
          hysteresis: fraction.default(0.01),
        })
        .prefault({}),
    })
    .optional(),
  plugins: z
    .array(
      z.strictObject({
        name: z.string().regex(/^[a-z0-9][a-z0-9_.-]{0,62}$/, "must be lower-case letters, digits, '.', '-' or '_'"),
        module: z.string().min(1),
        timeout_ms: z.number().positive().max(1000).default(POLICY_DEFAULTS.pluginTimeoutMs),
      }),
    )
    .default([])
    .superRefine((plugins, ctx) => {
      const seen = new Set<string>();
      plugins.forEach((p, i) => {
        if (seen.has(p.name)) ctx.addIssue({ code: "custom", path: [i, "name"], message: `duplicate plugin name '${p.name}'` });
        seen.add(p.name);
      });
    }),
};

export const routePolicySchema = z.strictObject(routePolicyShape);

export type RoutePolicyYaml = z.infer<typeof routePolicySchema>;
