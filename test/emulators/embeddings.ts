/**
 * Synthesized `POST /v1/embeddings` responses. No embeddings traffic was recorded (the fixture
 * sets hold chat only), so the emulator derives an OpenAI-shaped response from the request:
 * each vector is a SHA-256 stream of the model and the input, scaled to unit length like
 * OpenAI's. Same input, same vector; different inputs, different vectors; no semantics.
 */
import { createHash } from "node:crypto";
import { invalidParam, type UpstreamError } from "./openai-errors.ts";

/** The request fields the emulator honours. */
export interface EmbeddingsRequest {
  model: string;
  /** One entry per input: text, or a list of token ids. */
  inputs: Array<string | number[]>;
  dimensions: number;
  encodingFormat: "float" | "base64";
}

/** OpenAI's embeddings response; `embedding` is a base64 string of little-endian float32 when asked. */
export interface EmbeddingsResponseBody {
  object: "list";
  data: Array<{ object: "embedding"; index: number; embedding: number[] | string }>;
  model: string;
  usage: { prompt_tokens: number; total_tokens: number };
}

/** Parsed request, or the 400 OpenAI would answer. */
export type ParsedEmbeddingsRequest = { ok: true; value: EmbeddingsRequest } | { ok: false; error: UpstreamError };

const NATIVE_DIMENSIONS: Readonly<Record<string, number>> = {
  "text-embedding-3-large": 3072,
  "text-embedding-3-small": 1536,
  "text-embedding-ada-002": 1536,
};
const DEFAULT_DIMENSIONS = 1536;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function isTokenList(value: unknown): value is number[] {
  return Array.isArray(value) && value.length > 0 && value.every((t) => Number.isInteger(t) && (t as number) >= 0);
}

function parseInputs(input: unknown): Array<string | number[]> | undefined {
  if (typeof input === "string") return input.length > 0 ? [input] : undefined;
  if (isTokenList(input)) return [input];
  if (!Array.isArray(input) || input.length === 0) return undefined;
  const inputs: Array<string | number[]> = [];
  for (const item of input) {
    if (typeof item === "string" && item.length > 0) inputs.push(item);
    else if (isTokenList(item)) inputs.push(item);
    else return undefined;
  }
  return inputs;
}

/** Validates an embeddings request body as OpenAI does for the fields the emulator uses. */
export function parseEmbeddingsRequest(json: unknown): ParsedEmbeddingsRequest {
  if (!isRecord(json)) return { ok: false, error: invalidParam("", "The request body must be a JSON object.") };
  const { model, input, dimensions, encoding_format: encodingFormat } = json;
  if (typeof model !== "string" || model.length === 0) {
    return { ok: false, error: invalidParam("model", "you must provide a model parameter") };
  }
  const inputs = parseInputs(input);
  if (inputs === undefined) {
    return { ok: false, error: invalidParam("input", "'input' must be a non-empty string, array of strings, or array of token arrays.") };
  }
  const native = NATIVE_DIMENSIONS[model] ?? DEFAULT_DIMENSIONS;
  if (dimensions !== undefined && (!Number.isInteger(dimensions) || (dimensions as number) < 1 || (dimensions as number) > native)) {
    return { ok: false, error: invalidParam("dimensions", `'dimensions' must be an integer between 1 and ${native} for ${model}.`) };
  }
  if (encodingFormat !== undefined && encodingFormat !== "float" && encodingFormat !== "base64") {
    return { ok: false, error: invalidParam("encoding_format", "'encoding_format' must be 'float' or 'base64'.") };
  }
  return {
    ok: true,
    value: { model, inputs, dimensions: (dimensions as number | undefined) ?? native, encodingFormat: encodingFormat ?? "float" },
  };
}

/** A unit-length float32 vector derived from the model and one input. */
export function embeddingVector(model: string, input: string | number[], dimensions: number): Float32Array {
  const key = typeof input === "string" ? `text:${input}` : `tokens:${input.join(",")}`;
  const vector = new Float32Array(dimensions);
  let norm = 0;
  for (let block = 0; block * 8 < dimensions; block += 1) {
    const digest = createHash("sha256").update(`${model}\0${key}\0${block}`).digest();
    for (let j = 0; j < 8 && block * 8 + j < dimensions; j += 1) {
      const value = digest.readUInt32LE(j * 4) / 0xffffffff - 0.5;
      vector[block * 8 + j] = value;
      norm += value * value;
    }
  }
  const scale = norm > 0 ? 1 / Math.sqrt(norm) : 1;
  for (let i = 0; i < dimensions; i += 1) vector[i] = (vector[i] ?? 0) * scale;
  return vector;
}

function tokenCount(input: string | number[]): number {
  return typeof input === "string" ? Math.max(1, Math.ceil(Buffer.byteLength(input, "utf8") / 4)) : input.length;
}

function float32Base64(vector: Float32Array): string {
  const bytes = Buffer.alloc(vector.length * 4);
  vector.forEach((value, i) => bytes.writeFloatLE(value, i * 4));
  return bytes.toString("base64");
}

/** The response body for a validated request. */
export function synthesizeEmbeddings(request: EmbeddingsRequest): EmbeddingsResponseBody {
  const data = request.inputs.map((input, index) => {
    const vector = embeddingVector(request.model, input, request.dimensions);
    const embedding = request.encodingFormat === "base64" ? float32Base64(vector) : Array.from(vector);
    return { object: "embedding" as const, index, embedding };
  });
  const tokens = request.inputs.reduce((sum, input) => sum + tokenCount(input), 0);
  return { object: "list", data, model: request.model, usage: { prompt_tokens: tokens, total_tokens: tokens } };
}
