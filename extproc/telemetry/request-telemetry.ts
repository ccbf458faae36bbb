/**
 * The production sink: the request-log line, then the metrics, from one `RequestRecord`.
 * Shadowed requests count only in `gearbox_shadow_decisions_total`: they were not served by
 * Gearbox, so they stay out of the traffic, cost and latency series.
 */
import type { GatewayConfig } from "../config/load.ts";
import type { RequestRecord } from "../processor/request-record.ts";
import { modelLabel, reasonKind } from "./labels.ts";
import type { Logger } from "../../common/telemetry/logger.ts";
import type { GatewayMetrics } from "./metrics.ts";
import { writeRequestLog } from "./request-log.ts";
import { transitions } from "../resilience/attempt-log.ts";
import type { Telemetry } from "./telemetry.ts";

const RATE_LIMITS = new Set(["rate_limit_requests_per_second", "rate_limit_tokens_per_minute", "concurrency_limit", "daily_cost_cap", "runaway_request_loop"]);

export class RequestTelemetry implements Telemetry {
  constructor(
    private readonly logger: Logger,
    private readonly metrics: GatewayMetrics,
  ) {}

  request(record: RequestRecord, config: GatewayConfig): void {
    writeRequestLog(this.logger, record);
    countRequest(this.metrics, record, config);
  }
}

/** The metric updates for one record. */
export function countRequest(m: GatewayMetrics, r: RequestRecord, config: GatewayConfig): void {
  const endpoint = r.endpoint ?? "unknown";
  const tenant = r.tenant ?? "-";
  if (r.shadow) {
    m.shadow.inc({
      endpoint,
      tenant,
      would_route: r.shadow_route ?? "none",
      would_cache: r.shadow_cache ?? "none",
      would_status: String(r.shadow_status ?? 0),
      would_error: r.shadow_error_code ?? "none",
    });
    return;
  }
  const route = r.route ?? "none";
  // Label values in the order of the metric's label names (`hot-series.ts`).
  m.requests.inc([endpoint, route, modelLabel(config, r.model), tenant, String(r.status)]);
  m.duration.observe([endpoint, route], r.duration_ms / 1000);
  if (r.ttft_ms !== undefined) m.ttft.observe([endpoint, route], r.ttft_ms / 1000);
  if (r.cache !== undefined) m.cache.inc({ endpoint, result: r.cache, layer: r.cache_layer ?? "none" });
  if (r.error_code !== undefined && r.status === 429 && RATE_LIMITS.has(r.error_code)) m.rateLimited.inc({ tenant, limit: r.error_code });
  if (r.runaway === "replayed") m.runawayReplays.inc({ tenant });
  const saved = r.conversation ? r.conversation.history_tokens - r.conversation.sent_tokens : 0;
  if (saved > 0) m.conversationTokensSaved.inc({ route, tenant }, saved);
  if (r.degraded !== undefined) m.degraded.inc({ tenant, limit: r.degraded });
  if (r.data_boundary)
    for (const [category, n] of Object.entries(r.data_boundary.counts)) m.dataBoundary.inc({ tenant, category, action: r.data_boundary.action }, n);
  else if (r.error_code?.startsWith("data_boundary_") && r.error_code !== "data_boundary_edge_only")
    m.dataBoundary.inc({ tenant, category: r.error_code.slice("data_boundary_".length), action: "block" });
  if (r.upstream_attempts) {
    const { retries, fallbacks } = transitions(r.upstream_attempts);
    for (const retry of retries) m.upstreamRetries.inc(retry);
    for (const fallback of fallbacks) m.fallbacks.inc(fallback);
  }
  const event = r.cascade;
  if (event) {
    const edgeModel = modelLabel(config, event.edge_model);
    m.edgeAnswers.inc({ edge_model: edgeModel, outcome: event.upgraded ? "upgraded" : "kept" });
    tokens(m, "edge", edgeModel, tenant, event.edge_input_tokens, event.edge_output_tokens);
    if (event.upgraded) {
      m.upgrades.inc({ reason: reasonKind(event.upgrade_reason), result: event.cloud_status === 200 ? "ok" : "failed" });
      const cloudModel = modelLabel(config, event.cloud_model);
      tokens(m, "cloud", cloudModel, tenant, event.cloud_input_tokens, event.cloud_output_tokens);
      cost(m, event.cloud_provider, cloudModel, tenant, event.cloud_cost_usd);
    }
  } else if (r.route === "cloud") {
    const model = modelLabel(config, r.upstream_model);
    tokens(m, "cloud", model, tenant, r.input_tokens, r.output_tokens);
    cost(m, r.provider, model, tenant, r.cost_usd);
  }
  if (r.route === "edge" || r.route === "cache") {
    if (typeof r.cloud_cost_avoided_usd === "number") m.costAvoided.inc({ route: r.route, tenant }, r.cloud_cost_avoided_usd);
    else if (r.cloud_cost_avoided_usd === null) m.unpriced.inc({ route: r.route });
  }
}

function tokens(m: GatewayMetrics, route: string, model: string, tenant: string, input: number | undefined, output: number | undefined): void {
  if (input !== undefined && input > 0) m.tokens.inc(["input", route, model, tenant], input);
  if (output !== undefined && output > 0) m.tokens.inc(["output", route, model, tenant], output);
}

function cost(m: GatewayMetrics, provider: string | undefined, model: string, tenant: string, usd: number | null | undefined): void {
  if (typeof usd === "number") {
    if (usd > 0) m.cloudCost.inc([provider ?? "unknown", model, tenant], usd);
  } else if (usd === null) m.unpriced.inc({ route: "cloud" });
}
