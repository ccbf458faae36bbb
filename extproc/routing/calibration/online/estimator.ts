/**
 * Online calibration of one threshold (one tenant, one intent): a running estimate of the
 * quality relative to cloud at the current threshold, with a confidence interval, that moves the
 * threshold with hysteresis.
 *
 *   quality(t) ≈ 1 − share(t) · loss(t) / cloudQuality
 *
 * share(t): the share of recent routed requests scoring under t (every request is `observe`d);
 * loss(t): the mean of `1 − grade` over the judged shadow samples taken since the threshold last
 * moved — all of them taken at t, so their mix of easy and hard prompts is t's own (samples from
 * before a move over-weight the prompts every earlier threshold already sent to the edge). A
 * grade is 0 (worse than the cloud), 1 (as good) or up to 2 (better: the edge was right where the
 * cloud was not), so a loss lies in [−1, 1] and edge wins offset edge losses, as they do in the
 * quality measured against all-cloud. cloudQuality: the cloud's own accuracy (from
 * `gearbox calibrate`'s evidence; 1 if unknown, which is conservative).
 *
 * The controller: after `minSamples` judged samples since the last move, the upper bound of the
 * interval under target → down; the lower bound over target + `hysteresis` → up; else it holds
 * and keeps sampling, so the interval narrows until the quality is shown to be outside the band
 * or it stays. The interval is looked at after `minSamples`, then 2×, 4×… (every `minSamples`
 * once the sample window is full), not after every sample: a look per sample would make a false
 * move near certain over a long hold. A move shifts `step` of traffic across the threshold; the step starts at
 * `shareStep` (2.5× while the estimate is more than 3 points off) and halves at every reversal
 * of direction, down to `minShareStep`: the threshold brackets its target as a bisection does
 * instead of hopping across it forever. Each move is reported to `onChange` (the audit line, the
 * metric) and its reason is what the policy puts in `x-gearbox-reason`.
 */
import { normalQuantile } from "../fit.ts";

export interface EstimatorOptions {
  target: number;
  initialThreshold: number;
  cloudQuality?: number;
  minSamples?: number;
  /** Dead band over the target, in quality (0.01 = 1 point): up only when the lower bound clears target + band. */
  hysteresis?: number;
  /** Share of traffic the first move adds or removes (default 0.02). */
  shareStep?: number;
  /** The smallest step reversals halve it to (default 0.0025). */
  minShareStep?: number;
  confidence?: number;
  /** Recent scores and judged samples kept (default 5000 and 4000). */
  scoreWindow?: number;
  sampleWindow?: number;
  /** Floor of the threshold (default 0.01): at 0 nothing reaches the edge, so nothing could be judged to move it back up. */
  minThreshold?: number;
  maxThreshold?: number;
  onChange?: (change: ThresholdChange) => void;
}

export interface QualityEstimate {
  threshold: number;
  share: number;
  /** Judged samples behind the estimate (taken since the threshold last moved). */
  samples: number;
  quality: number;
  lower: number;
  upper: number;
}

export interface ThresholdChange {
  from: number;
  to: number;
  direction: "up" | "down";
  estimate: QualityEstimate;
  /** `calibrated:q=0.962[0.951,0.971]>0.96` — for the audit line and `x-gearbox-reason`. */
  reason: string;
}

class Ring {
  private readonly data: Float64Array;
  readonly capacity: number;
  private next = 0;
  size = 0;
  constructor(capacity: number) {
    this.data = new Float64Array(capacity);
    this.capacity = capacity;
  }
  push(value: number): void {
    this.data[this.next] = value;
    this.next = (this.next + 1) % this.data.length;
    this.size = Math.min(this.size + 1, this.data.length);
  }
  clear(): void {
    this.next = 0;
    this.size = 0;
  }
  values(): Float64Array {
    return this.data.subarray(0, this.size);
  }
}

const fmt = (x: number): string => String(Math.round(x * 1000) / 1000);

