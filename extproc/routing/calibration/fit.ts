/**
 * Fitting the cloud threshold from labelled data, on a confidence bound rather than the point
 * estimate. Prompts with score < t go to the edge; quality is accuracy relative to all-cloud:
 *
 *   q(t) = 1 − Σ_{s_i < t} (c_i − e_i) / Σ c_i        (c, e: cloud and edge correctness, 0–1)
 *
 * q(t) ≥ τ  ⇔  mean(Z) ≥ 0 with Z_i = (1 − τ)·c_i − (c_i − e_i)·[s_i < t], so the bound is a
 * one-sided lower confidence bound of a mean (no ratio to approximate). Its standard error is the
 * larger of the row-wise one and the cluster-robust one over `group` (a subject, a tenant, a
 * source file): traffic differs by group far more than rows differ by chance, and a threshold
 * that holds only on the groups it saw is what the bound must not promise. The threshold is the
 * largest t before the bound first falls under 0 (scanning up from all-cloud).
 */

export interface LabelledPoint {
  score: number;
  /** Edge answer correct (0–1; a judge's score is accepted too). */
  edge: number;
  /** Cloud answer correct (0–1). */
  cloud: number;
  /** Cluster for the standard error: subject, dataset, tenant… */
  group: string;
}

export interface FitOptions {
  /** Quality relative to all-cloud to keep, 0–1 (e.g. 0.95). */
  targetQuality: number;
  /** One-sided confidence of the bound (default 0.95). */
  confidence?: number;
}

export interface FitResult {
  /** Edge when score < threshold; 0 = everything to the cloud. */
  threshold: number;
  n: number;
  groups: number;
  edgeShare: number;
  /** Point estimate of quality relative to all-cloud at the threshold. */
  quality: number;
  /** The lower confidence bound of that quality. */
  qualityLower: number;
  cloudAccuracy: number;
  edgeAccuracy: number;
}

/** Standard normal quantile (Acklam's rational approximation; |error| < 1.2e-9). */
export function normalQuantile(p: number): number {
  const a = [-39.69683028665376, 220.9460984245205, -275.9285104469687, 138.357751867269, -30.66479806614716, 2.506628277459239];
  const b = [-54.47609879822406, 161.5858368580409, -155.6989798598866, 66.80131188771972, -13.28068155288572];
  const c = [-0.007784894002430293, -0.3223964580411365, -2.400758277161838, -2.549732539343734, 4.374664141464968, 2.938163982698783];
  const d = [0.007784695709041462, 0.3224671290700398, 2.445134137142996, 3.754408661907416];
  const lo = 0.02425;
  const poly = (k: number[], x: number): number => k.reduce((acc, v) => acc * x + v, 0);
  if (p < lo) {
    const q = Math.sqrt(-2 * Math.log(p));
    return poly(c, q) / (poly(d, q) * q + 1);
  }
  if (p > 1 - lo) return -normalQuantile(1 - p);
  const q = p - 0.5;
  const r = q * q;
  return (poly(a, r) * q) / (poly(b, r) * r + 1);
}

/** Running sums over the points, split by group, for the bound at one threshold. */
class BoundState {
  private readonly sumG: Float64Array;
  private sum = 0;
  private sumSq = 0;
  constructor(
    private readonly z: (k: number) => number,
    private readonly groupOf: Int32Array,
    private readonly countG: Float64Array,
    zAll: readonly number[],
  ) {
    this.sumG = new Float64Array(countG.length);
    zAll.forEach((v, i) => this.add(i, v, 1));
  }
  add(i: number, v: number, sign: 1 | -1): void {
    this.sum += sign * v;
    this.sumSq += sign * v * v;
    const g = this.groupOf[i] ?? 0;
    this.sumG[g] = (this.sumG[g] ?? 0) + sign * v;
  }
  lower(n: number): { mean: number; lower: number } {
    const mean = this.sum / n;
    const iidVar = Math.max(0, this.sumSq / n - mean * mean) / Math.max(1, n - 1);
    const groups = this.countG.length;
    let clusterVar = 0;
    if (groups >= 2) {
      for (let g = 0; g < groups; g++) clusterVar += ((this.sumG[g] ?? 0) - (this.countG[g] ?? 0) * mean) ** 2;
      clusterVar = (clusterVar * groups) / (groups - 1) / (n * n);
    }
    return { mean, lower: mean - this.z(0) * Math.sqrt(Math.max(iidVar, clusterVar)) };
  }
}

