/**
 * The HTML report: one self-contained file (inline SVG and CSS, no script, nothing fetched), so
 * it opens offline and can be mailed or attached to a ticket as is.
 */
import type { GroupRow, ReportData } from "./report-data.ts";
import type { Chart } from "./charts.ts";
import { answers } from "./summary.ts";

const esc = (s: string): string => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
const pct = (v: number | null): string => (v === null ? "–" : `${(v * 100).toFixed(1)} %`);
const usd = (v: number): string => `$${v.toFixed(6)}`;
const num = (v: number | null): string => (v === null ? "–" : String(v));

function groupTable(title: string, rows: GroupRow[]): string {
  const head = [
    "",
    "requests",
    "edge",
    "cloud",
    "cache",
    "refused/failed",
    "upgraded",
    "5xx",
    "429",
    "tokens in",
    "tokens out",
    "cost",
    "all-cloud",
    "saved",
    "p50 ms",
    "p95 ms",
  ];
  const body = rows
    .slice(0, 100)
    .map((r) =>
      [
        esc(r.key),
        r.requests,
        r.edge,
        r.cloud,
        r.cache,
        r.refused_or_failed,
        r.upgraded,
        r.errors_5xx,
        r.throttled_429,
        r.input_tokens,
        r.output_tokens,
        usd(r.cost_usd),
        usd(r.all_cloud_usd),
        pct(r.savings_ratio),
        num(r.p50_ms),
        num(r.p95_ms),
      ]
        .map((c, i) => (i === 0 ? `<th scope="row">${c}</th>` : `<td>${c}</td>`))
        .join(""),
    )
    .map((r) => `<tr>${r}</tr>`)
    .join("\n");
  const more = rows.length > 100 ? `<p class="note">${rows.length - 100} more in the JSON file.</p>` : "";
  return `<section class="table" data-table="${esc(title.toLowerCase())}"><h2>Per ${esc(title)}</h2>
<table><thead><tr>${head.map((h) => `<th scope="col">${h}</th>`).join("")}</tr></thead>
<tbody>
${body}
</tbody></table>${more}</section>`;
}

function figure(c: Chart): string {
  const inner = c.svg ?? `<p class="empty">No data for this chart in the selected window.</p>`;
  return `<figure class="chart" data-chart="${c.id}" data-mark="${c.mark}" data-items="${c.items}">
<h2>${esc(c.title)}</h2>
${inner}
<figcaption>${esc(c.caption)}</figcaption>
</figure>`;
}

export function reportHtml(data: ReportData, charts: Chart[]): string {
  const a = answers(data);
  const tiles: [string, string][] = [
    ["requests", String(data.requests.total)],
    ["edge share", pct(data.edge_share)],
    ["saved vs all-cloud", pct(data.cost.savings_ratio)],
    ["cost", usd(data.cost.actual_usd)],
    ["cache hit rate", pct(data.cache.hit_rate)],
    ["upgrade rate", pct(data.cascade.upgrade_rate)],
    ["5xx rate", pct(data.errors.error_rate)],
    ["p99 latency (cloud)", data.latency.cloud.p99_ms === null ? "–" : `${data.latency.cloud.p99_ms} ms`],
  ];
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Gearbox report</title>
<style>
body { font: 14px/1.45 system-ui, sans-serif; margin: 24px auto; max-width: 1100px; color: #222; padding: 0 16px; }
h1 { margin-bottom: 4px; } h2 { font-size: 16px; margin: 8px 0; }
.meta { color: #666; margin-top: 0; }
.tiles { display: grid; grid-template-columns: repeat(4, 1fr); gap: 8px; margin: 16px 0; }
.tile { background: #f4f6f8; border-radius: 6px; padding: 10px; } .tile b { display: block; font-size: 20px; }
.answers li { margin-bottom: 6px; }
figure.chart { margin: 20px 0; border-top: 1px solid #ddd; padding-top: 8px; }
figcaption, .note, .empty { color: #666; }
table { border-collapse: collapse; font-size: 12px; } td, th { padding: 3px 6px; border-bottom: 1px solid #eee; text-align: right; }
th[scope=row] { text-align: left; font-weight: normal; }
</style></head>
<body>
<h1>Gearbox report</h1>
<p class="meta">${data.requests.total} requests from ${data.inputs.length} file(s), ${esc(data.window.first ?? "?")} – ${esc(data.window.last ?? "?")}; generated ${esc(data.generated_at)}.</p>
<div class="tiles">${tiles.map(([k, v]) => `<div class="tile">${esc(k)}<b>${esc(v)}</b></div>`).join("")}</div>
<section class="answers"><h2>Answers</h2><ul>
${a.map((x) => `<li><b>${esc(x.question)}</b> ${esc(x.answer)}</li>`).join("\n")}
</ul></section>
${charts.map(figure).join("\n")}
${groupTable("tenant", data.tenants)}
${groupTable("model", data.models)}
<p class="note">Every number is in the JSON file beside this page. Costs are list prices.</p>
</body></html>
`;
}
