/**
 * A circuit breaker for one provider, process-local. Closed: calls go through, failures are
 * counted (consecutive, and their share over a sliding window). Open: no call goes to the
 * provider for `open_ms`, so a dead provider costs no latency (the request goes straight to the
 * next member of its fallback chain). Half-open: `half_open_probes` calls at once go through;
 * a success closes the breaker, a failure opens it again. A probe whose outcome never comes
 * back frees its slot after `open_ms`.
 */
import type { BreakerConfig } from "./config-schema.ts";

export type BreakerState = "closed" | "half_open" | "open";

/** The gauge value of each state (`gearbox_provider_breaker_state`). */
export const BREAKER_STATE_VALUE: Readonly<Record<BreakerState, number>> = { closed: 0, half_open: 1, open: 2 };

export type BreakerListener = (change: { from: BreakerState; to: BreakerState; reason: string }) => void;

const BUCKETS = 10;

export class CircuitBreaker {
  private current: BreakerState = "closed";
  private consecutive = 0;
  private readonly calls = new Array<number>(BUCKETS).fill(0);
  private readonly failures = new Array<number>(BUCKETS).fill(0);
  private bucket = 0;
  private bucketStart: number;
  private openedAt = 0;
  /** Start times of the probes in flight (half-open). */
  private probes: number[] = [];

  constructor(
    private readonly settings: BreakerConfig,
    private readonly now: () => number = () => performance.now(),
    private readonly listener?: BreakerListener,
  ) {
    this.bucketStart = now();
  }

  /** The state now (an open breaker turns half-open once `open_ms` has passed). */
  get state(): BreakerState {
    if (this.current === "open" && this.now() - this.openedAt >= this.settings.open_ms) this.move("half_open", `open for ${this.settings.open_ms} ms`);
    return this.current;
  }

  /** May a call go to the provider now? Half-open, this takes a probe slot (give it back with `success`/`failure`). */
  tryAcquire(): boolean {
    if (!this.settings.enable) return true;
    const state = this.state;
    switch (state) {
      case "closed":
        return true;
      case "open":
        return false;
      case "half_open": {
        const now = this.now();
        this.probes = this.probes.filter((t) => now - t < this.settings.open_ms);
        if (this.probes.length >= this.settings.half_open_probes) return false;
        this.probes.push(now);
        return true;
      }
      default:
        return state satisfies never;
    }
  }

  /** The provider answered (anything but a connection failure, a timeout, 429 or 5xx). */
  success(): void {
    if (!this.settings.enable) return;
    const state = this.state;
    if (state === "open") return;
    if (state === "half_open") {
      this.reset();
      this.move("closed", "probe succeeded");
      return;
    }
    this.consecutive = 0;
    this.count(false);
  }

  /** The provider failed a call: connection failure, timeout, 429 or 5xx. */
  failure(): void {
    if (!this.settings.enable) return;
    const state = this.state;
    if (state === "open") return;
    if (state === "half_open") {
      this.open("probe failed");
      return;
    }
    this.consecutive++;
    this.count(true);
    const calls = sum(this.calls);
    const failed = sum(this.failures);
    if (this.consecutive >= this.settings.failure_threshold) this.open(`${this.consecutive} consecutive failures`);
    else if (calls >= this.settings.min_calls && failed / calls >= this.settings.failure_ratio) this.open(`${failed} of ${calls} calls failed`);
  }

  private open(reason: string): void {
    this.openedAt = this.now();
    this.reset();
    this.move("open", reason);
  }

  private reset(): void {
    this.consecutive = 0;
    this.probes = [];
    this.calls.fill(0);
    this.failures.fill(0);
  }

  private move(to: BreakerState, reason: string): void {
    const from = this.current;
    if (from === to) return;
    this.current = to;
    this.listener?.({ from, to, reason });
  }

  private count(failed: boolean): void {
    const now = this.now();
    const bucketMs = this.settings.window_ms / BUCKETS;
    const steps = Math.floor((now - this.bucketStart) / bucketMs);
    for (let i = 0; i < Math.min(steps, BUCKETS); i++) {
      this.bucket = (this.bucket + 1) % BUCKETS;
      this.calls[this.bucket] = 0;
      this.failures[this.bucket] = 0;
    }
    if (steps > 0) this.bucketStart += steps * bucketMs;
    this.calls[this.bucket] = (this.calls[this.bucket] ?? 0) + 1;
    if (failed) this.failures[this.bucket] = (this.failures[this.bucket] ?? 0) + 1;
  }
}

function sum(values: readonly number[]): number {
  let total = 0;
  for (const v of values) total += v;
  return total;
}
