/**
 * Does the shipped default keep its promise (issue 24 item 3: at most 5 % quality lost before the
 * cascade) on every dev benchmark in ../shared/data/routing?
 *   node --import tsx bench/routing/defaults-check.ts
 *
 * MMLU (RouteLLM's recorded correctness: Mixtral = edge, GPT-4 = cloud): quality relative to
 * all-cloud at the default threshold, over the whole benchmark and per subject, and the largest
 * threshold at which every subject keeps 95 %. vicuna-bench has prompts and no correctness: only
 * the edge share the default sends there can be measured.
 */
import { estimateComplexity } from "../../extproc/routing/complexity.ts";
import { POLICY_DEFAULTS } from "../../extproc/routing/policy/schema.ts";
import { loadMmlu, loadVicuna, MMLU_DIR } from "./data.ts";
import { pct, table } from "./metrics.ts";

const data = loadMmlu();
if (data === undefined) {
  console.log(`MMLU routing data not found at ${MMLU_DIR}: nothing to check.`);
  process.exit(0);
}
const t = POLICY_DEFAULTS.complexityThreshold;
const items = data.items.map((x) => ({ ...x, score: estimateComplexity([{ role: "user", content: x.prompt }]).score }));
type Item = (typeof items)[number];
const quality = (xs: readonly Item[], th: number): number =>
  xs.filter((x) => (x.score < th ? x.edge : x.cloud)).length / Math.max(1, xs.filter((x) => x.cloud).length);
const share = (xs: readonly Item[], th: number): number => xs.filter((x) => x.score < th).length / Math.max(1, xs.length);
const bySubject = data.subjects.map((s) => ({ subject: s, xs: items.filter((x) => x.subject === s) }));

console.log(`# The shipped default complexity_threshold ${t} on the dev benchmarks of ../shared/data/routing\n`);
const vicuna = loadVicuna().map((p) => estimateComplexity([{ role: "user", content: p }]).score);
const under = bySubject.filter(({ xs }) => quality(xs, t) < 0.95);
table(
  ["benchmark", "prompts", "edge share", "quality relative to all-cloud", "loss ≤ 5 %"],
  [
    ["MMLU (29 subjects)", String(items.length), pct(share(items, t)), pct(quality(items, t)), quality(items, t) >= 0.95 ? "yes" : "NO"],
    ["vicuna-bench", String(vicuna.length), pct(vicuna.filter((s) => s < t).length / Math.max(1, vicuna.length)), "not measurable (no correctness)", "—"],
  ],
);
console.log(`\nMMLU subjects under 95 % at ${t}: ${under.length} of ${bySubject.length}\n`);
table(
  ["subject", "prompts", "edge share", "quality"],
  bySubject
    .map(({ subject, xs }) => ({ subject, n: xs.length, e: share(xs, t), q: quality(xs, t) }))
    .sort((a, b) => a.q - b.q)
    .map((r) => [r.subject, String(r.n), pct(r.e), pct(r.q)]),
);
const worstAt = (th: number) => bySubject.reduce((w, { subject, xs }) => (quality(xs, th) < w.q ? { subject, q: quality(xs, th) } : w), { subject: "", q: 2 });
console.log("\nthe worst subject by threshold:\n");
table(
  ["threshold", "MMLU edge share", "MMLU quality", "worst subject", "its quality"],
  [0.005, 0.01, 0.02, 0.05, t, 0.1].map((th) => {
    const w = worstAt(th);
    return [String(th), pct(share(items, th)), pct(quality(items, th)), w.subject, pct(w.q)];
  }),
);
