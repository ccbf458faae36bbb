/**
 * The report's data as `Aggregator.result()` (aggregate.ts) returns it: what the JSON file holds
 * and what the HTML page, its charts and the terminal summary read.
 */
import type { Route } from "./row.ts";

/** Upper edges (ms) of the latency distribution's bins; the last bin takes the rest. */
export const LATENCY_BINS_MS = [10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10_000, 30_000] as const;
/** Latency groups: the routes, with upgraded edge answers apart from direct cloud calls. */
export const LATENCY_GROUPS = ["edge", "cloud", "cloud (upgraded)", "cache", "none"] as const;
export type LatencyGroup = (typeof LATENCY_GROUPS)[number];

export interface Distribution {
  count: number;
  mean_ms: number | null;
  p50_ms: number | null;
  p95_ms: number | null;
  p99_ms: number | null;
  max_ms: number | null;
  /** Counts per bin of `LATENCY_BINS_MS` (`le_ms` null: above the last edge). */
  bins: { le_ms: number | null; count: number }[];
}

export interface GroupRow {
  key: string;
  requests: number;
  edge: number;
  cloud: number;
  cache: number;
  refused_or_failed: number;
  upgraded: number;
  errors_5xx: number;
  throttled_429: number;
  input_tokens: number;
  output_tokens: number;
  cost_usd: number;
  all_cloud_usd: number;
  savings_ratio: number | null;
  p50_ms: number | null;
  p95_ms: number | null;
}

export interface TimeBucket {
  start: string;
  requests: number;
  edge: number;
  cloud: number;
  cache: number;
  none: number;
  /** Edge answers (kept) over answered requests in the bucket. */
  edge_share: number | null;
  errors_5xx: number;
  throttled_429: number;
  cost_usd: number;
  all_cloud_usd: number;
}

export interface ReportData {
  generated_at: string;
  inputs: string[];
  filters: { since: string | null; until: string | null; tenants: string[]; models: string[] };
  lines: { read: number; requests: number; not_requests: number; malformed: number; filtered_out: number; without_time: number };
  window: { first: string | null; last: string | null; bucket_ms: number };
  requests: {
    total: number;
    answered: number;
    by_route: Record<Route, number>;
    by_status: Record<string, number>;
    shadow: number;
    shadow_routes: Record<string, number>;
    from_log: number;
    from_replay: number;
  };
  edge_share: number | null;
  cost: {
    actual_usd: number;
    all_cloud_usd: number;
    saved_usd: number;
    savings_ratio: number | null;
    unpriced_requests: number;
    counterfactual_unknown: number;
  };
  cache: {
    lookups: number;
    hits: number;
    exact_hits: number;
    semantic_hits: number;
    bypass: number;
    hit_rate: number | null;
    exact_rate: number | null;
    semantic_rate: number | null;
  };
  cascade: {
    edge_first: number;
    kept: number;
    upgraded: number;
    upgrade_rate: number | null;
    upgrade_reasons: Record<string, number>;
    unscored: number;
    /** Confidence in 20 bins of 0.05 ([0, 0.05), … [0.95, 1]), kept and upgraded. */
    confidence_bins: { from: number; kept: number; upgraded: number }[];
    kept_confidence_mean: number | null;
    upgraded_confidence_mean: number | null;
  };
  fallback: { requests: number; rate: number | null; reasons: Record<string, number>; degraded: Record<string, number> };
  /** Online calibration, from the request log's `calibration` field: edge requests sent by a held threshold, and how each threshold went. */
  calibration: {
    edge_requests: number;
    shadowed: number;
    /** Per tenant and intent, in time order of the log: the first and last threshold seen, its range. */
    thresholds: { tenant: string; intent: string; requests: number; shadowed: number; first: number; last: number; min: number; max: number }[];
  };
  errors: {
    errors_5xx: number;
    throttled_429: number;
    client_4xx: number;
    error_rate: number | null;
    by_cause: Record<string, number>;
    throttled_by_limit: Record<string, number>;
  };
  latency: Record<LatencyGroup, Distribution>;
  ttft: Record<LatencyGroup, Distribution>;
  throughput: { peak_requests_per_s: number | null; mean_requests_per_s: number | null; worst_bucket_error_rate: number | null };
  time_series: TimeBucket[];
  tenants: GroupRow[];
  models: GroupRow[];
}
