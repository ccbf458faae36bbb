/**
 * The report's charts: Vega-Lite specs over the report's numbers, compiled with vega-lite and
 * rendered to SVG by vega's headless View (`renderer: "none"`, `toSVG()`: no canvas, no browser).
 * Each chart says which mark draws its data and how many items it should hold, so the HTML test
 * can check what a reader would see against the numbers in the JSON file.
 */
import * as vega from "vega";
import { compile, type TopLevelSpec } from "vega-lite";
import { LATENCY_BINS_MS, LATENCY_GROUPS, type Distribution, type LatencyGroup, type ReportData } from "./report-data.ts";

export interface Chart {
  id: string;
  title: string;
  /** What the chart shows, in one sentence under it. */
  caption: string;
  /** The SVG, or undefined when there is nothing to draw (the page says so). */
  svg: string | undefined;
  /** Vega mark type drawing the data (`rect`, `line`, `symbol`) and the number of items expected. */
  mark: "rect" | "line" | "symbol";
  items: number;
}

interface ChartSpec {
  id: string;
  title: string;
  caption: string;
  mark: Chart["mark"];
  values: Record<string, unknown>[];
  /** Items drawn: the data rows, unless a line draws one path per series. */
  items?: number;
  spec: (values: Record<string, unknown>[]) => VegaLiteBody;
}

/** A Vega-Lite unit spec without its data (checked by vega-lite when compiled). */
type VegaLiteBody = Record<string, unknown>;

const ROUTE_COLORS = { domain: ["edge", "cloud", "cache", "none"], range: ["#2a9d8f", "#457b9d", "#e9c46a", "#bbbbbb"] };
const WIDTH = 640;
const HEIGHT = 220;

async function render(spec: TopLevelSpec): Promise<string> {
  const view = new vega.View(vega.parse(compile(spec).spec), { renderer: "none" });
  try {
    return await view.toSVG();
  } finally {
    view.finalize();
  }
}

const percentiles = (dists: Record<LatencyGroup, Distribution>) =>
  LATENCY_GROUPS.filter((g) => dists[g].count > 0).flatMap((g) =>
    (["p50", "p95", "p99"] as const).map((p) => ({ group: g, percentile: p, ms: dists[g][`${p}_ms`] ?? 0 })),
  );

const binLabel = (i: number): string => (i < LATENCY_BINS_MS.length ? `≤ ${LATENCY_BINS_MS[i]} ms` : `> ${LATENCY_BINS_MS[LATENCY_BINS_MS.length - 1]} ms`);

function percentileSpec(title: string) {
  return (): VegaLiteBody => ({
    width: WIDTH,
    height: HEIGHT,
    mark: "bar",
    encoding: {
      x: { field: "group", type: "nominal", title: null, sort: [...LATENCY_GROUPS] },
      xOffset: { field: "percentile", type: "nominal", sort: ["p50", "p95", "p99"] },
      y: { field: "ms", type: "quantitative", title },
      color: { field: "percentile", type: "nominal", scale: { range: ["#8ecae6", "#219ebc", "#023047"] } },
      tooltip: [{ field: "group" }, { field: "percentile" }, { field: "ms", format: ".1f" }],
    },
  });
}

