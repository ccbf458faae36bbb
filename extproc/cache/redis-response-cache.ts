/**
 * The response cache on Redis, shared by every replica: one string per entry under
 * `<prefix>{t:<tenant>}:cache:<hash>`, written with `SET … PX ttl`. Redis bounds the total with
 * its own `maxmemory` policy. Any Redis error (down, restarting, timed out) is a miss or a
 * dropped write, logged at debug: the cache never turns into a failed request.
 */
import type { Redis } from "ioredis";
import type { Logger } from "../telemetry/logger.ts";
import type { CachedAnswer, CacheKey, ResponseCache } from "./response-cache.ts";

export class RedisResponseCache implements ResponseCache {
  private readonly prefix: string;

  constructor(
    private readonly redis: Redis,
    private readonly logger: Logger,
    options: { prefix?: string } = {},
  ) {
    this.prefix = options.prefix ?? "gearbox:";
  }

  async get(key: CacheKey): Promise<CachedAnswer | undefined> {
    try {
      const completion = await this.redis.get(this.keyOf(key));
      return completion === null ? undefined : { completion };
    } catch (err) {
      this.logger.debug({ err: (err as Error).message }, "response cache: redis get failed; a miss");
      return undefined;
    }
  }

  async put(key: CacheKey, answer: CachedAnswer, ttlMs: number): Promise<void> {
    try {
      await this.redis.set(this.keyOf(key), answer.completion, "PX", ttlMs);
    } catch (err) {
      this.logger.debug({ err: (err as Error).message }, "response cache: redis set failed; not stored");
    }
  }

  /** The full Redis key of an entry (the tenant's hash tag keeps its keys on one Cluster slot). */
  keyOf(key: CacheKey): string {
    return `${this.prefix}{t:${key.tenant}}:cache:${key.hash}`;
  }
}
