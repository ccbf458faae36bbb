/**
 * The two halves every cross-schema translator is made of. A backend codec speaks one provider
 * API (canonical → wire request, wire response/stream → canonical); a client codec speaks one
 * client API (canonical → what that client's SDK expects). `compose.ts` joins a client codec
 * and a backend codec into a `Translator`; `<client>-<backend>.ts` files name the pairs.
 * Codecs are pure: bytes and plain headers in, objects out; no Envoy or gRPC types.
 */
import type { ChatChunk, ChatRequest, ChatResponse, EmbeddingsRequest, EmbeddingsResponse } from "../../common/canonical/types.ts";
import type { GatewayError } from "../../common/errors.ts";
import type { Result } from "../../common/result.ts";
import type { Headers, UpstreamRequest } from "./translator.ts";

export interface BackendContext {
  /** The model name the backend knows. */
  upstreamModel: string;
  /** Ask the backend for usage on streams even if the client did not (cost accounting). */
  forceStreamUsage: boolean;
  /**
   * The bytes the client's JSON was read from — the body as it goes upstream when nothing in it
   * changes — when the caller has them: a same-API plan may change them in place instead of
   * writing the JSON out again (`openai-openai.ts`).
   */
  clientBody?: Buffer;
}

/** Canonical chat ⇄ one provider API. */
export interface ChatBackend {
  /** The upstream request: path below the provider's base path (query allowed), headers (no credentials), body. */
  request(req: ChatRequest, ctx: BackendContext): UpstreamRequest;
  /** A complete success body (status < 400) → canonical; malformed → a 502 `GatewayError`. */
  response(body: Buffer, headers: Headers, ctx: BackendContext): Result<ChatResponse, GatewayError>;
  /** An error body (status >= 400) → an error with the status the client should see. */
  error(status: number, headers: Headers, body: Buffer): GatewayError;
  /** A per-request stream decoder. */
  stream(ctx: BackendContext): ChatStreamDecoder;
}

/**
 * Upstream stream bytes → canonical chunks. `push` takes arbitrary slices (events may straddle
 * them). Malformed data (invalid JSON in an event, an error event) throws a `GatewayError`;
 * `end` throws when the stream stopped mid-event or before the backend's terminal event.
 */
export interface ChatStreamDecoder {
  push(chunk: Buffer): ChatChunk[];
  end(): ChatChunk[];
}

/** Canonical chat → one client API. */
export interface ChatClient {
  /** The client-schema body for a complete response. */
  response(res: ChatResponse, req: ChatRequest): Buffer;
  /** A per-request stream encoder. */
  stream(req: ChatRequest): ChatStreamEncoder;
  /** The client-schema error body. */
  error(err: GatewayError): Buffer;
}

export interface ChatStreamEncoder {
  /** Bytes for one canonical chunk (possibly empty: some clients group deltas into events). */
  chunk(chunk: ChatChunk): Buffer;
  /** Bytes closing a complete stream (OpenAI `[DONE]`, Anthropic `message_stop`). */
  end(): Buffer;
  /** Bytes ending the stream with an in-band error (headers are already sent). */
  error(err: GatewayError): Buffer;
}

/** Canonical embeddings ⇄ one provider API. */
export interface EmbeddingsBackend {
  request(req: EmbeddingsRequest, ctx: BackendContext): UpstreamRequest;
  response(body: Buffer, headers: Headers, ctx: BackendContext): Result<EmbeddingsResponse, GatewayError>;
  error(status: number, headers: Headers, body: Buffer): GatewayError;
}
