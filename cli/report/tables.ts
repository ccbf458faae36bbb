/**
 * The report's tables: per-tenant and per-model groups capped at `MAX_GROUPS` keys (the rest are
 * counted under `(other)`), and latency histograms as distributions — both as the plain rows of
 * `ReportData`.
 */
import { LogHistogram } from "./histogram.ts";
import { LATENCY_BINS_MS, LATENCY_GROUPS, type Distribution, type GroupRow, type LatencyGroup } from "./report-data.ts";

export const MAX_GROUPS = 500;

export const round = (v: number, digits = 6): number => Math.round(v * 10 ** digits) / 10 ** digits;

export class Group {
  requests = 0;
  edge = 0;
  cloud = 0;
  cache = 0;
  none = 0;
  upgraded = 0;
  errors = 0;
  throttled = 0;
  inputTokens = 0;
  outputTokens = 0;
  cost = 0;
  allCloud = 0;
  readonly latency = new LogHistogram();
}

export function groupFor(map: Map<string, Group>, key: string): Group {
  let g = map.get(key);
  if (g) return g;
  const k = map.size >= MAX_GROUPS ? "(other)" : key;
  g = map.get(k) ?? new Group();
  map.set(k, g);
  return g;
}

const ms = (v: number | undefined): number | null => (v === undefined ? null : Math.round(v * 100) / 100);

function distribution(h: LogHistogram): Distribution {
  const bins = h.binned(LATENCY_BINS_MS);
  return {
    count: h.count,
    mean_ms: ms(h.mean()),
    p50_ms: ms(h.quantile(0.5)),
    p95_ms: ms(h.quantile(0.95)),
    p99_ms: ms(h.quantile(0.99)),
    max_ms: h.count === 0 ? null : ms(h.max),
    bins: bins.map((count, i) => ({ le_ms: LATENCY_BINS_MS[i] ?? null, count })),
  };
}

export function distributions(m: Map<LatencyGroup, LogHistogram>): Record<LatencyGroup, Distribution> {
  return Object.fromEntries(LATENCY_GROUPS.map((g) => [g, distribution(m.get(g)!)])) as Record<LatencyGroup, Distribution>;
}

export function groupRows(m: Map<string, Group>): GroupRow[] {
  return [...m]
    .map(([key, g]) => ({
      key,
      requests: g.requests,
      edge: g.edge,
      cloud: g.cloud,
      cache: g.cache,
      refused_or_failed: g.none,
      upgraded: g.upgraded,
      errors_5xx: g.errors,
      throttled_429: g.throttled,
      input_tokens: g.inputTokens,
      output_tokens: g.outputTokens,
      cost_usd: round(g.cost),
      all_cloud_usd: round(g.allCloud),
      savings_ratio: g.allCloud === 0 ? null : round(1 - g.cost / g.allCloud, 4),
      p50_ms: ms(g.latency.quantile(0.5)),
      p95_ms: ms(g.latency.quantile(0.95)),
    }))
    .sort((a, b) => b.requests - a.requests || a.key.localeCompare(b.key));
}
