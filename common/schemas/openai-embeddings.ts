/** OpenAI Embeddings request/response ⇄ canonical. */
import type { EmbeddingsRequest, EmbeddingsResponse } from "../canonical/types.ts";
import { fail, ok, type Result } from "../result.ts";
import { extraFields, FieldReader, isObject, type FieldError, type JsonObject } from "./fields.ts";
import { parseOpenAIUsage, usageToOpenAI } from "./openai-chat-response.ts";

const KNOWN_FIELDS = new Set(["model", "input", "dimensions", "encoding_format", "user"]);
const MAX_INPUTS = 2048;

const isTokenArray = (v: unknown): v is number[] => Array.isArray(v) && v.length > 0 && v.every((t) => Number.isInteger(t));

export function parseOpenAIEmbeddingsRequest(json: unknown): Result<EmbeddingsRequest, FieldError> {
  if (!isObject(json)) return fail({ param: "", message: "The request body must be a JSON object." });
  const r = new FieldReader();
  const model = r.string(json, "model", "model", true);
  if (model === "") r.fail("model", "'model' must not be empty.");
  const raw = json.input;
  let input: string[] | number[][] = [];
  let singleInput = false;
  if (typeof raw === "string") {
    input = [raw];
    singleInput = true;
  } else if (isTokenArray(raw)) {
    input = [raw];
    singleInput = true;
  } else if (Array.isArray(raw) && raw.length > 0 && raw.every((s) => typeof s === "string")) {
    input = raw;
  } else if (Array.isArray(raw) && raw.length > 0 && raw.every(isTokenArray)) {
    input = raw;
  } else if (raw === undefined || raw === null) {
    r.fail("input", "'input' is required.");
  } else {
    r.fail("input", "'input' must be a string, an array of strings, or token arrays, and not empty.");
  }
  if (input.length > MAX_INPUTS) r.fail("input", `'input' may hold at most ${MAX_INPUTS} items.`);
  if (input.some((s) => s.length === 0)) r.fail("input", "'input' must not contain empty strings.");
  const request: EmbeddingsRequest = { model: model ?? "", input, singleInput, extra: extraFields(json, KNOWN_FIELDS) };
  const dimensions = r.number(json, "dimensions", "dimensions", { min: 1, integer: true });
  const encodingFormat = r.oneOf(json, "encoding_format", "encoding_format", ["float", "base64"] as const);
  const user = r.string(json, "user", "user");
  if (dimensions !== undefined) request.dimensions = dimensions;
  if (encodingFormat !== undefined) request.encodingFormat = encodingFormat;
  if (user !== undefined) request.user = user;
  return r.errors.length > 0 ? fail(...r.errors) : ok(request);
}

export function toOpenAIEmbeddingsRequest(req: EmbeddingsRequest): JsonObject {
  const out: JsonObject = Object.assign({}, req.extra, { model: req.model, input: req.singleInput ? req.input[0] : req.input });
  if (req.dimensions !== undefined) out.dimensions = req.dimensions;
  if (req.encodingFormat !== undefined) out.encoding_format = req.encodingFormat;
  if (req.user !== undefined) out.user = req.user;
  return out;
}

export function parseOpenAIEmbeddingsResponse(json: unknown): Result<EmbeddingsResponse> {
  if (!isObject(json) || !Array.isArray(json.data)) return fail("not an embeddings response: 'data' is missing");
  const response: EmbeddingsResponse = {
    model: typeof json.model === "string" ? json.model : "",
    data: json.data.filter(isObject).map((d, i) => ({
      index: typeof d.index === "number" ? d.index : i,
      embedding: typeof d.embedding === "string" ? d.embedding : Array.isArray(d.embedding) ? (d.embedding as number[]) : [],
    })),
  };
  const usage = parseOpenAIUsage(json.usage);
  if (usage) response.usage = usage;
  return ok(response);
}

export function toOpenAIEmbeddingsResponse(res: EmbeddingsResponse): JsonObject {
  const out: JsonObject = {
    object: "list",
    model: res.model,
    data: res.data.map((d) => ({ object: "embedding", index: d.index, embedding: d.embedding })),
  };
  if (res.usage) out.usage = usageToOpenAI(res.usage);
  return out;
}

/** A vector as OpenAI's `encoding_format: "base64"`: little-endian float32, base64. */
export function float32Base64(vector: number[]): string {
  const bytes = Buffer.alloc(vector.length * 4);
  vector.forEach((v, i) => bytes.writeFloatLE(v, i * 4));
  return bytes.toString("base64");
}
