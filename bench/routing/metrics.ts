/** Cost–quality metrics for routing evaluations: curves, the 95 % point, APGR, oracle, nulls, tables. */
import { rng, type MmluItem } from "./data.ts";

export interface Point {
  /** Threshold or other label of the operating point. */
  t: number;
  edgeShare: number;
  /** Accuracy relative to all-cloud on the same items (1 = 100 %). */
  quality: number;
}

export function accuracy(set: readonly MmluItem[], edge: (i: number) => boolean): number {
  let ok = 0;
  for (let i = 0; i < set.length; i++) {
    const it = set[i];
    if (it === undefined) continue;
    if (edge(i) ? it.edge : it.cloud) ok++;
  }
  return ok / set.length;
}

export function cloudAcc(set: readonly MmluItem[]): number {
  return set.filter((x) => x.cloud).length / set.length;
}
export function edgeAcc(set: readonly MmluItem[]): number {
  return set.filter((x) => x.edge).length / set.length;
}

/** Edge when score < t, for every distinct t (the finest sweep possible), plus t = +∞ (all edge). */
export function scoreCurve(set: readonly MmluItem[], scores: readonly number[]): Point[] {
  const order = scores.map((s, i) => ({ s, i })).sort((a, b) => a.s - b.s);
  const base = cloudAcc(set);
  let correct = set.filter((x) => x.cloud).length;
  const out: Point[] = [{ t: order[0]?.s ?? 0, edgeShare: 0, quality: 1 }];
  let k = 0;
  while (k < order.length) {
    const s = order[k]?.s ?? 0;
    while (k < order.length && order[k]?.s === s) {
      const it = set[order[k]?.i ?? 0];
      if (it !== undefined) correct += (it.edge ? 1 : 0) - (it.cloud ? 1 : 0);
      k++;
    }
    // All scores ≤ s are on the edge: threshold = the next distinct score (or +∞).
    out.push({ t: order[k]?.s ?? Infinity, edgeShare: k / set.length, quality: correct / set.length / base });
  }
  return out;
}

/** Largest edge share with quality ≥ 95 % of all-cloud. */
export function best95(points: readonly Point[]): Point {
  let best: Point = { t: NaN, edgeShare: 0, quality: 1 };
  for (const p of points) if (p.quality >= 0.95 - 1e-12 && p.edgeShare > best.edgeShare) best = p;
  return best;
}

/** Random routing's edge share at 95 % quality: q(s) = 1 − s·(1 − accE/accC). */
export function random95(set: readonly MmluItem[]): number {
  const drop = 1 - edgeAcc(set) / cloudAcc(set);
  return drop <= 0.05 ? 1 : 0.05 / drop;
}

/**
 * RouteLLM's APGR (average performance gap recovered), over edge share 0→1: 0.5 for random,
 * 1 for perfect. PGR = (acc − acc_edge) / (acc_cloud − acc_edge).
 */
export function apgr(set: readonly MmluItem[], points: readonly Point[]): number {
  const c = cloudAcc(set);
  const e = edgeAcc(set);
  const pts = [...points].sort((a, b) => a.edgeShare - b.edgeShare);
  const all = [{ edgeShare: 0, quality: 1 }, ...pts, { edgeShare: 1, quality: e / c }];
  let area = 0;
  for (let i = 1; i < all.length; i++) {
    const a = all[i - 1];
    const b = all[i];
    if (a === undefined || b === undefined) continue;
    const pa = (a.quality * c - e) / (c - e);
    const pb = (b.quality * c - e) / (c - e);
    area += ((pa + pb) / 2) * (b.edgeShare - a.edgeShare);
  }
  return area;
}

