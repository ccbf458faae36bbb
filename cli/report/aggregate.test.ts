/**
 * The aggregation on a synthetic log whose totals are known by construction: 100 requests in
 * ten minutes, mixed with lines that are not requests, a malformed line, and one gzip file.
 */
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, test } from "node:test";
import { gzipSync } from "node:zlib";
import { LogHistogram } from "./histogram.ts";
import { aggregateFiles } from "./main.ts";
import { answers } from "./summary.ts";

const T0 = Date.parse("2025-06-01T10:00:00Z");
const dir = mkdtempSync(path.join(tmpdir(), "gearbox-report-agg-"));

/** Request i of 100: 40 edge (10 of them upgraded → cloud), 30 cloud, 20 cache (15 exact, 5 semantic), 6 429s, 4 500s. */
function logLine(i: number): Record<string, unknown> {
  const base = {
    level: 30,
    time: new Date(T0 + i * 6000).toISOString(),
    component: "gearbox",
    request_id: `r${i}`,
    tenant: i % 2 === 0 ? "acme" : "beta",
    model: "gpt-4o-mini",
    msg: "request",
  };
  if (i < 30)
    return {
      ...base,
      route: "edge",
      reason: "rule:1",
      cache: "miss",
      status: 200,
      duration_ms: 100,
      input_tokens: 10,
      output_tokens: 5,
      cost_usd: 0,
      cloud_cost_avoided_usd: 0.001,
      cascade: { edge_confidence: 0.9, upgraded: false },
      calibration: {
        tenant: base.tenant,
        intent: "qa",
        score: 0.01,
        threshold: i < 15 ? 0.069 : 0.061,
        source: "calibrated:initial=0.069",
        shadowed: i % 10 === 0,
      },
    };
  if (i < 40)
    return {
      ...base,
      route: "cloud",
      reason: "rule:1",
      cache: "miss",
      status: 200,
      duration_ms: 300,
      input_tokens: 10,
      output_tokens: 5,
      cost_usd: 0.002,
      cascade: { edge_confidence: 0.1, upgraded: true, upgrade_reason: `low_confidence:0.1${i}<0.6` },
    };
  if (i < 70)
    return {
      ...base,
      route: "cloud",
      reason: "default_provider:openai",
      cache: "miss",
      status: 200,
      duration_ms: 200,
      ttft_ms: 50,
      stream: true,
      input_tokens: 10,
      output_tokens: 5,
      cost_usd: 0.002,
      ...(i === 69 && { fallback: "openai:429>deepseek" }),
    };
  if (i < 85) return { ...base, route: "cache", cache: "hit", cache_layer: "exact", status: 200, duration_ms: 2, cost_usd: 0, cloud_cost_avoided_usd: 0.002 };
  if (i < 90)
    return { ...base, route: "cache", cache: "hit", cache_layer: "semantic", status: 200, duration_ms: 8, cost_usd: 0, cloud_cost_avoided_usd: 0.002 };
  if (i < 96) return { ...base, cache: "miss", status: 429, error_code: "rate_limit_requests_per_second", duration_ms: 1 };
  return { ...base, cache: "miss", status: 500, error_code: "internal_error", duration_ms: 5 };
}

const lines = Array.from({ length: 100 }, (_, i) => JSON.stringify(logLine(i)));
const plain = path.join(dir, "requests.log");
writeFileSync(
  plain,
  [
    "gearbox serve: config (none found)",
    ...lines.slice(0, 50),
    '{"level":30,"msg":"ext_proc stream opened"}',
    '{"msg":"request", broken',
    ...lines.slice(50, 80),
  ].join("\n") + "\n",
);
const gz = path.join(dir, "rotated.log.1");
writeFileSync(gz, gzipSync(lines.slice(80).join("\n") + "\n"));

