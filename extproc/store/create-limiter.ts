/**
 * The limiter store a process runs on: Redis shared by every replica, with this replica's
 * memory standing in while Redis fails, when a Redis URL is given (`REDIS_URL`); memory alone
 * otherwise (the embedded default).
 */
import type { Logger } from "../../common/telemetry/logger.ts";
import { FailoverLimiter, LIMITS_MEANING, type LimiterStats } from "./failover-limiter.ts";
import type { LimiterStore } from "./limiter.ts";
import { MemoryLimiter } from "./memory-limiter.ts";
import { connectRedis } from "./redis.ts";
import { RedisLimiter } from "./redis-limiter.ts";
import type { SharedStateHealth } from "./store-health.ts";

export interface LimiterSetup {
  store: LimiterStore;
  /** Redis health and fallback counters; absent on memory alone. */
  stats?: LimiterStats;
  /** Stops the probe and closes the Redis connection. */
  close(): void;
}

export function createLimiterStore(options: {
  redisUrl?: string;
  logger: Logger;
  prefix?: string;
  sharedState?: SharedStateHealth;
  probeEveryMs?: number;
}): LimiterSetup {
  if (!options.redisUrl) return { store: new MemoryLimiter(), close: () => undefined };
  const redis = connectRedis(options.redisUrl, { logger: options.logger, name: "gearbox-limits" });
  const health = options.sharedState?.store("limits", LIMITS_MEANING);
  const store = new FailoverLimiter(
    new RedisLimiter(redis, options.prefix === undefined ? {} : { prefix: options.prefix }),
    new MemoryLimiter(),
    options.logger,
    options.probeEveryMs,
    health,
  );
  return {
    store,
    stats: store.stats,
    close: () => {
      store.close();
      redis.disconnect();
    },
  };
}
