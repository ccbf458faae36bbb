/**
 * One OpenAI-compatible `POST …/embeddings` call, shared by the edge and provider embedders:
 * float vectors asked for, checked (one per input, in order, all of the expected length, finite)
 * and L2-normalised. Every failure rejects with an `EmbeddingError` naming what went wrong.
 */
import { GatewayError } from "../../../common/errors.ts";
import { readAll, sendUpstream } from "../../http/upstream-client.ts";

export type EmbeddingErrorCode = "embedder_no_agent" | "embedder_timeout" | "embedder_unreachable" | "embedder_status" | "embedder_bad_response";

/** A failed embedding: the semantic cache counts it (`embed_error`) and answers a miss. */
export class EmbeddingError extends GatewayError {
  declare readonly code: EmbeddingErrorCode;

  constructor(code: EmbeddingErrorCode, message: string, cause?: unknown) {
    super(code === "embedder_timeout" ? 504 : 502, code === "embedder_timeout" ? "timeout_error" : "upstream_error", message, { code, cause });
  }
}

export interface EmbeddingsCall {
  url: URL;
  headers: Record<string, string>;
  model: string;
  texts: readonly string[];
  /** Expected vector length; `undefined` takes the first vector's and holds the rest to it. */
  dimensions: number | undefined;
  timeoutMs: number;
  signal?: AbortSignal;
}

export async function postEmbeddings(call: EmbeddingsCall): Promise<Float32Array[]> {
  const body = Buffer.from(JSON.stringify({ model: call.model, input: call.texts, encoding_format: "float" }));
  const timeout = AbortSignal.timeout(call.timeoutMs);
  const signal = call.signal ? AbortSignal.any([call.signal, timeout]) : timeout;
  let status: number;
  let bytes: Buffer;
  try {
    const res = await sendUpstream(call.url, { ...call.headers, "content-type": "application/json", "accept-encoding": "identity" }, body, signal);
    bytes = await readAll(res);
    status = res.statusCode ?? 0;
  } catch (err) {
    if (timeout.aborted) throw new EmbeddingError("embedder_timeout", `Embeddings from ${call.url.host} took over ${call.timeoutMs} ms.`, err);
    throw new EmbeddingError("embedder_unreachable", `Embeddings from ${call.url.host} failed: ${err instanceof Error ? err.message : String(err)}`, err);
  }
  if (status !== 200)
    throw new EmbeddingError("embedder_status", `Embeddings from ${call.url.host} answered ${status}: ${bytes.toString("utf8").slice(0, 200)}`);
  return readVectors(bytes, call.texts.length, call.dimensions, call.url.host);
}

/** The vectors of an OpenAI embeddings response body, checked and normalised. */
export function readVectors(bytes: Buffer, count: number, dimensions: number | undefined, from: string): Float32Array[] {
  const bad = (why: string) => new EmbeddingError("embedder_bad_response", `Embeddings from ${from}: ${why}.`);
  let json: unknown;
  try {
    json = JSON.parse(bytes.toString("utf8"));
  } catch (err) {
    throw new EmbeddingError("embedder_bad_response", `Embeddings from ${from}: the body is not JSON.`, err);
  }
  const data = (json as { data?: unknown }).data;
  if (!Array.isArray(data) || data.length !== count) throw bad(`expected ${count} vectors, got ${Array.isArray(data) ? data.length : "none"}`);
  const out: Float32Array[] = new Array<Float32Array>(count);
  let length = dimensions;
  data.forEach((item: unknown, position) => {
    const { index, embedding } = (item ?? {}) as { index?: unknown; embedding?: unknown };
    const at = typeof index === "number" ? index : position;
    if (!Number.isInteger(at) || at < 0 || at >= count || out[at] !== undefined) throw bad(`vector index ${String(index)} is out of place`);
    if (!Array.isArray(embedding) || embedding.length === 0 || !embedding.every((x) => typeof x === "number" && Number.isFinite(x)))
      throw bad(`vector ${at} is not a list of finite numbers`);
    length ??= embedding.length;
    if (embedding.length !== length) throw bad(`vector ${at} has ${embedding.length} dimensions, expected ${length}`);
    out[at] = normalised(embedding as number[]);
  });
  return out;
}

function normalised(values: readonly number[]): Float32Array {
  let norm = 0;
  for (const x of values) norm += x * x;
  if (norm === 0) throw new EmbeddingError("embedder_bad_response", "An embedding is all zeros.");
  const scale = 1 / Math.sqrt(norm);
  return Float32Array.from(values, (x) => x * scale);
}
