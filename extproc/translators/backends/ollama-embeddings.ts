/**
 * Canonical embeddings ⇄ Ollama's `POST /api/embed` (`{model, input, dimensions?}` →
 * `{model, embeddings: number[][], prompt_eval_count?}`, docs/api.md "Generate Embeddings").
 * Ollama embeds text only, and always answers with float arrays; a client that asked for
 * `encoding_format: "base64"` (the OpenAI SDK's default) gets each vector as little-endian
 * float32 bytes in base64, as OpenAI sends them.
 */
import type { EmbeddingsRequest, EmbeddingsResponse } from "../../canonical/types.ts";
import { invalidRequest, type GatewayError } from "../../errors.ts";
import { fail, ok, type Result } from "../../result.ts";
import { isObject, type JsonObject } from "../../schemas/fields.ts";
import type { BackendContext, EmbeddingsBackend } from "../codec.ts";
import { malformedOllama, ollamaError } from "./ollama-errors.ts";

/** The embeddings path below the provider's base path. */
export const OLLAMA_EMBED_PATH = "/api/embed";

/** Ollama's own `/api/embed` fields passed on from the client's `extra` when present. */
export const OLLAMA_NATIVE_EMBED_FIELDS = ["keep_alive", "truncate", "options"] as const;

type EncodingFormat = NonNullable<EmbeddingsRequest["encodingFormat"]>;

/**
 * The encoding each call asked for, keyed by the call's `BackendContext`: `response` is not
 * given the request, so it must be given the same context object `request` got (as
 * `composeEmbeddings` does). A context never seen by `request` gets floats.
 */
const requestedFormat = new WeakMap<BackendContext, EncodingFormat>();

function isTextInput(input: EmbeddingsRequest["input"]): input is string[] {
  return input.every((item) => typeof item === "string");
}

const isVector = (v: unknown): v is number[] => Array.isArray(v) && v.every((x) => typeof x === "number" && Number.isFinite(x));

/** The `/api/embed` body; token-array inputs are a 400 (Ollama tokenizes itself). */
export function toOllamaEmbedRequest(req: EmbeddingsRequest, model: string): JsonObject {
  const input = req.input;
  if (!isTextInput(input)) throw invalidRequest("Ollama embeds text only: 'input' must be a string or an array of strings, not token arrays.", "input", "unsupported_parameter");
  const out: JsonObject = { model, input: req.singleInput ? input[0] : input };
  if (req.dimensions !== undefined) out.dimensions = req.dimensions;
  for (const field of OLLAMA_NATIVE_EMBED_FIELDS) if (req.extra[field] !== undefined) out[field] = req.extra[field];
  return out;
}

/** A vector as little-endian float32 bytes in base64 (OpenAI's `encoding_format: "base64"`). */
export function float32Base64(vector: readonly number[]): string {
  const bytes = Buffer.alloc(vector.length * 4);
  vector.forEach((value, i) => bytes.writeFloatLE(value, i * 4));
  return bytes.toString("base64");
}

/** An `/api/embed` body, parsed, → canonical, vectors encoded as asked; anything else is a 502. */
export function parseOllamaEmbedResponse(json: unknown, format: EncodingFormat): Result<EmbeddingsResponse, GatewayError> {
  if (!isObject(json) || !Array.isArray(json.embeddings) || !json.embeddings.every(isVector)) {
    return fail(malformedOllama("embeddings response ('embeddings' is not an array of number arrays)"));
  }
  const vectors: number[][] = json.embeddings;
  const tokens = typeof json.prompt_eval_count === "number" && json.prompt_eval_count >= 0 ? json.prompt_eval_count : 0;
  return ok({
    model: typeof json.model === "string" ? json.model : "",
    data: vectors.map((vector, index) => ({ index, embedding: format === "base64" ? float32Base64(vector) : vector })),
    usage: { inputTokens: tokens, outputTokens: 0, totalTokens: tokens },
  });
}

/** Ollama's native embeddings API as a Gearbox backend. */
export const ollamaEmbeddingsBackend: EmbeddingsBackend = {
  request(req, ctx) {
    const body = toOllamaEmbedRequest(req, ctx.upstreamModel);
    requestedFormat.set(ctx, req.encodingFormat ?? "float");
    return { path: OLLAMA_EMBED_PATH, headers: { "content-type": "application/json" }, body: Buffer.from(JSON.stringify(body)) };
  },
  response(body, _headers, ctx) {
    let json: unknown;
    try {
      json = JSON.parse(body.toString("utf8"));
    } catch (err) {
      return fail(malformedOllama("embeddings response (invalid JSON)", err));
    }
    return parseOllamaEmbedResponse(json, requestedFormat.get(ctx) ?? "float");
  },
  error: ollamaError,
};
