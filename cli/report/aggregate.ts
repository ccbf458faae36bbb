/**
 * The report's numbers, computed in one pass over rows with bounded memory: counters, fixed
 * log-bucket histograms for latencies (`histogram.ts`), a time series whose bucket width doubles
 * when it would pass `MAX_BUCKETS`, and per-tenant / per-model tables (`tables.ts`: capped at
 * `MAX_GROUPS` keys, the rest counted under `(other)`). `result()` returns plain data
 * (`report-data.ts`): the JSON file is exactly it.
 */
import { LogHistogram } from "./histogram.ts";
import type { LatencyGroup, ReportData, TimeBucket } from "./report-data.ts";
import { LATENCY_GROUPS } from "./report-data.ts";
import { distributions, groupFor, groupRows, round, type Group } from "./tables.ts";
import type { Route, Row } from "./row.ts";

export const MAX_BUCKETS = 240;
const FIRST_WIDTH_MS = 60_000;

export interface Filters {
  since?: number | undefined;
  until?: number | undefined;
  tenants?: ReadonlySet<string> | undefined;
  models?: ReadonlySet<string> | undefined;
}

interface Bucket {
  requests: number;
  edge: number;
  cloud: number;
  cache: number;
  none: number;
  errors: number;
  throttled: number;
  cost: number;
  allCloud: number;
}

const inc = (m: Map<string, number>, k: string, by = 1): void => void m.set(k, (m.get(k) ?? 0) + by);
const ratio = (a: number, b: number): number | null => (b === 0 ? null : a / b);
const iso = (t: number | undefined): string | null => (t === undefined ? null : new Date(t).toISOString());

/** `low_confidence:0.12<0.6` → `low_confidence`; `edge_status:500` kept whole. */
export function upgradeCause(reason: string): string {
  return reason.startsWith("low_confidence") ? "low_confidence" : reason;
}

/** `openai:429>deepseek` → `openai:429` (the first failure, where the fallback started). */
export function fallbackCause(header: string): string {
  return header.split(">")[0] ?? header;
}

export class Aggregator {
  private readonly routes: Record<Route, number> = { edge: 0, cloud: 0, cache: 0, none: 0 };
  private readonly statuses = new Map<string, number>();
  private readonly shadowRoutes = new Map<string, number>();
  private readonly upgradeReasons = new Map<string, number>();
  private readonly fallbackReasons = new Map<string, number>();
  private readonly degraded = new Map<string, number>();
  private readonly causes = new Map<string, number>();
  private readonly throttledBy = new Map<string, number>();
  private readonly latency = new Map<LatencyGroup, LogHistogram>(LATENCY_GROUPS.map((g) => [g, new LogHistogram()]));
  private readonly ttft = new Map<LatencyGroup, LogHistogram>(LATENCY_GROUPS.map((g) => [g, new LogHistogram()]));
  private readonly confKept = new Array<number>(20).fill(0);
  private readonly confUpgraded = new Array<number>(20).fill(0);
  private confKeptSum = 0;
  private confUpgradedSum = 0;
  private confKeptN = 0;
  private confUpgradedN = 0;
  private readonly calibrated = new Map<
    string,
    { tenant: string; intent: string; requests: number; shadowed: number; first: number; last: number; min: number; max: number }
  >();
  private readonly tenants = new Map<string, Group>();
  private readonly models = new Map<string, Group>();
  private buckets = new Map<number, Bucket>();
  private width = FIRST_WIDTH_MS;
  private first: number | undefined;
  private last: number | undefined;
  readonly lines = { read: 0, requests: 0, not_requests: 0, malformed: 0, filtered_out: 0, without_time: 0 };
  private total = 0;
  private answered = 0;
  private shadow = 0;
  private fromLog = 0;
  private fromReplay = 0;
  private cost = 0;
  private allCloud = 0;
  private unpriced = 0;
  private counterfactualUnknown = 0;
  private lookups = 0;
  private exactHits = 0;
  private semanticHits = 0;
  private bypass = 0;
  private edgeFirst = 0;
  private kept = 0;
  private upgraded = 0;
  private unscored = 0;
  private fallbacks = 0;
  private errors5xx = 0;
  private throttled = 0;
  private client4xx = 0;

