/**
 * The semantic cache a process runs with, from `cache.semantic`: the embedder and optional
 * verifier (`embedder-factory.ts`), the store (memory, or Redis shared by every replica:
 * `create-semantic-store.ts`) and the `SemanticCache` over them. Off → none. A config the rest of
 * the file cannot satisfy is an error naming the field.
 */
import type { EdgeDirectory } from "../../edge/agents.ts";
import type { GatewayConfig } from "../../config/load.ts";
import { fail, ok, type Result } from "../../../common/result.ts";
import type { Redis } from "../../store/redis.ts";
import type { SharedStateHealth } from "../../store/store-health.ts";
import type { Logger } from "../../../common/telemetry/logger.ts";
import { createSemanticStore } from "./create-semantic-store.ts";
import { createEmbedder, createVerifier } from "./embedder-factory.ts";
import { SemanticCache } from "./semantic-cache.ts";
import type { SemanticStore } from "./semantic-store.ts";

export interface SemanticCacheSetup {
  cache?: SemanticCache;
  store?: SemanticStore;
  /** Lines for the startup summary. */
  describe: string;
  close(): Promise<void>;
}

export interface SemanticCacheOptions {
  logger: Logger;
  /** The edge agents of the moment (live ones from the control plane, or the config's), read per call. */
  edges: EdgeDirectory;
  redisUrl?: string;
  redis?: Redis;
  /** Where the Redis store reports its health (for `/metrics`). */
  sharedState?: SharedStateHealth;
}

export function createSemanticCache(config: GatewayConfig, options: SemanticCacheOptions): Result<SemanticCacheSetup> {
  const semantic = config.cache.semantic;
  if (!semantic.enable) return ok({ describe: "  semantic cache  off", close: () => Promise.resolve() });
  const embedder = createEmbedder(config, options.edges);
  if (!embedder.ok) return embedder;
  const verifier = createVerifier(config, options.edges);
  if (!verifier.ok) return verifier;
  const stored = createSemanticStore(semantic, {
    dimensions: embedder.value.dimensions,
    logger: options.logger,
    ...(options.redisUrl !== undefined && { redisUrl: options.redisUrl }),
    ...(options.redis && { redis: options.redis }),
    ...(options.sharedState && { sharedState: options.sharedState }),
  });
  if (!stored.store) return fail("cache.semantic: no store could be made");
  const cache = new SemanticCache({
    store: stored.store,
    embedder: embedder.value,
    ...(verifier.value && { verifier: verifier.value }),
    config: semantic,
    logger: options.logger,
  });
  const checks =
    [semantic.entity_guard && "entity guard", semantic.fingerprint && "fingerprint", verifier.value && "edge verification"].filter(Boolean).join(", ") ||
    "no checks";
  return ok({
    cache,
    store: stored.store,
    describe: `${stored.describe}\n                  embedder ${embedder.value.name}, threshold ${semantic.threshold}, ${checks}`,
    close: () => stored.close(),
  });
}

/** An `EdgeDirectory` that asks `current()` on every call: the live set may be swapped under it. */
export function currentEdges(current: () => EdgeDirectory): EdgeDirectory {
  return {
    serves: (model) => current().serves(model),
    pick: (model, node) => current().pick(model, node),
  };
}
