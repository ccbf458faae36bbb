/**
 * The gateway's Prometheus metrics (one registry per process, served on `/metrics`, port 9464).
 *
 * Names follow Prometheus conventions (`_total` counters, base units: seconds, USD). Labels are
 * bounded: endpoint, route, status and limit come from fixed sets; `model` is a model the
 * config names (providers, aliases, prices, edge agents) or `other`; `tenant` is a configured
 * tenant. No key, prompt, user or request id is ever a label.
 */
import { Counter, Gauge, Registry, collectDefaultMetrics } from "prom-client";
import { gaugeFrom, totalFrom } from "../../common/telemetry/scraped.ts";
import { registerDeviceMetrics, type DeviceStatsSource } from "./device-metrics.ts";
import { registerSharedStateMetrics, type SharedStateSource } from "./shared-state-metrics.ts";
import { HotCounter, HotHistogram } from "./hot-series.ts";

/** Live numbers owned by other components, read at scrape time. */
export interface MetricSources {
  /** The shared limiter's failover state (`FailoverLimiter.stats`). */
  limiter?: { readonly redisHealthy: boolean; readonly fallbackDecisions: number; readonly redisErrors: number };
  /** Every Redis-backed store's health (`SharedStateHealth`): `gearbox_shared_state_*`. */
  sharedState?: SharedStateSource;
  /** The device transport (`DeviceApi.stats`): `gearbox_device*`. */
  devices?: DeviceStatsSource;
  /** Cost alert thresholds crossed (`Governor.alerts`). */
  alerts?: { readonly fired: number };
  /** Log lines dropped because the log's reader fell behind (`logStats` of the logger). */
  log?: { readonly dropped: number };
  /** Unhandled promise rejections the process logged and served on (`processFaults`). */
  faults?: { readonly unhandledRejections: number };
  /** The ext_proc server's stream counters (`ExtProcStreamStats`). */
  extProcStreams?: { readonly idleReleased: number };
  /** The semantic cache's running counters (`SemanticCache.stats`) and its store's size. */
  semantic?: { readonly stats: Readonly<Record<SemanticOutcome, number>>; size(): { entries: number; bytes: number } };
  /** Providers' circuit breakers (`ProviderHealth.states`): provider name → 0 closed, 1 half-open, 2 open. */
  breakers?: { states(): [string, number][] };
  /** Online calibration (`OnlineCalibration`): its counters and every held threshold with its estimate. */
  calibration?: {
    readonly stats: Readonly<Record<"shadowCalls" | "shadowFailed" | "judged" | "judgeDropped" | "overBudget" | "movesUp" | "movesDown", number>>;
    snapshot(): { tenant: string; intent: string; estimate: { threshold: number; quality: number; lower: number; upper: number; samples: number } }[];
  };
}

/** The semantic cache's counters exported, each a `reason`/`event` label value. */
export type SemanticOutcome =
  "hit" | "miss" | "embed_error" | "guard_rejected" | "intent_rejected" | "fingerprint_rejected" | "verify_rejected" | "stored" | "store_skipped";
const SEMANTIC_REJECTIONS = ["guard_rejected", "intent_rejected", "fingerprint_rejected", "verify_rejected"] as const;

const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];
const TTFT_BUCKETS = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30];

export class GatewayMetrics {
  readonly registry = new Registry();
  private readonly r = [this.registry];

