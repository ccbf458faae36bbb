/**
 * Live inputs of the routing policy kept in process: which target a conversation used last
 * (stickiness), the cloud's recent latency and this month's cloud spend (the dynamic layer).
 * In-memory and bounded; a replica set shares nothing here yet (the shared stores come with
 * Redis).
 */

/** Last target per conversation, least recently used first out, with a time to live. */
export class StickyTargets {
  private readonly entries = new Map<string, { target: "edge" | "cloud"; at: number }>();

  constructor(
    private readonly maxEntries = 10_000,
    private readonly ttlMs = 30 * 60_000,
  ) {}

  get(conversation: string | undefined, now = Date.now()): "edge" | "cloud" | undefined {
    if (!conversation) return undefined;
    const entry = this.entries.get(conversation);
    if (!entry) return undefined;
    if (now - entry.at > this.ttlMs) {
      this.entries.delete(conversation);
      return undefined;
    }
    return entry.target;
  }

  set(conversation: string | undefined, target: "edge" | "cloud", now = Date.now()): void {
    if (!conversation) return;
    this.entries.delete(conversation);
    this.entries.set(conversation, { target, at: now });
    if (this.entries.size > this.maxEntries) {
      const oldest = this.entries.keys().next();
      if (!oldest.done) this.entries.delete(oldest.value);
    }
  }

  get size(): number {
    return this.entries.size;
  }
}

/**
 * The median of the last `size` cloud latencies (ms), for latency-driven thresholds. The samples
 * are kept twice — in arrival order (to know which one leaves) and sorted (binary insertion) — so
 * reading the median on every routed request costs an index, not a sort.
 */
export class LatencyWindow {
  private readonly arrival: number[] = [];
  private readonly sorted: number[] = [];
  private next = 0;

  constructor(private readonly size = 200) {}

  record(ms: number): void {
    if (!Number.isFinite(ms) || ms < 0) return;
    if (this.arrival.length < this.size) this.arrival.push(ms);
    else {
      const leaving = this.arrival[this.next] as number;
      this.arrival[this.next] = ms;
      this.sorted.splice(lowerBound(this.sorted, leaving), 1);
    }
    this.sorted.splice(lowerBound(this.sorted, ms), 0, ms);
    this.next = (this.next + 1) % this.size;
  }

  /** Undefined until there are a few samples. */
  p50(): number | undefined {
    if (this.sorted.length < 5) return undefined;
    return this.sorted[Math.floor(this.sorted.length / 2)];
  }
}

/** The first index of `sorted` whose value is not below `value`. */
function lowerBound(sorted: readonly number[], value: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((sorted[mid] as number) < value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * Cloud spend of the current calendar month (UTC), in USD, as this replica saw it: the input of
 * the dynamic layer's budget steps. A new month starts from zero.
 */
export class CloudSpend {
  /** The current month's bounds (ms since the epoch, UTC): `roll` formats no date inside them. */
  private monthStart = 0;
  private monthEnd = 0;
  private usd = 0;

  add(usd: number, now = Date.now()): void {
    if (!Number.isFinite(usd) || usd <= 0) return;
    this.roll(now);
    this.usd += usd;
  }

  spentUsd(now = Date.now()): number {
    this.roll(now);
    return this.usd;
  }

  /** Share of `budgetUsd` spent this month (may exceed 1). */
  fraction(budgetUsd: number, now = Date.now()): number {
    return this.spentUsd(now) / budgetUsd;
  }

  private roll(now: number): void {
    if (now >= this.monthStart && now < this.monthEnd) return;
    const day = new Date(now);
    this.monthStart = Date.UTC(day.getUTCFullYear(), day.getUTCMonth(), 1);
    this.monthEnd = Date.UTC(day.getUTCFullYear(), day.getUTCMonth() + 1, 1);
    this.usd = 0;
  }
}
