/**
 * Whether one Redis-backed store answers, as the request path sees it: healthy until a call
 * fails or passes its deadline, then degraded until a call succeeds in time again. While
 * degraded, callers answer without Redis (a last good value, a cache miss, a local limit) and
 * try Redis at most once per `probeEveryMs` (`mayTry`), so a dead or frozen Redis costs a
 * request nothing after the first call that found it so.
 *
 * Each transition writes one log line (warn when degraded, info when healthy again, never one
 * per request) and is counted; `stats` is read by `/metrics` (`telemetry/shared-state-metrics.ts`).
 * A store knows nothing of requests: what a degraded store means is the `meaning` its owner gives.
 *
 * Any Redis-backed store a request reaches takes its health from the process's
 * `SharedStateHealth` (one per store name) and asks `mayTry` before each call; reads with a value
 * worth keeping go through `LastGood` (`last-good.ts`).
 */
import type { Logger } from "../../common/telemetry/logger.ts";

export interface StoreHealthStats {
  /** The store's name (a metric label): `tenants`, `limits`, `cache`, `semantic`. */
  readonly store: string;
  degraded: boolean;
  /** Transitions healthy → degraded. */
  toDegraded: number;
  /** Transitions degraded → healthy. */
  toHealthy: number;
  /** Redis calls that failed or passed their deadline. */
  errors: number;
  /** Reads answered with a last good value because Redis failed or was skipped. */
  staleReads: number;
  /** Calls answered without Redis because it failed or was skipped while degraded (a cache miss, a dropped write, a local limit decision). */
  fallbacks: number;
}

export interface StoreHealthOptions {
  /** While degraded, the least time between two tries of Redis; default 1,000 ms. */
  probeEveryMs?: number;
  /** The log lines' explanation of each state, e.g. "keys and tenants are served from the last good values". */
  meaning?: { degraded: string; healthy: string };
  /** Clock in ms (tests). */
  now?: () => number;
}

export const PROBE_EVERY_MS = 1_000;

export class StoreHealth {
  readonly stats: StoreHealthStats;
  private readonly probeEveryMs: number;
  private readonly meaning: { degraded: string; healthy: string };
  private readonly now: () => number;
  private lastTry = Number.NEGATIVE_INFINITY;

  constructor(
    store: string,
    private readonly logger: Logger,
    options: StoreHealthOptions = {},
  ) {
    this.stats = { store, degraded: false, toDegraded: 0, toHealthy: 0, errors: 0, staleReads: 0, fallbacks: 0 };
    this.probeEveryMs = options.probeEveryMs ?? PROBE_EVERY_MS;
    this.meaning = options.meaning ?? { degraded: "requests are served without it until it answers", healthy: "back to normal" };
    this.now = options.now ?? Date.now;
  }

  get degraded(): boolean {
    return this.stats.degraded;
  }

  /** Whether a caller should ask Redis now: always while healthy; while degraded, once per `probeEveryMs`. */
  mayTry(): boolean {
    if (!this.stats.degraded) return true;
    const at = this.now();
    if (at - this.lastTry < this.probeEveryMs) return false;
    this.lastTry = at;
    return true;
  }

  /** A Redis call failed or passed its deadline. */
  failed(err: unknown, operation: string): void {
    this.stats.errors++;
    if (this.stats.degraded) return;
    this.stats.degraded = true;
    this.stats.toDegraded++;
    this.lastTry = this.now();
    this.logger.warn(
      { store: this.stats.store, operation, err: err instanceof Error ? err.message : String(err) },
      `${this.stats.store}: Redis failed; ${this.meaning.degraded}`,
    );
  }

  /** A Redis call answered within its deadline. */
  succeeded(): void {
    if (!this.stats.degraded) return;
    this.stats.degraded = false;
    this.stats.toHealthy++;
    this.logger.info({ store: this.stats.store }, `${this.stats.store}: Redis answers again; ${this.meaning.healthy}`);
  }

  staleRead(): void {
    this.stats.staleReads++;
  }

  fellBack(): void {
    this.stats.fallbacks++;
  }
}

/** Every store's health in one process, for `/metrics`. */
export class SharedStateHealth {
  private readonly stores = new Map<string, StoreHealth>();

  constructor(
    private readonly logger: Logger,
    private readonly options: Omit<StoreHealthOptions, "meaning"> = {},
  ) {}

  /** The health of the store named `store` (made on first use; one per name). */
  store(store: string, meaning?: StoreHealthOptions["meaning"]): StoreHealth {
    let health = this.stores.get(store);
    if (!health) this.stores.set(store, (health = new StoreHealth(store, this.logger, { ...this.options, ...(meaning && { meaning }) })));
    return health;
  }

  stats(): StoreHealthStats[] {
    return [...this.stores.values()].map((h) => h.stats);
  }
}
