/**
 * Ollama's errors → `GatewayError`. Ollama answers `{"error": "<text>"}` with a meaningful status
 * (404 `model 'x' not found`, 400 `model is required`, 500 …; docs/api/errors.mdx), and writes
 * the same object as the last line of a stream that fails after it started.
 */
import { GatewayError } from "../../../common/errors.ts";
import { isObject } from "../../../common/schemas/fields.ts";
import type { Headers } from "../translator.ts";
import { upstreamError } from "../upstream-error.ts";
import { upstreamMalformed } from "../upstream-json.ts";

const MODEL_NOT_FOUND = /\bmodel\b.*\bnot found\b/i;
/** Gin's body for a route it does not know: Ollama was reached at the wrong path. */
const GIN_NOT_FOUND = "404 page not found";

/** A 502 for an Ollama body that is not what its API promises. */
export function malformedOllama(what: string, cause?: unknown): GatewayError {
  return upstreamMalformed(`Ollama sent a malformed ${what}.`, cause);
}

/** A 502 for a stream that stopped before Ollama's final `"done": true` line. */
export function truncatedOllamaStream(detail: string): GatewayError {
  return new GatewayError(502, "upstream_error", `The Ollama stream ${detail}.`, { code: "upstream_stream_truncated" });
}

/** The message of an `{"error": …}` object (a string, or `{message}` from a proxy), else `undefined`. */
export function ollamaErrorMessage(json: unknown): string | undefined {
  if (!isObject(json) || json.error === undefined || json.error === null) return undefined;
  if (typeof json.error === "string") return json.error;
  if (isObject(json.error) && typeof json.error.message === "string") return json.error.message;
  return "Ollama reported an error.";
}

/**
 * An Ollama error response → the error the client sees, Ollama's status kept. A missing model
 * gets OpenAI's `model_not_found` code; a bare 404 from the router says the base URL is wrong.
 */
export function ollamaError(status: number, headers: Headers, body: Buffer): GatewayError {
  const base = upstreamError(status, headers, body);
  let message = base.message;
  let code = base.code ?? undefined;
  if (status === 404 && MODEL_NOT_FOUND.test(message)) code = "model_not_found";
  else if (status === 404 && message === GIN_NOT_FOUND) {
    message = "Ollama answered '404 page not found': check the provider's base_url (the Ollama root, e.g. http://127.0.0.1:11434, without /v1 or /api).";
    code = "upstream_path_not_found";
  }
  return new GatewayError(base.status, base.type, message, {
    headers: { ...base.headers },
    ...(code !== undefined && { code }),
    ...(base.param !== null && { param: base.param }),
  });
}
