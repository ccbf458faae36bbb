/**
 * A fixed log-bucket histogram for latencies (ms): bounded memory whatever the number of values,
 * mergeable, quantiles within 2 % of the exact value (bucket width 2 %; the midpoint of the bucket
 * is returned). Values at or below 0.01 ms share the first bucket; values above 10^7 ms the last.
 */
const MIN = 0.01;
const GROWTH = 1.02;
const LOG_GROWTH = Math.log(GROWTH);
const BUCKETS = Math.ceil(Math.log(1e7 / MIN) / LOG_GROWTH) + 2;

export class LogHistogram {
  private readonly counts = new Uint32Array(BUCKETS);
  count = 0;
  sum = 0;
  min = Infinity;
  max = -Infinity;

  add(value: number): void {
    if (!Number.isFinite(value) || value < 0) return;
    this.counts[indexOf(value)]!++;
    this.count++;
    this.sum += value;
    if (value < this.min) this.min = value;
    if (value > this.max) this.max = value;
  }

  /** The value at quantile `q` (0..1), clamped to the exact min and max; `undefined` when empty. */
  quantile(q: number): number | undefined {
    if (this.count === 0) return undefined;
    const rank = Math.max(1, Math.ceil(q * this.count));
    let seen = 0;
    for (let i = 0; i < BUCKETS; i++) {
      seen += this.counts[i]!;
      if (seen >= rank) return Math.min(this.max, Math.max(this.min, midpoint(i)));
    }
    return this.max;
  }

  mean(): number | undefined {
    return this.count === 0 ? undefined : this.sum / this.count;
  }

  /** Counts in the coarse bins whose upper edges are `edges` (the last bin takes the rest). */
  binned(edges: readonly number[]): number[] {
    const out = new Array<number>(edges.length + 1).fill(0);
    for (let i = 0; i < BUCKETS; i++) {
      const c = this.counts[i]!;
      if (c === 0) continue;
      const v = midpoint(i);
      let b = edges.findIndex((e) => v <= e);
      if (b < 0) b = edges.length;
      out[b]! += c;
    }
    return out;
  }
}

function indexOf(value: number): number {
  if (value <= MIN) return 0;
  return Math.min(BUCKETS - 1, 1 + Math.floor(Math.log(value / MIN) / LOG_GROWTH));
}

function midpoint(i: number): number {
  if (i === 0) return MIN;
  return MIN * Math.pow(GROWTH, i - 0.5);
}