  // The series every request moves are `HotCounter`s and `HotHistogram`s (`hot-series.ts`).
  readonly requests = new HotCounter({
    name: "gearbox_requests_total",
    help: "Finished LLM API requests by endpoint, where the answer came from (edge, cloud, cache, none), model asked for, tenant and HTTP status.",
    labelNames: ["endpoint", "route", "model", "tenant", "status"],
    registers: this.r,
  });
  readonly duration = new HotHistogram({
    name: "gearbox_request_duration_seconds",
    help: "End-to-end time Gearbox saw a request take, from its headers to its last answer byte.",
    labelNames: ["endpoint", "route"],
    buckets: LATENCY_BUCKETS,
    registers: this.r,
  });
  readonly ttft = new HotHistogram({
    name: "gearbox_time_to_first_token_seconds",
    help: "Streamed requests: time from the request to the first answer bytes sent towards the client.",
    labelNames: ["endpoint", "route"],
    buckets: TTFT_BUCKETS,
    registers: this.r,
  });
  readonly tokens = new HotCounter({
    name: "gearbox_tokens_total",
    help: "Tokens processed by models, by type (input, output), where (edge, cloud), model and tenant.",
    labelNames: ["type", "route", "model", "tenant"],
    registers: this.r,
  });
  readonly cloudCost = new HotCounter({
    name: "gearbox_cloud_cost_usd_total",
    help: "Cloud spend at list price (USD), cascade upgrades included.",
    labelNames: ["provider", "model", "tenant"],
    registers: this.r,
  });
  readonly costAvoided = new Counter({
    name: "gearbox_cloud_cost_avoided_usd_total",
    help: "What answers served by the edge or the cache would have cost on the cloud (USD, their tokens at the cloud model's list price).",
    labelNames: ["route", "tenant"],
    registers: this.r,
  });
  readonly unpriced = new Counter({
    name: "gearbox_unpriced_requests_total",
    help: "Answers whose cloud cost (spent or avoided) is unknown: the model has no list price.",
    labelNames: ["route"],
    registers: this.r,
  });
  readonly cache = new Counter({
    name: "gearbox_cache_requests_total",
    help: "Requests the caches took part in, by result (hit, miss, bypass) and the cache that answered a hit (layer: exact, semantic; none otherwise).",
    labelNames: ["endpoint", "result", "layer"],
    registers: this.r,
  });
  readonly conversationTokensSaved = new Counter({
    name: "gearbox_conversation_tokens_saved_total",
    help: "Kept conversations: history tokens not sent because older turns went as a summary (whole history minus what was sent), by route and tenant.",
    labelNames: ["route", "tenant"],
    registers: this.r,
  });
  readonly edgeAnswers = new Counter({
    name: "gearbox_edge_answers_total",
    help: "Edge answers judged by the cascade, by outcome (kept, upgraded): the upgrade rate is upgraded over all.",
    labelNames: ["edge_model", "outcome"],
    registers: this.r,
  });
  readonly upgrades = new Counter({
    name: "gearbox_upgrades_total",
    help: "Edge answers replaced by the cloud's, by reason (low_confidence, edge_status, edge_unscored) and result (ok, failed).",
    labelNames: ["reason", "result"],
    registers: this.r,
  });
  readonly rateLimited = new Counter({
    name: "gearbox_rate_limited_total",
    help: "Requests refused with 429 by a limit (rate_limit_requests_per_second, rate_limit_tokens_per_minute, concurrency_limit, daily_cost_cap, runaway_request_loop).",
    labelNames: ["tenant", "limit"],
    registers: this.r,
  });
  readonly runawayReplays = new Counter({
    name: "gearbox_runaway_replays_total",
    help: "Repeats past runaway.max_identical answered with the answer just given to their caller instead of refused (x-gearbox-reason: runaway_repeat).",
    labelNames: ["tenant"],
    registers: this.r,
  });
  readonly degraded = new Counter({
    name: "gearbox_degraded_total",
    help: "Cloud calls over a token or cost cap sent to the edge instead (degrade_to_edge), by the limit.",
    labelNames: ["tenant", "limit"],
    registers: this.r,
  });
  readonly shadow = new Counter({
    name: "gearbox_shadow_decisions_total",
    help: "Shadow mode: what Gearbox would have done with requests it let through untouched (would_route: edge, cloud, cache, reject).",
    labelNames: ["endpoint", "tenant", "would_route", "would_cache", "would_status", "would_error"],
    registers: this.r,
  });
  readonly upstreamRetries = new Counter({
    name: "gearbox_upstream_retries_total",
    help: "Calls to a provider Gearbox made again after a failure, by provider and cause (the status, connect, timeout). Through Envoy, Envoy's own retries are in its stats.",
    labelNames: ["provider", "cause"],
    registers: this.r,
  });
  readonly fallbacks = new Counter({
    name: "gearbox_fallbacks_total",
    help: "Moves along a fallback chain: from the provider that failed (or whose breaker was open) to the next one tried, by cause.",
    labelNames: ["from", "to", "cause"],
    registers: this.r,
  });

  readonly dataBoundary = new Counter({
    name: "gearbox_data_boundary_values_total",
    help: "Values the data boundary detected in requests, by category and what was done (redact, edge_only); blocked requests count once per category with value 1 (action block).",
    labelNames: ["tenant", "category", "action"],
    registers: this.r,
  });

