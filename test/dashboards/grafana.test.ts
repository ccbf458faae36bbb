/**
 * The Grafana dashboard (`istio/dashboards/gearbox.json`) is built on metrics that exist: every
 * metric a PromQL expression names is registered by the gateway or the control plane (histogram
 * series included), every label it selects or groups by is one of that metric's labels, and the
 * panels an SRE needs are there.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import type { Registry } from "prom-client";
import { GatewayMetrics } from "../../extproc/telemetry/metrics.ts";
import { controlPlaneMetrics } from "../../xds/metrics.ts";
import { createAdsStats } from "../../xds/server/stats.ts";

interface Panel {
  type: string;
  title: string;
  targets?: { expr: string }[];
}

const SEMANTIC_STATS = {
  hit: 0,
  miss: 0,
  embed_error: 0,
  guard_rejected: 0,
  intent_rejected: 0,
  fingerprint_rejected: 0,
  verify_rejected: 0,
  stored: 0,
  store_skipped: 0,
};

const dashboard = JSON.parse(readFileSync(fileURLToPath(new URL("../../istio/dashboards/gearbox.json", import.meta.url)), "utf8")) as {
  panels: Panel[];
  templating: { list: { query?: unknown }[] };
};

/** Metric name → label names, for every series the registries expose. */
async function knownSeries(registries: Registry[]): Promise<Map<string, Set<string>>> {
  const known = new Map<string, Set<string>>();
  for (const registry of registries) {
    for (const metric of registry.getMetricsAsArray()) {
      // prom-client keeps a metric's label names on the object; its typings leave them out.
      const { name, labelNames } = metric as unknown as { name: string; labelNames?: string[] };
      const labels = new Set(labelNames ?? []);
      const type = String((await registry.getSingleMetric(name)?.get())?.type);
      if (type === "histogram") {
        known.set(`${name}_bucket`, new Set([...labels, "le"]));
        known.set(`${name}_sum`, labels);
        known.set(`${name}_count`, labels);
      } else known.set(name, labels);
    }
  }
  return known;
}

const expressions = (): string[] => [
  ...dashboard.panels.flatMap((p) => (p.targets ?? []).map((t) => t.expr)),
  ...dashboard.templating.list.flatMap((v) => (isQuery(v.query) ? [v.query.query] : [])),
];
const isQuery = (q: unknown): q is { query: string } => typeof q === "object" && q !== null && typeof (q as { query?: unknown }).query === "string";

test("every metric and label the dashboard queries exists in the registries", async () => {
  const known = await knownSeries([
    new GatewayMetrics({
      limiter: { redisHealthy: true, fallbackDecisions: 0, redisErrors: 0 },
      alerts: { fired: 0 },
      semantic: { stats: SEMANTIC_STATS, size: () => ({ entries: 0, bytes: 0 }) },
    }).registry,
    controlPlaneMetrics({ ads: createAdsStats(), plane: { registry: { agents: () => [] } } }),
  ]);
  const exprs = expressions();
  assert.ok(exprs.length >= 20, `${exprs.length} expressions`);
  const used = new Set<string>();
  for (const expr of exprs) {
    const names = expr.match(/\bgearbox_[a-z0-9_]+/g) ?? [];
    assert.ok(names.length > 0, `no Gearbox metric in ${expr}`);
    for (const name of names) {
      used.add(name);
      assert.ok(known.has(name), `${name} (in ${expr}) is not a registered metric`);
    }
    // Label matchers: metric{label="…", label=~"…"}.
    for (const m of expr.matchAll(/\b(gearbox_[a-z0-9_]+)\{([^}]*)\}/g)) {
      const labels = known.get(m[1] ?? "") ?? new Set<string>();
      for (const l of (m[2] ?? "").matchAll(/([a-z_]+)\s*(?:=~|!~|!=|=)/g)) assert.ok(labels.has(l[1] ?? ""), `${m[1]} has no label ${l[1]} (in ${expr})`);
    }
    // Grouping: by (a, b) over the expression's metrics: each label must belong to one of them.
    for (const g of expr.matchAll(/by \(([^)]*)\)/g)) {
      for (const label of (g[1] ?? "").split(",").map((s) => s.trim())) {
        assert.ok(
          names.some((n) => known.get(n)?.has(label)),
          `no metric of ${expr} has label ${label}`,
        );
      }
    }
  }
  for (const core of [
    "gearbox_requests_total",
    "gearbox_cloud_cost_usd_total",
    "gearbox_cloud_cost_avoided_usd_total",
    "gearbox_request_duration_seconds_bucket",
    "gearbox_time_to_first_token_seconds_bucket",
    "gearbox_cache_requests_total",
    "gearbox_edge_answers_total",
    "gearbox_rate_limited_total",
  ]) {
    assert.ok(used.has(core), `the dashboard does not use ${core}`);
  }
});

test("the dashboard answers the SRE's questions: edge share, cost saved, latency, TTFT, hit rate, upgrades, throttling", () => {
  const titles = dashboard.panels.map((p) => p.title.toLowerCase());
  for (const wanted of ["edge share", "cost saved vs all-cloud", "latency", "time to first token", "cache hit rate", "upgrade rate", "throttling"]) {
    assert.ok(
      titles.some((t) => t.includes(wanted)),
      `no panel about ${wanted}`,
    );
  }
});