  constructor(private readonly filters: Filters = {}) {}

  /** Counts `row` unless the filters leave it out; returns whether it was counted. */
  add(row: Row): boolean {
    this.lines.requests++;
    const f = this.filters;
    if (f.tenants && !f.tenants.has(row.tenant)) return this.out();
    if (f.models && !f.models.has(row.model)) return this.out();
    if (f.since !== undefined || f.until !== undefined) {
      if (row.time === undefined) return this.out();
      if (f.since !== undefined && row.time < f.since) return this.out();
      if (f.until !== undefined && row.time >= f.until) return this.out();
    }
    this.count(row);
    return true;
  }

  private countCalibration(tenant: string, c: NonNullable<Row["calibration"]>): void {
    const key = `${tenant}\u0000${c.intent}`;
    const t = this.calibrated.get(key) ?? {
      tenant,
      intent: c.intent,
      requests: 0,
      shadowed: 0,
      first: c.threshold,
      last: c.threshold,
      min: c.threshold,
      max: c.threshold,
    };
    t.requests++;
    if (c.shadowed) t.shadowed++;
    t.last = c.threshold;
    t.min = Math.min(t.min, c.threshold);
    t.max = Math.max(t.max, c.threshold);
    this.calibrated.set(key, t);
  }

  private out(): false {
    this.lines.filtered_out++;
    return false;
  }

  private count(row: Row): void {
    this.total++;
    if (row.source === "log") this.fromLog++;
    else this.fromReplay++;
    this.routes[row.route]++;
    inc(this.statuses, String(row.status));
    if (row.shadow) {
      this.shadow++;
      inc(this.shadowRoutes, row.shadowRoute ?? "none");
    }
    const answered = row.route !== "none" && row.status > 0 && row.status < 400;
    if (answered) this.answered++;
    if (row.calibration) this.countCalibration(row.tenant, row.calibration);
    const cost = typeof row.costUsd === "number" ? row.costUsd : 0;
    if (row.costUsd === null) this.unpriced++;
    const allCloud = row.allCloudUsd ?? cost;
    if (answered && row.allCloudUsd === undefined && row.route !== "cloud") this.counterfactualUnknown++;
    this.cost += cost;
    this.allCloud += allCloud;
    if (row.cache === "hit" || row.cache === "miss") this.lookups++;
    if (row.cache === "bypass") this.bypass++;
    if (row.cache === "hit") {
      if (row.cacheLayer === "semantic") this.semanticHits++;
      else this.exactHits++;
    }
    if (row.edgeTried) {
      this.edgeFirst++;
      const bin = row.confidence === undefined ? undefined : Math.min(19, Math.max(0, Math.floor(row.confidence * 20)));
      if (row.upgraded) {
        this.upgraded++;
        inc(this.upgradeReasons, upgradeCause(row.upgradeReason ?? "unknown"));
        if (bin !== undefined) {
          this.confUpgraded[bin]!++;
          this.confUpgradedSum += row.confidence!;
          this.confUpgradedN++;
        }
      } else {
        this.kept++;
        if (bin !== undefined) {
          this.confKept[bin]!++;
          this.confKeptSum += row.confidence!;
          this.confKeptN++;
        }
      }
      if (bin === undefined) this.unscored++;
    }
    if (row.fallback !== undefined && !row.upgraded) {
      this.fallbacks++;
      inc(this.fallbackReasons, fallbackCause(row.fallback));
    }
    if (row.degraded !== undefined) inc(this.degraded, row.degraded);
    const is5xx = row.status >= 500 || row.status === 0;
    if (row.shadow) {
      // A shadowed request has no status of Gearbox's own: not an error.
    } else if (is5xx) {
      this.errors5xx++;
      inc(this.causes, `${row.status} ${row.errorCode ?? "-"}`);
    } else if (row.status === 429) {
      this.throttled++;
      inc(this.throttledBy, row.errorCode ?? "-");
      inc(this.causes, `429 ${row.errorCode ?? "-"}`);
    } else if (row.status >= 400) {
      this.client4xx++;
      inc(this.causes, `${row.status} ${row.errorCode ?? "-"}`);
    }
    const group: LatencyGroup = row.route === "cloud" && row.upgraded ? "cloud (upgraded)" : row.route;
    if (row.latencyMs !== undefined) this.latency.get(group)!.add(row.latencyMs);
    if (row.ttftMs !== undefined) this.ttft.get(group)!.add(row.ttftMs);
    const errs = !row.shadow && is5xx ? 1 : 0;
    const thr = row.status === 429 ? 1 : 0;
    for (const [map, key] of [
      [this.tenants, row.tenant],
      [this.models, row.model],
    ] as const) {
      const g = groupFor(map, key);
      g.requests++;
      g[row.route]++;
      if (row.upgraded) g.upgraded++;
      g.errors += errs;
      g.throttled += thr;
      g.inputTokens += row.inputTokens;
      g.outputTokens += row.outputTokens;
      g.cost += cost;
      g.allCloud += allCloud;
      if (row.latencyMs !== undefined) g.latency.add(row.latencyMs);
    }
    if (row.time === undefined) {
      this.lines.without_time++;
      return;
    }
    if (this.first === undefined || row.time < this.first) this.first = row.time;
    if (this.last === undefined || row.time > this.last) this.last = row.time;
    const b = this.bucketFor(row.time);
    b.requests++;
    b[row.route]++;
    b.errors += errs;
    b.throttled += thr;
    b.cost += cost;
    b.allCloud += allCloud;
  }

