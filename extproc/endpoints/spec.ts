/**
 * An endpoint spec tells the one generic processor how to handle one client API path: how to
 * parse and validate the body into the canonical model, and how a parsed call is planned for a
 * given provider (see `translators/select.ts`). A new API is a new spec plus translators, never a
 * new processor.
 */
import type { ChatRequest, EmbeddingsRequest } from "../../common/canonical/types.ts";
import type { GatewayError } from "../../common/errors.ts";
import type { Provider } from "../providers/provider.ts";
import type { Result } from "../../common/result.ts";
import type { FieldError } from "../../common/schemas/fields.ts";
import type { BackendContext } from "../translators/codec.ts";
import type { CallPlan } from "../translators/compose.ts";

export type CanonicalCall = { endpoint: "chat"; request: ChatRequest } | { endpoint: "embeddings"; request: EmbeddingsRequest };

export interface ParsedCall {
  call: CanonicalCall;
  model: string;
  stream: boolean;
  /** The upstream request and response handling for this call on `provider`; may throw a `GatewayError`. */
  plan(provider: Provider, ctx: BackendContext): CallPlan;
  /**
   * Work the call needs once the caller is known and before anything reads it (the Responses
   * API's `previous_response_id` history): the call to go on with, or the error to answer.
   */
  prepare?(tenant: string): Promise<ParsedCall | GatewayError>;
}

export interface EndpointSpec {
  /** Short name for logs and metrics labels. */
  name: string;
  /** The client-facing path (query string excluded). */
  path: string;
  method: "POST";
  parse(json: unknown): Result<ParsedCall, FieldError>;
  /** The client-schema body of an error Gearbox answers itself; default OpenAI's `{error: {message, type, param, code}}`. */
  errorBody?: (error: GatewayError) => Buffer;
}
