/**
 * The semantic store a process runs with: none when `cache.semantic.enable` is off; on Redis,
 * shared by every replica, when a Redis URL (`REDIS_URL`) or client is given; in memory
 * otherwise. Either way the vector index runs on a worker thread (`index-client.ts`).
 */
import type { SemanticCacheConfig } from "../../config/schema.ts";
import { connectRedis, type Redis } from "../../store/redis.ts";
import type { Logger } from "../../../common/telemetry/logger.ts";
import { WorkerIndex } from "./index-client.ts";
import { MemorySemanticStore } from "./memory-semantic-store.ts";
import { RedisSemanticStore, SEMANTIC_MEANING } from "./redis-semantic-store.ts";
import type { SharedStateHealth } from "../../store/store-health.ts";
import type { SemanticStore } from "./semantic-store.ts";

export interface SemanticStoreSetup {
  store?: SemanticStore;
  /** One line for the startup summary. */
  describe: string;
  /** Closes the store (and its index worker) and the Redis connection this made, if any. */
  close(): Promise<void>;
}

export interface SemanticStoreOptions {
  /** The embedder's dimensions (`Embedder.dimensions`). */
  dimensions: number;
  logger: Logger;
  /** A Redis to share entries through: a URL (this opens and closes the connection) or a client (the caller's). */
  redisUrl?: string;
  redis?: Redis;
  /** Where the Redis store reports its health (for `/metrics`). */
  sharedState?: SharedStateHealth;
}

export function createSemanticStore(config: SemanticCacheConfig, options: SemanticStoreOptions): SemanticStoreSetup {
  if (!config.enable) return { describe: "  semantic cache  off", close: () => Promise.resolve() };
  const logger = options.logger;
  const index = new WorkerIndex({
    dimensions: options.dimensions,
    quantization: config.index.quantization,
    connectivity: config.index.connectivity,
    expansionSearch: config.index.expansion_search,
    logger,
  });
  const shape = `${options.dimensions} dims, ${config.index.quantization}, ttl ${config.ttl_ms} ms`;
  if (!options.redisUrl && !options.redis) {
    const store = new MemorySemanticStore({ index, maxBytes: config.max_bytes, maxEntries: config.max_entries, logger });
    return { store, describe: `  semantic cache  in memory (${config.max_bytes} bytes, ${config.max_entries} entries, ${shape})`, close: () => store.close() };
  }
  const owned = options.redis ? undefined : connectRedis(options.redisUrl!, { logger, name: "gearbox-semantic" });
  const health = options.sharedState?.store("semantic", SEMANTIC_MEANING);
  const store = new RedisSemanticStore({ redis: options.redis ?? owned!, index, logger, ...(health && { health }) });
  return {
    store,
    describe: `  semantic cache  on Redis (${options.redis ? "shared client" : "REDIS_URL"}, ${shape})`,
    close: async () => {
      await store.close();
      owned?.disconnect();
    },
  };
}
