/**
 * Canonical embeddings ⇄ Gemini. One input → `POST /models/{m}:embedContent`
 * `{content: {parts: [{text}]}, outputDimensionality?}` → `{embedding: {values}}`; several →
 * `POST /models/{m}:batchEmbedContents` `{requests: [{model: "models/{m}", content,
 * outputDimensionality?}]}` → `{embeddings: [{values}]}`. Gemini embeds text only: token-array
 * inputs are a 400. Gemini reports no token usage for embeddings, so the response has none
 * unless a `usageMetadata.promptTokenCount` is present. Gemini always answers with floats, and
 * so does this backend: base64 for a client that asked for `encoding_format: "base64"` is
 * `composeEmbeddings`'s job.
 */
import type { EmbeddingsRequest, EmbeddingsResponse } from "../../../common/canonical/types.ts";
import { invalidRequest, type GatewayError } from "../../../common/errors.ts";
import { fail, ok, type Result } from "../../../common/result.ts";
import { isObject, type JsonObject } from "../../../common/schemas/fields.ts";
import type { EmbeddingsBackend } from "../codec.ts";
import { num } from "./gemini-candidate.ts";
import { geminiError } from "./gemini-error.ts";
import { GEMINI_HEADERS, geminiModelId, geminiModelPath } from "./gemini-model.ts";
import { parseUpstreamJson, upstreamMalformed } from "../upstream-json.ts";

const isVector = (v: unknown): v is number[] => Array.isArray(v) && v.every((x) => typeof x === "number" && Number.isFinite(x));

function isTextInput(input: EmbeddingsRequest["input"]): input is string[] {
  return input.every((item) => typeof item === "string");
}

function malformed(what: string, cause?: unknown): GatewayError {
  return upstreamMalformed(`Gemini sent a malformed embeddings response: ${what}.`, cause);
}

/** The upstream path and body for an embeddings request. */
export function toGeminiEmbeddingsRequest(req: EmbeddingsRequest, model: string): { path: string; body: JsonObject } {
  const input = req.input;
  if (!isTextInput(input))
    throw invalidRequest("Gemini embeds text only: 'input' must be a string or an array of strings, not token arrays.", "input", "unsupported_parameter");
  const dimensions = req.dimensions === undefined ? {} : { outputDimensionality: req.dimensions };
  const content = (text: string): JsonObject => ({ parts: [{ text }] });
  const [only] = input;
  if (input.length === 1 && only !== undefined) return { path: geminiModelPath(model, "embedContent"), body: { content: content(only), ...dimensions } };
  const resource = `models/${geminiModelId(model)}`;
  return {
    path: geminiModelPath(model, "batchEmbedContents"),
    body: { requests: input.map((text) => ({ model: resource, content: content(text), ...dimensions })) },
  };
}

/** An `embedContent` or `batchEmbedContents` body, parsed → canonical, vectors as float arrays. */
export function parseGeminiEmbeddings(json: unknown, model: string): Result<EmbeddingsResponse, GatewayError> {
  if (!isObject(json)) return fail(malformed("not a JSON object"));
  const raw = isObject(json.embedding) ? [json.embedding] : Array.isArray(json.embeddings) ? json.embeddings : undefined;
  if (raw === undefined) return fail(malformed("neither 'embedding' nor 'embeddings'"));
  const vectors: number[][] = [];
  for (const item of raw) {
    if (!isObject(item) || !isVector(item.values)) return fail(malformed("an embedding without numeric 'values'"));
    vectors.push(item.values);
  }
  const response: EmbeddingsResponse = {
    model: geminiModelId(model),
    data: vectors.map((vector, index) => ({ index, embedding: vector })),
  };
  const tokens = isObject(json.usageMetadata) ? num(json.usageMetadata.promptTokenCount) : undefined;
  if (tokens !== undefined) response.usage = { inputTokens: tokens, outputTokens: 0, totalTokens: tokens };
  return ok(response);
}

/** Gemini's embeddings API as a Gearbox backend. */
export const geminiEmbeddingsBackend: EmbeddingsBackend = {
  request(req, ctx) {
    const { path, body } = toGeminiEmbeddingsRequest(req, ctx.upstreamModel);
    return { path, headers: { ...GEMINI_HEADERS }, body: Buffer.from(JSON.stringify(body)) };
  },
  response(body, _headers, ctx) {
    const json = parseUpstreamJson(body, "embeddings response", "Gemini");
    return json.ok ? parseGeminiEmbeddings(json.value, ctx.upstreamModel) : json;
  },
  error: geminiError,
};
