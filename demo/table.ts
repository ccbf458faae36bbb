/**
 * The demo's table: one row per request from what the client saw and the gateway's request log,
 * and the totals, computed from the rows alone. Plain padded columns.
 */

/** The request log fields the table reads (see `extproc/processor/request-record.ts`). */
export interface LoggedRequest {
  request_id: string;
  route?: "edge" | "cloud" | "cache";
  reason?: string;
  cache?: string;
  cache_layer?: string;
  status: number;
  error_code?: string;
  tenant?: string;
  cost_usd?: number | null;
  cloud_cost_avoided_usd?: number | null;
  cascade?: { edge_confidence?: number | null; upgraded?: boolean };
}

export interface DemoRow {
  n: number;
  label: string;
  /** `edge`, `cloud`, `cache` or `-` (refused). */
  route: string;
  reason: string;
  confidence: number | undefined;
  upgraded: boolean;
  cache: string;
  /** What the client got. */
  status: number;
  /** As the client measured it. */
  latencyMs: number;
  /** What Gearbox paid the cloud for it (USD). */
  costUsd: number;
  /** What it would have cost had every request gone to the cloud (USD). */
  allCloudUsd: number;
  /** The first characters of the answer (or the error code), printable. */
  answer: string;
}

export interface DemoTotals {
  requests: number;
  byRoute: Record<"edge" | "cloud" | "cache" | "-", number>;
  /** Answered requests served on the edge (not upgraded), of all answered. */
  edgeShare: number;
  cacheHits: number;
  upgrades: number;
  refused: number;
  costUsd: number;
  allCloudUsd: number;
}

/** A row from the request's log line and what the client saw (status, latency, answer). */
export function rowOf(n: number, label: string, log: LoggedRequest, seen: { status: number; latencyMs: number; answer: string }): DemoRow {
  const cost = typeof log.cost_usd === "number" ? log.cost_usd : 0;
  const avoided = typeof log.cloud_cost_avoided_usd === "number" ? log.cloud_cost_avoided_usd : 0;
  return {
    n,
    label,
    route: log.route ?? "-",
    reason: log.route === undefined ? (log.error_code ?? "refused") : `${log.reason ?? ""}${log.cascade?.upgraded === true ? " → upgraded" : ""}`,
    confidence: log.cascade?.edge_confidence ?? undefined,
    upgraded: log.cascade?.upgraded === true,
    cache: log.cache === "hit" ? `hit ${log.cache_layer ?? ""}`.trim() : (log.cache ?? "-"),
    status: seen.status,
    latencyMs: seen.latencyMs,
    costUsd: cost,
    allCloudUsd: cost + avoided,
    answer: seen.answer,
  };
}

export function totalsOf(rows: readonly DemoRow[]): DemoTotals {
  const byRoute = { edge: 0, cloud: 0, cache: 0, "-": 0 };
  for (const r of rows) byRoute[r.route as keyof typeof byRoute]++;
  const answered = rows.length - byRoute["-"];
  return {
    requests: rows.length,
    byRoute,
    edgeShare: answered === 0 ? 0 : byRoute.edge / answered,
    cacheHits: byRoute.cache,
    upgrades: rows.filter((r) => r.upgraded).length,
    refused: byRoute["-"],
    costUsd: rows.reduce((sum, r) => sum + r.costUsd, 0),
    allCloudUsd: rows.reduce((sum, r) => sum + r.allCloudUsd, 0),
  };
}

const COLUMNS: { title: string; width: number; right?: boolean; cell: (r: DemoRow) => string }[] = [
  { title: "#", width: 2, right: true, cell: (r) => String(r.n) },
  { title: "request", width: 18, cell: (r) => r.label },
  { title: "route", width: 5, cell: (r) => r.route },
  { title: "reason", width: 32, cell: (r) => r.reason },
  { title: "conf", width: 5, right: true, cell: (r) => (r.confidence === undefined ? "" : r.confidence.toFixed(2)) },
  { title: "cache", width: 12, cell: (r) => r.cache },
  { title: "status", width: 6, right: true, cell: (r) => String(r.status) },
  { title: "ms", width: 6, right: true, cell: (r) => String(Math.round(r.latencyMs)) },
  { title: "cost $", width: 9, right: true, cell: (r) => r.costUsd.toFixed(6) },
  { title: "answer", width: 30, cell: (r) => r.answer },
];

const fit = (text: string, width: number, right = false): string => {
  const cut = [...text].length > width ? `${[...text].slice(0, width - 1).join("")}…` : text;
  const pad = " ".repeat(Math.max(0, width - [...cut].length));
  return right ? pad + cut : cut + pad;
};

export function headerLine(): string {
  return COLUMNS.map((c) => fit(c.title, c.width, c.right)).join("  ");
}

export function rowLine(row: DemoRow): string {
  return COLUMNS.map((c) => fit(c.cell(row), c.width, c.right)).join("  ");
}

export function totalsLines(t: DemoTotals): string[] {
  const saved = t.allCloudUsd === 0 ? 0 : 1 - t.costUsd / t.allCloudUsd;
  return [
    `requests ${t.requests}: edge ${t.byRoute.edge}, cloud ${t.byRoute.cloud} (${t.upgrades} upgraded from a weak edge answer), cache ${t.byRoute.cache}, refused ${t.refused}`,
    `edge share ${(t.edgeShare * 100).toFixed(0)} % of answered requests; cache hits ${t.cacheHits}`,
    `cost $${t.costUsd.toFixed(6)} against $${t.allCloudUsd.toFixed(6)} all-cloud (list price): ${(saved * 100).toFixed(0)} % saved`,
  ];
}

/** Printable text of an answer: control characters and odd bytes become spaces. */
export function printable(text: string): string {
  return text
    .replace(/\uFFFD/g, "?")
    .replace(/[^\p{L}\p{N}\p{P}\p{S} ]/gu, " ")
    .replace(/\s+/g, " ")
    .trim();
}
