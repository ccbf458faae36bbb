/**
 * Which edge-routed requests are also sent to the cloud in the background, to be judged: a
 * fraction of them, at most `maxPerMinute` per tenant (a fixed one-minute window), so the
 * shadow traffic has a budget. The shadow call must never touch the client's answer.
 */
export interface SamplerOptions {
  /** 0–1 of edge-routed requests. */
  fraction: number;
  maxPerMinute: number;
  /** 0–1 uniform; injectable for tests and simulations. */
  random?: () => number;
}

export class ShadowSampler {
  private readonly windows = new Map<string, { minute: number; used: number }>();
  private readonly random: () => number;
  readonly stats = { considered: 0, sampled: 0, overBudget: 0 };
  constructor(private readonly opts: SamplerOptions) {
    this.random = opts.random ?? Math.random;
  }
  /** Call once per edge answer the client receives; `true` → send the same request to the cloud in the background. */
  maybeShadow(tenant: string, nowMs: number): boolean {
    this.stats.considered++;
    if (this.random() >= this.opts.fraction) return false;
    const minute = Math.floor(nowMs / 60_000);
    const w = this.windows.get(tenant);
    const window = w !== undefined && w.minute === minute ? w : { minute, used: 0 };
    if (window.used >= this.opts.maxPerMinute) {
      this.stats.overBudget++;
      return false;
    }
    window.used++;
    this.windows.set(tenant, window);
    this.stats.sampled++;
    return true;
  }
}
