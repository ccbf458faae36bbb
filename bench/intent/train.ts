/**
 * Trains the intent model and writes extproc/routing/intent/weights.json, deterministically:
 *   node --import tsx bench/intent/train.ts [--seed 7] [--epochs 12] [--dry-run]
 * Then evaluates on the held-out split and on vicuna-bench (never trained on) and prints
 * Markdown for bench/intent/README.md.
 */
import { writeFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { BUCKET_BITS, MAX_FEATURES, textFeatures } from "../../extproc/routing/intent/features.ts";
import { INTENTS, type Intent } from "../../extproc/routing/intent/intents.ts";
import { type IntentModel, encodeWeights, loadModel } from "../../extproc/routing/intent/linear.ts";
import { createClassifier } from "../../extproc/routing/intent/pipeline.ts";
import { matchKeywords } from "../../extproc/routing/intent/keywords.ts";
import { type Example, buildDataset, rng, shuffle } from "./dataset.ts";
import { type Scored, accuracy, perIntentTable, topConfusions } from "./metrics.ts";

const { values: args } = parseArgs({
  options: { seed: { type: "string", default: "7" }, epochs: { type: "string", default: "12" }, "dry-run": { type: "boolean", default: false } },
});
const seed = Number(args.seed);
const epochs = Number(args.epochs);
const OUT = new URL("../../extproc/routing/intent/weights.json", import.meta.url).pathname;

interface Encoded {
  buckets: Int32Array;
  norm: number;
  label: number;
}

const buf = new Int32Array(MAX_FEATURES);
function encode(e: Example): Encoded {
  const n = textFeatures(e.text, buf);
  return { buckets: buf.slice(0, n), norm: n > 0 ? 1 / Math.sqrt(n) : 0, label: INTENTS.indexOf(e.intent) };
}

/** Multinomial logistic regression by SGD with a decaying step and class-balanced weights. */
function train(examples: Example[]): { w: Float32Array; bias: Float64Array } {
  const k = INTENTS.length;
  const w = new Float32Array((1 << BUCKET_BITS) * k);
  const bias = new Float64Array(k);
  const data = examples.map(encode);
  const freq = new Float64Array(k);
  for (const d of data) freq[d.label] = (freq[d.label] ?? 0) + 1;
  const classWeight = Array.from(freq, (f) => (f > 0 ? Math.sqrt(data.length / k / f) : 0));
  const r = rng(seed + 1);
  const p = new Float64Array(k);
  let step = 0;
  const total = epochs * data.length;
  for (let epoch = 0; epoch < epochs; epoch++) {
    shuffle(r, data);
    let loss = 0;
    for (const d of data) {
      const lr = 0.6 * (1 - step++ / total) + 0.02;
      p.fill(0);
      for (const b of d.buckets) for (let c = 0; c < k; c++) p[c] = (p[c] ?? 0) + (w[b * k + c] ?? 0);
      let max = -Infinity;
      for (let c = 0; c < k; c++) max = Math.max(max, (p[c] = (p[c] ?? 0) * d.norm + (bias[c] ?? 0)));
      let sum = 0;
      for (let c = 0; c < k; c++) sum += p[c] = Math.exp((p[c] ?? 0) - max);
      const cw = classWeight[d.label] ?? 1;
      loss -= Math.log(Math.max(1e-12, (p[d.label] ?? 0) / sum)) * cw;
      for (let c = 0; c < k; c++) {
        const g = ((p[c] ?? 0) / sum - (c === d.label ? 1 : 0)) * cw * lr;
        p[c] = g;
        bias[c] = (bias[c] ?? 0) - g * 0.1;
      }
      for (const b of d.buckets) for (let c = 0; c < k; c++) w[b * k + c] = (w[b * k + c] ?? 0) - (p[c] ?? 0) * d.norm;
    }
    console.error(`epoch ${epoch + 1}/${epochs}: mean loss ${(loss / data.length).toFixed(4)}`);
  }
  return { w, bias };
}

function scoreModel(model: IntentModel, rows: readonly Example[]): Scored[] {
  return rows.map((e) => ({ gold: e.intent, predicted: model.predict(e.text).intent }));
}

const started = Date.now();
const data = buildDataset(seed);
console.error(`dataset: ${data.train.length} train, ${data.test.length} test, ${data.vicuna.length} vicuna (${Date.now() - started} ms)`);
const { w, bias } = train(data.train);
const file = encodeWeights(INTENTS, w, bias, `bench/intent (seed ${seed}, ${epochs} epochs, ${data.train.length} training examples)`);
const loaded = loadModel(file);
if (!loaded.ok) throw new Error(loaded.errors.join("; "));
const model = loaded.value;
if (!args["dry-run"]) {
  writeFileSync(OUT, `${JSON.stringify(file)}\n`);
  console.error(`wrote ${OUT} (${JSON.stringify(file).length} bytes)`);
}

const classify = createClassifier((t) => model.predict(t));
const pipeline = (rows: readonly Example[]): Scored[] => rows.map((e) => ({ gold: e.intent, predicted: classify([{ role: "user", content: e.text }]).intent }));
const kwCoverage = (rows: readonly Example[]): string => {
  const hits = rows
    .map((e) => ({ gold: e.intent, hit: matchKeywords(e.text.trim())?.intent }))
    .filter((x): x is { gold: Intent; hit: Intent } => x.hit !== undefined);
  return `${hits.length}/${rows.length} hit, precision ${((100 * hits.filter((h) => h.gold === h.hit).length) / Math.max(1, hits.length)).toFixed(1)} %`;
};

const report: string[] = [];
report.push(
  `Sources: ${Object.entries(data.sources)
    .map(([s, n]) => `${s} ${n}`)
    .join(", ")}`,
);
for (const [name, rows] of [
  ["test split", data.test],
  ["vicuna-bench", data.vicuna],
] as const) {
  const full = pipeline(rows);
  report.push(`\n### ${name} (${rows.length} prompts)\n`);
  report.push(`- full pipeline (keywords → model, threshold): accuracy ${(100 * accuracy(full)).toFixed(1)} %`);
  report.push(`- model alone (quantised weights): accuracy ${(100 * accuracy(scoreModel(model, rows))).toFixed(1)} %`);
  report.push(`- keywords alone: ${kwCoverage(rows)}`);
  const groups = new Map<string, Scored[]>();
  rows.forEach((e, i) => {
    const g = e.source.startsWith("synthetic:") ? `synthetic ${e.source.split(":")[1] ?? ""}` : (e.source.split(":")[0] ?? e.source);
    const list = groups.get(g) ?? [];
    list.push(full[i] ?? { gold: e.intent, predicted: "unknown" });
    groups.set(g, list);
  });
  report.push(`- full pipeline by source: ${[...groups.entries()].map(([g, l]) => `${g} ${(100 * accuracy(l)).toFixed(1)} % (${l.length})`).join(", ")}`);
  report.push(`- top confusions (full pipeline): ${topConfusions(full, 8)}\n`);
  report.push(perIntentTable(full));
}
console.log(report.join("\n"));