describe("report aggregation", () => {
  test("totals by route, cost, cache, cascade, errors and lines are the log's", async () => {
    const d = (await aggregateFiles([plain, gz], {})).result([plain, gz]);
    assert.deepEqual(d.lines, { read: 103, requests: 100, not_requests: 2, malformed: 1, filtered_out: 0, without_time: 0 });
    assert.deepEqual(d.requests.by_route, { edge: 30, cloud: 40, cache: 20, none: 10 });
    assert.equal(d.requests.answered, 90);
    assert.equal(d.edge_share, 30 / 90);
    // Cost: 40 cloud answers × 0.002; all-cloud adds 30 edge × 0.001 and 20 cache × 0.002.
    assert.equal(d.cost.actual_usd, 0.08);
    assert.equal(d.cost.all_cloud_usd, 0.15);
    assert.equal(d.cost.savings_ratio, Math.round((1 - 0.08 / 0.15) * 10_000) / 10_000);
    assert.deepEqual(
      { ...d.cache },
      { lookups: 100, hits: 20, exact_hits: 15, semantic_hits: 5, bypass: 0, hit_rate: 0.2, exact_rate: 0.15, semantic_rate: 0.05 },
    );
    assert.equal(d.cascade.edge_first, 40);
    assert.equal(d.cascade.kept, 30);
    assert.equal(d.cascade.upgraded, 10);
    assert.deepEqual(d.cascade.upgrade_reasons, { low_confidence: 10 });
    assert.equal(d.cascade.confidence_bins[18]?.kept, 30);
    assert.equal(d.cascade.confidence_bins[2]?.upgraded, 10);
    assert.deepEqual(d.fallback.reasons, { "openai:429": 1 });
    assert.equal(d.errors.errors_5xx, 4);
    assert.equal(d.errors.throttled_429, 6);
    assert.deepEqual(d.errors.by_cause, { "429 rate_limit_requests_per_second": 6, "500 internal_error": 4 });
    assert.deepEqual(d.errors.throttled_by_limit, { rate_limit_requests_per_second: 6 });
  });

  test("online calibration: edge requests sent by a held threshold, shadowed ones, each threshold's first and last value; in the summary", async () => {
    const d = (await aggregateFiles([plain, gz], {})).result([]);
    assert.equal(d.calibration.edge_requests, 30);
    assert.equal(d.calibration.shadowed, 3);
    assert.deepEqual(
      d.calibration.thresholds.map((t) => [t.tenant, t.intent, t.requests, t.shadowed, t.first, t.last, t.min, t.max]),
      [
        ["acme", "qa", 15, 3, 0.069, 0.061, 0.061, 0.069],
        ["beta", "qa", 15, 0, 0.069, 0.061, 0.061, 0.069],
      ],
    );
    const quality = answers(d).find((a) => a.question.startsWith("How much quality"))?.answer ?? "";
    assert.match(quality, /Online calibration sent 30 of them by a held threshold and shadowed 3 .*acme\/qa 0\.069 → 0\.061, beta\/qa 0\.069 → 0\.061\.$/);
    const none = (await aggregateFiles([plain], { models: new Set(["gpt-4o"]) })).result([]);
    assert.deepEqual(none.calibration, { edge_requests: 0, shadowed: 0, thresholds: [] });
    assert.doesNotMatch(
      answers(none)
        .map((a) => a.answer)
        .join(" "),
      /Online calibration/,
    );
  });

  test("latency percentiles per route, the upgraded apart; TTFT only from streams", async () => {
    const d = (await aggregateFiles([plain, gz], {})).result([]);
    assert.equal(d.latency.edge.count, 30);
    assert.equal(d.latency["cloud (upgraded)"].count, 10);
    assert.equal(d.latency.cloud.count, 30);
    for (const [group, value] of [
      ["edge", 100],
      ["cloud", 200],
      ["cloud (upgraded)", 300],
    ] as const) {
      const p = d.latency[group].p99_ms;
      assert.ok(p !== null && Math.abs(p - value) <= value * 0.02, `${group} p99 ${p}`);
    }
    assert.equal(d.ttft.cloud.count, 30);
    assert.equal(d.ttft.edge.count, 0);
    assert.equal(
      d.latency.edge.bins.reduce((s, b) => s + b.count, 0),
      30,
    );
  });

  test("time series: ten one-minute buckets of ten requests; per-tenant table", async () => {
    const d = (await aggregateFiles([plain, gz], {})).result([]);
    assert.equal(d.window.bucket_ms, 60_000);
    assert.equal(d.time_series.length, 10);
    assert.ok(d.time_series.every((b) => b.requests === 10));
    assert.equal(d.time_series[0]?.start, "2025-06-01T10:00:00.000Z");
    assert.deepEqual(
      d.tenants.map((t) => [t.key, t.requests]),
      [
        ["acme", 50],
        ["beta", 50],
      ],
    );
  });

  test("filters: time window, tenant, model", async () => {
    const since = T0 + 60_000 * 5;
    const d = (await aggregateFiles([plain, gz], { since, tenants: new Set(["acme"]) })).result([]);
    assert.equal(d.requests.total, 25);
    assert.equal(d.lines.filtered_out, 75);
    const none = (await aggregateFiles([plain], { models: new Set(["gpt-4o"]) })).result([]);
    assert.equal(none.requests.total, 0);
    assert.equal(none.cost.savings_ratio, null);
  });

  test("the time series widens its buckets instead of growing past its bound", async () => {
    const file = path.join(dir, "week.log");
    const week = Array.from({ length: 2000 }, (_, i) => JSON.stringify({ ...logLine(i % 100), time: T0 + i * 5 * 60_000 }));
    writeFileSync(file, week.join("\n"));
    const d = (await aggregateFiles([file], {})).result([]);
    assert.ok(d.time_series.length <= 240, String(d.time_series.length));
    assert.equal(
      d.time_series.reduce((s, b) => s + b.requests, 0),
      2000,
    );
  });
});

test("the log histogram's quantiles are within 2 % of the exact ones", () => {
  const h = new LogHistogram();
  const values = Array.from({ length: 10_000 }, (_, i) => 1 + ((i * 7919) % 10_000) / 10);
  for (const v of values) h.add(v);
  const sorted = [...values].sort((a, b) => a - b);
  for (const q of [0.5, 0.95, 0.99]) {
    const exact = sorted[Math.ceil(q * sorted.length) - 1]!;
    const got = h.quantile(q)!;
    assert.ok(Math.abs(got - exact) <= exact * 0.02, `q${q}: ${got} vs ${exact}`);
  }
});
