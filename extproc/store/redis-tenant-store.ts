/**
 * `TenantStore` in Redis, Cluster-ready: a tenant's own data carries its hash tag.
 *
 *   <p>{t:<id>}:tenant   string  the tenant (JSON)
 *   <p>{t:<id>}:keys     set     ids of the tenant's keys
 *   <p>tenants           set     every tenant id (the listing index)
 *   <p>key:<sha256>      string  a key record (JSON), found by the key's hash: the hot path's one read
 *   <p>keys              hash    key id → key hash (the listing index, and lookups by id)
 *
 * Writes touching several slots are separate commands (no cross-slot transaction in a Cluster):
 * records are written before their index entries and unindexed before they are deleted, and
 * readers skip index entries whose record is gone.
 */
import type { ApiKeyRecord, Tenant } from "../governance/model.ts";
import type { Redis } from "ioredis";
import { byCreation, type TenantStore } from "./tenant-store.ts";

export class RedisTenantStore implements TenantStore {
  /** `prefix` must not contain `{`: the first `{…}` in a key is its hash tag. */
  constructor(
    private readonly redis: Redis,
    private readonly prefix = "gbx:",
  ) {
    if (prefix.includes("{")) throw new Error(`Redis key prefix '${prefix}' must not contain '{'`);
  }

  private tenantKey(id: string): string {
    return `${this.prefix}{t:${id}}:tenant`;
  }

  private tenantKeysKey(id: string): string {
    return `${this.prefix}{t:${id}}:keys`;
  }

  private keyRecordKey(hash: string): string {
    return `${this.prefix}key:${hash}`;
  }

  async getTenant(id: string): Promise<Tenant | undefined> {
    const text = await this.redis.get(this.tenantKey(id));
    return text === null ? undefined : (JSON.parse(text) as Tenant);
  }

  async listTenants(): Promise<Tenant[]> {
    const ids = await this.redis.smembers(`${this.prefix}tenants`);
    const tenants = await Promise.all(ids.map((id) => this.getTenant(id)));
    return tenants.filter((t): t is Tenant => t !== undefined).sort((a, b) => a.id.localeCompare(b.id));
  }

  async putTenant(tenant: Tenant): Promise<void> {
    await this.redis.set(this.tenantKey(tenant.id), JSON.stringify(tenant));
    await this.redis.sadd(`${this.prefix}tenants`, tenant.id);
  }

  async deleteTenant(id: string): Promise<boolean> {
    await this.redis.srem(`${this.prefix}tenants`, id);
    return (await this.redis.del(this.tenantKey(id))) > 0;
  }

  async putKey(record: ApiKeyRecord): Promise<void> {
    const created = await this.redis.set(this.keyRecordKey(record.hash), JSON.stringify(record), "NX");
    if (created === null) throw new Error(`a key with the hash of ${record.id} already exists`);
    await this.redis.hset(`${this.prefix}keys`, record.id, record.hash);
    if (record.tenant !== undefined) await this.redis.sadd(this.tenantKeysKey(record.tenant), record.id);
  }

  async keyByHash(hash: string): Promise<ApiKeyRecord | undefined> {
    const text = await this.redis.get(this.keyRecordKey(hash));
    return text === null ? undefined : (JSON.parse(text) as ApiKeyRecord);
  }

  async getKey(id: string): Promise<ApiKeyRecord | undefined> {
    const hash = await this.redis.hget(`${this.prefix}keys`, id);
    return hash === null ? undefined : this.keyByHash(hash);
  }

  async listKeys(tenant?: string): Promise<ApiKeyRecord[]> {
    const hashes = tenant === undefined ? await this.redis.hvals(`${this.prefix}keys`) : await this.tenantKeyHashes(tenant);
    const records = await Promise.all(hashes.map((h) => this.keyByHash(h)));
    return records.filter((r): r is ApiKeyRecord => r !== undefined && (tenant === undefined || r.tenant === tenant)).sort(byCreation);
  }

  private async tenantKeyHashes(tenant: string): Promise<string[]> {
    const ids = await this.redis.smembers(this.tenantKeysKey(tenant));
    if (ids.length === 0) return [];
    const hashes = await this.redis.hmget(`${this.prefix}keys`, ...ids);
    return hashes.filter((h): h is string => h !== null);
  }

  async revokeKey(id: string, at: Date): Promise<ApiKeyRecord | undefined> {
    const record = await this.getKey(id);
    if (!record || record.revoked_at !== undefined) return record;
    const revoked: ApiKeyRecord = { ...record, revoked_at: at.toISOString() };
    await this.redis.set(this.keyRecordKey(record.hash), JSON.stringify(revoked), "XX");
    return revoked;
  }
}
