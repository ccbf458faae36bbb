/**
 * Online calibration, simulated: edge and cloud stand-ins replay RouteLLM's recorded per-prompt
 * correctness on MMLU (../shared/data/routing/mmlu) as a stream of requests.
 *   node --import tsx bench/routing/online-sim.ts
 *
 * Each request: complexity score → edge if under the estimator's threshold; the sampler shadows
 * `fraction` of edge answers (at most 60 per minute at 10 requests/s); the judge stand-in grades
 * 0 when the cloud was right and the edge wrong, 2 when the edge was right and the cloud wrong
 * (the cloud judge's WORSE and BETTER), else 1.
 * The estimator's cloud quality is the offline calibration's (GPT-4's accuracy on the data).
 * "true quality" of a threshold is its quality over the whole data set; "settled" is the first
 * request after which that true quality stays within ±1 point of the target to the end.
 */
import { estimateComplexity } from "../../extproc/routing/complexity.ts";
import { QualityEstimator } from "../../extproc/routing/calibration/online/estimator.ts";
import { ShadowSampler } from "../../extproc/routing/calibration/online/sampler.ts";
import { loadMmlu, MMLU_DIR, rng } from "./data.ts";
import { pct, table } from "./metrics.ts";

const data = loadMmlu();
if (data === undefined) {
  console.log(`MMLU routing data not found at ${MMLU_DIR}: nothing to simulate.`);
  process.exit(0);
}
const items = data.items.map((x) => ({ ...x, score: estimateComplexity([{ role: "user", content: x.prompt }]).score }));
const cloudAccuracy = items.filter((x) => x.cloud).length / items.length;
const trueQuality = (t: number): number => {
  let kept = 0;
  for (const x of items) kept += (x.score < t ? x.edge : x.cloud) ? 1 : 0;
  return kept / (cloudAccuracy * items.length);
};

interface Run {
  start: number;
  fraction: number;
  seed: number;
  requests: number;
  settledAt: number | undefined;
  settledWide: number | undefined;
  quality: number;
  qualityAfter: number;
  finalThreshold: number;
  finalTrue: number;
  edgeShare: number;
  shadows: number;
  moves: number;
}

function simulate(start: number, fraction: number, seed: number, requests = 150_000, target = 0.95): Run {
  const r = rng(seed);
  const est = new QualityEstimator({ target, initialThreshold: start, cloudQuality: cloudAccuracy, minSamples: 100, hysteresis: 0.005, shareStep: 0.02 });
  const sampler = new ShadowSampler({ fraction, maxPerMinute: 60, random: r });
  let kept = 0;
  let keptAfter = 0;
  let nAfter = 0;
  let onEdge = 0;
  const inBand = (q: number, above: number): boolean => q >= target - 0.01 && q <= target + above;
  let settledAt: number | undefined = inBand(trueQuality(start), 0.01) ? 0 : undefined;
  let settledWide: number | undefined = inBand(trueQuality(start), 0.02) ? 0 : undefined;
  let moves = 0;
  const half = requests / 2;
  for (let k = 0; k < requests; k++) {
    const x = items[Math.floor(r() * items.length)] ?? items[0];
    if (x === undefined) break;
    est.observe(x.score);
    const t = est.threshold;
    const edge = x.score < t;
    const ok = edge ? x.edge : x.cloud;
    kept += ok ? 1 : 0;
    if (k >= half) {
      keptAfter += ok ? 1 : 0;
      nAfter++;
    }
    if (edge) {
      onEdge++;
      if (sampler.maybeShadow("tenant", k * 100)) {
        const change = est.record(x.score, x.cloud === x.edge ? 1 : x.edge ? 2 : 0);
        if (change !== undefined) {
          moves++;
          const q = trueQuality(change.to);
          if (!inBand(q, 0.01)) settledAt = undefined;
          else if (settledAt === undefined) settledAt = k + 1;
          if (!inBand(q, 0.02)) settledWide = undefined;
          else if (settledWide === undefined) settledWide = k + 1;
        }
      }
    }
  }
  const finalTrue = trueQuality(est.threshold);
  return {
    start,
    fraction,
    seed,
    requests,
    settledAt,
    settledWide,
    quality: kept / (cloudAccuracy * requests),
    qualityAfter: keptAfter / (cloudAccuracy * nAfter),
    finalThreshold: est.threshold,
    finalTrue,
    edgeShare: onEdge / requests,
    shadows: sampler.stats.sampled,
    moves,
  };
}

console.log(`# Online calibration simulated on ${items.length} MMLU prompts (RouteLLM's recorded answers), target 95 %, cloud quality ${pct(cloudAccuracy)}\n`);
console.log(`true quality of a threshold: 0.7 → ${pct(trueQuality(0.7))}, 0.069 → ${pct(trueQuality(0.069))}, 0.01 → ${pct(trueQuality(0.01))}\n`);
const rows: string[][] = [];
for (const start of [0.7, 0.069, 0.01]) {
  for (const fraction of [0.05, 0.2]) {
    for (const seed of [1, 2, 3]) {
      const o = simulate(start, fraction, seed);
      rows.push([
        String(start),
        pct(fraction, 0),
        String(seed),
        o.settledAt === undefined ? "not settled" : String(o.settledAt),
        o.settledWide === undefined ? "not settled" : String(o.settledWide),
        pct(o.quality),
        pct(o.qualityAfter),
        `${o.finalThreshold} (${pct(o.finalTrue)})`,
        pct(o.edgeShare),
        String(o.shadows),
        String(o.moves),
      ]);
    }
  }
}
table(
  [
    "start t",
    "shadow",
    "seed",
    "requests to settle ±1 pt",
    "to settle −1/+2 pt",
    "quality, all 150k",
    "quality, last 75k",
    "final t (its true quality)",
    "edge share",
    "shadow calls",
    "moves",
  ],
  rows,
);
