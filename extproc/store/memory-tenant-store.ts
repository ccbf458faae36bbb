/** `TenantStore` in process memory: the embedded default. Records are copied in and out. */
import type { ApiKeyRecord, Tenant } from "../governance/model.ts";
import { byCreation, type TenantStore } from "./tenant-store.ts";

export class MemoryTenantStore implements TenantStore {
  private readonly tenants = new Map<string, Tenant>();
  private readonly keysByHash = new Map<string, ApiKeyRecord>();
  private readonly hashById = new Map<string, string>();

  getTenant(id: string): Promise<Tenant | undefined> {
    const tenant = this.tenants.get(id);
    return Promise.resolve(tenant && structuredClone(tenant));
  }

  listTenants(): Promise<Tenant[]> {
    const all = [...this.tenants.values()].sort((a, b) => a.id.localeCompare(b.id));
    return Promise.resolve(structuredClone(all));
  }

  putTenant(tenant: Tenant): Promise<void> {
    this.tenants.set(tenant.id, structuredClone(tenant));
    return Promise.resolve();
  }

  deleteTenant(id: string): Promise<boolean> {
    return Promise.resolve(this.tenants.delete(id));
  }

  putKey(record: ApiKeyRecord): Promise<void> {
    this.keysByHash.set(record.hash, structuredClone(record));
    this.hashById.set(record.id, record.hash);
    return Promise.resolve();
  }

  keyByHash(hash: string): Promise<ApiKeyRecord | undefined> {
    const record = this.keysByHash.get(hash);
    return Promise.resolve(record && structuredClone(record));
  }

  getKey(id: string): Promise<ApiKeyRecord | undefined> {
    const hash = this.hashById.get(id);
    return hash === undefined ? Promise.resolve(undefined) : this.keyByHash(hash);
  }

  listKeys(tenant?: string): Promise<ApiKeyRecord[]> {
    const all = [...this.keysByHash.values()].filter((k) => tenant === undefined || k.tenant === tenant);
    return Promise.resolve(structuredClone(all.sort(byCreation)));
  }

  revokeKey(id: string, at: Date): Promise<ApiKeyRecord | undefined> {
    const hash = this.hashById.get(id);
    const record = hash === undefined ? undefined : this.keysByHash.get(hash);
    if (!record) return Promise.resolve(undefined);
    record.revoked_at ??= at.toISOString();
    return Promise.resolve(structuredClone(record));
  }
}
