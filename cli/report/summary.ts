/**
 * The Markdown summary: the brief's three questions answered with the report's numbers, and what
 * the logs cannot tell.
 */
import type { ReportData } from "./report-data.ts";

const pct = (v: number | null): string => (v === null ? "n/a" : `${(v * 100).toFixed(1)} %`);
const usd = (v: number): string => `$${v.toFixed(6)}`;
const ms = (v: number | null): string => (v === null ? "n/a" : `${v} ms`);

export interface Answer {
  question: string;
  answer: string;
}

export function answers(d: ReportData): Answer[] {
  const served = d.requests.by_route.edge + d.requests.by_route.cloud + d.requests.by_route.cache;
  const cost =
    d.cost.savings_ratio === null
      ? "No cost was recorded in this window, so the saving cannot be computed."
      : `${d.cost.savings_ratio > 0 ? "Yes" : "No"}: ${usd(d.cost.actual_usd)} spent against ${usd(d.cost.all_cloud_usd)} had every answer come from the cloud ` +
        `(${pct(d.cost.savings_ratio)} saved, ${usd(d.cost.saved_usd)}). Edge answered ${d.requests.by_route.edge} of ${served} served requests (${pct(d.edge_share)}), ` +
        `the cache ${d.requests.by_route.cache} (hit rate ${pct(d.cache.hit_rate)} of ${d.cache.lookups} lookups).`;
  const upgradedP50 = d.latency["cloud (upgraded)"].p50_ms;
  const cloudP50 = d.latency.cloud.p50_ms;
  const quality =
    d.cascade.edge_first === 0
      ? "No request went edge-first in this window."
      : `${d.cascade.upgraded} of ${d.cascade.edge_first} edge-first answers (${pct(d.cascade.upgrade_rate)}) were judged weak and upgraded to the cloud before the client saw them; ` +
        `${d.cascade.kept} were kept (mean confidence ${d.cascade.kept_confidence_mean ?? "n/a"}, upgraded ones ${d.cascade.upgraded_confidence_mean ?? "n/a"}). ` +
        `An upgrade costs time: p50 ${ms(upgradedP50)} against ${ms(cloudP50)} for a direct cloud call.` +
        calibrationSentence(d);
  const stability =
    `${d.errors.errors_5xx} server errors (${pct(d.errors.error_rate)}), ${d.errors.throttled_429} requests throttled (429), ` +
    `${d.fallback.requests} provider fallbacks; peak ${d.throughput.peak_requests_per_s ?? "n/a"} req/s per bucket, ` +
    `worst bucket 5xx rate ${pct(d.throughput.worst_bucket_error_rate)}; cloud p99 ${ms(d.latency.cloud.p99_ms)}, edge p99 ${ms(d.latency.edge.p99_ms)}.`;
  return [
    { question: "Does edge-cloud collaboration cut cost, and by how much?", answer: cost },
    { question: "How much quality does edge-first-then-upgrade cost?", answer: quality },
    { question: "Does the gateway hold up under load?", answer: stability },
  ];
}

/** Online calibration's part of the quality answer; empty when no request was sent by a held threshold. */
function calibrationSentence(d: ReportData): string {
  const c = d.calibration;
  if (c.edge_requests === 0) return "";
  const moves = c.thresholds.map((t) => `${t.tenant}/${t.intent} ${t.first}${t.last === t.first ? " (unchanged)" : ` → ${t.last}`}`).join(", ");
  return ` Online calibration sent ${c.edge_requests} of them by a held threshold and shadowed ${c.shadowed} in the background to judge against the cloud; thresholds: ${moves}.`;
}

/** What the log does not let the report measure, for this data. */
export function limits(d: ReportData): string[] {
  const out = [
    "Answer quality of kept edge answers: the log holds the edge model's confidence, not a judgement of the answer; a sample graded against the cloud answer (or by people) is needed.",
    "Routing accuracy: no label says where each request should have gone; the report shows where it went and why.",
    "Costs are list prices from Gearbox's price table, not the provider's invoice (discounts, batch pricing and taxes are not in the log).",
  ];
  if (d.cost.unpriced_requests > 0) out.push(`${d.cost.unpriced_requests} cloud requests were on a model with no price: counted as $0.`);
  if (d.cost.counterfactual_unknown > 0)
    out.push(
      `${d.cost.counterfactual_unknown} edge or cache answers had no all-cloud price (unpriced model or no token count): counted at $0 in the counterfactual.`,
    );
  if (d.requests.shadow > 0) out.push(`${d.requests.shadow} shadowed requests carry Gearbox's decision only (no latency, tokens or cost of its own).`);
  if (d.ttft.edge.count + d.ttft.cloud.count + d.ttft.cache.count === 0) out.push("Time to first token: no streamed request in this window.");
  if (d.lines.without_time > 0) out.push(`${d.lines.without_time} requests had no time: counted in totals, not in the time series.`);
  if (d.requests.from_replay > 0)
    out.push(
      "Replay rows: cost and counterfactual are computed from the built-in price table and the response's usage, confidence from the x-gearbox-confidence header.",
    );
  return out;
}

export function summaryMarkdown(d: ReportData): string {
  const a = answers(d);
  const lines = [
    "# Gearbox report",
    "",
    `${d.requests.total} requests, ${d.window.first ?? "?"} to ${d.window.last ?? "?"}, from ${d.inputs.join(", ")}.`,
    `Lines read ${d.lines.read}: requests ${d.lines.requests}, other lines skipped ${d.lines.not_requests}, malformed ${d.lines.malformed}, outside the filters ${d.lines.filtered_out}.`,
    "",
    ...a.flatMap((x) => [`## ${x.question}`, "", x.answer, ""]),
    "## Numbers",
    "",
    "| | |",
    "|---|---|",
    `| requests (edge / cloud / cache / refused or failed) | ${d.requests.total} (${d.requests.by_route.edge} / ${d.requests.by_route.cloud} / ${d.requests.by_route.cache} / ${d.requests.by_route.none}) |`,
    `| edge share of served | ${pct(d.edge_share)} |`,
    `| cost / all-cloud / saved | ${usd(d.cost.actual_usd)} / ${usd(d.cost.all_cloud_usd)} / ${pct(d.cost.savings_ratio)} |`,
    `| cache hit rate (exact / semantic) | ${pct(d.cache.hit_rate)} (${pct(d.cache.exact_rate)} / ${pct(d.cache.semantic_rate)}) |`,
    `| upgrade rate | ${pct(d.cascade.upgrade_rate)} |`,
    ...(d.calibration.edge_requests > 0
      ? [`| online calibration: edge requests / shadowed | ${d.calibration.edge_requests} / ${d.calibration.shadowed} |`]
      : []),
    `| latency p50 / p95 / p99, edge | ${ms(d.latency.edge.p50_ms)} / ${ms(d.latency.edge.p95_ms)} / ${ms(d.latency.edge.p99_ms)} |`,
    `| latency p50 / p95 / p99, cloud | ${ms(d.latency.cloud.p50_ms)} / ${ms(d.latency.cloud.p95_ms)} / ${ms(d.latency.cloud.p99_ms)} |`,
    `| 5xx / 429 / other 4xx | ${d.errors.errors_5xx} / ${d.errors.throttled_429} / ${d.errors.client_4xx} |`,
    "",
    "## What this report could not measure",
    "",
    ...limits(d).map((l) => `- ${l}`),
    "",
  ];
  return lines.join("\n");
}
