/**
 * The tenants a replica knows: the config file's (`source: "config"`, read-only over the admin
 * API) layered over the store's (`source: "admin"`); a config tenant shadows a stored one with the
 * same id. Lookups read a snapshot kept as a last good value (`store/last-good.ts`): refreshed at
 * most every `ttlMs` (default 5 s), so the hot path costs one store listing per replica per
 * interval, not one read per request; while the store fails or is slow, the last snapshot read
 * answers for at most `maxStaleMs` (a tenant edited meanwhile keeps its old settings here).
 * With no snapshot to fall back on, the snapshot holds the config's tenants alone and says so
 * (`partial`): callers must not take a tenant's absence from it for an answer.
 */
import { isPending, type Step } from "../../common/step.ts";
import { LastGood } from "../store/last-good.ts";
import { StoreHealth } from "../store/store-health.ts";
import type { TenantStore } from "../store/tenant-store.ts";
import { silentLogger } from "../../common/telemetry/logger.ts";
import type { Tenant } from "./model.ts";

export const TENANT_CACHE_TTL_MS = 5_000;

export interface TenantSnapshot {
  /** Config tenants first, then stored ones by id. */
  byId: ReadonlyMap<string, Tenant>;
  /** Workload identity → its tenant (the first tenant to claim it). */
  byPrincipal: ReadonlyMap<string, Tenant>;
  /** The store could not be read and nothing was read before: the config's tenants only. */
  partial?: true;
}

export interface DirectoryOptions {
  ttlMs?: number;
  /** The tenant store's health (shared with the key cache); a silent one of its own when absent. */
  health?: StoreHealth;
  readTimeoutMs?: number;
  maxStaleMs?: number;
  /** Clock in ms (tests). */
  now?: () => number;
}

export class TenantDirectory {
  private readonly fromConfig: ReadonlyMap<string, Tenant>;
  private readonly configOnly: TenantSnapshot;
  private readonly snapshots: LastGood<"all", TenantSnapshot>;

  constructor(
    configTenants: readonly Omit<Tenant, "source">[],
    private readonly store: TenantStore,
    options: DirectoryOptions = {},
  ) {
    this.fromConfig = new Map(configTenants.map((t) => [t.id, { ...t, source: "config" }]));
    this.configOnly = { ...index(this.fromConfig), partial: true };
    this.snapshots = new LastGood({
      health: options.health ?? new StoreHealth("tenants", silentLogger()),
      freshMs: options.ttlMs ?? TENANT_CACHE_TTL_MS,
      maxEntries: 1,
      ...(options.readTimeoutMs !== undefined && { readTimeoutMs: options.readTimeoutMs }),
      ...(options.maxStaleMs !== undefined && { maxStaleMs: options.maxStaleMs }),
      ...(options.now && { now: options.now }),
    });
  }

  /** The config file's tenant with this id (the admin API may not change it). */
  configTenant(id: string): Tenant | undefined {
    return this.fromConfig.get(id);
  }

  /**
   * The tenants for the hot path: as of at most `ttlMs` ago, the last good snapshot while the
   * store fails, or the config's alone (`partial`) when there is none; at once (no promise)
   * when a snapshot is held. Never rejects. `maxAgeMs` 0 reads the store now and rejects when it
   * fails (the admin API's reads).
   */
  snapshot(maxAgeMs: 0): Promise<TenantSnapshot>;
  snapshot(): Step<TenantSnapshot>;
  snapshot(maxAgeMs?: 0): Step<TenantSnapshot> {
    if (maxAgeMs === 0) return this.load();
    const held = this.snapshots.get("all", () => this.load());
    return isPending(held) ? held.catch(() => this.configOnly) : held;
  }

  /** Drops the snapshot (after a change made through this replica). */
  invalidate(): void {
    this.snapshots.clear();
  }

  private async load(): Promise<TenantSnapshot> {
    const byId = new Map(this.fromConfig);
    for (const tenant of await this.store.listTenants()) if (!byId.has(tenant.id)) byId.set(tenant.id, tenant);
    return index(byId);
  }
}

function index(byId: ReadonlyMap<string, Tenant>): TenantSnapshot {
  const byPrincipal = new Map<string, Tenant>();
  for (const tenant of byId.values()) for (const p of tenant.principals ?? []) if (!byPrincipal.has(p)) byPrincipal.set(p, tenant);
  return { byId, byPrincipal };
}
