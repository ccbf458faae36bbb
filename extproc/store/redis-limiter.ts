/**
 * The limiter store on Redis, shared by every replica. Each operation is one Lua script
 * (`redis-scripts.ts`) over keys of one tenant (`<prefix>{t:<tenant>}:…`, one Cluster slot), so
 * an admission is one round trip however many limits it checks; concurrent requests' scripts
 * share the connection's writes (ioredis auto-pipelining, see `redis.ts`).
 *
 * Errors (Redis down, a command past its timeout) reject: `FailoverLimiter` turns them into
 * local decisions.
 */
import type { Redis } from "./redis.ts";
import {
  byDenials,
  grantIds,
  holdsOf,
  recentDenials,
  validateAdmission,
  type Admission,
  type Check,
  type Grant,
  type Hold,
  type LimiterStore,
  type Throttled,
} from "./limiter.ts";
import { SCRIPTS } from "./redis-scripts.ts";

export interface RedisLimiterOptions {
  /** Prepended to every key (e.g. `gearbox:`), outside the hash tag. */
  prefix?: string;
}

export class RedisLimiter implements LimiterStore {
  private readonly prefix: string;
  private readonly nextId = grantIds();

  constructor(
    private readonly client: Redis,
    options: RedisLimiterOptions = {},
  ) {
    this.prefix = options.prefix ?? "gearbox:";
  }

  async admit(tenant: string, checks: readonly Check[], holdTtlMs: number): Promise<Admission> {
    validateAdmission(tenant, checks, holdTtlMs);
    const id = this.nextId();
    const keys: string[] = [];
    const args: (string | number)[] = [id, holdTtlMs];
    for (const check of checks) {
      keys.push(...this.keysOf(tenant, check));
      args.push(check.kind, check.limit, check.kind === "budget" ? check.amount : 0, check.kind === "lease" ? 0 : check.windowMs, check.label);
    }
    keys.push(this.key(tenant, "denied"));
    const reply = (await SCRIPTS.admit.run(this.client, keys, args)) as number[];
    if (reply[0] === 1) {
      return { ok: true, grant: { id, tenant, holds: holdsOf(checks) }, remaining: reply.slice(2), atMs: (reply[1] ?? 0) / 1000 };
    }
    return { ok: false, failed: reply[1] ?? 0, retryAfterMs: reply[2] ?? 0, used: reply[3] ?? 0, atMs: (reply[4] ?? 0) / 1000 };
  }

  async settle(grant: Grant, usage: Readonly<Record<string, number>>): Promise<void> {
    if (grant.holds.length === 0) return;
    const keys: string[] = [];
    const args: (string | number)[] = [grant.id];
    for (const hold of grant.holds) {
      keys.push(...this.keysOf(grant.tenant, hold));
      if (hold.kind === "lease") args.push("lease", 0, 0, 0);
      else args.push("budget", Math.round(usage[hold.meter] ?? 0), hold.amount, hold.windowMs);
    }
    await SCRIPTS.settle.run(this.client, keys, args);
  }

  async renew(grant: Grant, holdTtlMs: number): Promise<void> {
    if (grant.holds.length === 0) return;
    const keys = grant.holds.flatMap((hold) => this.keysOf(grant.tenant, hold));
    await SCRIPTS.renew.run(this.client, keys, [grant.id, holdTtlMs, ...grant.holds.map((h) => h.kind)]);
  }

  async throttled(tenants: readonly string[]): Promise<Throttled[]> {
    const [time, ...records] = await Promise.all([this.client.time(), ...tenants.map((t) => this.client.hgetall(this.key(t, "denied")))]);
    const nowMs = Number(time[0]) * 1000 + Number(time[1]) / 1000;
    return tenants.flatMap((tenant, i) => recentDenials(tenant, records[i] ?? {}, nowMs)).sort(byDenials);
  }

  /** Answers when Redis does (the failover's probe). */
  async ping(): Promise<void> {
    await this.client.ping();
  }

  private keysOf(tenant: string, item: Check | Hold): string[] {
    const key = this.key(tenant, item.key);
    return item.kind === "budget" ? [key, `${key}:exp`] : [key];
  }

  private key(tenant: string, relative: string): string {
    return `${this.prefix}{t:${tenant}}:${relative}`;
  }
}
