/**
 * The response cache on Redis, shared by every replica: one string per entry under
 * `<prefix>{t:<tenant>}:cache:<hash>`, written with `SET … PX ttl`. Redis bounds the total with
 * its own `maxmemory` policy. Any Redis error (down, restarting, timed out) is a miss or a
 * dropped write, logged at debug: the cache never turns into a failed request. Once Redis has
 * failed, the store's `StoreHealth` (`cache`) skips it, one try a second, until it answers
 * again: a frozen Redis costs one command timeout, not one per request.
 */
import type { Redis } from "ioredis";
import { StoreHealth } from "../store/store-health.ts";
import type { Logger } from "../../common/telemetry/logger.ts";
import type { CachedAnswer, CacheKey, ResponseCache } from "./response-cache.ts";

/** What the exact cache's transitions mean, for their log lines. */
export const CACHE_MEANING = { degraded: "exact-cache lookups are misses and answers are not stored until it answers", healthy: "the exact cache is back" };

export class RedisResponseCache implements ResponseCache {
  private readonly prefix: string;
  private readonly health: StoreHealth;

  constructor(
    private readonly redis: Redis,
    private readonly logger: Logger,
    options: { prefix?: string; health?: StoreHealth } = {},
  ) {
    this.prefix = options.prefix ?? "gearbox:";
    this.health = options.health ?? new StoreHealth("cache", logger, { meaning: CACHE_MEANING });
  }

  async get(key: CacheKey): Promise<CachedAnswer | undefined> {
    if (!this.health.mayTry()) return void this.health.fellBack();
    try {
      const completion = await this.redis.get(this.keyOf(key));
      this.health.succeeded();
      return completion === null ? undefined : { completion };
    } catch (err) {
      this.failed(err, "get");
      return undefined;
    }
  }

  async put(key: CacheKey, answer: CachedAnswer, ttlMs: number): Promise<void> {
    if (!this.health.mayTry()) return void this.health.fellBack();
    try {
      await this.redis.set(this.keyOf(key), answer.completion, "PX", ttlMs);
      this.health.succeeded();
    } catch (err) {
      this.failed(err, "set");
    }
  }

  private failed(err: unknown, operation: string): void {
    this.logger.debug({ err: (err as Error).message }, `response cache: redis ${operation} failed; ${operation === "get" ? "a miss" : "not stored"}`);
    this.health.failed(err, operation);
    this.health.fellBack();
  }

  /** The full Redis key of an entry (the tenant's hash tag keeps its keys on one Cluster slot). */
  keyOf(key: CacheKey): string {
    return `${this.prefix}{t:${key.tenant}}:cache:${key.hash}`;
  }
}
