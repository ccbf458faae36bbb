/**
 * The one record of a finished request: what the request log writes and what the metrics count.
 * Built once, in `RequestProcessor.finish()`, from the processor's state; nothing in it is prompt
 * text or a key (the key is its public prefix). Field names are the log line's.
 */
import type { Usage } from "../../common/canonical/types.ts";
import type { CascadeEvent, EdgeCascade } from "../cascade/cascade.ts";
import type { GatewayConfig } from "../config/load.ts";
import type { ParsedCall } from "../endpoints/spec.ts";
import type { GatewayError } from "../../common/errors.ts";
import type { Caller } from "../governance/model.ts";
import { costUsd, callCostUsd, roundUsd } from "../providers/cost.ts";
import { priceOf } from "../providers/provider.ts";
import { resolveProvider, type ProviderRoute } from "../routing/provider-route.ts";
import type { PolicyDecision } from "../routing/policy/index.ts";
import type { CacheLayer, CacheOutcome, CacheResult } from "./cache-stage.ts";
import type { RunawayOutcome } from "./runaway-stage.ts";
import { transitions, type AttemptLog, type UpstreamAttempt } from "../resilience/attempt-log.ts";
import { EDGE_PROVIDER } from "../resilience/fallback-call.ts";
import { isObject } from "../../common/schemas/fields.ts";
import type { ConversationStats } from "../conversation/conversations.ts";
import type { BoundaryLog, BoundaryState } from "../boundary/stage.ts";

/** Which front of Gearbox the request came through. */
export type Transport = "ext_proc" | "front_door";
/** Where the answer came from. */
export type RecordRoute = "edge" | "cloud" | "cache";

export interface RequestRecord {
  request_id: string;
  /** The request's trace (W3C trace id), when tracing is on. */
  trace_id: string | undefined;
  transport: Transport;
  tenant: string | undefined;
  /** The call key's public prefix (never the key). */
  key: string | undefined;
  endpoint: string | undefined;
  /** The model the client asked for. */
  model: string | undefined;
  stream: boolean | undefined;
  /** Where the answer came from; absent when none came (rejected, failed, shadowed). */
  route: RecordRoute | undefined;
  /** Why it went there (`model_listed:openai`, `rule:1`, `edge_model`, `degraded:daily_cost_cap`…). */
  reason: string | undefined;
  policy: string | undefined;
  edge_intent: string | undefined;
  cache: CacheResult | undefined;
  /** Which cache answered a hit (`exact`, `semantic`). */
  cache_layer: CacheLayer | undefined;
  /** A semantic hit's cosine similarity to the cached question. */
  cache_similarity: number | undefined;
  /** The edge answer and its upgrade, when the request went to the edge. */
  cascade: CascadeEvent | undefined;
  /** Online calibration: the threshold (tenant, intent) that sent it to the edge, its score, and whether the kept answer was shadowed. */
  calibration: EdgeCascade["calibration"];
  provider: string | undefined;
  upstream_model: string | undefined;
  status: number;
  error_code: string | undefined;
  /** The limit that sent a capped cloud call to the edge instead (`daily_cost_cap`, `rate_limit_tokens_per_minute`). */
  degraded: string | undefined;
  /** A repeat past `runaway.max_identical`: answered from the answer just given (`replayed`, route `cache`) or `refused`. */
  runaway: RunawayOutcome | undefined;
  /** Once an upstream attempt failed: `x-gearbox-fallback` (`openai:429>deepseek`), the calls made, the retries, and each attempt. */
  fallback: string | undefined;
  attempts: number | undefined;
  retries: number | undefined;
  upstream_attempts: UpstreamAttempt[] | undefined;
  input_tokens: number | undefined;
  output_tokens: number | undefined;
  /** Cloud cost at list price (USD); `null`: an unpriced cloud model. */
  cost_usd: number | null | undefined;
  /** What an answer served by the edge or the cache would have cost on the cloud (USD); `null`: no price known. */
  cloud_cost_avoided_usd: number | null | undefined;
  duration_ms: number;
  /** Streams: time until the first body bytes were handed to the client side. */
  ttft_ms: number | undefined;
  /** Shadow mode: the request went on untouched; the `shadow_*` fields say what Gearbox would have done. */
  shadow: true | undefined;
  shadow_route: RecordRoute | "reject" | undefined;
  shadow_reason: string | undefined;
  shadow_cache: CacheResult | undefined;
  shadow_status: number | undefined;
  shadow_error_code: string | undefined;
  /** A conversation the gateway keeps: tokens of the whole history, of what was sent, of the summary; the share sent. */
  conversation: ConversationLog | undefined;
  /** The data boundary: counts by category (never a value) and what was done (`redact`, `edge_only`). */
  data_boundary: BoundaryLog | undefined;
}

