/**
 * One line of a replay's output: what Gearbox did with one request of the traffic file, read
 * from its answer — the `x-gearbox-route`, `-reason`, `-cache`, `-fallback`, `-confidence` and
 * `-request-id` headers, the status, the usage in the body (JSON or SSE) — plus what the replay
 * measured (latency, time to first byte). Cost is the usage at the list price of Gearbox's
 * built-in price table (`extproc/providers/catalog.ts`): the answering model's for a cloud
 * answer, the requested model's for the all-cloud counterfactual; the gateway's own request log
 * has the cost at the deployment's configured prices.
 */
import { PRESETS, type ModelPrice } from "../../extproc/providers/catalog.ts";
import { costUsd, roundUsd } from "../../extproc/providers/cost.ts";
import type { ReplayRequest } from "./input.ts";
import type { TargetResponse } from "./target.ts";

export interface ReplayResult {
  replay_line: number;
  /** When the request was sent (ISO 8601). */
  time: string;
  target: "front_door" | "ext_proc";
  endpoint: string;
  tenant: string | undefined;
  model: string;
  stream: boolean;
  shadow: boolean | undefined;
  status: number;
  route: string | undefined;
  reason: string | undefined;
  cache: string | undefined;
  fallback: string | undefined;
  confidence: number | undefined;
  request_id: string | undefined;
  latency_ms: number;
  ttft_ms: number | undefined;
  input_tokens: number | undefined;
  output_tokens: number | undefined;
  /** The model that answered (the body's `model`). */
  answer_model: string | undefined;
  cost_usd: number | null | undefined;
  all_cloud_cost_usd: number | null | undefined;
  error_code: string | undefined;
  /** A transport failure: no HTTP answer at all. */
  error: string | undefined;
}

const PRICES: [string, ModelPrice][] = Object.values(PRESETS).flatMap((p) => Object.entries(p.pricing ?? {}));

/** The built-in list price of `model`: exact name, then the longest matching prefix. */
export function listPrice(model: string | undefined): ModelPrice | undefined {
  if (model === undefined) return undefined;
  let best: [string, ModelPrice] | undefined;
  for (const entry of PRICES) {
    if (entry[0] === model) return entry[1];
    if (model.startsWith(entry[0]) && (!best || entry[0].length > best[0].length)) best = entry;
  }
  return best?.[1];
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);
const num = (v: unknown): number | undefined => (typeof v === "number" && Number.isFinite(v) ? v : undefined);

interface Read {
  input?: number;
  output?: number;
  model?: string;
  errorCode?: string;
}

/** Usage, model and error code of one JSON object of an answer (OpenAI or Anthropic shape, or a stream event). */
function readObject(json: unknown, into: Read): void {
  if (!isObj(json)) return;
  if (typeof json.model === "string") into.model ??= json.model;
  const message = isObj(json.message) ? json.message : undefined;
  if (message && typeof message.model === "string") into.model ??= message.model;
  const usage = isObj(json.usage) ? json.usage : isObj(message?.usage) ? message.usage : undefined;
  if (usage) {
    const input = num(usage.prompt_tokens) ?? num(usage.input_tokens);
    const output = num(usage.completion_tokens) ?? num(usage.output_tokens);
    if (input !== undefined) into.input = input;
    if (output !== undefined) into.output = output;
  }
  const error = isObj(json.error) ? json.error : undefined;
  if (error) into.errorCode ??= typeof error.code === "string" ? error.code : typeof error.type === "string" ? error.type : undefined;
}

export function readAnswer(body: Buffer, contentType: string | undefined): Read {
  const read: Read = {};
  const text = body.toString("utf8");
  if (contentType?.includes("text/event-stream")) {
    for (const line of text.split("\n")) {
      if (!line.startsWith("data:")) continue;
      const data = line.slice(5).trim();
      if (data === "" || data === "[DONE]") continue;
      try {
        readObject(JSON.parse(data), read);
      } catch {
        // a broken event: the usage, if any, is elsewhere
      }
    }
    return read;
  }
  try {
    readObject(JSON.parse(text), read);
  } catch {
    // not JSON (a proxy's error page): status and headers still say what happened
  }
  return read;
}

const round2 = (v: number): number => Math.round(v * 100) / 100;

export function replayResult(
  request: ReplayRequest,
  response: TargetResponse,
  meta: { time: number; target: ReplayResult["target"]; shadow: boolean },
): ReplayResult {
  const h = response.headers;
  const read = readAnswer(response.body, h["content-type"]);
  const route = h["x-gearbox-route"];
  const usage =
    read.input === undefined && read.output === undefined
      ? undefined
      : { inputTokens: read.input ?? 0, outputTokens: read.output ?? 0, totalTokens: (read.input ?? 0) + (read.output ?? 0) };
  const ok = response.status > 0 && response.status < 400;
  const price = (model: string | undefined): number | null | undefined => {
    if (!usage) return undefined;
    const p = listPrice(model);
    return p === undefined ? null : roundUsd(costUsd(p, usage));
  };
  // Gearbox bills a cloud call at the model it sent upstream, the one asked for (the answer's
  // `model` is often a dated snapshot name); an upgraded edge answer went to the upgrade model.
  const upgraded = h["x-gearbox-reason"]?.startsWith("upgrade") === true;
  const cost = !ok
    ? 0
    : route === "edge" || route === "cache"
      ? 0
      : route === "cloud"
        ? price(upgraded ? (read.model ?? request.model) : request.model)
        : undefined;
  const confidence = Number(h["x-gearbox-confidence"]);
  return {
    replay_line: request.line,
    time: new Date(meta.time).toISOString(),
    target: meta.target,
    endpoint: request.path,
    tenant: request.tenant,
    model: request.model,
    stream: request.stream,
    shadow: meta.shadow || undefined,
    status: response.status,
    route,
    reason: h["x-gearbox-reason"],
    cache: h["x-gearbox-cache"],
    fallback: h["x-gearbox-fallback"],
    confidence: h["x-gearbox-confidence"] !== undefined && Number.isFinite(confidence) ? confidence : undefined,
    request_id: h["x-gearbox-request-id"],
    latency_ms: round2(response.latencyMs),
    ttft_ms: request.stream && response.ttftMs !== undefined ? round2(response.ttftMs) : undefined,
    // A cache hit spent no tokens (the gateway's log has none); its body's usage is the original
    // answer's, which prices the counterfactual.
    input_tokens: route === "cache" ? undefined : read.input,
    output_tokens: route === "cache" ? undefined : read.output,
    answer_model: read.model,
    cost_usd: cost,
    all_cloud_cost_usd: ok ? price(request.model) : undefined,
    error_code: ok ? undefined : read.errorCode,
    error: response.error,
  };
}
