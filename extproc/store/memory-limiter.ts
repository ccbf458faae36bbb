/**
 * The limiter store in process memory: the embedded default (`gearbox serve`), and each
 * replica's local stand-in while Redis is unreachable. Same semantics as the Redis store (see
 * `limiter.ts`), on this process's clock. Every operation runs synchronously, so an admission
 * is atomic by construction; an admission is answered at once (no promise: the request path
 * waits no turn of the event loop), the other methods return promises to share the interface.
 *
 * Memory stays bounded: rate logs are trimmed to their window, settled holds are dropped, and
 * counters of identical requests are dropped a generation at a time once their window has passed
 * (`repeat-counters.ts`).
 */
import { unreachable } from "../../common/errors.ts";
import {
  byDenials,
  denialField,
  grantIds,
  holdsOf,
  recentDenials,
  validateAdmission,
  type Admission,
  type Check,
  type Grant,
  type LimiterStore,
  type Throttled,
} from "./limiter.ts";
import { RepeatCounters } from "./repeat-counters.ts";

interface Budget {
  /** Index of the window `used` belongs to. */
  window: number;
  used: number;
  heldSum: number;
  held: Map<string, { amount: number; expiresAt: number }>;
}

export class MemoryLimiter implements LimiterStore {
  private readonly rates = new Map<string, number[]>();
  private readonly budgets = new Map<string, Budget>();
  private readonly leases = new Map<string, Map<string, number>>();
  private readonly repeats = new RepeatCounters();
  private readonly denied = new Map<string, Map<string, number>>();
  private readonly nextId = grantIds();

  /** `now`: ms since the epoch (windows are aligned on it: UTC minutes and days). */
  constructor(private readonly now: () => number = Date.now) {}

  admit(tenant: string, checks: readonly Check[], holdTtlMs: number): Admission | Promise<Admission> {
    try {
      return this.decide(tenant, checks, holdTtlMs);
    } catch (err) {
      // An invalid input rejects, as the Redis store's does.
      return Promise.reject(err instanceof Error ? err : new Error(String(err)));
    }
  }

  private decide(tenant: string, checks: readonly Check[], holdTtlMs: number): Admission {
    validateAdmission(tenant, checks, holdTtlMs);
    const now = this.now();
    const remaining: number[] = [];
    const keys = checks.map((check) => `${tenant}\n${check.key}`);
    for (let i = 0; i < checks.length; i++) {
      const check = checks[i] as Check;
      const { used, retryAfterMs } = this.inspect(keys[i] as string, check, now);
      if (retryAfterMs !== undefined) {
        this.recordDenial(tenant, check.label, now);
        return { ok: false, failed: i, retryAfterMs: Math.max(0, Math.ceil(retryAfterMs)), used, atMs: now };
      }
      remaining.push(check.limit - used - (check.kind === "budget" ? check.amount : 1));
    }
    const id = this.nextId();
    for (let i = 0; i < checks.length; i++) this.take(keys[i] as string, checks[i] as Check, id, now, holdTtlMs);
    return { ok: true, grant: { id, tenant, holds: holdsOf(checks) }, remaining, atMs: now };
  }

  settle(grant: Grant, usage: Readonly<Record<string, number>>): Promise<void> {
    const now = this.now();
    for (const hold of grant.holds) {
      const key = `${grant.tenant}\n${hold.key}`;
      if (hold.kind === "lease") {
        this.leases.get(key)?.delete(grant.id);
        continue;
      }
      const budget = this.budget(key, hold.windowMs, now);
      const actual = Math.round(usage[hold.meter] ?? 0);
      const held = budget.held.get(grant.id);
      if (held) {
        budget.held.delete(grant.id);
        budget.heldSum -= held.amount;
        budget.used += actual;
      } else {
        // Expired and already booked at its estimate: only an overrun is added.
        budget.used += Math.max(0, actual - hold.amount);
      }
    }
    return Promise.resolve();
  }

  renew(grant: Grant, holdTtlMs: number): Promise<void> {
    const expiresAt = this.now() + holdTtlMs;
    for (const hold of grant.holds) {
      const key = `${grant.tenant}\n${hold.key}`;
      if (hold.kind === "lease") {
        const leases = this.leases.get(key);
        if (leases?.has(grant.id)) leases.set(grant.id, expiresAt);
      } else {
        const held = this.budgets.get(key)?.held.get(grant.id);
        if (held) held.expiresAt = expiresAt;
      }
    }
    return Promise.resolve();
  }

