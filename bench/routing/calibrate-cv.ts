/**
 * Does a calibrated threshold keep its promise on subjects calibration never saw?
 *   node --import tsx bench/routing/calibrate-cv.ts
 *
 * The 29 MMLU subjects (../shared/data/routing/mmlu, RouteLLM's recorded correctness of
 * Mixtral = edge and GPT-4 = cloud) are shuffled (seeds 1–5) into 5 folds of whole subjects.
 * `fitThreshold` (extproc/routing/calibration/fit.ts, what `gearbox calibrate` runs) fits the
 * complexity threshold on four folds, grouped by subject; the fifth is routed with it and its
 * quality measured from the recorded answers. "held-out" figures pool the five held-out folds of
 * a seed (every prompt routed by a threshold that never saw its subject), then average the seeds.
 */
import { estimateComplexity } from "../../extproc/routing/complexity.ts";
import { fitThreshold, type LabelledPoint } from "../../extproc/routing/calibration/fit.ts";
import { loadMmlu, MMLU_DIR, rng } from "./data.ts";
import { pct, table } from "./metrics.ts";

const data = loadMmlu();
if (data === undefined) {
  console.log(`MMLU routing data not found at ${MMLU_DIR}: nothing to evaluate.`);
  process.exit(0);
}
const points: LabelledPoint[] = data.items.map((x) => ({
  score: estimateComplexity([{ role: "user", content: x.prompt }]).score,
  edge: x.edge ? 1 : 0,
  cloud: x.cloud ? 1 : 0,
  group: x.subject,
}));
const SEEDS = [1, 2, 3, 4, 5];

interface Outcome {
  share: number;
  quality: number;
  worstFold: number;
  foldsUnder: number;
  thresholds: number[];
}

function crossValidate(target: number, confidence: number): Outcome {
  const shares: number[] = [];
  const qualities: number[] = [];
  const folds: number[] = [];
  const thresholds: number[] = [];
  for (const seed of SEEDS) {
    const r = rng(seed);
    const subjects = [...data!.subjects].map((s) => ({ s, k: r() })).sort((a, b) => a.k - b.k);
    const foldOf = new Map(subjects.map((x, i) => [x.s, i % 5]));
    let kept = 0;
    let cloud = 0;
    let onEdge = 0;
    for (let fold = 0; fold < 5; fold++) {
      const train = points.filter((p) => foldOf.get(p.group) !== fold);
      const test = points.filter((p) => foldOf.get(p.group) === fold);
      const { threshold } = fitThreshold(train, { targetQuality: target, confidence });
      thresholds.push(threshold);
      let k = 0;
      let c = 0;
      for (const p of test) {
        const edge = p.score < threshold;
        k += edge ? p.edge : p.cloud;
        c += p.cloud;
        if (edge) onEdge++;
      }
      folds.push(k / c);
      kept += k;
      cloud += c;
    }
    shares.push(onEdge / points.length);
    qualities.push(kept / cloud);
  }
  const mean = (xs: number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;
  return {
    share: mean(shares),
    quality: mean(qualities),
    worstFold: Math.min(...folds),
    foldsUnder: folds.filter((q) => q < target - 1e-9).length,
    thresholds,
  };
}

console.log(`# Calibrated threshold on held-out MMLU subjects: ${points.length} prompts, ${data.subjects.length} subjects, 5 seeds × 5 subject folds\n`);
const rows: string[][] = [];
for (const target of [0.9, 0.92, 0.94, 0.95, 0.96, 0.97, 0.98, 0.99]) {
  for (const [label, confidence] of [
    ["point estimate", 0.5],
    ["bound 95 %", 0.95],
  ] as const) {
    const o = crossValidate(target, confidence);
    const ts = [...o.thresholds].sort((a, b) => a - b);
    rows.push([
      pct(target, 0),
      label,
      pct(o.share),
      pct(o.quality),
      pct(o.worstFold),
      `${o.foldsUnder} / ${o.thresholds.length}`,
      `${ts[0]?.toFixed(3)}–${ts[ts.length - 1]?.toFixed(3)}`,
    ]);
  }
}
table(["target", "fit on", "held-out edge share", "held-out quality", "worst fold", "folds under target", "thresholds fitted"], rows);

const all = fitThreshold(points, { targetQuality: 0.95, confidence: 0.95 });
console.log(
  `\nall ${data.subjects.length} subjects, target 95 %, bound 95 %: threshold ${all.threshold}, edge share ${pct(all.edgeShare)}, ` +
    `quality ${pct(all.quality)} (lower bound ${pct(all.qualityLower)}), cloud accuracy ${pct(all.cloudAccuracy)}`,
);
