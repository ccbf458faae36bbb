/**
 * Where tenants made over the admin API and all API keys live. Tenants from the config file are
 * not stored here: every replica reads them from its file (`governance/directory.ts` layers them
 * over this store). Key records hold only the key's hash; a key is looked up by that hash.
 *
 * Implementations: `memory-tenant-store.ts` (one process), `redis-tenant-store.ts` (replicas).
 */
import type { ApiKeyRecord, Tenant } from "../governance/model.ts";

export interface TenantStore {
  getTenant(id: string): Promise<Tenant | undefined>;
  /** Every stored tenant, by id. */
  listTenants(): Promise<Tenant[]>;
  /** Creates or replaces the tenant with this id. */
  putTenant(tenant: Tenant): Promise<void>;
  /** False when there was no such tenant. Its keys are left as they are (revoke them first). */
  deleteTenant(id: string): Promise<boolean>;

  /** Stores a new key record (ids and hashes are unique: they are random). */
  putKey(record: ApiKeyRecord): Promise<void>;
  /** The hot-path lookup: one read. Revoked keys are returned too (with `revoked_at`). */
  keyByHash(hash: string): Promise<ApiKeyRecord | undefined>;
  getKey(id: string): Promise<ApiKeyRecord | undefined>;
  /** Keys, revoked ones included, by creation time; with `tenant`, only that tenant's. */
  listKeys(tenant?: string): Promise<ApiKeyRecord[]>;
  /** Marks the key revoked at `at` (an already revoked key keeps its first time); undefined when unknown. */
  revokeKey(id: string, at: Date): Promise<ApiKeyRecord | undefined>;
}

/** Keys in creation order, then by id: the order `listKeys` returns. */
export function byCreation(a: ApiKeyRecord, b: ApiKeyRecord): number {
  return a.created_at.localeCompare(b.created_at) || a.id.localeCompare(b.id);
}
