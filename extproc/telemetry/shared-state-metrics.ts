/**
 * The shared-state metrics, read at scrape time from each Redis-backed store's `StoreHealth`
 * (`store/store-health.ts`); `store` is one of a fixed few (`tenants`, `limits`, `cache`, `semantic`).
 *
 * - `gearbox_shared_state_degraded{store}`: 1 while the store answers without Redis.
 * - `gearbox_shared_state_transitions_total{store,to}`: `to` is `degraded` or `healthy`.
 * - `gearbox_shared_state_stale_reads_total{store}`: reads answered with a last good value.
 * - `gearbox_shared_state_fallbacks_total{store}`: calls answered without Redis otherwise (a cache
 *   miss, a dropped write, a local limit decision).
 * - `gearbox_shared_state_errors_total{store}`: Redis calls that failed or passed their deadline.
 */
import { Counter, Gauge, type Registry } from "prom-client";
import type { StoreHealthStats } from "../store/store-health.ts";

export interface SharedStateSource {
  stats(): readonly StoreHealthStats[];
}

export function registerSharedStateMetrics(registers: Registry[], source: SharedStateSource): void {
  new Gauge({
    name: "gearbox_shared_state_degraded",
    help: "1 while a Redis-backed store answers without Redis (last good values, cache misses, local limits), by store.",
    labelNames: ["store"],
    registers,
    collect() {
      for (const s of source.stats()) this.set({ store: s.store }, s.degraded ? 1 : 0);
    },
  });
  new Counter({
    name: "gearbox_shared_state_transitions_total",
    help: "A Redis-backed store turning degraded (Redis failed or passed its deadline) or healthy again, by store and state entered (to).",
    labelNames: ["store", "to"],
    registers,
    collect() {
      this.reset();
      for (const s of source.stats()) {
        this.inc({ store: s.store, to: "degraded" }, s.toDegraded);
        this.inc({ store: s.store, to: "healthy" }, s.toHealthy);
      }
    },
  });
  counterOf(
    registers,
    source,
    "gearbox_shared_state_stale_reads_total",
    "Reads answered with a last good value because Redis failed, was slow or was skipped, by store.",
    (s) => s.staleReads,
  );
  counterOf(
    registers,
    source,
    "gearbox_shared_state_fallbacks_total",
    "Calls answered without Redis because it failed or was skipped (a cache miss, a dropped write, a local limit decision), by store.",
    (s) => s.fallbacks,
  );
  counterOf(
    registers,
    source,
    "gearbox_shared_state_errors_total",
    "Redis calls on the request path that failed or passed their deadline, by store.",
    (s) => s.errors,
  );
}

function counterOf(registers: Registry[], source: SharedStateSource, name: string, help: string, read: (s: StoreHealthStats) => number): void {
  new Counter({
    name,
    help,
    labelNames: ["store"],
    registers,
    collect() {
      this.reset();
      for (const s of source.stats()) this.inc({ store: s.store }, read(s));
    },
  });
}
