/**
 * An endpoint spec tells the one generic processor how to handle one client API path: how to
 * parse and validate the body into the canonical model, and which translator carries a parsed
 * call to a given provider. A new API is a new spec plus translators, never a new processor.
 */
import type { ChatRequest, EmbeddingsRequest } from "../canonical/types.ts";
import type { Provider } from "../providers/provider.ts";
import type { Result } from "../result.ts";
import type { FieldError } from "../schemas/fields.ts";
import type { TranslateContext, Translator, UpstreamRequest } from "../translators/translator.ts";

export type CanonicalCall = { endpoint: "chat"; request: ChatRequest } | { endpoint: "embeddings"; request: EmbeddingsRequest };

/** How one parsed call goes to one provider and how its answer comes back. */
export interface CallPlan {
  upstream: UpstreamRequest;
  response: Translator<unknown>["response"];
  stream: Translator<unknown>["stream"];
}

export interface ParsedCall {
  call: CanonicalCall;
  model: string;
  stream: boolean;
  plan(provider: Provider, ctx: TranslateContext): CallPlan;
}

export interface EndpointSpec {
  /** Short name for logs and metrics labels. */
  name: string;
  /** The client-facing path (query string excluded). */
  path: string;
  method: "POST";
  parse(json: unknown): Result<ParsedCall, FieldError>;
}

/** Binds a typed request to its translator so the processor can stay generic. */
export function planWith<Req>(translator: Translator<Req>, req: Req, ctx: TranslateContext): CallPlan {
  return {
    upstream: translator.request(req, ctx),
    response: (status, headers, body) => translator.response(status, headers, body),
    stream: (status, headers) => translator.stream(status, headers),
  };
}
