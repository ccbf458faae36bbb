/**
 * Canonical embeddings ⇄ Ollama's `POST /api/embed` (`{model, input, dimensions?}` →
 * `{model, embeddings: number[][], prompt_eval_count?}`, docs/api.md "Generate Embeddings").
 * Ollama embeds text only, and always answers with float arrays, as does this backend: base64
 * for a client that asked for `encoding_format: "base64"` is `composeEmbeddings`'s job.
 */
import type { EmbeddingsRequest, EmbeddingsResponse } from "../../../common/canonical/types.ts";
import { invalidRequest, type GatewayError } from "../../../common/errors.ts";
import { fail, ok, type Result } from "../../../common/result.ts";
import { isObject, type JsonObject } from "../../../common/schemas/fields.ts";
import type { EmbeddingsBackend } from "../codec.ts";
import { malformedOllama, ollamaError } from "./ollama-errors.ts";
import { parseUpstreamJson } from "../upstream-json.ts";

/** The embeddings path below the provider's base path. */
export const OLLAMA_EMBED_PATH = "/api/embed";

/** Ollama's own `/api/embed` fields passed on from the client's `extra` when present. */
export const OLLAMA_NATIVE_EMBED_FIELDS = ["keep_alive", "truncate", "options"] as const;

function isTextInput(input: EmbeddingsRequest["input"]): input is string[] {
  return input.every((item) => typeof item === "string");
}

const isVector = (v: unknown): v is number[] => Array.isArray(v) && v.every((x) => typeof x === "number" && Number.isFinite(x));

/** The `/api/embed` body; token-array inputs are a 400 (Ollama tokenizes itself). */
export function toOllamaEmbedRequest(req: EmbeddingsRequest, model: string): JsonObject {
  const input = req.input;
  if (!isTextInput(input))
    throw invalidRequest("Ollama embeds text only: 'input' must be a string or an array of strings, not token arrays.", "input", "unsupported_parameter");
  const out: JsonObject = { model, input: req.singleInput ? input[0] : input };
  if (req.dimensions !== undefined) out.dimensions = req.dimensions;
  for (const field of OLLAMA_NATIVE_EMBED_FIELDS) if (req.extra[field] !== undefined) out[field] = req.extra[field];
  return out;
}

/** An `/api/embed` body, parsed, → canonical with float vectors; anything else is a 502. */
export function parseOllamaEmbedResponse(json: unknown): Result<EmbeddingsResponse, GatewayError> {
  if (!isObject(json) || !Array.isArray(json.embeddings) || !json.embeddings.every(isVector)) {
    return fail(malformedOllama("embeddings response ('embeddings' is not an array of number arrays)"));
  }
  const vectors: number[][] = json.embeddings;
  const tokens = typeof json.prompt_eval_count === "number" && json.prompt_eval_count >= 0 ? json.prompt_eval_count : 0;
  return ok({
    model: typeof json.model === "string" ? json.model : "",
    data: vectors.map((vector, index) => ({ index, embedding: vector })),
    usage: { inputTokens: tokens, outputTokens: 0, totalTokens: tokens },
  });
}

/** Ollama's native embeddings API as a Gearbox backend. */
export const ollamaEmbeddingsBackend: EmbeddingsBackend = {
  request(req, ctx) {
    const body = toOllamaEmbedRequest(req, ctx.upstreamModel);
    return { path: OLLAMA_EMBED_PATH, headers: { "content-type": "application/json" }, body: Buffer.from(JSON.stringify(body)) };
  },
  response(body) {
    const json = parseUpstreamJson(body, "embeddings response", "Ollama");
    return json.ok ? parseOllamaEmbedResponse(json.value) : json;
  },
  error: ollamaError,
};