/** Oracle: edge whenever Mixtral is right or both are wrong; then, to reach 95 %, also some GPT-4-only prompts. */
export function oracle(set: readonly MmluItem[], seed = 7): { pure: Point; at95: Point; mask95: boolean[] } {
  const n = set.length;
  const base = cloudAcc(set);
  const mask = set.map((x) => x.edge || !x.cloud);
  const pureEdge = mask.filter(Boolean).length / n;
  const pureAcc = set.filter((x) => x.edge || x.cloud).length / n;
  const slack = Math.floor(pureAcc * n - 0.95 * base * n + 1e-9);
  const gptOnly = set.map((x, i) => ({ x, i })).filter(({ x }) => x.cloud && !x.edge);
  const r = rng(seed);
  const shuffled = gptOnly.map((g) => ({ ...g, k: r() })).sort((a, b) => a.k - b.k);
  const mask95 = [...mask];
  for (const g of shuffled.slice(0, Math.max(0, slack))) mask95[g.i] = true;
  return {
    pure: { t: NaN, edgeShare: pureEdge, quality: pureAcc / base },
    at95: { t: NaN, edgeShare: mask95.filter(Boolean).length / n, quality: accuracy(set, (i) => mask95[i] === true) / base },
    mask95,
  };
}

/** APGR and 95 %-point edge share of the same scores in random order (ties kept): a null distribution. */
export function permutationNull(
  set: readonly MmluItem[],
  scores: readonly number[],
  rounds: number,
  seed: number,
  /** Shuffle only within these groups (e.g. subjects); absent → over all prompts. */
  groups?: readonly string[],
): { apgr50: number; apgr95: number; share95: number } {
  const r = rng(seed);
  const a: number[] = [];
  const s: number[] = [];
  const perm = [...scores];
  const byGroup = new Map<string, number[]>();
  scores.forEach((_, i) => {
    const g = groups?.[i] ?? "";
    const list = byGroup.get(g) ?? [];
    list.push(i);
    byGroup.set(g, list);
  });
  for (let k = 0; k < rounds; k++) {
    for (const idx of byGroup.values()) {
      for (let x = idx.length - 1; x > 0; x--) {
        const y = Math.floor(r() * (x + 1));
        const i = idx[x] ?? 0;
        const j = idx[y] ?? 0;
        const tmp = perm[i] ?? 0;
        perm[i] = perm[j] ?? 0;
        perm[j] = tmp;
      }
    }
    const c = scoreCurve(set, perm);
    a.push(apgr(set, c));
    s.push(best95(c).edgeShare);
  }
  a.sort((x, y) => x - y);
  s.sort((x, y) => x - y);
  const q = Math.floor(rounds * 0.95);
  return { apgr50: a[Math.floor(rounds / 2)] ?? NaN, apgr95: a[q] ?? NaN, share95: s[q] ?? NaN };
}

export const pct = (x: number, d = 1): string => (Number.isFinite(x) ? `${(x * 100).toFixed(d)} %` : "—");
export const pad = (s: string, n: number): string => (s.length >= n ? s : s + " ".repeat(n - s.length));
export const lpad = (s: string, n: number): string => (s.length >= n ? s : " ".repeat(n - s.length) + s);

export function table(header: readonly string[], rows: readonly (readonly string[])[]): void {
  const widths = header.map((h, c) => Math.max(h.length, ...rows.map((r) => (r[c] ?? "").length)));
  const line = (cells: readonly string[]): string => `| ${cells.map((x, c) => (c === 0 ? pad(x, widths[c] ?? 0) : lpad(x, widths[c] ?? 0))).join(" | ")} |`;
  console.log(line(header));
  console.log(`|${widths.map((w, c) => (c === 0 ? "-".repeat(w + 2) : `${"-".repeat(w + 1)}:`)).join("|")}|`);
  for (const r of rows) console.log(line(r));
}

/** The point with the largest edge share ≤ target (curve sorted by edge share). */
export function atShare(points: readonly Point[], target: number): Point | undefined {
  let best: Point | undefined;
  for (const p of points) if (p.edgeShare <= target + 1e-9 && (best === undefined || p.edgeShare >= best.edgeShare)) best = p;
  return best;
}

// ---------------------------------------------------------------------------------------------
// Features of every prompt (canonical messages: one user turn)