  private bucketFor(time: number): Bucket {
    let key = Math.floor(time / this.width);
    let b = this.buckets.get(key);
    if (b) return b;
    while (this.spanBuckets(time) > MAX_BUCKETS) this.widen();
    key = Math.floor(time / this.width);
    b = this.buckets.get(key);
    if (!b) {
      b = { requests: 0, edge: 0, cloud: 0, cache: 0, none: 0, errors: 0, throttled: 0, cost: 0, allCloud: 0 };
      this.buckets.set(key, b);
    }
    return b;
  }

  /** How many buckets the window would span with `time` in it. */
  private spanBuckets(time: number): number {
    const lo = Math.min(time, this.first ?? time);
    const hi = Math.max(time, this.last ?? time);
    return Math.floor(hi / this.width) - Math.floor(lo / this.width) + 1;
  }

  private widen(): void {
    const old = this.buckets;
    const factor = 2;
    this.width *= factor;
    this.buckets = new Map();
    for (const [k, b] of old) {
      const key = Math.floor(k / factor);
      const into = this.buckets.get(key);
      if (!into) this.buckets.set(key, b);
      else for (const f of Object.keys(b) as (keyof Bucket)[]) into[f] += b[f];
    }
  }

  result(inputs: readonly string[], now = new Date()): ReportData {
    const f = this.filters;
    const series = [...this.buckets.entries()].sort((a, b) => a[0] - b[0]);
    // Buckets with no requests are shown as zeros: a gap in traffic is a fact too.
    const timeSeries: TimeBucket[] = [];
    if (series.length > 0) {
      const from = series[0]![0];
      const to = series[series.length - 1]![0];
      for (let k = from; k <= to; k++) {
        const b = this.buckets.get(k) ?? { requests: 0, edge: 0, cloud: 0, cache: 0, none: 0, errors: 0, throttled: 0, cost: 0, allCloud: 0 };
        timeSeries.push({
          start: new Date(k * this.width).toISOString(),
          requests: b.requests,
          edge: b.edge,
          cloud: b.cloud,
          cache: b.cache,
          none: b.none,
          edge_share: ratio(b.edge, b.edge + b.cloud + b.cache),
          errors_5xx: b.errors,
          throttled_429: b.throttled,
          cost_usd: round(b.cost),
          all_cloud_usd: round(b.allCloud),
        });
      }
    }
    const seconds = this.width / 1000;
    const peak = timeSeries.length === 0 ? null : Math.max(...timeSeries.map((b) => b.requests)) / seconds;
    const spanS = this.first === undefined || this.last === undefined ? 0 : (this.last - this.first) / 1000;
    const worst = timeSeries.filter((b) => b.requests >= 10).map((b) => b.errors_5xx / b.requests);
    const answeredRoutes = this.routes.edge + this.routes.cloud + this.routes.cache;
    return {
      generated_at: now.toISOString(),
      inputs: [...inputs],
      filters: { since: iso(f.since), until: iso(f.until), tenants: [...(f.tenants ?? [])], models: [...(f.models ?? [])] },
      lines: { ...this.lines },
      window: { first: iso(this.first), last: iso(this.last), bucket_ms: this.width },
      requests: {
        total: this.total,
        answered: this.answered,
        by_route: { ...this.routes },
        by_status: Object.fromEntries([...this.statuses].sort()),
        shadow: this.shadow,
        shadow_routes: sorted(this.shadowRoutes),
        from_log: this.fromLog,
        from_replay: this.fromReplay,
      },
      edge_share: ratio(this.routes.edge, answeredRoutes),
      cost: {
        actual_usd: round(this.cost),
        all_cloud_usd: round(this.allCloud),
        saved_usd: round(this.allCloud - this.cost),
        savings_ratio: this.allCloud === 0 ? null : round(1 - this.cost / this.allCloud, 4),
        unpriced_requests: this.unpriced,
        counterfactual_unknown: this.counterfactualUnknown,
      },
      cache: {
        lookups: this.lookups,
        hits: this.exactHits + this.semanticHits,
        exact_hits: this.exactHits,
        semantic_hits: this.semanticHits,
        bypass: this.bypass,
        hit_rate: ratio(this.exactHits + this.semanticHits, this.lookups),
        exact_rate: ratio(this.exactHits, this.lookups),
        semantic_rate: ratio(this.semanticHits, this.lookups),
      },
      cascade: {
        edge_first: this.edgeFirst,
        kept: this.kept,
        upgraded: this.upgraded,
        upgrade_rate: ratio(this.upgraded, this.edgeFirst),
        upgrade_reasons: sorted(this.upgradeReasons),
        unscored: this.unscored,
        confidence_bins: this.confKept.map((kept, i) => ({ from: i / 20, kept, upgraded: this.confUpgraded[i]! })),
        kept_confidence_mean: this.confKeptN === 0 ? null : round(this.confKeptSum / this.confKeptN, 4),
        upgraded_confidence_mean: this.confUpgradedN === 0 ? null : round(this.confUpgradedSum / this.confUpgradedN, 4),
      },
      fallback: { requests: this.fallbacks, rate: ratio(this.fallbacks, this.total), reasons: sorted(this.fallbackReasons), degraded: sorted(this.degraded) },
      calibration: {
        edge_requests: [...this.calibrated.values()].reduce((n, t) => n + t.requests, 0),
        shadowed: [...this.calibrated.values()].reduce((n, t) => n + t.shadowed, 0),
        thresholds: [...this.calibrated.values()].sort((a, b) => b.requests - a.requests).map((t) => ({ ...t })),
      },
      errors: {
        errors_5xx: this.errors5xx,
        throttled_429: this.throttled,
        client_4xx: this.client4xx,
        error_rate: ratio(this.errors5xx, this.total - this.shadow),
        by_cause: sorted(this.causes),
        throttled_by_limit: sorted(this.throttledBy),
      },
      latency: distributions(this.latency),
      ttft: distributions(this.ttft),
      throughput: {
        peak_requests_per_s: peak === null ? null : round(peak, 3),
        mean_requests_per_s: spanS > 0 ? round(this.total / spanS, 3) : null,
        worst_bucket_error_rate: worst.length === 0 ? null : round(Math.max(...worst), 4),
      },
      time_series: timeSeries,
      tenants: groupRows(this.tenants),
      models: groupRows(this.models),
    };
  }
}

function sorted(m: Map<string, number>): Record<string, number> {
  return Object.fromEntries([...m].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])));
}