export interface ConversationLog {
  history_tokens: number;
  sent_tokens: number;
  summary_tokens: number;
  /** Stored messages the summary stood for. */
  summarized: number;
  /** `sent_tokens / history_tokens` (1 when nothing was summarized). */
  ratio: number;
  /** The conversation store failed or was late: the request went on with what the client sent. */
  degraded: true | undefined;
}

/** The processor's state at the end of a request. */
export interface RecordInput {
  requestId: string;
  traceId: string | undefined;
  transport: Transport;
  config: GatewayConfig;
  caller: Caller | undefined;
  endpoint: string | undefined;
  parsed: ParsedCall | undefined;
  decision: ProviderRoute | undefined;
  cascade: EdgeCascade | undefined;
  policy: PolicyDecision | undefined;
  edgeIntent: string | undefined;
  /** What the caches did (`RequestCache`); absent fields: no cache took part. */
  cache: CacheOutcome;
  status: number;
  error: GatewayError | undefined;
  usage: Usage | undefined;
  /** `performance.now()` at the start, at the first answer bytes (streams), and now. */
  startedAt: number;
  firstByteAt: number | undefined;
  now: number;
  shadow: boolean;
  /** What runaway protection did (`runaway-stage.ts`); absent → nothing. */
  runaway?: RunawayOutcome | undefined;
  /** The upstream attempts (`resilience/attempt-log.ts`); `provider` is the one that answered. */
  attempts?: AttemptLog | undefined;
  /** What a kept conversation sent (`conversation/conversations.ts`); absent → no conversation. */
  conversation?: ConversationStats | undefined;
  /** What the data boundary detected (`boundary/stage.ts`); absent → nothing. */
  boundary?: BoundaryState | undefined;
}

const ms = (t: number): number => Math.round(t * 100) / 100;

export function requestRecord(s: RecordInput): RequestRecord {
  const hit = s.cache.result === "hit";
  const event = s.cascade?.event;
  const route: RecordRoute | undefined =
    hit || s.runaway === "replayed"
      ? "cache"
      : s.cascade
        ? event
          ? event.upgraded
            ? "cloud"
            : "edge"
          : undefined
        : s.decision
          ? s.decision.provider.name === EDGE_PROVIDER
            ? "edge"
            : "cloud"
          : undefined;
  const reason = s.cascade ? s.cascade.routeReason : s.decision?.reason;
  const status = s.error?.status ?? s.status;
  const served = route !== undefined && s.error === undefined && status > 0 && status < 400;
  const stream = s.parsed?.stream;
  // One literal with every field in log order, for both modes: spreading a shared part into two
  // literals made V8 build the record's shape anew on every request (~35 µs per record).
  const live = !s.shadow;
  const failover = attemptFields(live ? s.attempts : undefined);
  return {
    request_id: s.requestId,
    trace_id: s.traceId,
    transport: s.transport,
    tenant: s.caller?.tenant.id,
    key: s.caller?.key?.prefix,
    endpoint: s.endpoint,
    model: s.parsed?.model,
    stream,
    policy: s.policy?.reason,
    edge_intent: s.edgeIntent,
    duration_ms: ms(s.now - s.startedAt),
    route: live ? route : undefined,
    reason: live ? reason : undefined,
    cache: live ? s.cache.result : undefined,
    cache_layer: live && hit ? s.cache.layer : undefined,
    cache_similarity: live && hit && s.cache.similarity !== undefined ? Math.round(s.cache.similarity * 10_000) / 10_000 : undefined,
    cascade: live ? event : undefined,
    calibration: live ? s.cascade?.calibration : undefined,
    provider: live ? s.decision?.provider.name : undefined,
    upstream_model: live ? s.decision?.upstreamModel : undefined,
    status: live ? status : 0,
    error_code: live ? (s.error?.code ?? undefined) : undefined,
    degraded: live && reason?.startsWith("degraded:") ? reason.slice("degraded:".length) : undefined,
    runaway: live ? s.runaway : undefined,
    fallback: failover.fallback,
    attempts: failover.attempts,
    retries: failover.retries,
    upstream_attempts: failover.upstream_attempts,
    input_tokens: live ? s.usage?.inputTokens : undefined,
    output_tokens: live ? s.usage?.outputTokens : undefined,
    cost_usd: live ? cloudCost(s) : undefined,
    cloud_cost_avoided_usd: live && served && (route === "edge" || route === "cache") ? avoidedCost(s, route) : undefined,
    ttft_ms: live && stream && served ? ms((s.firstByteAt ?? s.now) - s.startedAt) : undefined,
    // Shadow mode: no edge answer exists, so the cascade itself is the decision.
    shadow: live ? undefined : true,
    shadow_route: live ? undefined : s.error ? "reject" : hit ? "cache" : s.cascade ? "edge" : s.decision ? "cloud" : undefined,
    shadow_reason: live || s.error ? undefined : reason,
    shadow_cache: live ? undefined : s.cache.result,
    shadow_status: live ? undefined : s.error ? s.error.status : hit || s.cascade || s.decision ? 200 : undefined,
    shadow_error_code: live ? undefined : (s.error?.code ?? undefined),
    conversation: conversationLog(s.conversation),
    data_boundary: s.boundary?.log(),
  };
}