/** The chart specs for `data`, in page order. */
export function chartSpecs(data: ReportData): ChartSpec[] {
  const ts = data.time_series;
  const routes = ["edge", "cloud", "cache", "none"] as const;
  let actual = 0;
  let allCloud = 0;
  const cumulative = ts.flatMap((b) => {
    actual += b.cost_usd;
    allCloud += b.all_cloud_usd;
    return [
      { start: b.start, series: "actual", usd: actual },
      { start: b.start, series: "all-cloud counterfactual", usd: allCloud },
    ];
  });
  const reasons = [
    ...Object.entries(data.cascade.upgrade_reasons).map(([reason, count]) => ({ kind: "upgrade (edge → cloud)", reason, count })),
    ...Object.entries(data.fallback.reasons).map(([reason, count]) => ({ kind: "provider fallback", reason, count })),
    ...Object.entries(data.fallback.degraded).map(([reason, count]) => ({ kind: "degraded to edge", reason, count })),
  ];
  const distBins = LATENCY_GROUPS.filter((g) => data.latency[g].count > 0).flatMap((g) =>
    data.latency[g].bins.map((b, i) => ({ group: g, bin: binLabel(i), order: i, count: b.count })),
  );
  const saved = data.cost.savings_ratio === null ? "no cost recorded" : `${(data.cost.savings_ratio * 100).toFixed(1)} % saved`;
  return [
    {
      id: "requests",
      title: "Requests over time, by route",
      caption: `Requests per ${data.window.bucket_ms / 60_000} min bucket; 'none' is refused or failed.`,
      mark: "rect",
      values: ts.flatMap((b) => routes.map((route) => ({ start: b.start, route, requests: b[route] }))),
      spec: () => ({
        width: WIDTH,
        height: HEIGHT,
        mark: "bar",
        encoding: {
          x: { field: "start", type: "temporal", title: null },
          y: { field: "requests", type: "quantitative", stack: true },
          color: { field: "route", type: "nominal", scale: ROUTE_COLORS },
          tooltip: [{ field: "start", type: "temporal", format: "%Y-%m-%d %H:%M" }, { field: "route" }, { field: "requests" }],
        },
      }),
    },
    {
      id: "edge-share",
      title: "Edge share over time",
      caption: "Edge answers kept, over answered requests (edge + cloud + cache), per bucket.",
      mark: "symbol",
      values: ts.filter((b) => b.edge_share !== null).map((b) => ({ start: b.start, share: b.edge_share })),
      spec: () => ({
        width: WIDTH,
        height: HEIGHT,
        mark: { type: "line", point: true, color: "#2a9d8f" },
        encoding: {
          x: { field: "start", type: "temporal", title: null },
          y: { field: "share", type: "quantitative", axis: { format: "%" }, scale: { domain: [0, 1] }, title: "edge share" },
        },
      }),
    },
    {
      id: "cost",
      title: `Cumulative cost: actual vs all-cloud (${saved})`,
      caption: "Cloud spend at list price, against the same answers all served by the cloud model the request would have used.",
      mark: "line",
      values: cumulative,
      items: cumulative.length === 0 ? 0 : 2,
      spec: () => ({
        width: WIDTH,
        height: HEIGHT,
        mark: "line",
        encoding: {
          x: { field: "start", type: "temporal", title: null },
          y: { field: "usd", type: "quantitative", title: "USD (cumulative)" },
          color: { field: "series", type: "nominal", scale: { range: ["#e76f51", "#264653"] } },
        },
      }),
    },
    {
      id: "cache",
      title: "Cache hit rate by layer",
      caption: `Hits over cache lookups (${data.cache.lookups}); bypassed requests are not lookups.`,
      mark: "rect",
      values:
        data.cache.lookups === 0
          ? []
          : [
              { layer: "exact", rate: data.cache.exact_rate },
              { layer: "semantic", rate: data.cache.semantic_rate },
            ],
      spec: () => ({
        width: 300,
        height: HEIGHT,
        mark: "bar",
        encoding: {
          x: { field: "layer", type: "nominal", title: null },
          y: { field: "rate", type: "quantitative", axis: { format: "%" }, title: "hit rate" },
          color: { field: "layer", type: "nominal", legend: null, scale: { range: ["#e9c46a", "#f4a261"] } },
        },
      }),
    },
    {
      id: "upgrades",
      title: "Upgrades, fallbacks and degradations, by reason",
      caption: `Edge answers upgraded: ${data.cascade.upgraded} of ${data.cascade.edge_first}; provider fallbacks: ${data.fallback.requests}.`,
      mark: "rect",
      values: reasons,
      spec: () => ({
        width: WIDTH,
        height: { step: 22 },
        mark: "bar",
        encoding: {
          y: { field: "reason", type: "nominal", title: null, sort: "-x" },
          x: { field: "count", type: "quantitative" },
          color: { field: "kind", type: "nominal" },
        },
      }),
    },
    {
      id: "confidence",
      title: "Edge confidence: kept vs upgraded answers",
      caption: `Edge answers by the agent's confidence score (${data.cascade.unscored} unscored not shown).`,
      mark: "rect",
      values:
        data.cascade.edge_first === data.cascade.unscored
          ? []
          : data.cascade.confidence_bins.flatMap((b) => [
              { from: b.from, to: b.from + 0.05, outcome: "kept", count: b.kept },
              { from: b.from, to: b.from + 0.05, outcome: "upgraded", count: b.upgraded },
            ]),
      spec: () => ({
        width: WIDTH,
        height: HEIGHT,
        mark: "bar",
        encoding: {
          x: { field: "from", type: "quantitative", bin: { binned: true, step: 0.05 }, scale: { domain: [0, 1] }, title: "confidence" },
          x2: { field: "to" },
          y: { field: "count", type: "quantitative", stack: true },
          color: { field: "outcome", type: "nominal", scale: { range: ["#2a9d8f", "#e76f51"] } },
        },
      }),
    },
    {
      id: "latency",
      title: "Latency by route (p50 / p95 / p99)",
      caption: "Whole request, as Gearbox measured it; upgraded answers include the edge attempt.",
      mark: "rect",
      values: percentiles(data.latency),
      spec: percentileSpec("ms"),
    },
    {
      id: "latency-distribution",
      title: "Latency distribution by route",
      caption: "Requests per latency bin.",
      mark: "rect",
      values: distBins,
      spec: () => ({
        width: WIDTH,
        height: HEIGHT,
        mark: "bar",
        encoding: {
          x: { field: "bin", type: "ordinal", sort: { field: "order" }, title: null },
          xOffset: { field: "group", type: "nominal", sort: [...LATENCY_GROUPS] },
          y: { field: "count", type: "quantitative", title: "requests" },
          color: { field: "group", type: "nominal", sort: [...LATENCY_GROUPS] },
        },
      }),
    },
    {
      id: "ttft",
      title: "Time to first token by route (p50 / p95 / p99)",
      caption: "Streamed requests only.",
      mark: "rect",
      values: percentiles(data.ttft),
      spec: percentileSpec("ms to first token"),
    },
    {
      id: "errors",
      title: "Errors and 429s by cause",
      caption: `5xx: ${data.errors.errors_5xx}, 429: ${data.errors.throttled_429}, other 4xx: ${data.errors.client_4xx}.`,
      mark: "rect",
      values: Object.entries(data.errors.by_cause).map(([cause, count]) => ({
        cause,
        count,
        class: cause.slice(0, 1) === "5" ? "5xx" : cause.startsWith("429") ? "429" : "4xx",
      })),
      spec: () => ({
        width: WIDTH,
        height: { step: 22 },
        mark: "bar",
        encoding: {
          y: { field: "cause", type: "nominal", title: null, sort: "-x" },
          x: { field: "count", type: "quantitative" },
          color: { field: "class", type: "nominal", scale: { domain: ["5xx", "429", "4xx"], range: ["#d62828", "#f77f00", "#fcbf49"] } },
        },
      }),
    },
  ];
}

/** Every chart of `data`, rendered. */
export async function renderCharts(data: ReportData): Promise<Chart[]> {
  const charts: Chart[] = [];
  for (const c of chartSpecs(data)) {
    const items = c.items ?? c.values.length;
    const svg = c.values.length === 0 ? undefined : await render({ ...c.spec(c.values), data: { values: c.values } } as unknown as TopLevelSpec);
    charts.push({ id: c.id, title: c.title, caption: c.caption, svg, mark: c.mark, items });
  }
  return charts;
}
