/**
 * Offline calibration: labelled rows → the `route:` policy that keeps a quality target (or an
 * edge share), with its evidence. The score is the one the policy routes on
 * (`estimateComplexity(...).score`); the intent is the row's, else the classifier's. An intent
 * with enough rows and groups gets its own threshold fitted at the same target; the base
 * threshold is fitted on the other rows, so every part keeps the target and so does the whole.
 */
import { estimateComplexity } from "../complexity.ts";
import { classifyIntent } from "../intent/classify.ts";
import { fitThreshold, thresholdForShare, type FitResult, type LabelledPoint } from "./fit.ts";
import type { LabelledRow } from "./labelled.ts";

export type CalibrationTarget = { quality: number } | { edgeShare: number };

export interface CalibrateOptions {
  target: CalibrationTarget;
  /** One-sided confidence of the bound (default 0.95). */
  confidence?: number;
  /** Fit per intent where an intent has at least this many rows (default 400; 0 = off)… */
  minIntentRows?: number;
  /** …from at least this many groups (default 3). */
  minIntentGroups?: number;
}

export interface Calibration {
  target: CalibrationTarget;
  confidence: number;
  base: FitResult;
  intents: Record<string, FitResult>;
  /** The whole set routed by the fitted policy. */
  overall: { rows: number; edgeShare: number; quality: number; cloudAccuracy: number; qualityLowerBound: number };
}

function fit(points: readonly LabelledPoint[], opts: CalibrateOptions, confidence: number): FitResult {
  return "quality" in opts.target
    ? fitThreshold(points, { targetQuality: opts.target.quality, confidence })
    : thresholdForShare(points, opts.target.edgeShare, { confidence });
}

export function calibrate(rows: readonly LabelledRow[], opts: CalibrateOptions): Calibration {
  const confidence = opts.confidence ?? 0.95;
  const minRows = opts.minIntentRows ?? 400;
  const minGroups = opts.minIntentGroups ?? 3;
  const points = rows.map((r) => {
    const messages = [{ role: "user" as const, content: r.prompt }];
    const intent = r.intent ?? classifyIntent(messages).intent;
    return { intent, p: { score: estimateComplexity(messages).score, edge: r.edge, cloud: r.cloud, group: r.group } };
  });
  const byIntent = new Map<string, LabelledPoint[]>();
  for (const { intent, p } of points) byIntent.set(intent, [...(byIntent.get(intent) ?? []), p]);
  const intents: Record<string, FitResult> = {};
  const rest: LabelledPoint[] = [];
  for (const [intent, ps] of [...byIntent].sort(([a], [b]) => a.localeCompare(b))) {
    const own = minRows > 0 && ps.length >= minRows && ps.length < points.length && new Set(ps.map((p) => p.group)).size >= minGroups;
    if (own) intents[intent] = fit(ps, opts, confidence);
    else rest.push(...ps);
  }
  const base = fit(rest.length > 0 ? rest : points.map((x) => x.p), opts, confidence);
  let kept = 0;
  let cloud = 0;
  let onEdge = 0;
  for (const { intent, p } of points) {
    const edge = p.score < (intents[intent]?.threshold ?? base.threshold);
    kept += edge ? p.edge : p.cloud;
    cloud += p.cloud;
    if (edge) onEdge++;
  }
  return {
    target: opts.target,
    confidence,
    base,
    intents,
    overall: {
      rows: points.length,
      edgeShare: points.length === 0 ? 0 : onEdge / points.length,
      quality: cloud === 0 ? 1 : kept / cloud,
      cloudAccuracy: points.length === 0 ? 0 : cloud / points.length,
      // Each part keeps its own bound, so the whole keeps the weakest of them.
      qualityLowerBound: Math.min(base.qualityLower, ...Object.values(intents).map((f) => f.qualityLower)),
    },
  };
}

const pct = (x: number): string => `${(x * 100).toFixed(1)} %`;
const num = (x: number): string => String(Math.round(x * 1000) / 1000);

function evidence(f: FitResult): string {
  return `${f.n} rows in ${f.groups} groups: edge share ${pct(f.edgeShare)}, quality ${pct(f.quality)} (lower bound ${pct(f.qualityLower)}), cloud accuracy ${pct(f.cloudAccuracy)}, edge ${pct(f.edgeAccuracy)}`;
}

/** The `route:` YAML fragment: thresholds as fields, the evidence as comments and `calibration.evidence`. */
export function policyYaml(c: Calibration, source: string): string {
  const target = "quality" in c.target ? `target quality ${c.target.quality} relative to all-cloud` : `target edge share ${c.target.edgeShare}`;
  const lines = [
    `# gearbox calibrate ${source}`,
    `# ${target}, one-sided ${pct(c.confidence)} bound, standard error clustered by group (the larger of row-wise and clustered)`,
    `# base threshold: ${evidence(c.base)}`,
    ...Object.entries(c.intents).map(([intent, f]) => `# intent ${intent}: ${evidence(f)}`),
    `# whole set under this policy: edge share ${pct(c.overall.edgeShare)}, quality ${pct(c.overall.quality)}`,
    "route:",
    ...("quality" in c.target ? [`  target_quality: ${c.target.quality}`] : []),
    "  heuristic:",
    `    complexity_threshold: ${num(c.base.threshold)}`,
  ];
  const intents = Object.entries(c.intents);
  if (intents.length > 0) {
    lines.push("    intent_thresholds:");
    for (const [intent, f] of intents) lines.push(`      ${intent}: ${num(f.threshold)}`);
  }
  lines.push(
    "  calibration:",
    `    cloud_quality: ${num(c.overall.cloudAccuracy)}   # the cloud's own accuracy on this data: online calibration's yardstick`,
    "    evidence:",
    `      rows: ${c.overall.rows}`,
    `      edge_share: ${num(c.overall.edgeShare)}`,
    `      quality: ${num(c.overall.quality)}`,
    `      quality_lower_bound: ${num(c.overall.qualityLowerBound)}`,
    `      confidence: ${c.confidence}`,
  );
  return `${lines.join("\n")}\n`;
}