function conversationLog(stats: ConversationStats | undefined): ConversationLog | undefined {
  if (!stats) return undefined;
  const ratio = stats.historyTokens > 0 ? Math.round((stats.sentTokens / stats.historyTokens) * 1000) / 1000 : 1;
  return {
    history_tokens: stats.historyTokens,
    sent_tokens: stats.sentTokens,
    summary_tokens: stats.summaryTokens,
    summarized: stats.summarized,
    ratio,
    degraded: stats.degraded ? true : undefined,
  };
}

/** The failover fields, once an attempt failed. */
function attemptFields(log: AttemptLog | undefined): Pick<RequestRecord, "fallback" | "attempts" | "retries" | "upstream_attempts"> {
  if (!log?.eventful) return { fallback: undefined, attempts: undefined, retries: undefined, upstream_attempts: undefined };
  const attempts = log.attempts;
  return { fallback: log.header(), attempts: log.calls(), retries: transitions(attempts).retries.length, upstream_attempts: [...attempts] };
}

/**
 * What this request cost in the cloud: the upgrade of an edge cascade, or the cloud call's
 * usage at list price. `null`: a cloud call on an unpriced model; `undefined`: no usage known.
 */
export function cloudCost(s: Pick<RecordInput, "cache" | "cascade" | "decision" | "usage">): number | null | undefined {
  if (s.cache.result === "hit") return 0;
  if (s.cascade) return s.cascade.event?.cloud_cost_usd ?? (s.cascade.event?.upgraded ? undefined : 0);
  if (s.decision?.provider.name === EDGE_PROVIDER) return 0;
  if (!s.decision || !s.usage) return undefined;
  const cost = callCostUsd(s.decision.provider, s.decision.upstreamModel, s.usage);
  return cost === undefined ? null : roundUsd(cost);
}

/**
 * What the answer would have cost on the cloud: its tokens at the list price of the cloud model
 * the request would have used — the upgrade model for an edge answer (`edge.fallback_model`, else
 * the model asked for), the model asked for on a cache hit. `null`: that model has no price.
 */
function avoidedCost(s: RecordInput, route: "edge" | "cache"): number | null | undefined {
  const model = route === "edge" ? (s.config.edge.fallback_model ?? s.parsed?.model) : s.parsed?.model;
  const event = s.cascade?.event;
  const usage =
    route === "edge"
      ? event?.edge_input_tokens === undefined
        ? undefined
        : {
            inputTokens: event.edge_input_tokens,
            outputTokens: event.edge_output_tokens ?? 0,
            totalTokens: event.edge_input_tokens + (event.edge_output_tokens ?? 0),
          }
      : completionUsage(s.cache.hitCompletion);
  if (model === undefined || usage === undefined) return undefined;
  const resolved = resolveProvider(model, s.config.providers);
  const price = resolved.ok ? priceOf(resolved.value.provider, resolved.value.upstreamModel) : undefined;
  return price === undefined ? null : roundUsd(costUsd(price, usage));
}

/** The `usage` of a stored OpenAI chat completion. */
function completionUsage(completion: string | undefined): Usage | undefined {
  if (completion === undefined) return undefined;
  let json: unknown;
  try {
    json = JSON.parse(completion);
  } catch {
    return undefined;
  }
  const usage = isObject(json) ? json.usage : undefined;
  if (!isObject(usage) || typeof usage.prompt_tokens !== "number" || typeof usage.completion_tokens !== "number") return undefined;
  return { inputTokens: usage.prompt_tokens, outputTokens: usage.completion_tokens, totalTokens: usage.prompt_tokens + usage.completion_tokens };
}
