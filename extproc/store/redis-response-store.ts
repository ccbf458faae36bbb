/**
 * The response store on Redis, shared by every replica: one string per response,
 * `<prefix>{<tenant>}:response:<id>` (the tenant is the hash tag, as every per-tenant key is),
 * written with `SET … PX ttl`. Commands are bounded by the client's command timeout and fail
 * fast while Redis is down (no offline queue): `get` and `put` reject then.
 */
import type { Redis } from "ioredis";
import type { ResponseStore, ResponseStoreOptions, StoredResponse } from "./response-store.ts";

export class RedisResponseStore implements ResponseStore {
  constructor(
    private readonly redis: Redis,
    private readonly options: ResponseStoreOptions,
    private readonly prefix = "gearbox:",
    private readonly owned = false,
  ) {}

  private key(tenant: string, id: string): string {
    return `${this.prefix}{${tenant}}:response:${id}`;
  }

  async get(tenant: string, id: string): Promise<StoredResponse | undefined> {
    const raw = await this.redis.get(this.key(tenant, id));
    return raw === null ? undefined : (JSON.parse(raw) as StoredResponse);
  }

  async put(tenant: string, id: string, value: StoredResponse): Promise<void> {
    await this.redis.set(this.key(tenant, id), JSON.stringify(value), "PX", this.options.ttlMs);
  }

  async close(): Promise<void> {
    if (this.owned) await this.redis.quit().catch(() => undefined);
  }
}
