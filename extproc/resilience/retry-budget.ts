/**
 * A provider's retry budget, as Envoy's `retry_budget`: over a sliding window, retries may be at
 * most `budget_ratio` of the calls made to the provider (but `min_retries_per_second` are always
 * allowed). A storm of 429s then adds at most that share of extra calls instead of doubling the
 * load on a provider that is already refusing it.
 */
export interface RetryBudgetSettings {
  budget_ratio: number;
  min_retries_per_second: number;
  budget_window_ms: number;
}

/** Ten buckets per window: the window slides in tenths. */
const BUCKETS = 10;

export class RetryBudget {
  private readonly calls = new Array<number>(BUCKETS).fill(0);
  private readonly retries = new Array<number>(BUCKETS).fill(0);
  private bucket = 0;
  private bucketStart: number;
  private readonly bucketMs: number;

  constructor(
    private readonly settings: RetryBudgetSettings,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.bucketMs = settings.budget_window_ms / BUCKETS;
    this.bucketStart = now();
  }

  /** A first attempt went to the provider. */
  recordCall(): void {
    this.advance();
    this.calls[this.bucket] = (this.calls[this.bucket] ?? 0) + 1;
  }

  /** Takes one retry from the budget; false when the budget is spent (the retry must not happen). */
  tryRetry(): boolean {
    this.advance();
    const calls = sum(this.calls);
    const retries = sum(this.retries);
    const floor = (this.settings.min_retries_per_second * this.settings.budget_window_ms) / 1000;
    if (retries + 1 > Math.max(floor, this.settings.budget_ratio * calls)) return false;
    this.retries[this.bucket] = (this.retries[this.bucket] ?? 0) + 1;
    return true;
  }

  private advance(): void {
    const now = this.now();
    const steps = Math.floor((now - this.bucketStart) / this.bucketMs);
    if (steps <= 0) return;
    for (let i = 0; i < Math.min(steps, BUCKETS); i++) {
      this.bucket = (this.bucket + 1) % BUCKETS;
      this.calls[this.bucket] = 0;
      this.retries[this.bucket] = 0;
    }
    this.bucketStart += steps * this.bucketMs;
  }
}

function sum(values: readonly number[]): number {
  let total = 0;
  for (const v of values) total += v;
  return total;
}
