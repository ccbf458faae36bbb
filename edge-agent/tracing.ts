/**
 * The edge agent's spans: one SERVER span per chat or embeddings request, continuing the
 * caller's W3C `traceparent` (Gearbox's edge-call span), with the GenAI attributes of what the
 * model did (model, tokens, finish reason) and the agent's confidence score.
 */
import { SpanKind, SpanStatusCode, type Attributes, type Span, type Tracer } from "@opentelemetry/api";
import type { IncomingMessage } from "node:http";
import { extractParent } from "../common/telemetry/trace-context.ts";
import { GEARBOX, GEN_AI, HTTP } from "../common/telemetry/tracing-attributes.ts";

/** What a served request reports for its span. */
export interface ServedRequest {
  endpoint: string;
  model: string;
  status: number;
  inputTokens?: number;
  outputTokens?: number;
  confidence?: number;
  finishReason?: string;
}

const TRACED: Readonly<Record<string, string>> = { "/v1/chat/completions": "chat", "/v1/embeddings": "embeddings" };

/** A SERVER span for a model request (undefined without a tracer or for other paths). */
export function startAgentSpan(tracer: Tracer | undefined, req: IncomingMessage): Span | undefined {
  if (!tracer || req.method !== "POST") return undefined;
  const operation = TRACED[(req.url ?? "/").split("?")[0] ?? "/"];
  if (operation === undefined) return undefined;
  return tracer.startSpan(
    operation,
    { kind: SpanKind.SERVER, attributes: { [GEN_AI.operationName]: operation, [GEN_AI.providerName]: "gearbox.edge" } },
    extractParent(req.headers),
  );
}

/** Ends the span with what the model did; a failure marks it an error (5xx) and names it. */
export function endAgentSpan(
  span: Span | undefined,
  served: ServedRequest | undefined,
  error?: { status: number; code?: string | null; message: string },
): void {
  if (!span) return;
  if (span.isRecording()) {
    const attributes: Attributes = {};
    if (served) {
      span.updateName(`${served.endpoint} ${served.model}`);
      attributes[GEN_AI.requestModel] = served.model;
      attributes[GEN_AI.responseModel] = served.model;
      attributes[HTTP.status] = served.status;
      if (served.inputTokens !== undefined) attributes[GEN_AI.inputTokens] = served.inputTokens;
      if (served.outputTokens !== undefined) attributes[GEN_AI.outputTokens] = served.outputTokens;
      if (served.confidence !== undefined) attributes[GEARBOX.edgeConfidence] = served.confidence;
      if (served.finishReason !== undefined) attributes[GEN_AI.responseFinishReasons] = [served.finishReason];
    }
    if (error) {
      attributes[HTTP.status] = error.status;
      attributes[HTTP.errorType] = error.code ?? String(error.status);
      if (error.status >= 500) span.setStatus({ code: SpanStatusCode.ERROR, message: error.message });
    }
    span.setAttributes(attributes);
  }
  span.end();
}