  constructor(sources: MetricSources = {}, options: { defaultMetrics?: boolean } = {}) {
    if (options.defaultMetrics !== false) collectDefaultMetrics({ register: this.registry, prefix: "gearbox_" });
    const { limiter, alerts, semantic, sharedState, breakers, log, faults } = sources;
    if (breakers) {
      new Gauge({
        name: "gearbox_provider_breaker_state",
        help: "Each provider's circuit breaker on this replica: 0 closed, 1 half-open (probing), 2 open (no call goes to it).",
        labelNames: ["provider"],
        registers: this.r,
        collect() {
          for (const [provider, state] of breakers.states()) this.set({ provider }, state);
        },
      });
    }
    if (sharedState) registerSharedStateMetrics(this.r, sharedState);
    if (sources.calibration) registerCalibrationMetrics(this.r, sources.calibration);
    if (sources.devices) registerDeviceMetrics(this.r, sources.devices);
    if (limiter) {
      gaugeFrom(this.r, "gearbox_limiter_redis_healthy", "1 while limits are decided on Redis, 0 while this replica decides alone (failover).", () =>
        limiter.redisHealthy ? 1 : 0,
      );
      totalFrom(
        this.r,
        "gearbox_limiter_local_decisions_total",
        "Admissions decided by this replica's memory because Redis was down or failing.",
        () => limiter.fallbackDecisions,
      );
      totalFrom(this.r, "gearbox_limiter_redis_errors_total", "Limiter calls to Redis that failed or timed out.", () => limiter.redisErrors);
    }
    if (semantic) {
      new Counter({
        name: "gearbox_semantic_cache_rejections_total",
        help: "Semantic-cache candidates above the similarity threshold that were not reused, by reason (guard: entities differ; intent: both sure intent labels differ; fingerprint: question type differs; verify: the edge model said no or did not answer).",
        labelNames: ["reason"],
        registers: this.r,
        collect() {
          this.reset();
          for (const reason of SEMANTIC_REJECTIONS) this.inc({ reason: reason.replace("_rejected", "") }, semantic.stats[reason]);
        },
      });
      totalFrom(
        this.r,
        "gearbox_semantic_cache_embed_errors_total",
        "Semantic-cache lookups that missed because the embedder failed or timed out.",
        () => semantic.stats.embed_error,
      );
      totalFrom(this.r, "gearbox_semantic_cache_stored_total", "Answers stored in the semantic cache.", () => semantic.stats.stored);
      gaugeFrom(this.r, "gearbox_semantic_cache_entries", "Entries in this replica's semantic-cache index.", () => semantic.size().entries);
      gaugeFrom(
        this.r,
        "gearbox_semantic_cache_bytes",
        "Bytes of entries this replica's semantic-cache store holds (in memory: questions, answers, vectors).",
        () => semantic.size().bytes,
      );
    }
    if (sources.extProcStreams) {
      const streams = sources.extProcStreams;
      totalFrom(
        this.r,
        "gearbox_extproc_streams_idle_released_total",
        "ext_proc streams released by the server-side idle timeout (extproc.stream_idle_ms): streams Envoy left open with nothing said.",
        () => streams.idleReleased,
      );
    }
    if (alerts)
      totalFrom(
        this.r,
        "gearbox_cost_alerts_total",
        "Tenants' daily cost alert thresholds crossed (once per tenant, threshold and day on this replica).",
        () => alerts.fired,
      );
    if (log)
      totalFrom(
        this.r,
        "gearbox_log_lines_dropped_total",
        "Log lines dropped because the reader of the log (stdout) fell 16 MiB behind; the gateway never waits for it.",
        () => log.dropped,
      );
    if (faults)
      totalFrom(
        this.r,
        "gearbox_unhandled_rejections_total",
        "Promise rejections no code handled (a Gearbox bug): each logged at error level; the process serves on.",
        () => faults.unhandledRejections,
      );
  }
}

/** `gearbox_calibration_*`: shadow calls by outcome, threshold moves, and each held threshold with its quality estimate. */
function registerCalibrationMetrics(r: Registry[], c: NonNullable<MetricSources["calibration"]>): void {
  new Counter({
    name: "gearbox_calibration_shadow_calls_total",
    help: "Online calibration's background cloud calls for kept edge answers, by outcome: judged, failed (the cloud call: sample dropped, nothing charged), dropped (the judge gave no grade); over_budget counts samples the per-tenant budget refused.",
    labelNames: ["outcome"],
    registers: r,
    collect() {
      this.reset();
      const s = c.stats;
      this.inc({ outcome: "judged" }, s.judged);
      this.inc({ outcome: "failed" }, s.shadowFailed);
      this.inc({ outcome: "dropped" }, s.judgeDropped);
      this.inc({ outcome: "over_budget" }, s.overBudget);
    },
  });
  new Counter({
    name: "gearbox_calibration_threshold_moves_total",
    help: "Moves of online-calibrated thresholds, by direction (each one also a 'calibration threshold moved' log line).",
    labelNames: ["direction"],
    registers: r,
    collect() {
      this.reset();
      this.inc({ direction: "up" }, c.stats.movesUp);
      this.inc({ direction: "down" }, c.stats.movesDown);
    },
  });
  new Gauge({
    name: "gearbox_calibration_threshold",
    help: "The complexity threshold online calibration holds, per tenant and intent.",
    labelNames: ["tenant", "intent"],
    registers: r,
    collect() {
      this.reset();
      for (const { tenant, intent, estimate } of c.snapshot()) this.set({ tenant, intent }, estimate.threshold);
    },
  });
  new Gauge({
    name: "gearbox_calibration_quality",
    help: "Online calibration's estimate of the quality relative to cloud at the held threshold (bound: estimate, lower, upper), per tenant and intent.",
    labelNames: ["tenant", "intent", "bound"],
    registers: r,
    collect() {
      this.reset();
      for (const { tenant, intent, estimate: e } of c.snapshot()) {
        if (e.samples === 0) continue;
        this.set({ tenant, intent, bound: "estimate" }, e.quality);
        this.set({ tenant, intent, bound: "lower" }, e.lower);
        this.set({ tenant, intent, bound: "upper" }, e.upper);
      }
    },
  });
}
