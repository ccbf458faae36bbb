/**
 * The limiter store: where every replica's admission decisions meet. One call, `admit`, runs a
 * list of checks for one tenant **all or nothing**: each check is evaluated, and only when every
 * one passes is anything taken (a request slot, a token or cost reservation, a concurrency
 * lease, one more count of an identical request). A refused admission changes no counter, so a
 * key's refusal never leaves its tenant's reservation behind, and a concurrent first request
 * cannot slip past a budget between a check and its write.
 *
 * Keys are tenant-relative (`rps`, `k:key_1:tpm`): the store places all of them under the
 * tenant's hash tag `{t:<tenant>}`, so one admission touches one Redis Cluster slot.
 *
 * Check kinds:
 * - `rate`:   sliding log; admits iff fewer than `limit` admissions in the last `windowMs`.
 * - `budget`: reservation in a fixed window aligned on the epoch (a UTC minute, a UTC day…);
 *             admits iff used + held (in-flight reservations) + `amount` ≤ `limit`. `settle`
 *             swaps the reservation for the real amount, booked in the window current at
 *             settlement; a reservation that outlives its hold TTL (a crashed replica) is booked
 *             at its estimate. In-flight reservations count in every window they live in.
 * - `lease`:  concurrency; admits iff fewer than `limit` live leases. `settle` releases it; a
 *             lease not renewed within the hold TTL expires.
 * - `repeat`: counter of identical requests in a fixed window started by the first one (INCR +
 *             PEXPIRE); admits iff the count so far is below `limit`.
 *
 * Amounts and limits of budgets are integers (tokens, nano-USD): Redis counts them exactly.
 * Every record expires on its own (a window, a window + the hold TTL); the hold TTL is meant to
 * be one per deployment (the Governor's default), since a key's lifetime follows its last write.
 */
import { randomBytes } from "node:crypto";
import type { Step } from "../../common/step.ts";

export type Check = RateCheck | BudgetCheck | LeaseCheck | RepeatCheck;

interface CheckBase {
  /** Tenant-relative key, e.g. `rps` or `k:key_1:tpm`. */
  key: string;
  limit: number;
  /** What `throttled` reports when this check refuses, e.g. `tenant/requests_per_second`. */
  label: string;
}

export interface RateCheck extends CheckBase {
  kind: "rate";
  windowMs: number;
}

export interface BudgetCheck extends CheckBase {
  kind: "budget";
  amount: number;
  windowMs: number;
  /** Which figure of `settle`'s usage this reservation is reconciled with (`tokens`, `nano_usd`). */
  meter: string;
}

export interface LeaseCheck extends CheckBase {
  kind: "lease";
}

export interface RepeatCheck extends CheckBase {
  kind: "repeat";
  windowMs: number;
}

/** What an admission holds until it is settled: leases and budget reservations. */
export type Hold = { kind: "lease"; key: string } | { kind: "budget"; key: string; amount: number; windowMs: number; meter: string };

export interface Grant {
  /** Unique across replicas: also the member name of its entries in Redis. */
  readonly id: string;
  readonly tenant: string;
  readonly holds: readonly Hold[];
}

export type Admission =
  | {
      ok: true;
      grant: Grant;
      /** Per check, what is left after this admission (requests, tokens, leases…). */
      remaining: readonly number[];
      /** The store's clock at the decision (ms since the epoch, µs precision). */
      atMs: number;
    }
  | {
      ok: false;
      /** Index of the first check that refused. */
      failed: number;
      /** When that check could admit again, at the earliest (ms from now). */
      retryAfterMs: number;
      /** That check's current use (admissions, used + held, live leases, identical count). */
      used: number;
      atMs: number;
    };

/** Refusals of one tenant's check in the current and the previous minute of the store's clock. */
export interface Throttled {
  tenant: string;
  label: string;
  denials: number;
}

