/**
 * One request as the report counts it, read from either source it accepts: a line of Gearbox's
 * request log (pino JSON, message `request`, fields of `extproc/processor/request-record.ts`) or a
 * line of `gearbox replay`'s output (`replay_line` set, fields of `cli/replay/result.ts`). Any other
 * line (other log messages, banners, text) is not a request and is skipped.
 */
export type Route = "edge" | "cloud" | "cache" | "none";

export interface Row {
  /** Epoch ms; `undefined` when the line has no usable time. */
  time: number | undefined;
  source: "log" | "replay";
  tenant: string;
  model: string;
  route: Route;
  reason: string | undefined;
  status: number;
  errorCode: string | undefined;
  /** `hit`, `miss`, `bypass`, or undefined when no cache took part. */
  cache: string | undefined;
  cacheLayer: "exact" | "semantic" | undefined;
  /** The edge answered first (a cascade): kept or upgraded. */
  edgeTried: boolean;
  upgraded: boolean;
  upgradeReason: string | undefined;
  confidence: number | undefined;
  fallback: string | undefined;
  degraded: string | undefined;
  latencyMs: number | undefined;
  ttftMs: number | undefined;
  inputTokens: number;
  outputTokens: number;
  /** Cloud cost (USD); `null`: unpriced; `undefined`: unknown. */
  costUsd: number | null | undefined;
  /** What it would have cost had everything gone to the cloud (USD); undefined when unknown. */
  allCloudUsd: number | undefined;
  shadow: boolean;
  shadowRoute: string | undefined;
  /** Online calibration: the held threshold that sent the request to the edge, and whether its kept answer was shadowed. */
  calibration: { intent: string; threshold: number; shadowed: boolean } | undefined;
}

type Obj = Record<string, unknown>;
const str = (v: unknown): string | undefined => (typeof v === "string" && v !== "" ? v : undefined);
const num = (v: unknown): number | undefined => (typeof v === "number" && Number.isFinite(v) ? v : undefined);
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

function timeOf(v: unknown): number | undefined {
  if (typeof v === "number" && Number.isFinite(v)) return v;
  if (typeof v === "string") {
    const t = Date.parse(v);
    return Number.isNaN(t) ? undefined : t;
  }
  return undefined;
}

function routeOf(v: unknown): Route {
  return v === "edge" || v === "cloud" || v === "cache" ? v : "none";
}

/** Cheap test before JSON.parse: only lines that can be a request are parsed. */
export function mayBeRequest(line: string): boolean {
  return line.charCodeAt(0) === 123 /* { */ && (line.includes('"msg":"request"') || line.includes('"replay_line":'));
}

/** The row of a parsed line, or `undefined` when the line is not a request. */
export function rowOf(entry: unknown): Row | undefined {
  if (!isObj(entry)) return undefined;
  if (entry.msg === "request" && typeof entry.request_id === "string") return fromLog(entry);
  if (typeof entry.replay_line === "number") return fromReplay(entry);
  return undefined;
}

function fromLog(e: Obj): Row {
  const cascade = isObj(e.cascade) ? e.cascade : undefined;
  const cost = e.cost_usd === null ? null : num(e.cost_usd);
  const avoided = e.cloud_cost_avoided_usd === null ? undefined : num(e.cloud_cost_avoided_usd);
  const layer = e.cache_layer === "exact" || e.cache_layer === "semantic" ? e.cache_layer : undefined;
  return {
    time: timeOf(e.time),
    source: "log",
    tenant: str(e.tenant) ?? "(none)",
    model: str(e.model) ?? "(none)",
    route: routeOf(e.route),
    reason: str(e.reason),
    status: num(e.status) ?? 0,
    errorCode: str(e.error_code),
    cache: str(e.cache),
    cacheLayer: layer,
    edgeTried: cascade !== undefined,
    upgraded: cascade?.upgraded === true,
    upgradeReason: str(cascade?.upgrade_reason),
    confidence: num(cascade?.edge_confidence),
    fallback: str(e.fallback),
    degraded: str(e.degraded),
    latencyMs: num(e.duration_ms),
    ttftMs: num(e.ttft_ms),
    inputTokens: num(e.input_tokens) ?? 0,
    outputTokens: num(e.output_tokens) ?? 0,
    costUsd: cost,
    allCloudUsd: typeof cost === "number" ? cost + (avoided ?? 0) : avoided,
    shadow: e.shadow === true,
    shadowRoute: str(e.shadow_route),
    calibration: calibrationOf(e.calibration),
  };
}

function fromReplay(e: Obj): Row {
  const cache = str(e.cache);
  const reason = str(e.reason);
  const upgraded = reason?.startsWith("upgrade") === true;
  const cost = e.cost_usd === null ? null : num(e.cost_usd);
  const confidence = num(e.confidence);
  return {
    time: timeOf(e.time),
    source: "replay",
    tenant: str(e.tenant) ?? "(none)",
    model: str(e.model) ?? "(none)",
    route: routeOf(e.route),
    reason,
    status: num(e.status) ?? 0,
    errorCode: str(e.error_code) ?? str(e.error),
    cache: cache === "semantic-hit" ? "hit" : cache,
    cacheLayer: cache === "semantic-hit" ? "semantic" : cache === "hit" ? "exact" : undefined,
    edgeTried: e.route === "edge" || upgraded,
    upgraded,
    upgradeReason: upgraded ? str(e.fallback) : undefined,
    confidence,
    fallback: str(e.fallback),
    degraded: reason?.startsWith("degraded:") ? reason.slice("degraded:".length).split(";")[0] : undefined,
    latencyMs: num(e.latency_ms),
    ttftMs: num(e.ttft_ms),
    inputTokens: num(e.input_tokens) ?? 0,
    outputTokens: num(e.output_tokens) ?? 0,
    costUsd: cost,
    allCloudUsd: num(e.all_cloud_cost_usd),
    shadow: e.shadow === true,
    shadowRoute: undefined,
    calibration: undefined,
  };
}

function calibrationOf(v: unknown): Row["calibration"] {
  if (!isObj(v)) return undefined;
  const intent = str(v.intent);
  const threshold = num(v.threshold);
  return intent === undefined || threshold === undefined ? undefined : { intent, threshold, shadowed: v.shadowed === true };
}