  throttled(tenants: readonly string[]): Promise<Throttled[]> {
    const now = this.now();
    const entries = tenants.flatMap((tenant) => recentDenials(tenant, Object.fromEntries(this.denied.get(tenant) ?? []), now));
    return Promise.resolve(entries.sort(byDenials));
  }

  /** Current use of a check, and when it could admit again if it refuses now (expired state dropped first). */
  private inspect(key: string, check: Check, now: number): { used: number; retryAfterMs?: number } {
    switch (check.kind) {
      case "rate": {
        const log = this.rates.get(key) ?? [];
        let expired = 0;
        while (expired < log.length && (log[expired] ?? 0) <= now - check.windowMs) expired++;
        if (expired > 0) log.splice(0, expired);
        const used = log.length;
        // The slot that frees first is the (used - limit + 1)-th oldest admission.
        return used < check.limit ? { used } : { used, retryAfterMs: (log[used - check.limit] ?? now) + check.windowMs - now };
      }
      case "budget": {
        const budget = this.budget(key, check.windowMs, now);
        for (const [id, held] of budget.held) {
          if (held.expiresAt > now) continue;
          // Never settled (a crashed replica): booked at its estimate.
          budget.held.delete(id);
          budget.heldSum -= held.amount;
          budget.used += held.amount;
        }
        const used = budget.used + budget.heldSum;
        return used + check.amount <= check.limit ? { used } : { used, retryAfterMs: (budget.window + 1) * check.windowMs - now };
      }
      case "lease": {
        const leases = this.leases.get(key);
        if (!leases) return { used: 0 };
        let earliest = Infinity;
        for (const [id, expiresAt] of leases) {
          if (expiresAt <= now) leases.delete(id);
          else earliest = Math.min(earliest, expiresAt);
        }
        return leases.size < check.limit ? { used: leases.size } : { used: leases.size, retryAfterMs: earliest - now };
      }
      case "repeat": {
        const repeat = this.repeats.get(key, now);
        if (!repeat) return { used: 0 };
        return repeat.count < check.limit ? { used: repeat.count } : { used: repeat.count, retryAfterMs: repeat.expiresAt - now };
      }
      default:
        return unreachable(check, "limiter check");
    }
  }

  /** Takes what an admitted check holds or counts. */
  private take(key: string, check: Check, id: string, now: number, holdTtlMs: number): void {
    switch (check.kind) {
      case "rate": {
        const log = this.rates.get(key);
        if (log) log.push(now);
        else this.rates.set(key, [now]);
        return;
      }
      case "budget": {
        const budget = this.budget(key, check.windowMs, now);
        budget.held.set(id, { amount: check.amount, expiresAt: now + holdTtlMs });
        budget.heldSum += check.amount;
        return;
      }
      case "lease": {
        const leases = this.leases.get(key);
        if (leases) leases.set(id, now + holdTtlMs);
        else this.leases.set(key, new Map([[id, now + holdTtlMs]]));
        return;
      }
      case "repeat":
        this.repeats.count(key, check.windowMs, now);
        return;
      default:
        return unreachable(check, "limiter check");
    }
  }

  /** The budget record of `key`, rolled over to the window of `now` (in-flight holds carry over). */
  private budget(key: string, windowMs: number, now: number): Budget {
    const window = Math.floor(now / windowMs);
    let budget = this.budgets.get(key);
    if (!budget) this.budgets.set(key, (budget = { window, used: 0, heldSum: 0, held: new Map<string, { amount: number; expiresAt: number }>() }));
    else if (budget.window !== window) {
      budget.window = window;
      budget.used = 0;
    }
    return budget;
  }

  private recordDenial(tenant: string, label: string, now: number): void {
    let fields = this.denied.get(tenant);
    if (!fields) this.denied.set(tenant, (fields = new Map<string, number>()));
    const field = denialField(now, label);
    fields.set(field, (fields.get(field) ?? 0) + 1);
    fields.delete(denialField(now, label, 2));
  }
}
