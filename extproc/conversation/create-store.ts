/**
 * The conversation store `gearbox serve` runs with: on Redis, shared by every replica, when a
 * Redis URL is given (`REDIS_URL`), behind the shared-state guard (last good reads, writes skipped
 * while Redis fails); in memory otherwise. Off when `conversations.enable` is false.
 */
import type { GatewayConfig } from "../config/load.ts";
import type { EdgeDirectory } from "../edge/agents.ts";
import { EdgeSummarizer } from "./edge-summarizer.ts";
import { EdgeTokenCounts } from "./edge-tokens.ts";
import type { Logger } from "../../common/telemetry/logger.ts";
import { connectRedis } from "../store/redis.ts";
import type { SharedStateHealth } from "../store/store-health.ts";
import { Conversations } from "./conversations.ts";
import { GuardedConversationStore } from "./guarded-store.ts";
import { MemoryConversationStore } from "./memory-store.ts";
import { RedisConversationStore } from "./redis-store.ts";

export interface ConversationsSetup {
  conversations?: Conversations;
  /** The banner's line. */
  describe: string;
  close(): Promise<void>;
}

const MEANING = {
  degraded: "requests go on with the history their clients send; exchanges are not stored",
  healthy: "conversations are read and stored again",
};

/**
 * The edge summarizer `conversations.summarizer` asks for: `edge`, or `auto` with an edge model
 * configured; none for `extractive` or without a model (extractive is then the only one).
 */
export function edgeSummarizerFor(config: GatewayConfig, edges: EdgeDirectory | undefined): EdgeSummarizer | undefined {
  const settings = config.conversations;
  const model = settings.edge_summarizer.model ?? config.edge.default_model;
  if (settings.summarizer === "extractive" || model === undefined || edges === undefined) return undefined;
  return new EdgeSummarizer({ agents: () => edges, model, timeoutMs: settings.edge_summarizer.timeout_ms, maxTokens: settings.edge_summarizer.max_tokens });
}

export function createConversations(
  config: GatewayConfig,
  options: { redisUrl?: string; logger: Logger; sharedState?: SharedStateHealth; edges?: EdgeDirectory },
): ConversationsSetup {
  const settings = config.conversations;
  if (!settings.enable) return { describe: "  conversations   off", close: () => Promise.resolve() };
  const ttl = `ttl ${settings.ttl_ms} ms`;
  const summarizer = edgeSummarizerFor(config, options.edges);
  const edges = options.edges;
  const extras = { ...(summarizer && { summarizer }), ...(edges && { edgeTokens: new EdgeTokenCounts({ agents: () => edges }) }) };
  const summaries = summarizer ? `${summarizer.by} summaries, extractive until written and when it fails` : "extractive summaries";
  if (!options.redisUrl) {
    const store = new MemoryConversationStore({ ttlMs: settings.ttl_ms, maxConversations: settings.max_conversations });
    return {
      conversations: new Conversations(store, settings, options.logger, extras),
      describe: `  conversations   in memory (${settings.max_conversations} at most, ${ttl}; ${summaries})`,
      close: () => store.close(),
    };
  }
  const redis = connectRedis(options.redisUrl, { logger: options.logger, name: "gearbox-conversations" });
  const health = options.sharedState?.store("conversations", MEANING);
  const inner = new RedisConversationStore(redis, "gearbox:", { ttlMs: settings.ttl_ms });
  const store = health
    ? new GuardedConversationStore(inner, { health, readTimeoutMs: config.shared_state.read_timeout_ms, maxStaleMs: config.shared_state.max_stale_ms })
    : inner;
  return {
    conversations: new Conversations(store, settings, options.logger, extras),
    describe: `  conversations   on Redis (REDIS_URL, ${ttl}; ${summaries})`,
    close: () => Promise.resolve(redis.disconnect()),
  };
}