export interface LimiterStore {
  /**
   * Runs `checks` for `tenant` all or nothing; holds (leases, reservations) live `holdTtlMs`
   * unless renewed. A store in this process may answer at once (no promise); invalid input
   * rejects in every store.
   */
  admit(tenant: string, checks: readonly Check[], holdTtlMs: number): Step<Admission>;
  /** Releases the grant's leases and books each reservation at `usage[meter]` (rounded; absent → 0). Once per grant. */
  settle(grant: Grant, usage: Readonly<Record<string, number>>): Promise<void>;
  /** Extends the grant's holds to `holdTtlMs` from now (long calls, streams). */
  renew(grant: Grant, holdTtlMs: number): Promise<void>;
  /** Who was refused lately, and by which check, among `tenants`; most refused first. */
  throttled(tenants: readonly string[]): Promise<Throttled[]>;
}

/** Throws on input no store may accept: a tenant id that would break its hash tag, non-integer budgets. */
export function validateAdmission(tenant: string, checks: readonly Check[], holdTtlMs: number): void {
  if (!/^[^{}\s]+$/.test(tenant)) throw new Error(`Tenant id ${JSON.stringify(tenant)} cannot be a Redis hash tag`);
  if (!(holdTtlMs > 0)) throw new Error(`holdTtlMs must be positive, got ${holdTtlMs}`);
  for (const c of checks) {
    if (!(c.limit > 0) || !Number.isInteger(c.limit)) throw new Error(`${c.label}: limit must be a positive integer, got ${c.limit}`);
    if (c.kind !== "lease" && !(c.windowMs > 0)) throw new Error(`${c.label}: windowMs must be positive, got ${c.windowMs}`);
    if (c.kind === "budget" && (!Number.isInteger(c.amount) || c.amount < 0))
      throw new Error(`${c.label}: amount must be a non-negative integer, got ${c.amount}`);
  }
}

/** The holds an admission of `checks` takes (leases and reservations), in check order. */
export function holdsOf(checks: readonly Check[]): Hold[] {
  const holds: Hold[] = [];
  for (const c of checks) {
    if (c.kind === "lease") holds.push({ kind: "lease", key: c.key });
    else if (c.kind === "budget") holds.push({ kind: "budget", key: c.key, amount: c.amount, windowMs: c.windowMs, meter: c.meter });
  }
  return holds;
}

/**
 * Refusals are counted per minute of the store's clock, in fields `<minute>|<label>` of one
 * record per tenant; `throttled` sums the current and the previous minute.
 */
export const DENIAL_MINUTE_MS = 60_000;

export function denialField(atMs: number, label: string, minutesAgo = 0): string {
  return `${Math.floor(atMs / DENIAL_MINUTE_MS) - minutesAgo}|${label}`;
}

/** `tenant`'s refusals in the current and the previous minute, from its `<minute>|<label>` counts. */
export function recentDenials(tenant: string, fields: Readonly<Record<string, string | number>>, nowMs: number): Throttled[] {
  const minute = Math.floor(nowMs / DENIAL_MINUTE_MS);
  const byLabel = new Map<string, number>();
  for (const [field, count] of Object.entries(fields)) {
    const bar = field.indexOf("|");
    const at = Number(field.slice(0, bar));
    if (at !== minute && at !== minute - 1) continue;
    const label = field.slice(bar + 1);
    byLabel.set(label, (byLabel.get(label) ?? 0) + Number(count));
  }
  return [...byLabel].map(([label, denials]) => ({ tenant, label, denials }));
}

/** Most refused first, then by tenant and label (a stable listing). */
export function byDenials(a: Throttled, b: Throttled): number {
  return b.denials - a.denials || a.tenant.localeCompare(b.tenant) || a.label.localeCompare(b.label);
}

/** Grant ids unique across replicas: a random prefix per store, then a counter. */
export function grantIds(): () => string {
  const prefix = randomBytes(6).toString("base64url");
  let n = 0;
  return () => `${prefix}.${(n++).toString(36)}`;
}
