/**
 * Span attribute names Gearbox writes. The GenAI ones follow the OpenTelemetry GenAI semantic
 * conventions (https://opentelemetry.io/docs/specs/semconv/gen-ai/); they are still
 * "development" status, so they are spelled out here rather than imported from
 * `@opentelemetry/semantic-conventions/incubating`, whose exports may change in a minor release.
 */
export const GEN_AI = {
  operationName: "gen_ai.operation.name",
  providerName: "gen_ai.provider.name",
  requestModel: "gen_ai.request.model",
  requestMaxTokens: "gen_ai.request.max_tokens",
  requestTemperature: "gen_ai.request.temperature",
  requestStream: "gen_ai.request.stream",
  responseModel: "gen_ai.response.model",
  responseFinishReasons: "gen_ai.response.finish_reasons",
  inputTokens: "gen_ai.usage.input_tokens",
  outputTokens: "gen_ai.usage.output_tokens",
} as const;

/** Stable attributes from the HTTP / general conventions. */
export const HTTP = {
  method: "http.request.method",
  route: "http.route",
  status: "http.response.status_code",
  errorType: "error.type",
  serverAddress: "server.address",
} as const;

/** Gearbox's own attributes (namespaced, per the conventions' advice for custom names). */
export const GEARBOX = {
  requestId: "gearbox.request_id",
  endpoint: "gearbox.endpoint",
  tenant: "gearbox.tenant",
  route: "gearbox.route",
  reason: "gearbox.reason",
  policy: "gearbox.policy",
  edgeIntent: "gearbox.edge_intent",
  cache: "gearbox.cache",
  upstream: "gearbox.upstream",
  edgeAgent: "gearbox.edge.agent",
  edgeConfidence: "gearbox.edge.confidence",
  upgraded: "gearbox.upgraded",
  upgradeReason: "gearbox.upgrade.reason",
  costUsd: "gearbox.cost_usd",
  admitted: "gearbox.admitted",
  limit: "gearbox.limit",
  streamChunks: "gearbox.stream.chunks",
  /** Why Gearbox made this call: the failure of the attempt before it (`openai:429`). */
  fallbackCause: "gearbox.fallback.cause",
  /** 1 for a provider's first attempt in a request, 2 for its first retry… */
  attempt: "gearbox.attempt",
} as const;

/**
 * `gen_ai.provider.name` for a provider kind: the convention's well-known values where one
 * exists, else the operator's provider name (DashScope, Groq… behind `openai-compatible`).
 */
export function genAiProviderName(kind: string, name: string): string {
  switch (kind) {
    case "openai":
      return "openai";
    case "azure-openai":
      return "azure.ai.openai";
    case "anthropic":
      return "anthropic";
    case "gemini":
      return "gcp.gemini";
    default:
      return name;
  }
}
