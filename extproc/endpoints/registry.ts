/** Endpoint specs keyed by path, and Gemini's model-method paths by pattern. A path not here is not Gearbox's business: it passes through. */
import { anthropicMessagesEndpoint } from "./anthropic-messages.ts";
import { geminiGenerateEndpoint } from "./gemini-generate.ts";
import { openaiChatEndpoint } from "./openai-chat.ts";
import { openaiEmbeddingsEndpoint } from "./openai-embeddings.ts";
import { openaiResponsesEndpoint } from "./openai-responses.ts";
import { geminiErrorBody } from "../translators/clients/gemini.ts";
import type { GatewayError } from "../../common/errors.ts";
import type { EndpointSpec } from "./spec.ts";

const SPECS: readonly EndpointSpec[] = [openaiChatEndpoint, openaiEmbeddingsEndpoint, anthropicMessagesEndpoint, openaiResponsesEndpoint];
const BY_PATH = new Map(SPECS.map((s) => [s.path, s]));

/** The spec for a request path (`:path`, query string ignored), if Gearbox handles it. */
export function endpointFor(path: string): EndpointSpec | undefined {
  const q = path.indexOf("?");
  const bare = q < 0 ? path : path.slice(0, q);
  return BY_PATH.get(bare) ?? geminiGenerateEndpoint(bare);
}

export function allEndpoints(): readonly EndpointSpec[] {
  return SPECS;
}

/**
 * The error body of the API family `path` belongs to (query string ignored), also for a path
 * Gearbox does not serve (Anthropic's `/v1/messages/count_tokens`, Gemini's `:countTokens`), so
 * the SDK that called reads it in its own schema. `undefined`: OpenAI's.
 */
export function errorBodyFor(path: string): ((error: GatewayError) => Buffer) | undefined {
  const spec = endpointFor(path);
  if (spec) return spec.errorBody;
  const q = path.indexOf("?");
  const bare = q < 0 ? path : path.slice(0, q);
  if (bare.startsWith("/v1beta/")) return geminiErrorBody;
  if (bare.startsWith("/v1/messages/")) return anthropicMessagesEndpoint.errorBody;
  return undefined;
}
