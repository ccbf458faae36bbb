/**
 * What the processor writes into a request's trace, kept out of the processor: the root span's
 * start, the CLIENT span of the call the request goes upstream on (its `traceparent` added to
 * the request mutation), and the GenAI and Gearbox attributes the request ends with.
 */
import type { Attributes, Tracer } from "@opentelemetry/api";
import type { CascadeEvent } from "../cascade/cascade.ts";
import type { ParsedCall } from "../endpoints/spec.ts";
import type { Outcome } from "../processor/outcome.ts";
import type { Provider } from "../providers/provider.ts";
import type { HeaderBag } from "../../common/telemetry/trace-context.ts";
import { RequestTrace, type SpanError } from "./request-trace.ts";
import { GEARBOX, GEN_AI, genAiProviderName, HTTP } from "../../common/telemetry/tracing-attributes.ts";

/** `gen_ai.operation.name` of an endpoint (`chat_completions`, `messages` → `chat`). */
export function operationOf(endpoint: string | undefined): string {
  return endpoint === "embeddings" ? "embeddings" : "chat";
}

/** The root span of a request on `spec` (undefined without a tracer: tracing off). */
export function startRequestTrace(
  tracer: Tracer | undefined,
  headers: HeaderBag,
  spec: { method: string; path: string; name: string },
  requestId: string,
): RequestTrace | undefined {
  if (!tracer) return undefined;
  return RequestTrace.start(tracer, headers, `${spec.method} ${spec.path}`, {
    [HTTP.method]: spec.method,
    [HTTP.route]: spec.path,
    [GEARBOX.requestId]: requestId,
    [GEARBOX.endpoint]: spec.name,
    [GEN_AI.operationName]: operationOf(spec.name),
  });
}

/** Where a routed request goes, for its CLIENT span. */
export interface UpstreamCall {
  target: "edge" | "cloud";
  /** The model the upstream runs (edge model, or the provider's name for it). */
  model: string;
  provider?: Provider;
}

/**
 * When `outcome` sends the request upstream (a mutation naming `x-gearbox-upstream`): ends the
 * phase in progress, starts the CLIENT span of that call and puts its `traceparent` on the
 * request. `describe` is only called then.
 */
export function traceUpstream(trace: RequestTrace | undefined, outcome: Outcome, operation: string, describe: () => UpstreamCall | undefined): Outcome {
  if (!trace || outcome.kind !== "continue") return outcome;
  const headers = outcome.mutation?.setHeaders;
  if (!headers?.["x-gearbox-upstream"] || trace.upstream) return outcome;
  const call = describe();
  if (!call) return outcome;
  trace.endStep();
  const span = trace.call(`${operation} ${call.model}`, {
    [GEN_AI.operationName]: operation,
    [GEN_AI.requestModel]: call.model,
    [GEARBOX.upstream]: call.target,
    ...(call.provider && {
      [GEN_AI.providerName]: genAiProviderName(call.provider.kind, call.provider.name),
      [HTTP.serverAddress]: call.provider.baseUrl.hostname,
    }),
    ...(call.target === "edge" && outcome.mutation?.edgeEndpoint !== undefined && { [GEARBOX.edgeAgent]: outcome.mutation.edgeEndpoint }),
  });
  trace.upstream = span;
  Object.assign(headers, span.headers());
  return outcome;
}

/** The finished request as the request record has it (field names are the log line's). */
export interface TracedRecord {
  endpoint: string | undefined;
  model: string | undefined;
  stream: boolean | undefined;
  route: string | undefined;
  reason: string | undefined;
  policy: string | undefined;
  edge_intent: string | undefined;
  cache: string | undefined;
  tenant: string | undefined;
  provider: string | undefined;
  upstream_model: string | undefined;
  status: number;
  error_code: string | undefined;
  input_tokens: number | undefined;
  output_tokens: number | undefined;
  cost_usd: number | null | undefined;
  cascade: CascadeEvent | undefined;
}

/** Token counts of the answer the client got: the call's usage, else the cascade's (upgrade or edge). */
function tokensOf(record: TracedRecord): { input?: number; output?: number } {
  if (record.input_tokens !== undefined) return { input: record.input_tokens, ...(record.output_tokens !== undefined && { output: record.output_tokens }) };
  const e = record.cascade;
  if (!e) return {};
  const input = e.upgraded ? e.cloud_input_tokens : e.edge_input_tokens;
  const output = e.upgraded ? e.cloud_output_tokens : e.edge_output_tokens;
  return { ...(input !== undefined && { input }), ...(output !== undefined && { output }) };
}

function defined(attributes: Record<string, string | number | boolean | undefined | null>): Attributes {
  const out: Attributes = {};
  for (const [k, v] of Object.entries(attributes)) if (v !== undefined && v !== null) out[k] = v;
  return out;
}

/**
 * Ends the request's trace: the upstream call (if still open: the cloud path) with its status
 * and usage, then the root with the GenAI request/response attributes and Gearbox's routing
 * ones. The root is an error only for 5xx (a 4xx is the caller's, per the HTTP conventions);
 * `error.type` names any error.
 */
export function endRequestTrace(
  trace: RequestTrace | undefined,
  record: TracedRecord,
  parsed: ParsedCall | undefined,
  provider: Provider | undefined,
  error?: SpanError,
): void {
  if (!trace) return;
  const status = error?.status ?? record.status;
  if (!trace.sampled) {
    trace.end(error);
    return;
  }
  const tokens = tokensOf(record);
  const request = parsed?.call.endpoint === "chat" ? parsed.call.request : undefined;
  const responseModel =
    record.upstream_model ?? (record.cascade ? (record.cascade.upgraded ? record.cascade.cloud_model : record.cascade.edge_model) : undefined);
  const usage = defined({ [GEN_AI.inputTokens]: tokens.input, [GEN_AI.outputTokens]: tokens.output });
  const upstream = trace.upstream;
  if (upstream && !upstream.isEnded) {
    upstream.end(error ?? (status >= 400 ? { message: `upstream answered ${status}`, status } : undefined), {
      ...usage,
      ...defined({ [GEN_AI.responseModel]: record.upstream_model, [HTTP.status]: status || undefined }),
    });
  }
  const attributes = defined({
    [GEN_AI.requestModel]: record.model,
    [GEN_AI.requestStream]: record.stream,
    [GEN_AI.requestMaxTokens]: request?.maxTokens,
    [GEN_AI.requestTemperature]: request?.temperature,
    [GEN_AI.responseModel]: responseModel,
    [GEN_AI.providerName]:
      record.route === "cloud" && provider
        ? genAiProviderName(provider.kind, provider.name)
        : record.route === "cloud"
          ? record.cascade?.cloud_provider
          : undefined,
    [HTTP.status]: status || undefined,
    [GEARBOX.route]: record.route,
    [GEARBOX.reason]: record.reason,
    [GEARBOX.policy]: record.policy,
    [GEARBOX.edgeIntent]: record.edge_intent,
    [GEARBOX.cache]: record.cache,
    [GEARBOX.tenant]: record.tenant,
    [GEARBOX.costUsd]: record.cost_usd,
    [GEARBOX.upgraded]: record.cascade?.upgraded,
    [GEARBOX.upgradeReason]: record.cascade?.upgrade_reason,
    [GEARBOX.edgeConfidence]: record.cascade?.edge_confidence,
    [HTTP.errorType]: error ? (error.code ?? error.type ?? String(status)) : record.error_code,
  });
  trace.end(status >= 500 && error ? error : undefined, { ...attributes, ...usage });
}