export class QualityEstimator {
  private readonly scores: Ring;
  /** Judged samples: the request's score and its loss (1 − grade), at whatever threshold they were taken. */
  private readonly sampleScores: Ring;
  private readonly sampleLosses: Ring;
  private t: number;
  private step: number;
  private lastDirection: "up" | "down" | undefined;
  private sinceLook = 0;
  private nextLook: number;
  readonly stats = { observed: 0, judged: 0, movesUp: 0, movesDown: 0 };
  lastReason: string;
  constructor(private readonly opts: EstimatorOptions) {
    this.t = opts.initialThreshold;
    this.step = opts.shareStep ?? 0.02;
    this.nextLook = opts.minSamples ?? 200;
    this.scores = new Ring(opts.scoreWindow ?? 5000);
    this.sampleScores = new Ring(opts.sampleWindow ?? 4000);
    this.sampleLosses = new Ring(opts.sampleWindow ?? 4000);
    this.lastReason = `calibrated:initial=${fmt(this.t)}`;
  }

  get threshold(): number {
    return this.t;
  }

  /** Every auto-routed request's score (edge or cloud), for the share under each threshold. */
  observe(score: number): void {
    this.scores.push(score);
    this.stats.observed++;
  }

  /** A judged shadow sample: the request's score and the judge's grade (0 worse, 1 as good, 2 better than the cloud). */
  record(score: number, grade: number): ThresholdChange | undefined {
    this.stats.judged++;
    this.sampleScores.push(score);
    this.sampleLosses.push(1 - Math.min(2, Math.max(0, grade)));
    if (++this.sinceLook < this.nextLook) return undefined;
    this.sinceLook = 0;
    this.nextLook = Math.max(1, Math.round((this.opts.minSamples ?? 200) / 4));
    return this.maybeMove();
  }

  /**
   * The quality at the current threshold, stratified by score: the traffic under the threshold
   * in bins of 4 % of traffic each, every bin's loss the mean of the samples judged in it
   * (whenever they were taken: a prompt's loss depends on its score, not on the threshold of
   * the day), weighted by the bin's share. A bin with no sample borrows its lower neighbour's.
   * Each bound one-sided at `confidence` (each is one test: move down, move up).
   */
  estimate(): QualityEstimate {
    const threshold = this.t;
    const sorted = Array.from(this.scores.values()).sort((a, b) => a - b);
    const total = sorted.length;
    let under = 0;
    while (under < total && (sorted[under] ?? 1) < threshold) under++;
    const share = total === 0 ? 0 : under / total;
    const cq = this.opts.cloudQuality ?? 1;
    // Bin edges: every 4 % of traffic, up to the threshold.
    const per = Math.max(1, Math.round(total * 0.04));
    const upper: number[] = [];
    const weights: number[] = [];
    for (let lo = 0; lo < under; lo += per) {
      const hi = Math.min(under, lo + per);
      upper.push(hi === under ? threshold : (sorted[hi] ?? threshold));
      weights.push((hi - lo) / total);
    }
    const n = weights.map(() => 0);
    const sum = weights.map(() => 0);
    const sumSq = weights.map(() => 0);
    const ss = this.sampleScores.values();
    const ls = this.sampleLosses.values();
    let samples = 0;
    for (let i = 0; i < ss.length; i++) {
      const score = ss[i] ?? 1;
      if (score >= threshold) continue;
      let b = 0;
      while (b < upper.length - 1 && score >= (upper[b] ?? threshold)) b++;
      const loss = ls[i] ?? 0;
      n[b] = (n[b] ?? 0) + 1;
      sum[b] = (sum[b] ?? 0) + loss;
      sumSq[b] = (sumSq[b] ?? 0) + loss * loss;
      samples++;
    }
    if (samples === 0) return { threshold, share, samples: 0, quality: 1, lower: 1 - share / cq, upper: 1 };
    let loss = 0;
    let variance = 0;
    let borrowed: { mean: number; v: number } | undefined;
    const firstSampled = n.findIndex((k) => k > 0);
    for (let b = 0; b < weights.length; b++) {
      const k = n[b] ?? 0;
      const w = weights[b] ?? 0;
      if (k > 0) {
        const mean = (sum[b] ?? 0) / k;
        const spread = Math.max(0, (sumSq[b] ?? 0) - k * mean * mean);
        // One pseudo-observation of unit spread: a bin of clean samples is not proof of a zero loss.
        borrowed = { mean, v: (spread + 1) / (k + 1) / k };
      } else if (borrowed === undefined) {
        const k0 = n[firstSampled] ?? 1;
        const mean = (sum[firstSampled] ?? 0) / k0;
        borrowed = { mean, v: (Math.max(0, (sumSq[firstSampled] ?? 0) - k0 * mean * mean) + 1) / (k0 + 1) / k0 };
      }
      loss += w * borrowed.mean;
      variance += w * w * borrowed.v;
    }
    const se = Math.sqrt(variance);
    const z = normalQuantile(this.opts.confidence ?? 0.95);
    const q = (l: number): number => 1 - l / cq;
    return { threshold, share, samples, quality: q(loss), lower: q(Math.min(share, loss + z * se)), upper: q(Math.max(-share, loss - z * se)) };
  }

