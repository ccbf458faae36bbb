/**
 * Online calibration of one threshold (one tenant, one intent): a running estimate of the
 * quality relative to cloud, with a confidence interval, that moves the threshold with
 * hysteresis.
 *
 *   quality(t) ≈ 1 − share(t) · loss(t) / cloudQuality
 *
 * share(t): the share of recent routed requests scoring under t (every request is `observe`d);
 * loss(t): the mean of `1 − grade` over judged shadow samples scoring under t (`record`);
 * cloudQuality: the cloud's own accuracy (from `gearbox calibrate`'s evidence; 1 if unknown, which
 * counts a loss against every request and so is conservative). The interval is the Wilson
 * interval of the loss. After `minSamples` judged samples since the last move: the upper bound
 * under target → the threshold moves down by `shareStep` of traffic; the lower bound over
 * target + hysteresis → up by `shareStep`; else it holds. Each move is reported to `onChange`
 * (the audit line, the metric) and its reason is what the policy puts in `x-gearbox-reason`.
 */
import { normalQuantile } from "../fit.ts";

export interface EstimatorOptions {
  target: number;
  initialThreshold: number;
  cloudQuality?: number;
  minSamples?: number;
  /** Dead band over the target, in quality (0.01 = 1 point): up only when the lower bound clears target + band. */
  hysteresis?: number;
  /** Share of traffic one move adds or removes (default 0.02). */
  shareStep?: number;
  confidence?: number;
  /** Recent scores and samples kept (default 5000 and 2000). */
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
  private readonly extra: Float64Array;
  private next = 0;
  size = 0;
  constructor(capacity: number) {
    this.data = new Float64Array(capacity);
    this.extra = new Float64Array(capacity);
  }
  push(value: number, extra = 0): void {
    this.data[this.next] = value;
    this.extra[this.next] = extra;
    this.next = (this.next + 1) % this.data.length;
    this.size = Math.min(this.size + 1, this.data.length);
  }
  forEach(f: (value: number, extra: number) => void): void {
    for (let i = 0; i < this.size; i++) f(this.data[i] ?? 0, this.extra[i] ?? 0);
  }
  sortedValues(): number[] {
    return Array.from(this.data.subarray(0, this.size)).sort((a, b) => a - b);
  }
}

const fmt = (x: number): string => String(Math.round(x * 1000) / 1000);

export class QualityEstimator {
  private readonly scores: Ring;
  private readonly samples: Ring;
  private sinceMove = 0;
  private t: number;
  readonly stats = { observed: 0, judged: 0, movesUp: 0, movesDown: 0 };
  lastReason: string;
  constructor(private readonly opts: EstimatorOptions) {
    this.t = opts.initialThreshold;
    this.scores = new Ring(opts.scoreWindow ?? 5000);
    this.samples = new Ring(opts.sampleWindow ?? 2000);
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

  /** A judged shadow sample: the request's score and the judge's grade (1 = as good as the cloud). */
  record(score: number, grade: number): ThresholdChange | undefined {
    this.samples.push(score, grade);
    this.stats.judged++;
    this.sinceMove++;
    if (this.sinceMove < (this.opts.minSamples ?? 200)) return undefined;
    return this.maybeMove();
  }

  estimate(threshold = this.t): QualityEstimate {
    let under = 0;
    this.scores.forEach((s) => (under += s < threshold ? 1 : 0));
    const share = this.scores.size === 0 ? 0 : under / this.scores.size;
    let n = 0;
    let lost = 0;
    this.samples.forEach((s, grade) => {
      if (s < threshold) {
        n++;
        lost += 1 - grade;
      }
    });
    const cq = this.opts.cloudQuality ?? 1;
    if (n === 0) return { threshold, share, samples: 0, quality: 1, lower: 1 - share / cq, upper: 1 };
    const z = normalQuantile(this.opts.confidence ?? 0.95);
    const p = lost / n;
    const centre = (p + (z * z) / (2 * n)) / (1 + (z * z) / n);
    const half = (z * Math.sqrt((p * (1 - p)) / n + (z * z) / (4 * n * n))) / (1 + (z * z) / n);
    const q = (loss: number): number => 1 - (share * loss) / cq;
    return { threshold, share, samples: n, quality: q(p), lower: q(Math.min(1, centre + half)), upper: q(Math.max(0, centre - half)) };
  }

  private maybeMove(): ThresholdChange | undefined {
    const e = this.estimate();
    const target = this.opts.target;
    const band = this.opts.hysteresis ?? 0.01;
    let direction: "up" | "down" | undefined;
    if (e.upper < target) direction = "down";
    else if (e.lower > target + band) direction = "up";
    if (direction === undefined) return undefined;
    const sorted = this.scores.sortedValues();
    // Far from the target (more than 3 points), moves are 2.5× larger.
    const far = Math.abs(e.quality - target) > 0.03;
    const step = (this.opts.shareStep ?? 0.02) * (far ? 2.5 : 1);
    const share = Math.min(1, Math.max(0, e.share + (direction === "up" ? step : -step)));
    const at = sorted[Math.min(sorted.length - 1, Math.floor(share * sorted.length))] ?? this.t;
    let to = direction === "up" ? Math.max(at, this.t + 0.001) : Math.min(at, this.t - 0.001);
    to = Math.min(this.opts.maxThreshold ?? 1, Math.max(this.opts.minThreshold ?? 0.01, Math.round(to * 1000) / 1000));
    if (to === this.t) return undefined;
    const sign = direction === "up" ? ">" : "<";
    const reason = `calibrated:q=${fmt(e.quality)}[${fmt(e.lower)},${fmt(e.upper)}]${sign}${fmt(direction === "up" ? target + band : target)}`;
    const change: ThresholdChange = { from: this.t, to, direction, estimate: e, reason };
    this.t = to;
    this.lastReason = reason;
    this.sinceMove = 0;
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
