/**
 * The small logistic router of the evaluation, clearly labelled as trained on MMLU: complexity
 * features plus hashed words, SGD with L2, for held-out-subject comparisons only.
 */
import type { ComplexityEstimate } from "../../extproc/routing/complexity.ts";
import { rng } from "./data.ts";

const WORD = /[a-z]{3,}/g;
const HASH_BITS = 11;
function hashWord(w: string): number {
  let h = 2166136261;
  for (let i = 0; i < w.length; i++) h = Math.imul(h ^ w.charCodeAt(i), 16777619);
  return (h >>> 0) & ((1 << HASH_BITS) - 1);
}

export interface Row {
  dense: number[];
  sparse: number[];
}
export function features(prompt: string, c: ComplexityEstimate | undefined, intent: string | undefined): Row {
  const f = c?.features;
  const s = f?.strengths;
  const lines = prompt.split("\n").length;
  const digits = (prompt.match(/\d/g) ?? []).length;
  const dense = [
    c?.score ?? 0,
    s?.length ?? 0,
    s?.math ?? 0,
    s?.code ?? 0,
    s?.reasoning ?? 0,
    s?.structure ?? 0,
    Math.log1p(f?.approxTokens ?? 0),
    Math.log1p(f?.mathMarkers ?? 0),
    Math.log1p(f?.codeMarkers ?? 0),
    Math.log1p(f?.reasoningMarkers ?? 0),
    Math.log1p(f?.questions ?? 0),
    Math.log1p(f?.constraints ?? 0),
    Math.log1p(lines),
    digits / Math.max(1, prompt.length),
    /statement 1/i.test(prompt) ? 1 : 0,
    /\bnot\b|\bexcept\b/i.test(prompt) ? 1 : 0,
    (intent ?? "unknown") === "math" ? 1 : 0,
  ];
  const words = new Set(prompt.toLowerCase().match(WORD) ?? []);
  const sparse = [...new Set([...words].map(hashWord))];
  return { dense, sparse };
}

export function trainLogistic(rows: readonly Row[], ys: readonly number[], epochs: number, l2: number): (r: Row) => number {
  const d = rows[0]?.dense.length ?? 0;
  const mean = new Array<number>(d).fill(0);
  const sd = new Array<number>(d).fill(0);
  for (const r of rows) r.dense.forEach((v, j) => (mean[j] = (mean[j] ?? 0) + v / rows.length));
  for (const r of rows) r.dense.forEach((v, j) => (sd[j] = (sd[j] ?? 0) + (v - (mean[j] ?? 0)) ** 2 / rows.length));
  for (let j = 0; j < d; j++) sd[j] = Math.sqrt(sd[j] ?? 0) || 1;
  const wd = new Float64Array(d);
  const ws = new Float64Array(1 << HASH_BITS);
  let b = 0;
  const lr = 0.05;
  const z = (r: Row): number => {
    let s = b;
    for (let j = 0; j < d; j++) s += (wd[j] ?? 0) * (((r.dense[j] ?? 0) - (mean[j] ?? 0)) / (sd[j] ?? 1));
    const norm = 1 / Math.sqrt(Math.max(1, r.sparse.length));
    for (const h of r.sparse) s += (ws[h] ?? 0) * norm;
    return s;
  };
  const order = rows.map((_, i) => i);
  const r = rng(3);
  for (let e = 0; e < epochs; e++) {
    for (let i = order.length - 1; i > 0; i--) {
      const j = Math.floor(r() * (i + 1));
      const tmp = order[i] ?? 0;
      order[i] = order[j] ?? 0;
      order[j] = tmp;
    }
    for (const i of order) {
      const row = rows[i];
      if (row === undefined) continue;
      const p = 1 / (1 + Math.exp(-z(row)));
      const g = p - (ys[i] ?? 0);
      b -= lr * g;
      for (let j = 0; j < d; j++) wd[j] = (wd[j] ?? 0) - lr * (g * (((row.dense[j] ?? 0) - (mean[j] ?? 0)) / (sd[j] ?? 1)) + l2 * (wd[j] ?? 0));
      const norm = 1 / Math.sqrt(Math.max(1, row.sparse.length));
      for (const h of row.sparse) ws[h] = (ws[h] ?? 0) - lr * (g * norm + l2 * (ws[h] ?? 0));
    }
  }
  return (row) => 1 / (1 + Math.exp(-z(row)));
}
