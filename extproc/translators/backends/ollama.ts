/**
 * Canonical chat ⇄ Ollama's native API (`POST /api/chat`, docs/api.md in ollama/ollama), used
 * instead of Ollama's OpenAI-compatible endpoint so Gearbox can use what only the native API
 * has (`think`, `keep_alive`, model `options` such as `num_ctx`, JSON-schema `format`). The
 * provider's base URL is the Ollama root (`http://127.0.0.1:11434`), so paths start at `/api`.
 * Ollama reports usage on every final line, so `forceStreamUsage` needs nothing here.
 *
 * - request: `ollama-request.ts`; response: `ollama-response.ts`; NDJSON stream:
 *   `ollama-stream.ts`; errors: `ollama-errors.ts`; embeddings: `ollama-embeddings.ts`.
 */
import type { ChatResponse } from "../../../common/canonical/types.ts";
import type { GatewayError } from "../../../common/errors.ts";
import type { Result } from "../../../common/result.ts";
import type { ChatBackend, ChatStreamDecoder } from "../codec.ts";
import type { Headers } from "../translator.ts";
import { ollamaError } from "./ollama-errors.ts";
import { toOllamaChatRequest } from "./ollama-request.ts";
import { newOllamaResponseId, parseOllamaChatResponse } from "./ollama-response.ts";
import { OllamaStreamDecoder } from "./ollama-stream.ts";
import { parseUpstreamJson } from "../upstream-json.ts";

export { ollamaEmbeddingsBackend } from "./ollama-embeddings.ts";

/** The chat path below the provider's base path. */
export const OLLAMA_CHAT_PATH = "/api/chat";

const JSON_HEADERS: Headers = { "content-type": "application/json" };

/** Ollama's native chat API as a Gearbox backend. */
export const ollamaBackend: ChatBackend = {
  request(req, ctx) {
    const body = toOllamaChatRequest(req, ctx.upstreamModel);
    return { path: OLLAMA_CHAT_PATH, headers: { ...JSON_HEADERS }, body: Buffer.from(JSON.stringify(body)) };
  },
  response(body): Result<ChatResponse, GatewayError> {
    const json = parseUpstreamJson(body, "chat response", "Ollama");
    return json.ok ? parseOllamaChatResponse(json.value, newOllamaResponseId()) : json;
  },
  error: ollamaError,
  stream(): ChatStreamDecoder {
    return new OllamaStreamDecoder();
  },
};