  private maybeMove(): ThresholdChange | undefined {
    const e = this.estimate();
    const target = this.opts.target;
    const band = this.opts.hysteresis ?? 0.01;
    let direction: "up" | "down" | undefined;
    if (e.upper < target) direction = "down";
    else if (e.lower > target + band) direction = "up";
    if (direction === undefined) return undefined;
    if (this.lastDirection !== undefined && direction !== this.lastDirection) this.step = Math.max(this.opts.minShareStep ?? 0.0025, this.step / 2);
    const far = Math.abs(e.quality - target) > 0.03;
    const step = this.step * (far ? 2.5 : 1);
    const share = Math.min(1, Math.max(0, e.share + (direction === "up" ? step : -step)));
    const sorted = Array.from(this.scores.values()).sort((a, b) => a - b);
    const at = sorted[Math.min(sorted.length - 1, Math.floor(share * sorted.length))] ?? this.t;
    let to = direction === "up" ? Math.max(at, this.t + 0.001) : Math.min(at, this.t - 0.001);
    to = Math.min(this.opts.maxThreshold ?? 1, Math.max(this.opts.minThreshold ?? 0.01, Math.round(to * 1000) / 1000));
    if (to === this.t) return undefined;
    const sign = direction === "up" ? ">" : "<";
    const reason = `calibrated:q=${fmt(e.quality)}[${fmt(e.lower)},${fmt(e.upper)}]${sign}${fmt(direction === "up" ? target + band : target)}`;
    const change: ThresholdChange = { from: this.t, to, direction, estimate: e, reason };
    this.t = to;
    this.lastReason = reason;
    this.lastDirection = direction;
    // The region a move opens needs its own samples before the next look.
    this.sinceLook = 0;
    this.nextLook = this.opts.minSamples ?? 200;
    if (direction === "up") this.stats.movesUp++;
    else this.stats.movesDown++;
    this.opts.onChange?.(change);
    return change;
  }
}

/**
 * The thresholds online calibration holds, one estimator per tenant and intent, created on first
 * use from the configured (offline-calibrated) threshold. The policy reads `current`.
 */
export class ThresholdHolder {
  private readonly estimators = new Map<string, QualityEstimator>();
  constructor(private readonly make: (tenant: string, intent: string) => QualityEstimator) {}
  estimator(tenant: string, intent: string): QualityEstimator {
    const key = `${tenant}\u0000${intent}`;
    let e = this.estimators.get(key);
    if (e === undefined) this.estimators.set(key, (e = this.make(tenant, intent)));
    return e;
  }
  /** For `PolicyInput.calibratedThreshold`; undefined until this tenant and intent have an estimator. */
  current(tenant: string, intent: string): { threshold: number; source: string } | undefined {
    const e = this.estimators.get(`${tenant}\u0000${intent}`);
    return e === undefined ? undefined : { threshold: e.threshold, source: e.lastReason };
  }
  /** For metrics and the report: every estimator's threshold, estimate and counters. */
  snapshot(): { tenant: string; intent: string; estimate: QualityEstimate; stats: QualityEstimator["stats"] }[] {
    return [...this.estimators].map(([key, e]) => {
      const [tenant = "", intent = ""] = key.split("\u0000");
      return { tenant, intent, estimate: e.estimate(), stats: { ...e.stats } };
    });
  }
}
