/**
 * Which routing score ranks prompts best on subjects it never saw? Prompt length alone, the
 * complexity score (`extproc/routing/complexity.ts`) and a learned logistic scorer over the
 * complexity features and the intent (no words: hashed words did not transfer across subjects,
 * see README "Logistic model"), cross-validated by subject (never by row):
 *   node --import tsx bench/routing/scorer-cv.ts
 *
 * Splits: the 29 MMLU subjects shuffled (seeds 1–5) and cut into 5 folds of whole subjects; each
 * fold is scored by a model trained on the other four. MMLU is the only labelled dataset in
 * ../shared/data (vicuna-bench has no correctness), so "by dataset" cannot be run here.
 * Metrics on the held-out folds: APGR (0.5 = random) and the edge share at 95 % of all-cloud
 * quality with the threshold picked on the fold itself (a ranking measure; the calibrated,
 * honest figures are in calibrate-cv.ts).
 */
import { estimateComplexity } from "../../extproc/routing/complexity.ts";
import { classifyIntent } from "../../extproc/routing/intent/classify.ts";
import { scorerFeatures, trainScorer } from "../../extproc/routing/calibration/scorer.ts";
import { loadMmlu, MMLU_DIR, rng, type MmluItem } from "./data.ts";
import { apgr, best95, pct, scoreCurve, table } from "./metrics.ts";

const data = loadMmlu();
if (data === undefined) {
  console.log(`MMLU routing data not found at ${MMLU_DIR}: nothing to evaluate.`);
  process.exit(0);
}
const items = data.items;
const estimates = items.map((x) => {
  const messages = [{ role: "user" as const, content: x.prompt }];
  return { c: estimateComplexity(messages), intent: classifyIntent(messages).intent };
});
const feats = estimates.map((e) => scorerFeatures(e.c, e.intent));
const lengthScore = estimates.map((e) => e.c.features.approxTokens);
const complexityScore = estimates.map((e) => e.c.score);
const label = items.map((x) => (x.cloud && !x.edge ? 1 : 0));

export interface FoldResult {
  seed: number;
  fold: number;
  n: number;
  apgr: Record<string, number>;
  at95: Record<string, number>;
}

const routers = ["length", "complexity", "learned"] as const;
const results: FoldResult[] = [];
for (const seed of [1, 2, 3, 4, 5]) {
  const r = rng(seed);
  const subjects = [...data.subjects].map((s) => ({ s, k: r() })).sort((a, b) => a.k - b.k);
  const foldOf = new Map(subjects.map((x, i) => [x.s, i % 5]));
  for (let fold = 0; fold < 5; fold++) {
    const train: number[] = [];
    const test: number[] = [];
    items.forEach((x, i) => (foldOf.get(x.subject) === fold ? test : train).push(i));
    const model = trainScorer(
      train.map((i) => feats[i] ?? []),
      train.map((i) => label[i] ?? 0),
    );
    const set: MmluItem[] = test.map((i) => items[i] as MmluItem);
    const scores: Record<(typeof routers)[number], number[]> = {
      length: test.map((i) => lengthScore[i] ?? 0),
      complexity: test.map((i) => complexityScore[i] ?? 0),
      learned: test.map((i) => model.score(feats[i] ?? [])),
    };
    const res: FoldResult = { seed, fold, n: set.length, apgr: {}, at95: {} };
    for (const name of routers) {
      const curve = scoreCurve(set, scores[name]);
      res.apgr[name] = apgr(set, curve);
      res.at95[name] = best95(curve).edgeShare;
    }
    results.push(res);
  }
}

console.log(`# Routing scores cross-validated by subject: ${items.length} MMLU prompts, ${data.subjects.length} subjects, 5 seeds × 5 folds\n`);
const mean = (f: (r: FoldResult) => number): number => results.reduce((a, r) => a + f(r), 0) / results.length;
const wins = (a: string, b: string): number => results.filter((r) => (r.apgr[a] ?? 0) > (r.apgr[b] ?? 0)).length;
table(
  ["score", "mean APGR (held-out folds)", "min APGR", "mean edge share @95 (fold's own threshold)", "folds beating length (APGR)"],
  routers.map((name) => [
    name,
    mean((r) => r.apgr[name] ?? 0).toFixed(3),
    Math.min(...results.map((r) => r.apgr[name] ?? 0)).toFixed(3),
    pct(mean((r) => r.at95[name] ?? 0)),
    name === "length" ? "—" : `${wins(name, "length")} / ${results.length}`,
  ]),
);
console.log("\nper seed (mean over its 5 folds):\n");
table(
  ["seed", ...routers.map((n) => `APGR ${n}`)],
  [1, 2, 3, 4, 5].map((seed) => {
    const rs = results.filter((r) => r.seed === seed);
    return [String(seed), ...routers.map((n) => (rs.reduce((a, r) => a + (r.apgr[n] ?? 0), 0) / rs.length).toFixed(3))];
  }),
);
