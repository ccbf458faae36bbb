/**
 * One scenario's figures from its samples: sent, succeeded, failed by cause, refusals by a limit,
 * admissions over a limit, upstream calls and the extra ones retries caused, latency, memory.
 */
import type { Memory } from "../../test/support/gateway-process.ts";
import type { Sample } from "../../test/faults/traffic.ts";

export interface Row {
  scenario: string;
  transport: "front door" | "envoy";
  sent: number;
  succeeded: number;
  /** Refused by one of Gearbox's own limits (429 with `x-gearbox-limit`): intended, not a failure. */
  refusedByLimit: number;
  /** Failures by cause (`503 auth_unavailable`, `connection ECONNRESET`, `stream cut`…). */
  failed: Record<string, number>;
  /** Admissions beyond the limit in any 1 s bucket (null: no limit in this scenario). */
  overLimit: number | null;
  /** Calls the provider emulators received. */
  upstreamCalls: number;
  /** Upstream calls beyond one per request that needed the provider (retries, fallbacks); share of those requests. */
  extraCalls: number;
  extraShare: number;
  /** Answers that carried `x-gearbox-fallback`. */
  fallbacks: number;
  p50: number;
  p99: number;
  /** p50 of the same traffic with no fault, in the same run (when the scenario measures one). */
  baselineP50?: number;
  memoryBefore?: Memory;
  memoryAfter?: Memory;
  /** What the issue asks of this scenario, and whether this run met it. */
  goal?: { text: string; met: boolean };
  notes: string[];
}

export function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

/**
 * Admissions beyond `limit` per 1 s bucket, from the gateway's request log: a request admitted
 * (answered 200 from a provider, not the cache) counts in the second it started
 * (`time - duration_ms`), so client-side queueing does not move it to another second.
 */
export function overLimit(logs: readonly Record<string, unknown>[], limit: number): number {
  const buckets = new Map<number, number>();
  for (const l of logs) {
    if (l.msg !== "request" || l.status !== 200 || l.route === "cache" || typeof l.time !== "number" || typeof l.duration_ms !== "number") continue;
    const second = Math.floor((l.time - l.duration_ms) / 1000);
    buckets.set(second, (buckets.get(second) ?? 0) + 1);
  }
  let over = 0;
  for (const n of buckets.values()) over += Math.max(0, n - limit);
  return over;
}

export interface TallyInput {
  scenario: string;
  transport: Row["transport"];
  samples: readonly Sample[];
  upstreamCalls: number;
  /** Requests-per-second limit in force, if any, and the gateway's request log lines of the run. */
  limit?: { perSecond: number; logs: readonly Record<string, unknown>[] };
  /** Which samples count for latency (default all successes). */
  latencyOf?: (s: Sample) => boolean;
}

export function tally(input: TallyInput): Row {
  const { samples } = input;
  const failed: Record<string, number> = {};
  let succeeded = 0;
  let refused = 0;
  let needingUpstream = 0;
  for (const s of samples) {
    if (s.cause === "ok") succeeded += 1;
    else if (s.cause === "limit") refused += 1;
    else failed[s.cause] = (failed[s.cause] ?? 0) + 1;
    if (s.cause !== "limit" && s.route !== "cache" && s.route !== "edge") needingUpstream += 1;
  }
  const extra = Math.max(0, input.upstreamCalls - needingUpstream);
  const timed = samples.filter(input.latencyOf ?? ((s) => s.cause === "ok")).map((s) => s.ms);
  return {
    scenario: input.scenario,
    transport: input.transport,
    sent: samples.length,
    succeeded,
    refusedByLimit: refused,
    failed,
    overLimit: input.limit === undefined ? null : overLimit(input.limit.logs, input.limit.perSecond),
    upstreamCalls: input.upstreamCalls,
    extraCalls: extra,
    extraShare: needingUpstream > 0 ? extra / needingUpstream : 0,
    fallbacks: samples.filter((s) => s.fallback !== undefined).length,
    p50: percentile(timed, 50),
    p99: percentile(timed, 99),
    notes: [],
  };
}

/** Failures whose cause `blame` attributes to the fault under test. */
export function failures(row: Row, blame: (cause: string) => boolean = () => true): number {
  return Object.entries(row.failed)
    .filter(([cause]) => blame(cause))
    .reduce((n, [, count]) => n + count, 0);
}