/** The largest threshold whose quality bound stays at or above the target. */
export function fitThreshold(points: readonly LabelledPoint[], opts: FitOptions): FitResult {
  const n = points.length;
  const tau = opts.targetQuality;
  const zq = normalQuantile(opts.confidence ?? 0.95);
  const groupIds = new Map<string, number>();
  const groupOf = new Int32Array(n);
  points.forEach((p, i) => {
    let g = groupIds.get(p.group);
    if (g === undefined) groupIds.set(p.group, (g = groupIds.size));
    groupOf[i] = g;
  });
  const countG = new Float64Array(groupIds.size);
  for (let i = 0; i < n; i++) countG[groupOf[i] ?? 0] = (countG[groupOf[i] ?? 0] ?? 0) + 1;
  const sumC = points.reduce((a, p) => a + p.cloud, 0);
  const sumE = points.reduce((a, p) => a + p.edge, 0);
  const base = (p: LabelledPoint): number => (1 - tau) * p.cloud;
  const state = new BoundState(
    () => zq,
    groupOf,
    countG,
    points.map((p) => base(p)),
  );
  const order = points.map((p, i) => ({ s: p.score, i })).sort((a, b) => a.s - b.s);
  const result = (threshold: number, onEdge: number, loss: number, lower: number): FitResult => ({
    threshold,
    n,
    groups: groupIds.size,
    edgeShare: n === 0 ? 0 : onEdge / n,
    quality: sumC === 0 ? 1 : 1 - loss / sumC,
    qualityLower: sumC === 0 ? 1 : 1 - (((1 - tau) * sumC) / n - lower) / (sumC / n),
    cloudAccuracy: n === 0 ? 0 : sumC / n,
    edgeAccuracy: n === 0 ? 0 : sumE / n,
  });
  let best = result(0, 0, 0, state.lower(n).lower);
  let k = 0;
  let loss = 0;
  while (k < order.length) {
    const s = order[k]?.s ?? 0;
    while (k < order.length && order[k]?.s === s) {
      const i = order[k]?.i ?? 0;
      const p = points[i] as LabelledPoint;
      const d = p.cloud - p.edge;
      state.add(i, base(p), -1);
      state.add(i, base(p) - d, 1);
      loss += d;
      k++;
    }
    const { lower } = state.lower(n);
    if (lower < 0) break;
    // Every score ≤ s is on the edge: the threshold is the next distinct score (1 past the top).
    best = result(order[k]?.s ?? Math.min(1, s + 0.001), k, loss, lower);
  }
  return best;
}

/** The threshold that puts `share` of the points on the edge, and the quality bound there. */
export function thresholdForShare(points: readonly LabelledPoint[], share: number, opts: { confidence?: number } = {}): FitResult {
  const sorted = points.map((p) => p.score).sort((a, b) => a - b);
  const k = Math.floor(share * sorted.length);
  const threshold = k >= sorted.length ? 1 : (sorted[k] ?? 0);
  return evaluateThreshold(points, threshold, opts);
}

/**
 * Edge share, quality and its lower bound at a given threshold. The bound is that of
 * q = mean(c − d·[s < t]) / mean(c), by the delta method, with the same row-wise or
 * cluster-robust standard error (the larger) as the fit.
 */
export function evaluateThreshold(points: readonly LabelledPoint[], threshold: number, opts: { confidence?: number } = {}): FitResult {
  const n = points.length;
  const zq = normalQuantile(opts.confidence ?? 0.95);
  const sumC = points.reduce((a, p) => a + p.cloud, 0);
  const sumE = points.reduce((a, p) => a + p.edge, 0);
  const groups = new Set(points.map((p) => p.group)).size;
  const out = { threshold, n, groups, cloudAccuracy: n === 0 ? 0 : sumC / n, edgeAccuracy: n === 0 ? 0 : sumE / n };
  if (n === 0 || sumC === 0) return { ...out, edgeShare: 0, quality: 1, qualityLower: 1 };
  const meanC = sumC / n;
  const kept = points.map((p) => (p.score < threshold ? p.edge : p.cloud));
  const onEdge = points.filter((p) => p.score < threshold).length;
  const q = kept.reduce((a, v) => a + v, 0) / sumC;
  const resid = points.map((p, i) => ((kept[i] ?? 0) - q * p.cloud) / meanC);
  const iid = resid.reduce((a, v) => a + v * v, 0) / n / Math.max(1, n - 1);
  const byGroup = new Map<string, number>();
  points.forEach((p, i) => byGroup.set(p.group, (byGroup.get(p.group) ?? 0) + (resid[i] ?? 0)));
  let cluster = 0;
  if (byGroup.size >= 2) {
    for (const v of byGroup.values()) cluster += v * v;
    cluster = (cluster * byGroup.size) / (byGroup.size - 1) / (n * n);
  }
  return { ...out, edgeShare: onEdge / n, quality: q, qualityLower: q - zq * Math.sqrt(Math.max(iid, cluster)) };
}
