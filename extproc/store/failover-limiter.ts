/**
 * Redis first; this replica's memory while Redis fails. No request fails because Redis did:
 *
 * - A Redis call that errors or passes its timeout (the client's `commandTimeout`, 50 ms from
 *   `redis.ts`) is decided by the local store instead, and Redis is marked down: later calls go
 *   local at once, without waiting on Redis. Each replica then enforces every limit alone (N
 *   replicas admit up to N × a limit) until Redis is back.
 * - A probe PINGs Redis every second while it is down; the first answer sends decisions back to
 *   Redis.
 * - The local store mirrors this replica's own admissions at all times: a grant Redis makes is
 *   taken locally too (settled and renewed with it), and an admission needs both to agree. So a
 *   failover does not start from empty windows (this replica's admissions of the last second,
 *   minute or day still count), and after Redis is back what was admitted locally during the
 *   outage still counts here until its window passes. One replica alone never admits over a
 *   limit across a failover; other replicas do not see this one's outage-time admissions.
 * - A grant is settled and renewed where it was made. A Redis grant whose settlement fails is
 *   released by its TTL on Redis (its reservation booked at the estimate).
 * - `stats` counts it (for /metrics), and so does the store's `StoreHealth` (`limits`), which
 *   writes one log line per transition.
 */
import type { Logger } from "../../common/telemetry/logger.ts";
import { validateAdmission, type Admission, type Check, type Grant, type LimiterStore, type Throttled } from "./limiter.ts";
import { StoreHealth } from "./store-health.ts";

/** What the limiter's transitions mean, for their log lines. */
export const LIMITS_MEANING = { degraded: "each replica enforces limits locally until it answers", healthy: "limits are shared again" };

export interface LimiterStats {
  /** False while decisions are local. */
  redisHealthy: boolean;
  /** Admissions decided by the local store (Redis down or failing at that moment). */
  fallbackDecisions: number;
  /** Redis calls that failed or timed out (admit, settle, renew, throttled). */
  redisErrors: number;
}

/** The shared store: a `LimiterStore` that can say whether its server answers. */
export interface SharedLimiterStore extends LimiterStore {
  ping(): Promise<void>;
}

export class FailoverLimiter implements LimiterStore {
  readonly stats: LimiterStats = { redisHealthy: true, fallbackDecisions: 0, redisErrors: 0 };
  /** Grants made by the local store, to be settled there. */
  private readonly local = new WeakSet<Grant>();
  /** Redis grant → its local mirror, settled and renewed along with it. */
  private readonly mirrors = new WeakMap<Grant, Grant>();
  private readonly probe: NodeJS.Timeout;
  private probing = false;

  constructor(
    private readonly shared: SharedLimiterStore,
    private readonly fallback: LimiterStore,
    private readonly logger: Logger,
    probeEveryMs = 1_000,
    private readonly health = new StoreHealth("limits", logger, { meaning: LIMITS_MEANING }),
  ) {
    this.probe = setInterval(() => void this.probeOnce(), probeEveryMs);
    this.probe.unref();
  }

  async admit(tenant: string, checks: readonly Check[], holdTtlMs: number): Promise<Admission> {
    // Bad input is the caller's error, not Redis's: it must not mark Redis down.
    validateAdmission(tenant, checks, holdTtlMs);
    if (this.stats.redisHealthy) {
      let shared: Admission | undefined;
      try {
        shared = await this.shared.admit(tenant, checks, holdTtlMs);
      } catch (err) {
        this.failed(err, "admit");
      }
      if (shared) return shared.ok ? this.mirrored(shared, tenant, checks, holdTtlMs) : shared;
    }
    this.stats.fallbackDecisions++;
    this.health.fellBack();
    const admission = await this.fallback.admit(tenant, checks, holdTtlMs);
    if (admission.ok) this.local.add(admission.grant);
    return admission;
  }

  async settle(grant: Grant, usage: Readonly<Record<string, number>>): Promise<void> {
    if (this.local.has(grant)) return this.fallback.settle(grant, usage);
    const mirror = this.mirrors.get(grant);
    if (mirror) await this.fallback.settle(mirror, usage);
    try {
      await this.shared.settle(grant, usage);
    } catch (err) {
      this.failed(err, "settle");
    }
  }

  async renew(grant: Grant, holdTtlMs: number): Promise<void> {
    if (this.local.has(grant)) return this.fallback.renew(grant, holdTtlMs);
    const mirror = this.mirrors.get(grant);
    if (mirror) await this.fallback.renew(mirror, holdTtlMs);
    try {
      await this.shared.renew(grant, holdTtlMs);
    } catch (err) {
      this.failed(err, "renew");
    }
  }

  async throttled(tenants: readonly string[]): Promise<Throttled[]> {
    if (this.stats.redisHealthy) {
      try {
        return await this.shared.throttled(tenants);
      } catch (err) {
        this.failed(err, "throttled");
      }
    }
    return this.fallback.throttled(tenants);
  }

  /**
   * Takes Redis's grant locally too. The local store refusing means this replica admitted more
   * than Redis knows (during an outage, or a clock step): the Redis grant is given back and the
   * local refusal is the answer. Either way the decision's `atMs` is the local store's: every
   * admission this replica makes is on that one clock, Redis up or down.
   */
  private async mirrored(shared: Admission & { ok: true }, tenant: string, checks: readonly Check[], holdTtlMs: number): Promise<Admission> {
    const mirror = await this.fallback.admit(tenant, checks, holdTtlMs);
    if (mirror.ok) {
      this.mirrors.set(shared.grant, mirror.grant);
      return Object.assign({}, shared, { atMs: mirror.atMs });
    }
    this.shared.settle(shared.grant, {}).catch((err: unknown) => this.failed(err, "settle"));
    return mirror;
  }

  /** Stops the probe. */
  close(): void {
    clearInterval(this.probe);
  }

  private failed(err: unknown, operation: string): void {
    this.stats.redisErrors++;
    this.health.failed(err, operation);
    this.stats.redisHealthy = false;
  }

  private async probeOnce(): Promise<void> {
    if (this.stats.redisHealthy || this.probing) return;
    this.probing = true;
    try {
      await this.shared.ping();
      this.stats.redisHealthy = true;
      this.health.succeeded();
    } catch (err) {
      this.logger.debug({ err: err instanceof Error ? err.message : String(err) }, "limits: Redis probe failed");
    } finally {
      this.probing = false;
    }
  }
}
