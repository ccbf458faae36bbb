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

/** The median of the last `size` cloud latencies (ms), for latency-driven thresholds. */
export class LatencyWindow {
  private readonly samples: number[] = [];
  private next = 0;

  constructor(private readonly size = 200) {}

  record(ms: number): void {
    if (!Number.isFinite(ms) || ms < 0) return;
    if (this.samples.length < this.size) this.samples.push(ms);
    else this.samples[this.next] = ms;
    this.next = (this.next + 1) % this.size;
  }

  /** Undefined until there are a few samples. */
  p50(): number | undefined {
    if (this.samples.length < 5) return undefined;
    const sorted = [...this.samples].sort((a, b) => a - b);
    return sorted[Math.floor(sorted.length / 2)];
  }
}

/**
 * Cloud spend of the current calendar month (UTC), in USD, as this replica saw it: the input of
 * the dynamic layer's budget steps. A new month starts from zero.
 */
export class CloudSpend {
  private month = "";
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
    const month = new Date(now).toISOString().slice(0, 7);
    if (month !== this.month) {
      this.month = month;
      this.usd = 0;
    }
  }
}
