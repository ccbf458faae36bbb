/**
 * The tenants a replica knows: the config file's (`source: "config"`, read-only over the admin
 * API) layered over the store's (`source: "admin"`); a config tenant shadows a stored one with the
 * same id. Lookups read a snapshot refreshed at most every `ttlMs` (default 5 s), so the hot path
 * costs one store listing per replica per interval, not one read per request.
 */
import type { TenantStore } from "../store/tenant-store.ts";
import type { Tenant } from "./model.ts";

export const TENANT_CACHE_TTL_MS = 5_000;

export interface TenantSnapshot {
  /** Config tenants first, then stored ones by id. */
  byId: ReadonlyMap<string, Tenant>;
  /** Workload identity → its tenant (the first tenant to claim it). */
  byPrincipal: ReadonlyMap<string, Tenant>;
}

export interface DirectoryOptions {
  ttlMs?: number;
  /** Clock in ms (tests). */
  now?: () => number;
}

export class TenantDirectory {
  private readonly fromConfig: ReadonlyMap<string, Tenant>;
  private readonly ttlMs: number;
  private readonly now: () => number;
  private cached: { at: number; snapshot: Promise<TenantSnapshot> } | undefined;

  constructor(
    configTenants: readonly Omit<Tenant, "source">[],
    private readonly store: TenantStore,
    options: DirectoryOptions = {},
  ) {
    this.fromConfig = new Map(configTenants.map((t) => [t.id, { ...t, source: "config" }]));
    this.ttlMs = options.ttlMs ?? TENANT_CACHE_TTL_MS;
    this.now = options.now ?? Date.now;
  }

  /** The config file's tenant with this id (the admin API may not change it). */
  configTenant(id: string): Tenant | undefined {
    return this.fromConfig.get(id);
  }

  /** The tenants as of at most `maxAgeMs` ago (0: read the store now). */
  snapshot(maxAgeMs = this.ttlMs): Promise<TenantSnapshot> {
    const at = this.now();
    if (this.cached && at - this.cached.at < maxAgeMs) return this.cached.snapshot;
    const snapshot = this.load();
    const entry = { at, snapshot };
    this.cached = entry;
    // A failed read is not cached: the next lookup tries the store again.
    snapshot.catch(() => {
      if (this.cached === entry) this.cached = undefined;
    });
    return snapshot;
  }

  /** Drops the snapshot (after a change made through this replica). */
  invalidate(): void {
    this.cached = undefined;
  }

  private async load(): Promise<TenantSnapshot> {
    const byId = new Map(this.fromConfig);
    for (const tenant of await this.store.listTenants()) if (!byId.has(tenant.id)) byId.set(tenant.id, tenant);
    const byPrincipal = new Map<string, Tenant>();
    for (const tenant of byId.values()) for (const p of tenant.principals ?? []) if (!byPrincipal.has(p)) byPrincipal.set(p, tenant);
    return { byId, byPrincipal };
  }
}
