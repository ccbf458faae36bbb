/**
 * Zod schema of provider resilience: the `resilience:` section (retries, retry budget, circuit
 * breaker, fallback chains) and each provider's `timeouts:`. Merged into the main schema in
 * `config/schema.ts`; chains are checked against the providers in `fallback-chains.ts`.
 */
import { z } from "zod";

const ms = z.number().int().positive();

/** `providers[].timeouts`: every call Gearbox makes to the provider (front door, fallbacks, upgrades). */
export const providerTimeoutsSchema = z.strictObject({
  /** TCP (and TLS) connection set-up. */
  connect_ms: ms.default(5_000),
  /** From the request sent to the answer's status and headers (a whole answer, unless streamed); default `total_ms`. */
  first_byte_ms: ms.optional(),
  /** Longest silence between two body chunks (streams included). */
  idle_ms: ms.default(120_000),
  /** The whole call; default the provider's `timeout_ms`. */
  total_ms: ms.optional(),
});

export const retrySchema = z.strictObject({
  /** Calls to one provider per request, first included (2 = one retry). 1 turns retries off. */
  max_attempts: z.number().int().min(1).max(10).default(2),
  /** Back-off before retry n is random in [0, min(max, base·2^(n-1))] (full jitter). */
  base_backoff_ms: ms.default(100),
  max_backoff_ms: ms.default(2_000),
  /** A provider's `retry-after` longer than this is not waited for: the chain's next member answers instead. */
  max_retry_after_ms: z.number().int().min(0).default(5_000),
  /** Retries may be at most this share of a provider's calls over `budget_window_ms` (Envoy's retry_budget). */
  budget_ratio: z.number().min(0).max(1).default(0.2),
  /** …but this many retries per second are always allowed (low traffic). */
  min_retries_per_second: z.number().min(0).default(1),
  budget_window_ms: ms.default(10_000),
});

export const breakerSchema = z.strictObject({
  enable: z.boolean().default(true),
  /** Consecutive failures (connection error, timeout, 429, 5xx) that open the breaker. */
  failure_threshold: z.number().int().positive().default(5),
  /** …or this share of failed calls over `window_ms`, once the window holds `min_calls`. */
  failure_ratio: z.number().gt(0).max(1).default(0.5),
  min_calls: z.number().int().positive().default(20),
  window_ms: ms.default(10_000),
  /** How long an open breaker sends no call to the provider before probing it. */
  open_ms: ms.default(10_000),
  /** Calls let through at once while half-open; their success closes the breaker, a failure reopens it. */
  half_open_probes: z.number().int().positive().default(1),
});

/** A chain: models as requests name them (`gpt-4o-mini`, `deepseek/deepseek-chat`), `edge` last. */
const chain = z.array(z.string().min(1)).min(1);

export const resilienceSchema = z.strictObject({
  retry: retrySchema.prefault({}),
  breaker: breakerSchema.prefault({}),
  /** Client model (or `*` for every other model) → the models tried in order when its provider fails. */
  fallbacks: z.record(z.string().min(1), chain).default({}),
});

export type ProviderTimeoutsConfig = z.infer<typeof providerTimeoutsSchema>;
export type RetryConfig = z.infer<typeof retrySchema>;
export type BreakerConfig = z.infer<typeof breakerSchema>;
export type ResilienceConfig = z.infer<typeof resilienceSchema>;
