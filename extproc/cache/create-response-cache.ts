/**
 * The response cache a process runs with: none when `cache.exact.enable` is off; on Redis,
 * shared by every replica, when a Redis URL is given (`REDIS_URL`); in memory otherwise.
 */
import type { GatewayConfig } from "../config/load.ts";
import { connectRedis } from "../store/redis.ts";
import type { SharedStateHealth } from "../store/store-health.ts";
import type { Logger } from "../../common/telemetry/logger.ts";
import { MemoryResponseCache } from "./memory-response-cache.ts";
import { CACHE_MEANING, RedisResponseCache } from "./redis-response-cache.ts";
import type { ResponseCache } from "./response-cache.ts";

export interface ResponseCacheSetup {
  cache?: ResponseCache;
  /** One line for the startup summary. */
  describe: string;
  /** Closes the Redis connection, if any. */
  close(): void;
}

export function createResponseCache(
  config: GatewayConfig,
  options: { redisUrl?: string; logger: Logger; sharedState?: SharedStateHealth },
): ResponseCacheSetup {
  const exact = config.cache.exact;
  if (!exact.enable) return { describe: "  cache           off", close: () => undefined };
  const ttl = `ttl ${exact.ttl_ms} ms`;
  if (!options.redisUrl)
    return {
      cache: new MemoryResponseCache(exact.max_bytes),
      describe: `  cache           exact, in memory (${exact.max_bytes} bytes, ${ttl})`,
      close: () => undefined,
    };
  const redis = connectRedis(options.redisUrl, { logger: options.logger, name: "gearbox-cache" });
  const health = options.sharedState?.store("cache", CACHE_MEANING);
  return {
    cache: new RedisResponseCache(redis, options.logger, { ...(health && { health }) }),
    describe: `  cache           exact, on Redis (REDIS_URL, ${ttl})`,
    close: () => redis.disconnect(),
  };
}
